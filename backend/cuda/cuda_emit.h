/* cuda_emit.h: what the files of the CUDA C backend (backend/cuda/) share:
 * the emit context CuEmit, the kernel parameter list, and the helpers one
 * kernel kind's file calls from another's.  Internal to backend/cuda/: the
 * rest of the compiler sees be_emit_cuda and be_cuda_host_entries
 * (backend.h).  Each file says at its top what it owns; emit.c has the
 * kernel kind -> emit function table and the order of the output. */
#ifndef GPUC_BACKEND_CUDA_EMIT_H
#define GPUC_BACKEND_CUDA_EMIT_H

#include "backend.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    BeBuf *b;
    BeExprCtx x;
    IrModule *m;
    IrEntry *e;
    bool shard;    /* emitting sharded entries after ir_shard (shard.c, docs/sharding.md) */
} CuEmit;

/* The C type of a scalar. */
static inline const char *ct(IrScalar t) { return ir_scalar_ctype(t); }

/* ---- kernel parameters ---- */
typedef struct {
    int n, cap;
    char **decl;   /* in the kernel signature */
    char **arg;    /* at the launch site (host launcher) */
    IrValue **vals; int nvals, capvals;  /* values already passed */
} KParams;

/* The stash: when a block holds a row for a post, the row's vectors beyond
 * the registers' `items` per lane go to dynamic shared memory (extern
 * __shared__ gpuc_stash, g_sv vectors per lane and input, sized by the host
 * launcher from the row length) as phase 1 reads them, and phase 2 reads
 * them from there instead of global memory; vectors beyond the stash (rows
 * longer than registers + stash) are read twice from global memory as
 * before.  Lane l's vectors l + u * g_tpr go to slots l + (u - items) *
 * g_tpr, so every thread reads back only what it wrote (no barrier) and a
 * warp's 16-byte accesses are consecutive (no bank conflicts).
 * grep "ROW STASH" if you change these: the launcher sizes the stash. */
#define ROW_STASH_LANE_BYTES 384     /* at most 24 vectors of 16 bytes per thread, all inputs */
#define ROW_STASH_BLOCK_BYTES 98304  /* at most 96 KiB a block: two blocks and their static shared memory fit in sm_90's 228 KiB */

typedef struct {
    bool on;  /* the kernel has a stash: a post, 16-byte vectors */
    int fs;   /* vectors per lane and input in flight while phase 1 fills it */
    int fr;   /* vectors per lane and input read from it at a time (sum, post) */
    int sv;   /* the most vectors per lane and input it holds */
    bool reads;  /* the post reads other arrays (LayerNorm's weight and bias) */
} RowStash;

/* combine.c: a counter naming each kernel's shared arrays apart, reset
 * per file by be_emit_cuda. */
extern int shared_id;

/* signature.c */
void kp_add(CuEmit *c, KParams *p, const char *decl, const char *arg);
void kp_free(KParams *p);
void stmt_params(CuEmit *c, IrStmt *s, KParams *p);
void signature_min(CuEmit *c, IrKernel *k, KParams *p, int min_blocks);
/* The kernel's signature with `attrs` between `void` and its name. */
void signature_attrs(CuEmit *c, IrKernel *k, KParams *p, const char *attrs);
void signature(CuEmit *c, IrKernel *k, KParams *p);
void kernel_comment(CuEmit *c, IrKernel *k);

/* element.c */
const char **load_params(CuEmit *c, IrStmt *s, const char *at);
void apply_op(CuEmit *c, IrOperator *op, char **dst, const char *const *a, const char *const *b, bool declare);
char **names(CuEmit *c, const char *fmt, int a, int n);
void declare_ne(CuEmit *c, IrOperator *op, char **acc);
/* ONLINE PAIR (element.c): the online softmax pair folded a group of loaded elements at a time */
bool pair_fold_ok(const IrStmt *s);
typedef void (*PairPass)(CuEmit *c, IrKernel *k, int n, const void *ctx, int pass);  /* the caller's walk of its elements */
void pair_fold_group(CuEmit *c, IrKernel *k, int n, char **acc, PairPass each, const void *ctx);
void pair_fold_element(CuEmit *c, IrStmt *s, int pass, int u, const char **in);
char ***acc_names(CuEmit *c, IrStmt *s);
void acc_free(IrStmt *s, char ***racc);
const char **map_body(CuEmit *c, IrStmt *s, const char *at);
void element(CuEmit *c, IrStmt *s, const char **res, const char *at, char ***racc);
void map_element(CuEmit *c, IrStmt *s, char ***racc);
/* Does the expression read an array anywhere (a gather)? A walk of its tree. */
bool expr_reads(const IrExpr *e);
bool expr_checks(const IrExpr *e);  /* a read that needs its bounds check (ir/bounds.c) */
const char *width_expr(CuEmit *c, IrStmt *s);
void segred_element(CuEmit *c, IrStmt *s, const char *cols, char ***racc);

/* combine.c */
void block_reduce(CuEmit *c, IrStmt *s, char ***racc, int block);

/* stride.c */
void stride_loops(CuEmit *c, IrKernel *k, char ***racc);

/* map.c */
void emit_map(CuEmit *c, IrKernel *k);

/* reduce.c */
void emit_reduce(CuEmit *c, IrKernel *k);
void fold_reduction(CuEmit *c, IrStmt *s, int r, char **acc, const char *const *x);
void fold_block_begin(CuEmit *c, IrStmt *s);
void fold_block_end(CuEmit *c, IrStmt *s);
int reduce_epilogue(CuEmit *c, const IrKernel *k);
int reduce_epilogue_results(CuEmit *c, const IrKernel *k, IrValue **out);
#define EPILOGUE_MAX 64  /* grep "EPILOGUE_MAX": reduce.c's lists of values */

/* scan.c */
IrScalar *scan_types(IrStmt *s, int *W);
int scan_word_bytes(const IrScalar *wt, int W);
void emit_scan(CuEmit *c, IrKernel *k);
bool scan_bulk_eligible(const IrKernel *k);
void scan_bulk_host(CuEmit *c, IrKernel *k);
bool scan_stream_eligible(const IrKernel *k);
bool scan_wide_eligible(const IrKernel *k);     /* SCAN BULK 3 WIDE: 16-byte look-back words (scan.c) */
void scan_wide_host(CuEmit *c, IrKernel *k);
const char *scan_stream_name(CuEmit *c, const IrKernel *k);
int scan_stream_threads(void);  /* the threads of every scan stream kernel (SCAN BULK 3 and 3 WIDE) */
const char *scan_bulk_words(CuEmit *c, const IrKernel *k, const char *n);
void emit_filter(CuEmit *c, IrKernel *k);

/* rows.c */
RowStash row_stash(const IrKernel *k);
/* A row kernel with a stash has four twins (rows.c: emit_segred_row):
 * NAME_regs, register-only, for rows of at most block x items vectors, with
 * more blocks per SM (grep "ROW REGS"), and NAME_cl, NAME_clregs: the stash
 * and the register-only kernel over parts of a row, a cluster of
 * ROW_CLUSTER blocks per row, for rows longer than a block's registers
 * (grep "ROW CLUSTER"; sm_90 on), NAME_big and NAME_st below.  The
 * launcher picks one. */
#define ROW_CLUSTER 8  /* blocks per row: the portable cluster size */
/* NAME_big (grep "ROW BIG"): the register-only kernel at row_big_block
 * threads (4-byte elements 1024, 8-byte 512), a block per row, for aligned
 * rows of more than block x items vectors up to row_big_block x items (f32
 * 32768, f64 8192), taken with -DGPUC_ROW_BIG_BLOCK=1.  row_big_reads: the
 * arrays (at most ROW_BIG_READS) its post reads as vectors at the
 * element's column, which the launcher checks are 16-byte aligned too. */
#define ROW_BIG_READS 8
/* NAME_warp (grep "ROW WARP"): the register-only kernel with a warp a row,
 * ROW_WARP_ITEMS vectors a lane and ROW_WARP_BLOCK threads a block, for
 * aligned rows of whole vectors up to 32 x ROW_WARP_ITEMS vectors (f32
 * 256, f64 128); emitted and taken unless GPUC_ROW_WARP is 0 (gpuc's
 * environment or -DGPUC_ROW_WARP=0). */
#define ROW_WARP_ITEMS 2
#define ROW_WARP_BLOCK 128
/* __launch_bounds__'s blocks an SM: 4-byte rows 12 (1536 threads, at most
 * 40 registers: ptxas, sm_90, softmax 32, LayerNorm 34, no spills); 8-byte
 * rows 8 (at 12, f64 softmax spilled 16 bytes) */
#define ROW_WARP_MIN_BLOCKS(esz) ((esz) == 8 ? 8 : 12)
void row_warp_macro(CuEmit *c);
const char *row_warp_name(CuEmit *c, const IrKernel *k);
int row_big_block(const IrKernel *k);
int row_big_reads(const IrKernel *k, const IrValue **vals);
const char *row_big_name(CuEmit *c, const IrKernel *k);
const char *row_variant_name(CuEmit *c, const IrKernel *k, bool regs, bool cluster);
/* ROW PERSIST: GPUC_ROW_PERSIST_<name>, the launch of a cluster variant or
 * the big block (0 one a row, 1 a persistent grid, 2 and the next row
 * loaded early), and its definition with gpuc's default for the variant
 * (`big`: NAME_big), once per translation unit (rows.c). */
const char *row_persist_macro(CuEmit *c, const char *name);
void row_persist_define(CuEmit *c, const IrKernel *k, const char *name, bool big);
int row_static_shared(const IrKernel *k);
/* NAME_st (grep "ROW STREAM"): long rows as one stream of chunks of
 * ROW_STREAM_CHUNK elements through a ring of row_stream_slots(k) slots in
 * dynamic shared memory, a persistent grid, warp-specialized blocks of
 * ROW_STREAM_THREADS threads: ROW_STREAM_NC consumer warps, a publisher
 * warp, ROW_STREAM_GW gatherer warps and a producer warp; the post lags
 * the fold by ROW_STREAM_LAG chunks and stores its values from registers
 * (ROW STREAM DIRECT), so the producer reloads a slot as soon as the
 * post has read it.  ROW STREAM EXP REUSE: where the post reads a softmax
 * element only in exp(v - max) (row_exp_reuse_node) and the pair and the
 * input are f32, the fold takes the warp's maximum first, then leaves
 * exp(v - it) in the ring, and the post takes it times exp(the warp's
 * maximum - the row's), once a chunk: one exponential an element instead
 * of two (within a few ulp of exp(v - max); infinities and NaN as it).
 * H200, 2026-11-29 (session 20, rows of 262144, with ROW STREAM TAGS):
 * 567.9 us as before, 566 with the direct stores, 541-545 with the reuse,
 * 534-538 with both (0.954 of the copy rate).  For a post of one 4-byte
 * input's element type over one 2-D input, no per-row map (row_stream_ok);
 * the launcher passes the chunks per row (g_ppr), the partials' scratch
 * (8-byte words, [chunk][component]) and the rows' counters (zeroed).
 * The slots: ROW_STREAM_SLOTS, or ROW_STREAM_SLOTS_READS when the post
 * reads vectors at the column (LayerNorm's weight and bias), fewer if the
 * ring and the static shared memory would not fit ROW_STREAM_SHARED_MAX.
 * H200, 2026-11-28 (session 13, rows of 262144 f32, three runs each,
 * bench/last_run/issue16-session13/): softmax 605 us with 6 slots and lag
 * 2, 608 with lag 3, 590 with 7 slots and lag 3; LayerNorm 690, 632 and
 * 667.  Four gatherers or eight consumers were slower (670 / 655 us
 * softmax). */
/* Each may be set when gpuc is built (-DROW_STREAM_SLOTS=6 in CMAKE_C_FLAGS),
 * for a comparison: bench/try_variants.sh. */
#ifndef ROW_STREAM_CHUNK
#define ROW_STREAM_CHUNK 8192
#endif
#ifndef ROW_STREAM_SLOTS
#define ROW_STREAM_SLOTS 7
#endif
#ifndef ROW_STREAM_SLOTS_READS
#define ROW_STREAM_SLOTS_READS 6
#endif
#ifndef ROW_STREAM_NC
#define ROW_STREAM_NC 16
#endif
#ifndef ROW_STREAM_GW
#define ROW_STREAM_GW 2
#endif
#ifndef ROW_STREAM_LAG
#define ROW_STREAM_LAG 3
#endif
#define ROW_STREAM_MIN_SLOTS (ROW_STREAM_LAG + 2)  /* the lag, the chunk being folded and a load in flight */
_Static_assert(ROW_STREAM_MIN_SLOTS <= ROW_STREAM_SLOTS && ROW_STREAM_MIN_SLOTS <= ROW_STREAM_SLOTS_READS, "slots for the lag, the chunk being folded and a load in flight");
#define ROW_STREAM_SHARED_MAX (227 * 1024)  /* sm_90's shared memory a block (opt-in) */
_Static_assert(ROW_STREAM_CHUNK % (ROW_STREAM_NC * 128) == 0, "whole 16-byte vectors a consumer lane");
#define ROW_STREAM_MIN_ROW 65536  /* the launcher's shortest row for NAME_st */
#define ROW_STREAM_THREADS ((ROW_STREAM_NC + ROW_STREAM_GW + 2) * 32)
bool row_stream_ok(const IrKernel *k);
/* ROW STREAM TAGS: where every component of a chunk's partial is 4 bytes,
 * the publisher stores each in an 8-byte word with a tag in its high half
 * (one relaxed store; the launcher zeroes the words) and counts the chunk
 * with a relaxed reduction; the gatherers wait for the count with relaxed
 * loads, then take each word once its tag shows. No release or acquire:
 * the publisher's release reduction cost 3.6% of row softmax at rows of
 * 262144 (H200, 2026-11-29, session 20: 566 us with a relaxed count
 * against 587, but wrong values; bench/exp/softmax_stream_variants.py).
 * Wider components keep the release count and the acquire. */
bool row_stream_tagged(const IrKernel *k);
/* ROW DEAD RESULTS: a row reduction's result o that nothing reads once its
 * post or per-row map took it in (softmax's row max and sum, LayerNorm's
 * mean and variance) is neither allocated nor stored.  H200, 2026-11-28
 * (session 13): row softmax at rows of 256, 519-521 us against 524-530
 * with the 8 bytes a row stored. */
bool row_result_live(const IrStmt *s, int o);
const char *row_stream_name(CuEmit *c, const IrKernel *k);
int row_stream_slots(const IrKernel *k);
int row_stream_static_shared(const IrKernel *k);
void emit_segred_row(CuEmit *c, IrKernel *k);

/* cols.c */
void emit_segred_col(CuEmit *c, IrKernel *k);

/* scatter.c */
void emit_scatter_kernel(CuEmit *c, IrKernel *k);

/* matmul.c */
void emit_matmul(CuEmit *c, IrKernel *k);
int matmul_tile_cols(const IrKernel *k);  /* the result tile's columns (k->tile: its rows) */
void matmul_host_split(CuEmit *c, IrKernel *k, KParams *p);  /* fast kernels' launcher: the split of k */

/* launch.c */
void host_array_entry(CuEmit *c, IrEntry *e);
void cuda_host_shard_entry(CuEmit *c, IrEntry *e);
void cuda_host_stmt(CuEmit *c, IrKernel *k);  /* one kernel's launch (and a host statement) */
void cuda_host_into_entries(BeBuf *b, IrModule *m);
bool cuda_scalar_results(IrEntry *e);
void cuda_host_into_scalar_entries(BeBuf *b, IrModule *m);
bool cuda_results_known(IrEntry *e);

/* shard.c: sharded entries (docs/sharding.md) */
const char *shard_offset_name(IrEntry *e, IrStmt *s);
IrValue *cuda_shard_local_size(IrEntry *e, IrValue *size);  /* the local size of a sharded size, else size */
void cuda_shard_signature(BeBuf *b, IrEntry *e, const char *prefix, const char *lead);
void cuda_shard_sizes(CuEmit *c);
void cuda_shard_combine(CuEmit *c, IrKernel *k);
void cuda_shard_before(CuEmit *c, IrKernel *k);
IrKernel *cuda_shard_total(const IrKernel *k);  /* a sharded scan's totals kernel, else NULL */
void cuda_shard_fix_kernel(CuEmit *c, const IrKernel *k);  /* after a sharded scan's kernel: its fix-up */

/* emit.c */
void cuda_emit_init(CuEmit *c, BeBuf *b, IrModule *m);  /* a context writing to b */
void cuda_entry_kernels(CuEmit *c, IrEntry *e);  /* every kernel of e, through the kernel kind table */

/* prelude.c */
void nvcc_host_prelude(BeBuf *b);
void cuda_device_prelude(BeBuf *b);

#endif

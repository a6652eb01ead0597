/* backend.h: gpuc's code generators, from the kernel IR (ir/ir.h).
 *
 *   be_emit_c     reference C99: sequential loops with the language's exact
 *                 integer semantics (wrapping, division by zero is 0, no UB);
 *                 one function per entry, and under GPUC_MAIN a main that
 *                 reads the arguments as text on stdin and prints the results.
 *   be_emit_cuda  CUDA C: one extern "C" __global__ per kernel, compilable by
 *                 NVRTC (no includes needed); under nvcc (or GPUC_CUDA_HOST)
 *                 host launchers per entry over the CUDA runtime API and, with
 *                 GPUC_MAIN too, the same text main as the C backend.
 *   be_emit_lib_* an ahead-of-time library over the gpuc runtime: its C
 *                 file, public header and JSON manifest.
 *
 * Generated names: values are v_<name> (entry parameters and sizes) or
 * v<id>; lambda temporaries t<N>; kernels <entry>_k<N>_<kind>.
 */
#ifndef GPUC_BACKEND_H
#define GPUC_BACKEND_H

#include <stdbool.h>
#include <stdio.h>

#include "ir.h"

int be_emit_c(FILE *out, IrModule *m);
/* The sharded entries gpuc_shard_NAME over runtime/gpuc_comm.h and their call
 * table, appended to be_emit_c's output once ir_shard rewrote m
 * (--emit=c-shard, docs/sharding.md). */
int be_emit_c_shard(FILE *out, IrModule *m, bool table);
int be_emit_cuda(FILE *out, IrModule *m);
/* --emit=cuda-shard (backend/cuda/shard.c): after be_emit_cuda, the plain
 * entries' host-array wrappers; then, after ir_shard, the sharded entries. */
int be_emit_cuda_shard_plain(FILE *out, IrModule *m);
int be_emit_cuda_shard(FILE *out, IrModule *m);
/* The C backend plus the runner's program table and main (runner/gpuc_program.h). */
int be_emit_program(FILE *out, IrModule *m);

/* ---- shared by the emitters (backend/emit_expr.c, backend/host.c) ---- */
typedef struct {
    char *p;
    size_t n, cap;
    int indent;
} BeBuf;
void be_printf(BeBuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* One line at the current indentation, newline added. */
void be_line(BeBuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void be_buf_free(BeBuf *b);

/* shard.c: the sharded launchers gpuc_dev_shard_NAME alone, over the
 * runtime's host interface (--emit=program); gpu[i]: entry i has one. */
void be_cuda_shard_launchers(BeBuf *b, IrModule *m, bool *gpu);
/* Why the CUDA backend cannot shard entry e (after ir_shard), or NULL. */
const char *be_cuda_shard_unsupported(IrEntry *e);

/* emit_c.c's sharded-entry prelude (the gpuc_comm vtable, with `table` the
 * call table's types; the host gpuc_shard_size only for C) and call table. */
void be_shard_prelude(BeBuf *b, bool table, bool cuda);
void be_shard_table(BeBuf *b, IrModule *m);

/* The C name of an IR value. Returned string lives until the next 8 calls. */
const char *be_vname(const IrValue *v);

typedef struct BeExprCtx {
    BeBuf *b;
    bool cuda;
    bool host_reads;            /* reads of arrays go through gpuc_dread (device arrays read from the host) */
    const char *const *params;  /* names of the lambda parameters */
    const char *idx[2];         /* names of the element indices */
    const char *idx0_offset;    /* sharded CUDA kernels: added to idx[0], the shard's first row (docs/sharding.md) */
    int ntmp;                   /* next temporary number (shared across calls) */
    bool is_var;                /* emit_inner: the result is already a variable */
    int nmemo, capmemo;
    const IrExpr **mexpr;
    char **mname;
} BeExprCtx;
/* Emit the statements computing e (memoised within ctx) and return its name. */
const char *be_expr(BeExprCtx *c, const IrExpr *e);
/* Bind a precomputed expression to a name (e.g. a tiled fold's accumulator). */
void be_expr_bind(BeExprCtx *c, const IrExpr *e, const char *name);
void be_expr_reset(BeExprCtx *c);  /* forget memoised temporaries (new scope) */
void be_expr_free(BeExprCtx *c);
/* Emit lambda l applied to named arguments; results written to fresh
 * temporaries whose names are stored in res (caller frees nothing). */
void be_lambda(BeExprCtx *c, const IrLambda *l, const char *const *args, const char **res);
/* Apply binary operator `op` of type t to two C expressions. */
const char *be_binop(BeExprCtx *c, int op, IrScalar t, const char *a, const char *b);
const char *be_const(BeExprCtx *c, const IrExpr *e);
char *be_strf(BeExprCtx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A size check statement (ir/ops.def: nonneg_size, same_size) on the host,
 * recorded when it fails as an index out of bounds is; `fail` (or NULL) is
 * run then (backend/host.c). */
void be_size_check(BeExprCtx *x, const char *file, const IrStmt *s, const char *fail);
void be_c_string(BeBuf *b, const char *s);  /* s as a C string literal, escaped */

/* The prelude (types, integer helpers) and the text I/O (backend/host.c). */
void be_prelude(BeBuf *b, bool cuda);
void be_text_io(BeBuf *b);
/* The main() reading entry arguments as text and printing results; `call`
 * emits the per-entry invocation of NAME(...) (both backends share it). */
void be_main(BeBuf *b, IrModule *m);
/* The C signature of an entry's host function: PREFIXNAME(lead, sizes,
 * params, outs); lead (may be NULL) is a first parameter declaration. */
void be_entry_signature(BeBuf *b, IrEntry *e, const char *prefix, const char *lead);
/* The device-level host launchers gpuc_dev_NAME of every entry, over the host
 * interface gpuc_h_* that the including prelude defines (backend/cuda/prelude.c for nvcc). */
void be_cuda_host_entries(BeBuf *b, IrModule *m);
/* That host interface over the gpuc runtime (GpucHost: a context, a
 * GpucKernels cache of the module's functions, the device blocks of one
 * call; gpuc_h_init, gpuc_h_keep, gpuc_h_done), for executables and
 * libraries (backend/emit_program.c). Needs gpuc.h and the C prelude. */
void be_runtime_host_prelude(BeBuf *b);

/* ---- --emit=lib: an ahead-of-time library (backend/emit_lib.c) ---- */
typedef struct BeLibOptions {
    const char *name;     /* C prefix and file stem: NAME.h, libNAME.a, NAME_ENTRY() */
    const char *archs;    /* the embedded images, "sm_80,sm_90,compute_90"; NULL or "" = none */
    const char *source;   /* the .gdsl file, for the manifest */
    const char *version;  /* gpuc's version, for the manifest */
    IrModule *sharded;    /* the same program lowered again and rewritten by ir_shard (NAME_new_comm's
                           * sharded entries, docs/sharding.md); NULL: none */
} BeLibOptions;
/* NAME.h: the public header. */
int be_emit_lib_header(FILE *out, IrModule *m, const BeLibOptions *o);
/* NAME.c: the library; compiled with -DGPUC_IMAGES="images.h" when it has kernels. */
int be_emit_lib_source(FILE *out, IrModule *m, const BeLibOptions *o);
/* NAME.json: the manifest (entries, types, components, template parameters, kernels). */
int be_emit_lib_manifest(FILE *out, IrModule *m, const BeLibOptions *o);

#endif

/* ir.h: the gpuc array IR, its passes and the kernel IR below it.
 *
 * Pipeline position: frontend (checked AST) -> ir_lower -> passes
 * (ir_run_pipeline) -> kernel IR -> backend emitters.
 *
 * Shape of the IR.  An IrModule holds entries; an entry is a straight-line
 * list of statements in SSA form over IrValues.  A value is a scalar or a
 * 1-D / 2-D array of a scalar element type: tuples and structs are flattened
 * into several values during lowering (as Futhark does), so every lambda
 * takes and returns plain scalars.  Array sizes are themselves i64 scalar
 * values, so a filter's run-time size is just another SSA value.
 *
 * Nearly every array statement is one Screma (Futhark's scan-reduce-map):
 *     screma w (ins) map L scans S reds R post P
 * L maps each element of the inputs to (scan inputs ++ reduce inputs ++
 * mapped outputs); S and R are lists of operators with neutral elements; P
 * is an optional map applied to each scan result (a map on a scan's output).
 * map, reduce, scan, redomap, scanomap are special cases, so fusion is a few
 * rules on one construct (see ir/fuse_*.c).  Filter, scatter, row/column
 * reductions and top-level scalar computations have their own kinds.
 *
 * Lambda bodies are DAGs of IrExpr.  They are total: division by zero gives
 * 0, array reads out of bounds give 0, so both arms of a select may be
 * evaluated and expressions may be reordered freely.
 *
 * Memory: everything is allocated in the module's arena and freed once by
 * ir_module_free.
 */
#ifndef GPUC_IR_H
#define GPUC_IR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ---- arena ---- */
typedef struct IrArena IrArena;
IrArena *ir_arena_new(void);
void ir_arena_free(IrArena *a);
void *ir_alloc(IrArena *a, size_t n);           /* zeroed memory */
char *ir_strdup(IrArena *a, const char *s);
char *ir_fmt(IrArena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* internal compiler errors: not user errors */
#define IR_UNREACHABLE(msg) ir_internal_error(__FILE__, __LINE__, msg)
_Noreturn void ir_internal_error(const char *file, int line, const char *msg);

/* ---- scalar types ---- */
typedef enum {
    IR_BOOL, /* C bool / CUDA bool, 1 byte */
    IR_I32,
    IR_I64,
    IR_U32,
    IR_U64,
    IR_F32,
    IR_F64,
    IR_NSCALAR
} IrScalar;

const char *ir_scalar_name(IrScalar t);      /* "f32" */
const char *ir_scalar_ctype(IrScalar t);     /* "float", "int32_t" */
int ir_scalar_size(IrScalar t);              /* bytes */
bool ir_scalar_is_float(IrScalar t);
bool ir_scalar_is_signed(IrScalar t);        /* signed integer */
bool ir_scalar_is_int(IrScalar t);           /* any integer type (not bool) */

/* ---- operation tables (ops.def) ---- */
enum { IR_AF_PRODUCER_FUSES = 1, IR_AF_CONSUMER_MAP = 2, IR_AF_ENDS_KERNEL = 4,
       IR_AF_HORIZONTAL = 8, IR_AF_EXPENSIVE = 16 };
enum { IR_BF_COMM = 1, IR_BF_ASSOC = 2, IR_BF_CMP = 4, IR_BF_INTONLY = 8 };

typedef enum { IR_AK_MAP, IR_AK_REDUCE, IR_AK_SCAN, IR_AK_SCREMA, IR_AK_FILTER,
               IR_AK_SCATTER, IR_AK_SEGRED, IR_AK_SCALAR } IrAopKind;

typedef enum {
#define IR_AOP(name, kind, flags) IR_AOP_##name,
#include "ops.def"
#undef IR_AOP
    IR_NAOP
} IrAop;

typedef enum {
#define IR_BINOP(name, text, cop, flags) IR_BIN_##name,
#include "ops.def"
#undef IR_BINOP
    IR_NBINOP
} IrBinop;

typedef enum {
#define IR_UNOP(name, text) IR_UN_##name,
#include "ops.def"
#undef IR_UNOP
    IR_NUNOP
} IrUnop;

typedef enum {
#define IR_MATH(name, arity, f32, f64) IR_MATH_##name,
#include "ops.def"
#undef IR_MATH
    IR_NMATH
} IrMath;

typedef struct { const char *name; IrAopKind kind; int flags; } IrAopInfo;
typedef struct { const char *name; const char *cop; int flags; } IrBinopInfo;
typedef struct { const char *name; int arity; const char *f32; const char *f64; } IrMathInfo;
extern const IrAopInfo ir_aop_info[IR_NAOP];
extern const IrBinopInfo ir_binop_info[IR_NBINOP];
extern const char *const ir_unop_name[IR_NUNOP];
extern const IrMathInfo ir_math_info[IR_NMATH];
int ir_math_lookup(const char *name);        /* -1 if not a math builtin */

/* ---- values ---- */
typedef struct IrStmt IrStmt;
typedef struct IrValue IrValue;
struct IrValue {
    int id;             /* unique within the entry */
    const char *name;   /* source name or NULL; printed as %name */
    IrScalar elem;      /* scalar type or element type */
    int rank;           /* 0 scalar, 1 or 2 array */
    IrValue *dims[2];   /* sizes (i64 scalar values) for rank >= 1 */
    IrStmt *def;        /* defining statement, NULL for entry parameters */
    int nuses;          /* recomputed by ir_count_uses */
    bool is_param;      /* entry parameter (array or scalar) */
    bool is_size;       /* a size variable bound by the entry's parameters */
    bool has_const;     /* scalar with a compile-time value (sizes like f32[4]) */
    int64_t const_val;
};

/* ---- scalar expressions (lambda bodies) ---- */
typedef enum {
    IR_E_CONST,   /* literal; c */
    IR_E_PARAM,   /* lambda parameter number `index` */
    IR_E_IDX,     /* index of the current element along dimension `index` (i64) */
    IR_E_FREE,    /* a scalar SSA value from the entry: `val` */
    IR_E_BIN,     /* a[0] op a[1]; op is IrBinop */
    IR_E_UN,      /* op a[0]; op is IrUnop */
    IR_E_MATH,    /* math builtin op(a[0..arity)) */
    IR_E_SELECT,  /* a[0] ? a[1] : a[2] (all evaluated) */
    IR_E_CAST,    /* a[0] converted to ty (saturating float->int, NaN -> 0) */
    IR_E_READ,    /* val[a[0]] or val[a[0], a[1]]: gather; 0 when out of bounds */
    IR_E_FOLD,    /* acc = a[1]; for k in 0..a[0]: acc = acc op a[2](k); loop var: IR_E_LOOPVAR `index` */
    IR_E_LOOPVAR, /* the counter of the enclosing fold numbered `index` (i64) */
} IrExprKind;

typedef union { int64_t i; uint64_t u; double f; bool b; } IrConst;

typedef struct IrExpr IrExpr;
struct IrExpr {
    IrExprKind kind;
    IrScalar ty;      /* result type */
    int op;           /* IrBinop / IrUnop / IrMath */
    int index;        /* PARAM number, IDX dimension, FOLD/LOOPVAR id */
    IrConst c;        /* CONST */
    IrValue *val;     /* FREE, READ */
    IrExpr *a[3];
    int id;           /* scratch numbering used by printers and emitters */
    int64_t tree;     /* cached ir_expr_tree_size (0: not computed yet) */
    bool in_bounds;   /* READ: cannot leave the array (ir/bounds.c): no bounds check */
};

/* Expressions are DAGs (a `let` used twice is one node), but many walks and
 * the IR printer treat them as trees: the number of nodes of the expanded
 * tree, saturated at IR_MAX_EXPR_TREE + 1, is computed in time linear in the
 * DAG. Lowering and fusion refuse to build expressions above the limit. */
#define IR_MAX_EXPR_TREE 20000
int64_t ir_expr_tree_size(IrExpr *e);

typedef struct {
    int nparams;
    IrScalar *ptypes;
    int nres;
    IrExpr **res;
} IrLambda;

/* A scan or reduction operator over tuples of `arity` scalars:
 * op takes (acc_0..acc_{arity-1}, x_0..x_{arity-1}) and returns arity scalars. */
typedef struct {
    int arity;
    IrLambda *op;
    IrExpr **ne;        /* neutral element, arity constants */
    bool exclusive;     /* scans only */
    bool commutative;   /* op known commutative: the GPU may combine in any order */
    const char *name;   /* "sum", "max", "online_softmax", "welford", ... or NULL */
} IrOperator;

/* ---- statements ---- */
typedef enum {
    IR_S_SCREMA,  /* map / reduce / scan / their fusions, 1-D or 2-D shape */
    IR_S_FILTER,  /* map results (flag, vals...) compacted: outs = vals..., count */
    IR_S_SCATTER, /* copy of `dest`, then dest[idx] = vals for each element */
    IR_S_SEGRED,  /* 2-D: map then reduce along `axis`: outs 1-D arrays (and a post's 2-D) */
    IR_S_SCALAR,  /* top-level scalar computation: map lambda with no params */
} IrStmtKind;

struct IrStmt {
    IrStmtKind kind;
    IrAop src;          /* source operation it came from (printing, explain) */
    int line;           /* .gdsl line */
    int rank;           /* 1 or 2 (SCREMA map over 2-D, SEGRED) */
    IrValue *w[2];      /* width (rank 1) or shape (rank 2) */
    int nins;
    IrValue **ins;      /* arrays of shape w, read elementwise */
    IrLambda *map;      /* params = elements of ins */
    int nscans;
    IrOperator *scans;
    int nreds;
    IrOperator *reds;
    IrLambda *post;     /* optional: SCREMA: params = scan results of one element;
                         * SEGRED axis 1: params = elements of ins ++ the row's
                         * reduction results, results = 2-D outs after the
                         * reduction outs (ir/fuse_rows.c) */
    IrLambda *per_row;  /* optional, SEGRED axis 1 without a post: a 1-D map
                         * at each row, params = the row's reduction
                         * results, index 0 the row; results = 1-D outs
                         * after the reduction outs (ir/fuse_rows.c) */
    int axis;           /* SEGRED: 1 = along rows (result per row), 0 = per column */
    IrValue *dest;      /* SCATTER */
    int nouts;
    IrValue **outs;     /* SCREMA: scan/post outs ++ red outs ++ map outs;
                         * SEGRED: red outs ++ post outs (or per_row outs) */
    const char *note;   /* fusion notes (explain) */
    const char *what;   /* nonneg_size, same_size: the operation named by the
                         * run-time error ("'+'", "the rows of 'map'") */
    bool dead;
    bool sharded;       /* ir_shard: runs on this rank's shard of w[0] (docs/sharding.md) */
};

/* Number of map results feeding scans, reductions, and mapped outputs. */
int ir_stmt_scan_width(const IrStmt *s);
int ir_stmt_red_width(const IrStmt *s);
int ir_stmt_nmapped(const IrStmt *s);
/* The one rank-1 input that a scan statement reads as it is when it scans
 * one 4-byte component of it into one 4-byte output (a post of one result
 * allowed; no reduction, no mapped output, not sharded), else NULL: the scans
 * whose tile the CUDA backend may move by bulk copies (backend/cuda/scan.c,
 * grep "SCAN BULK") and whose default tile is larger (ir/to_kernels.c). */
IrValue *ir_scan_copied_input(const IrStmt *s);

/* Size checks (ops.def: nonneg_size, same_size), made by lowering where a
 * size known only at run time is computed or meets another size
 * (docs/language.md).  ir_size_check_stmt: is s one of them. */
bool ir_size_check_stmt(const IrStmt *s);

/* ---- kernel IR ---- */
typedef enum {
    IR_K_MAP,         /* elementwise, grid-stride, items per thread, vector loads */
    IR_K_REDUCE,      /* per-thread + warp + block reduce, last block combines */
    IR_K_SCAN,        /* single pass, decoupled look-back */
    IR_K_FILTER,      /* scan of flags with the scatter in its epilogue */
    IR_K_SCATTER,     /* copy dest then scatter (two launches of one kernel kind) */
    IR_K_SEGRED_ROW,  /* a warp or a block per row (chosen at run time), row cached for a post */
    IR_K_SEGRED_COL,  /* one thread per column */
    IR_K_MATMUL,      /* tiled 2-D comprehension with an inner sum */
    IR_K_HOST,        /* scalar statement evaluated on the host */
} IrKernelKind;

typedef enum { IR_GRID_COVER, IR_GRID_SATURATE, IR_GRID_ROWS, IR_GRID_TILES2D } IrGridPolicy;

typedef struct {
    IrKernelKind kind;
    IrStmt *stmt;
    const char *name;   /* kernel function name */
    int line;
    int block;          /* threads per block */
    int items;          /* items per thread */
    int unroll;         /* unroll factor of the per-thread loop */
    int tile;           /* IR_K_MATMUL tile edge */
    IrGridPolicy grid;
    bool vectorize;     /* 16-byte loads/stores of the inputs/outputs */
    bool ordered;       /* non-commutative reduction: combine in index order */
    int vec;            /* elements per 16-byte vector when vectorize */
} IrKernel;
void ir_scan_bound_items(IrKernel *k);  /* to_kernels.c: a scan kernel's items within its shared staging */

/* ---- entries and module ---- */
typedef struct {
    const char *name;   /* template parameter name */
    bool is_type;
    IrScalar type;      /* is_type */
    int64_t value;      /* integer parameter */
} IrTemplateArg;

/* How the flattened parameters/results regroup into the source-level ones
 * (for text I/O): one group per source parameter or result. */
typedef struct {
    const char *name;
    int first, count;   /* range in params/results */
    bool tuple;         /* printed as (a, b, ...) */
} IrGroup;

typedef struct {
    const char *name;
    int line;
    int nparams;
    IrValue **params;   /* flattened, in source order (sizes are separate) */
    int nsizes;
    IrValue **sizes;    /* size variables bound by the parameters */
    int ngroups_in;
    IrGroup *groups_in;
    int nresults;
    IrValue **results;
    int ngroups_out;
    IrGroup *groups_out;
    int nstmts, capstmts;
    IrStmt **stmts;
    int nvalues;        /* next value id */
    /* launch attributes (0 = per-primitive default) */
    int attr_block, attr_unroll, attr_items, attr_tile;
    int ntargs;
    IrTemplateArg *targs;
    int nkernels;
    IrKernel *kernels;
    const char *explain; /* text for --explain-fusion */
    const char **param_types; /* gdsl type string of each source parameter ("f32[n]") */
    const char *result_type;  /* gdsl type string of the result */
    int nshards;
    struct IrShardSize *shards; /* ir_shard: the sharded sizes, parameters' first */
    bool sharded;       /* ir_shard rewrote this entry (nothing refused in it) */
} IrEntry;

/* A size split over the ranks (ir/shard.c, docs/sharding.md). */
typedef struct IrShardSize {
    IrValue *global;    /* what the program sees: the sum over ranks (FREE uses) */
    IrValue *local;     /* this rank's part: loop widths and array dimensions */
    IrValue *offset;    /* elements on the ranks before this one */
    bool is_param;      /* bound by the parameters (else a filter's count) */
} IrShardSize;

typedef struct {
    IrArena *arena;
    const char *file;   /* source path for comments */
    int nentries, capentries;
    IrEntry **entries;
    bool explain;       /* collect fusion explanations */
} IrModule;

/* ---- construction (ir/ir.c) ---- */
IrModule *ir_module_new(const char *file);
void ir_module_free(IrModule *m);
IrEntry *ir_entry_new(IrModule *m, const char *name, int line);
IrValue *ir_value_new(IrModule *m, IrEntry *e, IrScalar elem, int rank, IrValue *d0, IrValue *d1);
IrValue *ir_size_const(IrModule *m, IrEntry *e, int64_t v, int line);
IrStmt *ir_stmt_new(IrModule *m, IrEntry *e, IrStmtKind kind, IrAop src, int line);
void ir_stmt_add_out(IrModule *m, IrStmt *s, IrValue *v);
IrLambda *ir_lambda_new(IrModule *m, int nparams, const IrScalar *ptypes, int nres);
IrExpr *ir_e_const_i(IrModule *m, IrScalar ty, int64_t v);
IrExpr *ir_e_const_f(IrModule *m, IrScalar ty, double v);
IrExpr *ir_e_const_b(IrModule *m, bool v);
IrExpr *ir_e_param(IrModule *m, IrScalar ty, int index);
IrExpr *ir_e_idx(IrModule *m, int dim);
IrExpr *ir_e_free(IrModule *m, IrValue *v);
IrExpr *ir_e_bin(IrModule *m, IrBinop op, IrExpr *a, IrExpr *b);
IrExpr *ir_e_un(IrModule *m, IrUnop op, IrExpr *a);
IrExpr *ir_e_math(IrModule *m, IrMath f, IrExpr **args);
IrExpr *ir_e_select(IrModule *m, IrExpr *c, IrExpr *t, IrExpr *f);
IrExpr *ir_e_cast(IrModule *m, IrScalar ty, IrExpr *a);
IrExpr *ir_e_read(IrModule *m, IrValue *arr, IrExpr *i0, IrExpr *i1);
IrExpr *ir_e_fold(IrModule *m, int id, IrBinop op, IrExpr *count, IrExpr *init, IrExpr *body);
IrExpr *ir_e_loopvar(IrModule *m, int id);
/* Standard operators: sum, prod, min, max, and, or over one scalar type. */
IrOperator ir_operator_binop(IrModule *m, IrBinop op, IrScalar t, bool exclusive);
IrExpr *ir_neutral(IrModule *m, IrBinop op, IrScalar t);

/* Rewriting helpers (ir/ir.c). */
/* Copy `e`, replacing IR_E_PARAM k by args[k] (args may be NULL: keep). */
IrExpr *ir_subst_params(IrModule *m, IrExpr *e, IrExpr **args);
/* Copy `e`, replacing IR_E_FREE of `from` by `to`. */
IrExpr *ir_subst_free(IrModule *m, IrExpr *e, IrValue *from, IrExpr *to);
bool ir_expr_uses_value(const IrExpr *e, const IrValue *v);
bool ir_expr_equal(const IrExpr *a, const IrExpr *b);
void ir_count_uses(IrEntry *e);
/* Replace every use of `from` in the entry (inputs, lambdas, sizes, results) by `to`. */
void ir_replace_uses(IrEntry *e, IrValue *from, IrValue *to);
int ir_stmt_index(IrEntry *e, IrStmt *s);
void ir_entry_move_stmt(IrEntry *e, IrStmt *s, int pos);
bool ir_lambda_is_cheap(const IrLambda *l);
/* Every array or scalar value read by the statement (ins, free reads, dims). */
typedef void (*IrValueVisitor)(IrValue *v, void *ctx);
void ir_stmt_visit_reads(IrStmt *s, IrValueVisitor f, void *ctx);
void ir_expr_visit_reads(IrExpr *e, IrValueVisitor f, void *ctx);
bool ir_stmt_reads(IrStmt *s, const IrValue *v);

/* ---- lowering (ir/lower.c) ---- */
/* The frontend's checked program: see frontend/frontend.h. */
struct FeProgram;
typedef struct {
    int ndefines;
    const char **define_names;   /* "BLOCK" or "dot.BLOCK" */
    long long *define_values;
    bool fns_as_entries;         /* also non-template helper fns of the main file (executables) */
} IrLowerOptions;
/* Returns NULL after printing diagnostics on error. */
IrModule *ir_lower(struct FeProgram *prog, const IrLowerOptions *opts);

/* ---- passes, one per file ---- */
void ir_simplify(IrModule *m);               /* ir/simplify.c */
void ir_fuse_vertical(IrModule *m);          /* ir/fuse_vertical.c */
void ir_fuse_horizontal(IrModule *m);        /* ir/fuse_horizontal.c */
void ir_fuse_dependent_reduce(IrModule *m);  /* ir/fuse_dependent_reduce.c */
void ir_fuse_rows(IrModule *m);              /* ir/fuse_rows.c */
void ir_dce(IrModule *m);                    /* ir/dce.c */
void ir_bounds(IrModule *m);                 /* ir/bounds.c */
void ir_to_kernels(IrModule *m);             /* ir/to_kernels.c */
/* Every array the statement streams has one element size (what 16-byte
 * vectors of a map or reduction need). */
bool ir_stmt_streams_uniform(IrStmt *s);
/* ir/shard.c: rewrite every entry into its sharded form (docs/sharding.md);
 * false when some entry reads across shards (reported as errors when
 * `report`, else that entry is only left with `sharded` false). */
bool ir_shard(IrModule *m, bool report);

/* ---- pipeline (ir/pipeline.c) ---- */
typedef struct {
    const char *dump_after;  /* pass name or NULL; "all" dumps after every pass */
    FILE *dump_to;
    bool no_fusion;          /* stop before the fusion passes (tests) */
    bool no_rewrites;        /* -O0: also skip simplify; with no_fusion, the program as lowered */
} IrPipelineOptions;
void ir_run_pipeline(IrModule *m, const IrPipelineOptions *opts);
/* Names of the passes in order, NULL-terminated (for --dump-after checking). */
extern const char *const ir_pass_names[];

/* ---- printing (ir/print.c) ---- */
void ir_print_module(FILE *out, IrModule *m);
void ir_print_kernels(FILE *out, IrModule *m);
void ir_print_explain(FILE *out, IrModule *m);
void ir_explain(IrModule *m, IrEntry *e, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif

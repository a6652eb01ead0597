/* ast.h: the .gdsl abstract syntax tree, produced by the parser (parser.y) and
 * annotated by the checker (check.c). The IR lowers from the *checked
 * instances* in FeProgram.instances: concrete functions in which every
 * template parameter has been substituted, every name resolved, every
 * expression has its FeType, and elementwise lifting/broadcasting is explicit
 * (FeExpr.lifted on the operation, FeExpr.bcast on each operand).
 *
 * Memory: every node lives in the compilation's FeArena (frontend.h); nothing
 * here is freed individually.
 * Naming: types Fe*, enum values FE_*, functions fe_* (see docs/dev/team.md).
 */
#ifndef GPUC_FRONTEND_AST_H
#define GPUC_FRONTEND_AST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A position in a source file. line and col are 1-based; col counts bytes. */
typedef struct SrcLoc {
    const char *file; /* path as given to the compiler (or resolved for imports) */
    int line;
    int col;
} SrcLoc;

typedef struct FeType FeType;
typedef struct FeExpr FeExpr;
typedef struct FeFunc FeFunc;
typedef struct FeStruct FeStruct;
typedef struct FeBinding FeBinding;
typedef struct FePattern FePattern;

/* ---------------------------------------------------------------- types -- */

/* grep "ORDER TYPEKIND" if you change the order of the scalar kinds. */
typedef enum FeTypeKind {
    FE_TY_BOOL,   /* bool */
    FE_TY_I32,    /* 32-bit signed integer, wrapping */
    FE_TY_I64,    /* 64-bit signed integer, wrapping */
    FE_TY_U32,    /* 32-bit unsigned integer */
    FE_TY_U64,    /* 64-bit unsigned integer */
    FE_TY_F32,    /* IEEE single */
    FE_TY_F64,    /* IEEE double */
    FE_TY_TUPLE,  /* (T1, T2, ...): elems/nelems, nelems >= 2 */
    FE_TY_STRUCT, /* named struct: sdecl */
    FE_TY_ARRAY,  /* elem[dims[0]] or elem[dims[0]][dims[1]]: rank 1 or 2; elem is never an array */
    FE_TY_FUNC,   /* a function value (lambda, fn name, builtin name, operator section):
                     elems/nelems = parameter types, ret = result. Only as an argument of
                     map/reduce/scan/exscan/filter; never stored in arrays or returned. */
    FE_TY_NAME,   /* parser only: an unresolved NAME (struct or template type parameter);
                     never appears in a checked instance */
    FE_TY_ERROR,  /* poison after a reported error; suppresses follow-on errors */
} FeTypeKind;

/* One array dimension. Sizes are symbolic: a named size variable bound by an
 * entry's parameters (x: f32[n]), a compile-time constant, or a size known
 * only at run time (filter results, `_` in a result type). */
typedef enum FeDimKind {
    FE_DIM_VAR,     /* named size variable: name (e.g. "n"); same name = same size */
    FE_DIM_CONST,   /* compile-time constant: value (array literals, col(v) has a 1) */
    FE_DIM_RUNTIME, /* known at run time only: id distinguishes different unknowns
                       (0 = `_` written by the user); agrees with any size at compile time */
} FeDimKind;

typedef struct FeDim {
    FeDimKind kind;
    const char *name; /* FE_DIM_VAR */
    int64_t value;    /* FE_DIM_CONST */
    int id;           /* FE_DIM_RUNTIME */
    SrcLoc loc;       /* where the size is written (unset for sizes made by the checker) */
} FeDim;

/* Types are structured values compared with fe_type_equal(); the scalar types
 * are singletons (fe_type_scalar()) so `t == fe_type_scalar(FE_TY_F32)` works for
 * scalars. */
struct FeType {
    FeTypeKind kind;
    SrcLoc loc;         /* where it was written (parser); zero for built types */
    int nelems;         /* FE_TY_TUPLE: element count; FE_TY_FUNC: parameter count */
    FeType **elems;     /* FE_TY_TUPLE elements; FE_TY_FUNC parameter types */
    FeType *ret;        /* FE_TY_FUNC result */
    FeStruct *sdecl;    /* FE_TY_STRUCT */
    FeType *elem;       /* FE_TY_ARRAY element type (scalar, tuple or struct) */
    int rank;           /* FE_TY_ARRAY: 1 or 2 */
    FeDim dims[2];      /* FE_TY_ARRAY: dims[0] = rows (or length), dims[1] = columns */
    const char *name;   /* FE_TY_NAME: the name; FE_TY_STRUCT: the struct's name */
};

/* --------------------------------------------------------- expressions -- */

/* Unary and binary operators. grep "ORDER FEOP" (fe_op_name in ast.c). */
typedef enum FeOp {
    FE_OP_NEG,    /* -x  numeric */
    FE_OP_NOT,    /* !x  bool */
    FE_OP_BITNOT, /* ~x  integer */
    FE_OP_ADD,    /* +   numeric */
    FE_OP_SUB,    /* -   numeric */
    FE_OP_MUL,    /* *   numeric */
    FE_OP_DIV,    /* /   numeric; integer division by zero yields 0 */
    FE_OP_MOD,    /* %   numeric; by zero yields 0 */
    FE_OP_POW,    /* **  numeric, right-associative */
    FE_OP_BITAND, /* &   integer or bool */
    FE_OP_BITOR,  /* |   integer or bool */
    FE_OP_BITXOR, /* ^   integer or bool */
    FE_OP_SHL,    /* <<  integer; count modulo bit width */
    FE_OP_SHR,    /* >>  integer; arithmetic for signed, logical for unsigned */
    FE_OP_AND,    /* &&  bool, short-circuit semantics irrelevant (no effects) */
    FE_OP_OR,     /* ||  bool */
    FE_OP_EQ,     /* ==  any scalar -> bool */
    FE_OP_NE,     /* !=  any scalar -> bool */
    FE_OP_LT,     /* <   numeric -> bool */
    FE_OP_LE,     /* <=  numeric -> bool */
    FE_OP_GT,     /* >   numeric -> bool */
    FE_OP_GE,     /* >=  numeric -> bool */
} FeOp;

/* Builtin functions: one row each in builtins.def (name, arity, typing
 * rule, lowering), FE_BUILTIN(id, name, kind, ...).  FE_VARIADIC as
 * max_args: no upper limit. */
#define FE_VARIADIC 1000
/* FE_B_MIN/FE_B_MAX are the reductions min(xs) / min(A, axis); the checker
 * rewrites two-operand scalar min(a, b)/max(a, b) to FE_B_MINIMUM/FE_B_MAXIMUM
 * (lifted elementwise like any MATH builtin). */

typedef enum FeBuiltin {
    FE_B_NONE = 0, /* not a builtin */
#define FE_BUILTIN(id, name, ...) FE_B_##id,
#include "builtins.def"
#undef FE_BUILTIN
    FE_B_COUNT
} FeBuiltin;

/* How an operand of an elementwise (lifted) operation is broadcast to the
 * operation's result shape. Set on the operand by its parent. */
typedef enum FeBcast {
    FE_BC_NONE,   /* same shape as the result (or the parent is not lifted) */
    FE_BC_SCALAR, /* a scalar repeated over the whole result array */
    FE_BC_ROW,    /* a T[m] repeated down the rows of a T[n][m] result */
    FE_BC_COL,    /* a col(v): T[n][1] repeated across the columns of a T[n][m] result */
} FeBcast;

/* Indexing forms (FE_EX_INDEX). */
typedef enum FeIndexKind {
    FE_IX_SCALAR, /* xs[i] (1-D) or A[i, j] (2-D): one element */
    FE_IX_ROW,    /* A[i, :]: row i of a 2-D array, T[m] */
    FE_IX_COL,    /* A[:, j]: column j of a 2-D array, T[n] */
    FE_IX_GATHER, /* xs[idx] with idx an integer array: xs gathered at each index */
} FeIndexKind;

/* What a FE_EX_NAME refers to after checking. */
typedef enum FeNameKind {
    FE_NAME_UNRESOLVED, /* parser output */
    FE_NAME_VAR,        /* a parameter, let-, lambda- or for-bound variable: bind */
    FE_NAME_SIZE,       /* an array size variable of the enclosing entry, value i64: name */
    FE_NAME_FUNC,       /* a user fn used as a function value (op argument): func */
    FE_NAME_BUILTIN,    /* a builtin used as a function value (e.g. `min` in reduce(min, ...)): builtin */
} FeNameKind;

typedef enum FeExprKind {
    FE_EX_INT,     /* integer literal: ival (as written, unsigned magnitude), type from context */
    FE_EX_FLOAT,   /* float literal: fval, text; type from context */
    FE_EX_BOOL,    /* true/false: ival 1/0 */
    FE_EX_NAME,    /* name: name, name_kind + bind/func/builtin */
    FE_EX_UNARY,   /* op a */
    FE_EX_BINARY,  /* a op b */
    FE_EX_CALL,    /* name(args): builtin != FE_B_NONE for builtins, else func = the checked
                      callee instance; axis for reductions along an axis (-1 = none) */
    FE_EX_LAMBDA,  /* |params| body: params/nparams (patterns); type is FE_TY_FUNC */
    FE_EX_SECTION, /* operator section (+): op; type is FE_TY_FUNC */
    FE_EX_TUPLE,   /* (a, b, ...): args/nargs */
    FE_EX_STRUCT,  /* Name { f: e, ... }: name, args in field declaration order after checking,
                      fields[i] = field name of args[i] */
    FE_EX_ARRAY,   /* [a, b, ...]: args/nargs; rank 2 if the elements are arrays */
    FE_EX_FIELD,   /* a.name on a struct: field_index after checking */
    FE_EX_TUPIDX,  /* a.N on a tuple: field_index = N */
    FE_EX_INDEX,   /* a[idx0] / a[idx0, idx1]: index_kind; idx[k] NULL for `:` */
    FE_EX_IF,      /* if a then b else c (cond = a) */
    FE_EX_CAST,    /* a as cast_to (scalar); lifted over arrays */
    FE_EX_LET,     /* let pat (: annot)? = a in b; block bodies are desugared into nested lets */
    FE_EX_FOR,     /* for i in a => b (rank 1) or for (i, j) in (a, c) => b (rank 2):
                      loop_vars[0..rank-1] bound to i64 indices, a/c the extents */
} FeExprKind;

struct FeExpr {
    FeExprKind kind;
    SrcLoc loc;          /* start of the construct (operator position for binary ops) */
    FeType *type;        /* checked type (NULL before checking) */
    bool lifted;         /* UNARY, BINARY, CAST, CALL of a MATH builtin (min/max included) or
                            of a user fn with scalar parameters: the scalar operation is
                            applied elementwise to array operands; the result type is the
                            broadcast shape, and each operand's bcast says how it is read */
    FeBcast bcast;       /* how the parent's lifted operation broadcasts this operand */

    FeOp op;             /* UNARY, BINARY, SECTION */
    FeExpr *a, *b, *c;   /* operands: UNARY a; BINARY a, b; CALL a = callee NAME; LAMBDA a =
                            body; FIELD/TUPIDX/INDEX/CAST a = the value; IF a ? b : c;
                            LET a = value, b = body; FOR a, c = extents, b = body */

    FeExpr **args;       /* CALL arguments, TUPLE/ARRAY/STRUCT elements */
    int nargs;
    const char **fields; /* STRUCT: field name of each args[i] */
    SrcLoc *field_locs;  /* STRUCT: location of each field name */

    uint64_t ival;       /* INT (magnitude), BOOL */
    double fval;         /* FLOAT */
    const char *text;    /* INT/FLOAT: spelling as written; NAME/FIELD/CALL/STRUCT: the name */
    FeTypeKind suffix;   /* INT/FLOAT: explicit suffix kind (7u32), or FE_TY_ERROR if none */

    /* NAME (and CALL's callee name) */
    FeNameKind name_kind;
    FeBinding *bind;     /* FE_NAME_VAR */
    FeFunc *func;        /* FE_NAME_FUNC, or CALL of a user fn: the checked callee instance */
    FeBuiltin builtin;   /* FE_NAME_BUILTIN, or CALL of a builtin */
    int axis;            /* CALL of a REDUCE builtin along an axis: 0 or 1; -1 otherwise */

    int field_index;     /* FIELD, TUPIDX */

    FeIndexKind index_kind; /* INDEX */
    FeExpr *idx[2];      /* INDEX: indices, NULL for `:` */
    int nidx;            /* INDEX: 1 or 2 */

    FeType *cast_to;     /* CAST: the scalar target type */

    FePattern *pat;      /* LET */
    FeType *annot;       /* LET: the type annotation (resolved in instances), or NULL */

    FePattern **params;  /* LAMBDA parameters */
    int nparams;

    FeBinding *loop_vars[2]; /* FOR: index variables (type i64) */
    int rank;            /* FOR: 1 or 2 */

    int depth;           /* parser internal: nesting depth, capped to keep recursion bounded */
};

/* A variable: every parameter, let-bound name, lambda parameter and for index
 * gets one. id is unique within the compilation (stable name for the IR). */
struct FeBinding {
    const char *name;
    SrcLoc loc;
    FeType *type;  /* checked type */
    int id;
};

typedef enum FePatKind {
    FE_PAT_NAME,  /* x: bind */
    FE_PAT_WILD,  /* _ */
    FE_PAT_TUPLE, /* (p, q, ...): elems/nelems */
} FePatKind;

struct FePattern {
    FePatKind kind;
    SrcLoc loc;
    FeBinding *bind;    /* FE_PAT_NAME */
    FePattern **elems;  /* FE_PAT_TUPLE */
    int nelems;
    FeType *annot;      /* lambda parameter annotation (|x: f32| ...), or NULL */
    FeType *type;       /* checked type of the whole pattern */
};

/* --------------------------------------------------------------- items -- */

struct FeStruct {
    SrcLoc loc;
    const char *name;
    int nfields;
    const char **field_names;
    SrcLoc *field_locs;
    FeType **field_types; /* resolved after checking */
    int check_state;      /* checker internal: 0 new, 1 being visited, 2 done */
    int depth;            /* checker internal: nesting depth of structs inside it */
};

typedef enum FeTParamKind { /* grep "ORDER TPARAMKIND" (parser.y, print.c) */
    FE_TP_TYPE,  /* <T: type>: any type */
    FE_TP_NUM,   /* <T: num>: any numeric scalar */
    FE_TP_FLOAT, /* <T: float>: f32 or f64 */
    FE_TP_INT,   /* <N: int>: a compile-time integer */
} FeTParamKind;

/* A template argument: a type or an integer. */
typedef struct FeTArg {
    SrcLoc loc;
    bool is_int;
    int64_t ival;  /* is_int */
    FeType *type;  /* !is_int */
} FeTArg;

typedef struct FeTParam {
    SrcLoc loc;
    const char *name;
    FeTParamKind kind;
    bool has_default;
    FeTArg def;     /* the default (after -D overrides are applied), if has_default */
} FeTParam;

typedef struct FeParam {
    SrcLoc loc;
    const char *name;
    FeType *type;       /* written type (parser); resolved type (checked instance) */
    FeBinding *bind;    /* checked instance */
} FeParam;

typedef enum FeAttrKind { /* grep "ORDER FeAttrKind" (parser.y, check.c, print.c) */
    FE_AT_BLOCK,  /* @block(N): threads per block, multiple of 32, <= 1024 */
    FE_AT_UNROLL, /* @unroll(U): U >= 1 */
    FE_AT_ITEMS,  /* @items(I): items per thread, I >= 1 */
    FE_AT_TILE,   /* @tile(T): tile edge of a 2-D comprehension, T*T <= 1024 threads */
} FeAttrKind;

typedef struct FeAttr {
    SrcLoc loc;
    FeAttrKind kind;
    FeExpr *arg;   /* the written constant expression (template ints allowed) */
    int64_t value; /* evaluated, in a checked instance */
} FeAttr;

struct FeFunc {
    SrcLoc loc;
    const char *name;       /* as declared */
    bool is_entry;          /* `entry` (exported) rather than `fn` (helper) */
    FeTParam *tparams;      /* template parameters (declaration) */
    int ntparams;
    FeParam *params;
    int nparams;
    FeType *result;         /* result type (written, then resolved in instances) */
    FeAttr *attrs;
    int nattrs;
    FeExpr *body;           /* block bodies are desugared to nested FE_EX_LET */

    /* Set on checked instances only (generic == NULL for a declaration). */
    FeFunc *generic;        /* the declaration this instance was made from */
    const char *inst_name;  /* symbol to emit: entry name, `export ... as` name, or a
                               mangled name for fn template instances (name__f64__8) */
    bool entry_point;       /* an entry point of the program: an entry's default instance
                               or an export instance, declared in the main file
                               (entries of imported files are callable, not entry points) */
    FeTArg *targs;          /* one per tparam of the declaration, all resolved */
    /* Launch configuration from the attributes (0 = not given: backend default). */
    int64_t block, unroll, items, tile;
    const char **size_vars; /* the size variables bound by the parameters, in order */
    int nsize_vars;
    FeFunc *first_instance; /* declaration: its instances, linked by next_instance */
    FeFunc *next_instance;
    int check_state;        /* checker internal: 0 new, 1 in progress, 2 done */
    bool has_errors;        /* checker internal */
};

typedef struct FeImport {
    SrcLoc loc;
    const char *path;       /* as written */
    const char *resolved;   /* file it resolved to */
} FeImport;

typedef struct FeExport {
    SrcLoc loc;
    const char *entry;      /* template entry name */
    SrcLoc entry_loc;
    FeTArg *targs;
    int ntargs;
    const char *as_name;
    FeFunc *instance;       /* checked instance */
} FeExport;

/* One parsed .gdsl file. */
typedef struct FeModule {
    const char *path;
    FeImport *imports; int nimports;
    FeStruct **structs; int nstructs;
    FeFunc **funcs; int nfuncs;          /* declarations, in source order */
    FeExport *exports; int nexports;
} FeModule;

/* The whole program: the main file and everything it imports, plus the
 * checked instances for the IR. */
typedef struct FeProgram {
    FeModule **modules; int nmodules;    /* modules[0] is the main file; imports follow */
    FeFunc **instances; int ninstances;  /* checked concrete functions, callees before callers:
                                            every non-template fn, fn template instances that
                                            are called, every entry's default instance
                                            (when all its parameters have values) and every
                                            export instance */
} FeProgram;

/* ast.c helpers */
FeType *fe_type_scalar(FeTypeKind k);          /* singleton scalar types */
bool fe_type_is_scalar(const FeType *t);
bool fe_type_is_int(const FeType *t);           /* i32 i64 u32 u64 */
bool fe_type_is_float(const FeType *t);         /* f32 f64 */
bool fe_type_is_numeric(const FeType *t);       /* int or float */
bool fe_type_equal(const FeType *a, const FeType *b); /* structural; dims must agree */
bool fe_dim_equal(const FeDim *a, const FeDim *b);
typedef struct FeArena FeArena;
const char *fe_type_str(FeArena *arena, const FeType *t); /* "f32[n][m]", "(f32, i64)", ... */
const char *fe_op_name(FeOp op);                /* "+", "-", ... */
const char *fe_builtin_name(FeBuiltin b);
const char *fe_scalar_name(FeTypeKind k);       /* "f32"... */

#endif

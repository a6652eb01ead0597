/* lower_internal.h: what lowering's files share (ir/lower.c, the
 * expressions, functions and entries; ir/lower_builtins.c, the builtin
 * calls): lowered values (LVal), environments, the lowering state and the
 * helpers one file calls from the other.  Internal to ir/: the rest of the
 * compiler sees ir_lower in ir.h. */
#ifndef GPUC_IR_LOWER_INTERNAL_H
#define GPUC_IR_LOWER_INTERNAL_H

#include "ir.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "frontend.h"

typedef enum { LV_SCALAR, LV_ARRAY, LV_VARR, LV_TUPLE, LV_FUNC } LvKind;

typedef struct LVal LVal;
typedef struct Env Env;
struct LVal {
    LvKind kind;
    IrExpr *x;          /* SCALAR */
    IrValue *arr;       /* ARRAY */
    IrExpr *len;        /* VARR: length (i64) */
    IrExpr *body;       /* VARR: element in terms of LOOPVAR var */
    int var;            /* VARR */
    IrScalar elem;      /* VARR element type */
    int n;              /* TUPLE */
    LVal **elems;
    /* FUNC */
    FeExpr *lambda;
    Env *closure;
    FeFunc *fn;
    FeBuiltin builtin;
    bool is_section;
    FeOp section_op;
};

struct Env { int id; LVal *v; Env *next; };

typedef struct {
    IrModule *m;
    IrEntry *e;
    FeFunc *entry;
    int next_var;       /* fold / virtual array loop variable ids */
    int errors;
    bool quiet;         /* lowering a fn as an entry: failures drop it silently */
    int entry_errors;   /* errors in the entry being lowered (only the first is reported) */
    long inlined;       /* calls inlined into the entry being lowered (capped) */
    int depth;          /* inlining depth */
} Lower;


/* The inputs of a statement being built (each array once). */
typedef struct { IrValue **ins; int nins; } Ins;

/* lower.c */
LVal *lv_new(Lower *L, LvKind k);
LVal *lv_scalar(Lower *L, IrExpr *x);
LVal *lv_array(Lower *L, IrValue *a);
LVal *lv_tuple(Lower *L, int n);
void lerr(Lower *L, SrcLoc loc, const char *msg);
IrScalar sc(const FeType *t);
bool invariant(const IrExpr *e);
bool lv_invariant(const LVal *v);
IrExpr *subst_loopvar(Lower *L, IrExpr *e, int var, IrExpr *by);
IrValue *to_value(Lower *L, IrExpr *x, int line);
int count_leaves(const LVal *v);
LVal **flat(Lower *L, LVal *v, int *n);
LVal *rebuild(Lower *L, LVal *shape, LVal **leaves_, int *at);
LVal *as_varr(Lower *L, LVal *a);
IrValue *need_array(Lower *L, LVal *v, int line);
IrExpr *scalar_of(Lower *L, LVal *v, SrcLoc loc);
IrExpr *scalar_op(Lower *L, FeExpr *x, IrExpr **a, int n);
LVal *lifted(Lower *L, FeExpr *x, FeExpr **ops, int nops, Env *env);
LVal *apply(Lower *L, LVal *f, LVal **args, int nargs, SrcLoc loc);
int collect_arrays(Lower *L, LVal *v, Ins *in, IrValue **width, SrcLoc loc, const char *what);
LVal *func_value(Lower *L, FeExpr *x, Env *env);
IrOperator make_operator(Lower *L, LVal *f, LVal *ne, const FeType *elem_t, SrcLoc loc);
LVal *outs_like(Lower *L, IrStmt *s, const FeType *t, IrValue *d0, IrValue *d1, int rank);
LVal *lower(Lower *L, FeExpr *x, Env *env);
int add_in(Lower *L, Ins *in, IrValue *v);
bool same_size(const IrValue *a, const IrValue *b);
/* Run-time size checks (lower.c, ops.def): a against b unless known equal;
 * a computed size checked non-negative; an array given a shape. `what`
 * names the operation in the error. */
void check_same_size(Lower *L, IrValue *a, IrValue *b, int line, const char *what);
IrValue *checked_size(Lower *L, IrExpr *x, int line, const char *what);
IrValue *conform(Lower *L, IrValue *a, IrValue *w0, IrValue *w1, int line, const char *what);

/* lower_builtins.c */
IrExpr *scalar_builtin(IrModule *m, FeBuiltin b, IrExpr **a);
LVal *lower_builtin_call(Lower *L, FeExpr *x, Env *env);
/* The reduction x of the lowered array arr along axis (-1: all of a 1-D array). */
LVal *reduce_lval(Lower *L, FeExpr *x, LVal *arr, int axis, Env *env);
/* Is x a reduction of one whole 1-D array (sum(v), argmax(v), reduce(op, ne, v))? */
bool is_whole_reduction(const FeExpr *x);
/* `for i in n => RED(row i)` as the row (or column) reduction RED(A, 1) is;
 * NULL when arr is not such a row. */
LVal *row_reduction(Lower *L, FeExpr *red, const FeBinding *row_var, LVal *arr, IrValue *w0, Env *env, int line);

#endif

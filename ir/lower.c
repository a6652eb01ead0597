/* lower.c: the checked AST (frontend/ast.h) to the array IR.
 *
 * requires: a checked FeProgram (every instance typed, templates
 * instantiated, broadcasting marked).  produces: one IrEntry per entry
 * instance, in SSA form, nothing fused.
 *
 * - Every helper `fn` is inlined: its body is lowered with its parameters
 *   bound to the argument values.
 * - Tuples and structs are flattened (an LVal is a tree whose leaves are
 *   scalar expressions or arrays), so lambdas take and return scalars.
 * - Broadcasting becomes explicit: a lifted operation is a map whose
 *   full-shape operands are inputs, scalars are free values, rows are
 *   read at the column index i1 and col(v) at the row index i0.
 * - Inside a lambda, arrays that depend on the lambda's parameters (a row
 *   A[i, :] in a comprehension) are "virtual": a length and an element
 *   expression over a loop variable; a reduction over one becomes a fold,
 *   except where it is the whole body of a comprehension (for i in n =>
 *   argmax(A[i, :])): there it is the row (or column) reduction
 *   argmax(A, 1) is (row_reduction, lower_builtins.c).
 *
 * Builtin calls lower through the table of frontend/builtins.def, their
 * functions in lower_builtins.c; what both files share is lower_internal.h.
 */
#include "lower_internal.h"

LVal *lv_new(Lower *L, LvKind k) {
    LVal *v = ir_alloc(L->m->arena, sizeof *v);
    v->kind = k;
    return v;
}
LVal *lv_scalar(Lower *L, IrExpr *x) { LVal *v = lv_new(L, LV_SCALAR); v->x = x; return v; }
LVal *lv_array(Lower *L, IrValue *a) { LVal *v = lv_new(L, LV_ARRAY); v->arr = a; return v; }
LVal *lv_tuple(Lower *L, int n) {
    LVal *v = lv_new(L, LV_TUPLE);
    v->n = n;
    v->elems = ir_alloc(L->m->arena, sizeof *v->elems * (size_t)(n + 1));
    return v;
}

static Env *bind(Lower *L, Env *env, FeBinding *b, LVal *v) {
    Env *n = ir_alloc(L->m->arena, sizeof *n);
    n->id = b->id; n->v = v; n->next = env;
    return n;
}
static LVal *lookup(Env *env, FeBinding *b) {
    for (; env; env = env->next) { if (env->id == b->id) { return env->v; } }
    return NULL;
}

/* A lowering error. Messages starting "internal: " are gpuc bugs (the
 * checker accepted something the lowering cannot handle by mistake) and are
 * reported as `internal error`; the others are limits of the IR, reported as
 * errors. Only the first of an entry is reported: the rest follow from it. */
void lerr(Lower *L, SrcLoc loc, const char *msg) {
    if (!L->quiet && L->entry_errors == 0) {
        if (strncmp(msg, "internal: ", 10) == 0) {
            fe_report("internal error", loc, "%s (this is a gpuc bug)", msg + 10);
        } else {
            fe_error(loc, "%s", msg);
        }
    }
    L->errors++;
    L->entry_errors++;
}

IrScalar sc(const FeType *t) {
    if (!t) { return IR_I32; }
    if (t->kind == FE_TY_ARRAY) { return sc(t->elem); }
    if (t->kind <= FE_TY_F64) { return (IrScalar)t->kind; }
    return IR_I32;
}

/* ---- expression helpers ---- */
bool invariant(const IrExpr *e) {
    if (!e) { return true; }
    if (e->kind == IR_E_PARAM || e->kind == IR_E_IDX || e->kind == IR_E_LOOPVAR) { return false; }
    return invariant(e->a[0]) && invariant(e->a[1]) && invariant(e->a[2]);
}

bool lv_invariant(const LVal *v) {
    switch (v->kind) {
    case LV_SCALAR: return invariant(v->x);
    case LV_ARRAY: return true;
    case LV_VARR: return false;
    case LV_TUPLE:
        for (int i = 0; i < v->n; i++) { if (!lv_invariant(v->elems[i])) { return false; } }
        return true;
    case LV_FUNC: return true;
    }
    return true;
}

/* replace LOOPVAR `var` by `by` */
IrExpr *subst_loopvar(Lower *L, IrExpr *e, int var, IrExpr *by) {
    if (!e) { return NULL; }
    if (e->kind == IR_E_LOOPVAR && e->index == var) { return by; }
    IrExpr *a0 = subst_loopvar(L, e->a[0], var, by);
    IrExpr *a1 = subst_loopvar(L, e->a[1], var, by);
    IrExpr *a2 = subst_loopvar(L, e->a[2], var, by);
    if (a0 == e->a[0] && a1 == e->a[1] && a2 == e->a[2]) { return e; }
    IrExpr *r = ir_alloc(L->m->arena, sizeof *r);
    *r = *e;
    r->a[0] = a0; r->a[1] = a1; r->a[2] = a2;
    r->tree = 0;
    return r;
}

/* Materialise an invariant scalar expression as an SSA value. */
IrValue *to_value(Lower *L, IrExpr *x, int line) {
    if (x->kind == IR_E_FREE) { return x->val; }
    if (x->kind == IR_E_CONST && x->ty == IR_I64) { return ir_size_const(L->m, L->e, x->c.i, line); }
    IrStmt *s = ir_stmt_new(L->m, L->e, IR_S_SCALAR, IR_AOP_scalar, line);
    s->map = ir_lambda_new(L->m, 0, NULL, 1);
    s->map->res[0] = x;
    IrValue *v = ir_value_new(L->m, L->e, x->ty, 0, NULL, NULL);
    ir_stmt_add_out(L->m, s, v);
    return v;
}

/* Leaves of an LVal, flattened. */
int count_leaves(const LVal *v) {
    if (v->kind != LV_TUPLE) { return 1; }
    int n = 0;
    for (int i = 0; i < v->n; i++) { n += count_leaves(v->elems[i]); }
    return n;
}
static void leaves(LVal *v, LVal **out, int *n) {
    if (v->kind != LV_TUPLE) { out[(*n)++] = v; return; }
    for (int i = 0; i < v->n; i++) { leaves(v->elems[i], out, n); }
}
LVal **flat(Lower *L, LVal *v, int *n) {
    int c = count_leaves(v);
    LVal **out = ir_alloc(L->m->arena, sizeof *out * (size_t)(c + 1));
    *n = 0;
    leaves(v, out, n);
    return out;
}
/* Rebuild an LVal with the structure of `shape` from a list of leaves. */
LVal *rebuild(Lower *L, LVal *shape, LVal **leaves_, int *at) {
    if (shape->kind != LV_TUPLE) { return leaves_[(*at)++]; }
    LVal *t = lv_tuple(L, shape->n);
    for (int i = 0; i < shape->n; i++) { t->elems[i] = rebuild(L, shape->elems[i], leaves_, at); }
    return t;
}

/* An array LVal as a virtual array (for use inside lambdas). */
LVal *as_varr(Lower *L, LVal *a) {
    if (a->kind == LV_VARR) { return a; }
    if (a->kind != LV_ARRAY || a->arr->rank != 1) { return NULL; }
    LVal *v = lv_new(L, LV_VARR);
    v->var = L->next_var++;
    v->len = ir_e_free(L->m, a->arr->dims[0]);
    v->body = ir_e_read(L->m, a->arr, ir_e_loopvar(L->m, v->var), NULL);
    v->elem = a->arr->elem;
    return v;
}

/* Materialise a virtual array as a map over its index space. */
static IrValue *varr_to_value(Lower *L, LVal *v, int line) {
    IrValue *n = to_value(L, v->len, line);
    IrStmt *s = ir_stmt_new(L->m, L->e, IR_S_SCREMA, IR_AOP_for1d, line);
    s->w[0] = n;
    s->map = ir_lambda_new(L->m, 0, NULL, 1);
    s->map->res[0] = subst_loopvar(L, v->body, v->var, ir_e_idx(L->m, 0));
    IrValue *o = ir_value_new(L->m, L->e, v->elem, 1, n, NULL);
    ir_stmt_add_out(L->m, s, o);
    return o;
}

IrValue *need_array(Lower *L, LVal *v, int line) {
    if (v->kind == LV_ARRAY) { return v->arr; }
    if (v->kind == LV_VARR && invariant(v->len)) {
        /* a virtual array with no lambda dependence can be materialised */
        bool ok = true;
        IrExpr *b = subst_loopvar(L, v->body, v->var, ir_e_idx(L->m, 0));
        ok = invariant(subst_loopvar(L, b, -1, NULL)) || true;
        (void)ok;
        return varr_to_value(L, v, line);
    }
    return NULL;
}

IrExpr *scalar_of(Lower *L, LVal *v, SrcLoc loc) {
    if (v && v->kind == LV_SCALAR) { return v->x; }
    lerr(L, loc, "this use of a tuple, struct or array is not supported by the IR lowering yet (a scalar is needed here)");
    return ir_e_const_i(L->m, IR_I32, 0);
}

/* ---- scalar operations ---- */
static IrBinop fe_binop(FeOp op, IrScalar t) {
    switch (op) {
    case FE_OP_ADD: return IR_BIN_add;
    case FE_OP_SUB: return IR_BIN_sub;
    case FE_OP_MUL: return IR_BIN_mul;
    case FE_OP_DIV: return IR_BIN_div;
    case FE_OP_MOD: return IR_BIN_rem;
    case FE_OP_POW: return IR_BIN_pow;
    case FE_OP_BITAND: return t == IR_BOOL ? IR_BIN_land : IR_BIN_and;
    case FE_OP_BITOR: return t == IR_BOOL ? IR_BIN_lor : IR_BIN_or;
    case FE_OP_BITXOR: return t == IR_BOOL ? IR_BIN_ne : IR_BIN_xor;
    case FE_OP_SHL: return IR_BIN_shl;
    case FE_OP_SHR: return IR_BIN_shr;
    case FE_OP_AND: return IR_BIN_land;
    case FE_OP_OR: return IR_BIN_lor;
    case FE_OP_EQ: return IR_BIN_eq;
    case FE_OP_NE: return IR_BIN_ne;
    case FE_OP_LT: return IR_BIN_lt;
    case FE_OP_LE: return IR_BIN_le;
    case FE_OP_GT: return IR_BIN_gt;
    case FE_OP_GE: return IR_BIN_ge;
    default: return IR_BIN_add;
    }
}

/* Apply a scalar (unlifted) operation to scalar operands. */
IrExpr *scalar_op(Lower *L, FeExpr *x, IrExpr **a, int n) {
    IrModule *m = L->m;
    switch (x->kind) {
    case FE_EX_UNARY:
        if (x->op == FE_OP_NEG) { return ir_e_un(m, IR_UN_neg, a[0]); }
        if (x->op == FE_OP_NOT) { return ir_e_un(m, IR_UN_not, a[0]); }
        return ir_e_un(m, IR_UN_bnot, a[0]);
    case FE_EX_BINARY:
        return ir_e_bin(m, fe_binop(x->op, a[0]->ty), a[0], a[1]);
    case FE_EX_CAST:
        return ir_e_cast(m, sc(x->cast_to), a[0]);
    case FE_EX_CALL: {
        (void)n;
        IrExpr *r = scalar_builtin(m, x->builtin, a);
        if (r) { return r; }
        break;
    }
    default: break;
    }
    lerr(L, x->loc, "internal: unsupported scalar operation in lowering");
    return a[0];
}

/* ---- lifted (elementwise) operations ---- */

int add_in(Lower *L, Ins *in, IrValue *v) {
    for (int i = 0; i < in->nins; i++) { if (in->ins[i] == v) { return i; } }
    IrValue **n = ir_alloc(L->m->arena, sizeof *n * (size_t)(in->nins + 1));
    if (in->nins) { memcpy(n, in->ins, sizeof *n * (size_t)in->nins); }
    n[in->nins] = v;
    in->ins = n;
    return in->nins++;
}

static FeExpr *unwrap_col(FeExpr *x) {
    if (x->kind == FE_EX_CALL && x->builtin == FE_B_COL) { return x->args[0]; }
    return x;
}

bool same_size(const IrValue *a, const IrValue *b) {
    return a == b || (a && b && a->has_const && b->has_const && a->const_val == b->const_val);
}

/* ---- run-time size checks ----
 * The checker lets a size known only at run time (a filter's count, a
 * comprehension's `n - 1`) meet any other size (frontend/ast.c:
 * fe_dim_equal); docs/language.md makes a mismatch a run-time error. Where
 * two sizes meet that are not known to be equal, lowering adds a same_size
 * statement (checked on the host, ops.def), and an operand of the other size
 * is read with bounds checks, so that an entry that goes on after a failed
 * check (the C backend records the error and fails at the end, as for an
 * index out of bounds) reads nothing outside an array. */

/* A same_size check of a against b (a: the operation's size) unless they
 * are known to be equal. */
void check_same_size(Lower *L, IrValue *a, IrValue *b, int line, const char *what) {
    if (!a || !b || same_size(a, b)) { return; }
    IrStmt *s = ir_stmt_new(L->m, L->e, IR_S_SCALAR, IR_AOP_same_size, line);
    s->what = what;
    s->map = ir_lambda_new(L->m, 0, NULL, 2);
    s->map->res[0] = ir_e_free(L->m, a);
    s->map->res[1] = ir_e_free(L->m, b);
}

/* Is the size value v never negative (a size variable, a non-negative
 * constant, a filter's count, a checked size)? */
static bool known_nonneg(const IrValue *v) {
    if (v->is_size || (v->has_const && v->const_val >= 0)) { return true; }
    return v->def && (v->def->kind == IR_S_FILTER || v->def->src == IR_AOP_nonneg_size);
}

/* A size computed at run time (a comprehension's, iota's) as an i64 value:
 * checked on the host to be non-negative unless it is known to be, since a
 * negative one has no array (ops.def: nonneg_size). */
IrValue *checked_size(Lower *L, IrExpr *x, int line, const char *what) {
    x = ir_e_cast(L->m, IR_I64, x);
    if (x->kind == IR_E_CONST && x->c.i >= 0) { return ir_size_const(L->m, L->e, x->c.i, line); }
    if (x->kind == IR_E_FREE && known_nonneg(x->val)) { return x->val; }
    /* the same size checked already (`for (i, j) in (k, k)`, the size of an
     * `k: i64` parameter): one value */
    for (int i = 0; i < L->e->nstmts; i++) {
        IrStmt *s = L->e->stmts[i];
        if (s->src == IR_AOP_nonneg_size && s->nouts == 1 && ir_expr_equal(s->map->res[0], x)) { return s->outs[0]; }
    }
    IrStmt *s = ir_stmt_new(L->m, L->e, IR_S_SCALAR, IR_AOP_nonneg_size, line);
    s->what = what;
    s->map = ir_lambda_new(L->m, 0, NULL, 1);
    s->map->res[0] = x;
    IrValue *v = ir_value_new(L->m, L->e, IR_I64, 0, NULL, NULL);
    ir_stmt_add_out(L->m, s, v);
    return v;
}

/* The array a with the shape (w0, w1) (w1 NULL for 1-D) an operation gives
 * it: a itself when its sizes are known to be those, else checked at run
 * time and read with bounds checks, by a map that fusion folds into the
 * operation. */
IrValue *conform(Lower *L, IrValue *a, IrValue *w0, IrValue *w1, int line, const char *what) {
    bool two = a->rank == 2 && w1;
    if (!w0 || (same_size(a->dims[0], w0) && (!two || same_size(a->dims[1], w1)))) { return a; }
    check_same_size(L, w0, a->dims[0], line, two ? ir_fmt(L->m->arena, "the rows of %s", what) : what);
    if (two) { check_same_size(L, w1, a->dims[1], line, ir_fmt(L->m->arena, "the columns of %s", what)); }
    IrStmt *s = ir_stmt_new(L->m, L->e, IR_S_SCREMA, two ? IR_AOP_map2d : IR_AOP_map, line);
    s->rank = two ? 2 : 1;
    s->w[0] = w0;
    s->w[1] = two ? w1 : NULL;
    s->map = ir_lambda_new(L->m, 0, NULL, 1);
    s->map->res[0] = ir_e_read(L->m, a, ir_e_idx(L->m, 0), two ? ir_e_idx(L->m, 1) : NULL);
    IrValue *o = ir_value_new(L->m, L->e, a->elem, s->rank, w0, s->w[1]);
    ir_stmt_add_out(L->m, s, o);
    return o;
}

/* How a lifted operation is named in a run-time size error, as the
 * checker names it at compile time. */
static const char *lifted_what(Lower *L, const FeExpr *x) {
    if (x->kind == FE_EX_BINARY || x->kind == FE_EX_UNARY) { return ir_fmt(L->m->arena, "operator '%s'", fe_op_name(x->op)); }
    if (x->kind == FE_EX_CALL && x->builtin == FE_B_NONE) { return ir_fmt(L->m->arena, "call to '%s'", x->text); }
    if (x->kind == FE_EX_CALL) { return ir_fmt(L->m->arena, "'%s'", fe_builtin_name(x->builtin)); }
    return "a conversion";
}

/* The shape of a lifted op from its whole (non-broadcast) array operands, as
 * lifted_operand would pick it, before any operand is read: an operand whose
 * size differs from it (the checker lets a size known only at run time meet
 * another size) is then read with bounds checks, so a shorter one stops the
 * program with an index error instead of being read past its end. */
static void lifted_shape(FeExpr **ops, LVal **vals, int nops, IrValue **shape) {
    for (int i = 0; i < nops; i++) {
        FeExpr *ox = unwrap_col(ops[i]);
        if (vals[i]->kind != LV_ARRAY || ox->bcast != FE_BC_NONE) { continue; }
        IrValue *a = vals[i]->arr;
        if (!shape[0] || shape[0]->has_const) { shape[0] = a->dims[0]; }
        if (a->rank == 2 && (!shape[1] || shape[1]->has_const)) { shape[1] = a->dims[1]; }
    }
}

/* An operand of a lifted op, as an element expression. */
/* `what` and `line` name the operation in a run-time size error. */
static IrExpr *lifted_operand(Lower *L, FeExpr *ox, LVal *v, Ins *in, IrValue **shape, int rank, const char *what, int line) {
    if (v->kind == LV_SCALAR) { return v->x; }
    IrValue *a = need_array(L, v, ox->loc.line);
    if (!a) { lerr(L, ox->loc, "internal: array operand not supported here"); return ir_e_const_i(L->m, IR_I32, 0); }
    IrArena *ar = L->m->arena;
    switch (ox->bcast) {
    case FE_BC_SCALAR: return ir_e_const_i(L->m, a->elem, 0);
    case FE_BC_ROW:
        if (!shape[1]) { shape[1] = a->dims[0]; }
        if (rank == 2) { check_same_size(L, shape[1], a->dims[0], line, ir_fmt(ar, "the columns of %s", what)); }
        return ir_e_read(L->m, a, ir_e_idx(L->m, rank == 2 ? 1 : 0), NULL);
    case FE_BC_COL:
        if (!shape[0]) { shape[0] = a->dims[0]; }
        check_same_size(L, shape[0], a->dims[0], line, ir_fmt(ar, "the rows of %s", what));
        return ir_e_read(L->m, a, ir_e_idx(L->m, 0), NULL);
    case FE_BC_NONE:
    default:
        if (shape[0] && (!same_size(shape[0], a->dims[0]) || (a->rank == 2 && shape[1] && !same_size(shape[1], a->dims[1])))) {
            check_same_size(L, shape[0], a->dims[0], line, a->rank == 2 ? ir_fmt(ar, "the rows of %s", what) : what);
            if (a->rank == 2) { check_same_size(L, shape[1], a->dims[1], line, ir_fmt(ar, "the columns of %s", what)); }
            return ir_e_read(L->m, a, ir_e_idx(L->m, 0), a->rank == 2 ? ir_e_idx(L->m, 1) : NULL);
        }
        if (!shape[0] || shape[0]->has_const) { shape[0] = a->dims[0]; }
        if (a->rank == 2 && (!shape[1] || shape[1]->has_const)) { shape[1] = a->dims[1]; }
        return ir_e_param(L->m, a->elem, add_in(L, in, a));
    }
}

LVal *lifted(Lower *L, FeExpr *x, FeExpr **ops, int nops, Env *env) {
    IrModule *m = L->m;
    LVal **vals = ir_alloc(m->arena, sizeof *vals * (size_t)(nops + 1));
    bool inv = true, anyvarr = false;
    for (int i = 0; i < nops; i++) {
        vals[i] = lower(L, unwrap_col(ops[i]), env);
        if (!lv_invariant(vals[i])) { inv = false; }
        if (vals[i]->kind == LV_VARR) { anyvarr = true; }
    }
    int rank = x->type && x->type->kind == FE_TY_ARRAY ? x->type->rank : 1;
    if (!inv || anyvarr) {
        /* inside a lambda: a virtual array */
        if (rank != 1) { lerr(L, x->loc, "2-D array operations inside a lambda are not supported yet"); return lv_scalar(L, ir_e_const_i(m, IR_I32, 0)); }
        int var = L->next_var++;
        IrExpr **a = ir_alloc(m->arena, sizeof *a * (size_t)(nops + 1));
        IrExpr *len = NULL;
        for (int i = 0; i < nops; i++) {
            if (vals[i]->kind == LV_SCALAR) { a[i] = vals[i]->x; continue; }
            LVal *va = as_varr(L, vals[i]);
            if (!va) { lerr(L, x->loc, "internal: unsupported operand in a lambda"); return vals[i]; }
            a[i] = subst_loopvar(L, va->body, va->var, ir_e_loopvar(m, var));
            if (!len) { len = va->len; }
        }
        LVal *r = lv_new(L, LV_VARR);
        r->var = var;
        r->len = len;
        r->body = scalar_op(L, x, a, nops);
        r->elem = r->body->ty;
        return r;
    }
    Ins in = { 0 };
    IrValue *shape[2] = { 0 };
    IrExpr **a = ir_alloc(m->arena, sizeof *a * (size_t)(nops + 1));
    lifted_shape(ops, vals, nops, shape);
    const char *what = lifted_what(L, x);
    for (int i = 0; i < nops; i++) { a[i] = lifted_operand(L, ops[i], vals[i], &in, shape, rank, what, x->loc.line); }
    IrExpr *body = scalar_op(L, x, a, nops);
    IrStmt *s = ir_stmt_new(m, L->e, IR_S_SCREMA, rank == 2 ? IR_AOP_map2d : IR_AOP_map, x->loc.line);
    s->rank = rank;
    s->w[0] = shape[0];
    s->w[1] = shape[1];
    if (!shape[0] || (rank == 2 && !shape[1])) { lerr(L, x->loc, "internal: cannot find the shape of a lifted operation"); return lv_scalar(L, body); }
    s->nins = in.nins;
    s->ins = in.ins;
    IrScalar *pt = ir_alloc(m->arena, sizeof *pt * (size_t)(in.nins + 1));
    for (int i = 0; i < in.nins; i++) { pt[i] = in.ins[i]->elem; }
    s->map = ir_lambda_new(m, in.nins, pt, 1);
    s->map->res[0] = body;
    IrValue *o = ir_value_new(m, L->e, body->ty, rank, shape[0], rank == 2 ? shape[1] : NULL);
    ir_stmt_add_out(m, s, o);
    return lv_array(L, o);
}

/* ---- functions as values ---- */
static LVal *bind_pattern(Lower *L, FePattern *p, LVal *v, Env **env) {
    switch (p->kind) {
    case FE_PAT_NAME: *env = bind(L, *env, p->bind, v); break;
    case FE_PAT_WILD: break;
    case FE_PAT_TUPLE:
        if (v->kind != LV_TUPLE || v->n != p->nelems) { lerr(L, p->loc, "internal: tuple pattern does not match"); break; }
        for (int i = 0; i < p->nelems; i++) { bind_pattern(L, p->elems[i], v->elems[i], env); }
        break;
    }
    return v;
}

/* Every call is inlined, so a function that calls another twice, nested k
 * deep, grows the entry 2^k times: the number of calls inlined per entry is
 * capped (far above what real programs need) so such a program is an error,
 * not a hang. */
enum { MAX_INLINED_CALLS = 10000 };

/* The arrays of a call's arguments whose parameters share a size name
 * (`fn f(a: f32[k], b: f32[k])`) must have one size: checked at run time
 * where the sizes are not known to be equal (check_calls.c checks the
 * others at compile time). */
static void check_call_sizes(Lower *L, FeFunc *fn, LVal **args, int nargs, SrcLoc loc) {
    enum { MAX_NAMES = 32 };
    const char *names[MAX_NAMES];
    IrValue *sizes[MAX_NAMES];
    int nnames = 0;
    for (int i = 0; i < fn->nparams && i < nargs; i++) {
        const FeType *t = fn->params[i].type;
        if (!t || t->kind != FE_TY_ARRAY) { continue; }
        int n;
        LVal **lv = flat(L, args[i], &n);
        for (int j = 0; j < n; j++) {
            if (lv[j]->kind != LV_ARRAY || lv[j]->arr->rank != t->rank) { continue; }
            for (int d = 0; d < t->rank; d++) {
                if (t->dims[d].kind != FE_DIM_VAR) { continue; }
                IrValue *size = lv[j]->arr->dims[d];
                int k = 0;
                while (k < nnames && strcmp(names[k], t->dims[d].name) != 0) { k++; }
                if (k == nnames && nnames < MAX_NAMES) {
                    names[nnames] = t->dims[d].name;
                    sizes[nnames++] = size;
                } else if (k < nnames) {
                    check_same_size(L, sizes[k], size, loc.line,
                                    ir_fmt(L->m->arena, "call to '%s' ('%s')", fn->name, t->dims[d].name));
                }
            }
        }
    }
}

LVal *apply(Lower *L, LVal *f, LVal **args, int nargs, SrcLoc loc) {
    if (L->depth > 64) { lerr(L, loc, "calls nested more than 64 functions deep cannot be inlined"); return args[0]; }
    if (++L->inlined > MAX_INLINED_CALLS) {
        lerr(L, L->entry->loc, "this entry is too large once its function calls are inlined (more than 10000 calls)");
        return args[0];
    }
    L->depth++;
    LVal *r = NULL;
    if (f->lambda) {
        Env *env = f->closure;
        for (int i = 0; i < f->lambda->nparams && i < nargs; i++) { bind_pattern(L, f->lambda->params[i], args[i], &env); }
        r = lower(L, f->lambda->a, env);
    } else if (f->fn) {
        Env *env = NULL;
        check_call_sizes(L, f->fn, args, nargs, loc);
        for (int i = 0; i < f->fn->nparams && i < nargs; i++) { env = bind(L, env, f->fn->params[i].bind, args[i]); }
        r = lower(L, f->fn->body, env);
    } else if (f->is_section) {
        IrExpr *a = scalar_of(L, args[0], loc);
        IrExpr *b = nargs > 1 ? scalar_of(L, args[1], loc) : NULL;
        r = lv_scalar(L, b ? ir_e_bin(L->m, fe_binop(f->section_op, a->ty), a, b) : a);
    } else if (f->builtin) {
        IrExpr *a[3] = { 0 };
        for (int i = 0; i < nargs && i < 3; i++) { a[i] = scalar_of(L, args[i], loc); }
        IrExpr *v = scalar_builtin(L->m, f->builtin, a);
        if (!v) {
            lerr(L, loc, "internal: unsupported builtin used as a function");
            v = a[0];
        }
        r = lv_scalar(L, v);
    } else {
        lerr(L, loc, "internal: not a function");
        r = args[0];
    }
    L->depth--;
    return r;
}

/* element-type LVal of parameters numbered from `*k` with the structure of an FE type */
static LVal *typed_params(Lower *L, const FeType *t, IrScalar **pt, int *k) {
    if (t->kind == FE_TY_TUPLE) {
        LVal *v = lv_tuple(L, t->nelems);
        for (int i = 0; i < t->nelems; i++) { v->elems[i] = typed_params(L, t->elems[i], pt, k); }
        return v;
    }
    if (t->kind == FE_TY_STRUCT) {
        LVal *v = lv_tuple(L, t->sdecl->nfields);
        for (int i = 0; i < t->sdecl->nfields; i++) { v->elems[i] = typed_params(L, t->sdecl->field_types[i], pt, k); }
        return v;
    }
    (*pt)[*k] = sc(t);
    return lv_scalar(L, ir_e_param(L->m, sc(t), (*k)++));
}

static int fe_leaves(const FeType *t) {
    if (t->kind == FE_TY_TUPLE) { int n = 0; for (int i = 0; i < t->nelems; i++) { n += fe_leaves(t->elems[i]); } return n; }
    if (t->kind == FE_TY_STRUCT) { int n = 0; for (int i = 0; i < t->sdecl->nfields; i++) { n += fe_leaves(t->sdecl->field_types[i]); } return n; }
    if (t->kind == FE_TY_ARRAY) { return fe_leaves(t->elem); }
    return 1;
}

/* Flatten the array arguments into the statement's inputs. Every input has
 * the shape of the first (conform: a size known only at run time that
 * differs fails the entry, as `what` at loc). */
int collect_arrays(Lower *L, LVal *v, Ins *in, IrValue **width, SrcLoc loc, const char *what) {
    int n;
    LVal **lv = flat(L, v, &n);
    for (int i = 0; i < n; i++) {
        IrValue *a = need_array(L, lv[i], loc.line);
        if (!a) { lerr(L, loc, "internal: expected an array"); return 0; }
        if (!*width) { *width = a->dims[0]; }
        a = conform(L, a, *width, in->nins && in->ins[0]->rank == 2 ? in->ins[0]->dims[1] : NULL, loc.line, what);
        IrValue **nn = ir_alloc(L->m->arena, sizeof *nn * (size_t)(in->nins + 1));
        if (in->nins) { memcpy(nn, in->ins, sizeof *nn * (size_t)in->nins); }
        nn[in->nins++] = a;
        in->ins = nn;
        lv[i] = lv_array(L, a);
    }
    return n;
}

LVal *func_value(Lower *L, FeExpr *x, Env *env) {
    LVal *f = lv_new(L, LV_FUNC);
    if (x->kind == FE_EX_LAMBDA) { f->lambda = x; f->closure = env; }
    else if (x->kind == FE_EX_SECTION) { f->is_section = true; f->section_op = x->op; }
    else if (x->kind == FE_EX_NAME && x->name_kind == FE_NAME_FUNC) { f->fn = x->func; }
    else if (x->kind == FE_EX_NAME && x->name_kind == FE_NAME_BUILTIN) { f->builtin = x->builtin; }
    else if (x->kind == FE_EX_NAME && x->name_kind == FE_NAME_VAR) {
        LVal *v = lookup(env, x->bind);
        if (v && v->kind == LV_FUNC) { return v; }
    } else {
        lerr(L, x->loc, "internal: unsupported function value");
    }
    return f;
}

/* Build an operator (reduce/scan) from a function value and its neutral element. */
IrOperator make_operator(Lower *L, LVal *f, LVal *ne, const FeType *elem_t, SrcLoc loc) {
    IrModule *m = L->m;
    IrOperator o = { 0 };
    int ar = fe_leaves(elem_t);
    IrScalar *pt = ir_alloc(m->arena, sizeof *pt * (size_t)(2 * ar + 1));
    int k = 0;
    LVal *acc = typed_params(L, elem_t, &pt, &k);
    LVal *xx = typed_params(L, elem_t, &pt, &k);
    LVal *args[2] = { acc, xx };
    LVal *r = apply(L, f, args, 2, loc);
    int n;
    LVal **rl = flat(L, r, &n);
    o.arity = ar;
    o.op = ir_lambda_new(m, 2 * ar, pt, ar);
    for (int i = 0; i < ar && i < n; i++) { o.op->res[i] = scalar_of(L, rl[i], loc); }
    int nn;
    LVal **nl = flat(L, ne, &nn);
    o.ne = ir_alloc(m->arena, sizeof *o.ne * (size_t)(ar + 1));
    for (int i = 0; i < ar; i++) {
        o.ne[i] = i < nn ? scalar_of(L, nl[i], loc) : ir_e_const_i(m, pt[i], 0);
        if (o.ne[i]->ty != pt[i]) { o.ne[i] = ir_e_cast(m, pt[i], o.ne[i]); }
    }
    /* Commutative only when proven: every component k of the result is one
     * commutative binop of component k of the two operands (params k and
     * ar + k, in either order), e.g. (+) or (p.0 + q.0, max(p.1, q.1)).
     * Anything else (a select, a composition) is combined in index order
     * on the GPU (IrKernel.ordered). */
    o.commutative = n == ar;
    for (int i = 0; i < ar && o.commutative; i++) {
        IrExpr *r = o.op->res[i];
        o.commutative = r && r->kind == IR_E_BIN && (ir_binop_info[r->op].flags & IR_BF_COMM) &&
                        r->a[0]->kind == IR_E_PARAM && r->a[1]->kind == IR_E_PARAM &&
                        ((r->a[0]->index == i && r->a[1]->index == ar + i) ||
                         (r->a[0]->index == ar + i && r->a[1]->index == i));
    }
    if (o.commutative && ar == 1) { o.name = ir_binop_info[o.op->res[0]->op].name; }
    return o;
}

/* Outputs of a screma-like statement with the structure of `shape`. */
LVal *outs_like(Lower *L, IrStmt *s, const FeType *t, IrValue *d0, IrValue *d1, int rank) {
    int n = fe_leaves(t);
    IrScalar *pt = ir_alloc(L->m->arena, sizeof *pt * (size_t)(n + 1));
    int k = 0;
    LVal *shape = typed_params(L, t->kind == FE_TY_ARRAY ? t->elem : t, &pt, &k);
    LVal **leaves_ = ir_alloc(L->m->arena, sizeof *leaves_ * (size_t)(n + 1));
    for (int i = 0; i < n; i++) {
        IrValue *v = ir_value_new(L->m, L->e, pt[i], rank, d0, d1);
        ir_stmt_add_out(L->m, s, v);
        leaves_[i] = rank ? lv_array(L, v) : lv_scalar(L, ir_e_free(L->m, v));
    }
    int at = 0;
    return rebuild(L, shape, leaves_, &at);
}

/* A top-level "for" comprehension (1-D or 2-D). */
static LVal *lower_for(Lower *L, FeExpr *x, Env *env) {
    IrModule *m = L->m;
    LVal *e0 = lower(L, x->a, env);
    IrExpr *n0 = scalar_of(L, e0, x->loc);
    if (!invariant(n0)) { lerr(L, x->loc, "internal: comprehension inside a lambda"); return e0; }
    IrValue *w0 = checked_size(L, n0, x->loc.line, "'for'"), *w1 = NULL;
    if (x->rank == 2) {
        LVal *e1 = lower(L, x->c, env);
        w1 = checked_size(L, scalar_of(L, e1, x->loc), x->loc.line, "'for'");
    }
    Env *benv = bind(L, env, x->loop_vars[0], lv_scalar(L, ir_e_idx(m, 0)));
    if (x->rank == 2) { benv = bind(L, benv, x->loop_vars[1], lv_scalar(L, ir_e_idx(m, 1))); }
    /* for i in n => argmax(A[i, :]): a row reduction (row_reduction) */
    LVal *row = NULL;
    if (x->rank == 1 && is_whole_reduction(x->b)) {
        FeExpr *red = x->b;
        row = lower(L, red->builtin == FE_B_REDUCE ? red->args[2] : red->args[0], benv);
        LVal *r = row_reduction(L, red, x->loop_vars[0], row, w0, benv, x->loc.line);
        if (r) { return r; }
    }
    IrStmt *s = ir_stmt_new(m, L->e, IR_S_SCREMA, x->rank == 2 ? IR_AOP_for2d : IR_AOP_for1d, x->loc.line);
    s->rank = x->rank;
    s->w[0] = w0;
    s->w[1] = w1;
    LVal *r = row ? reduce_lval(L, x->b, row, -1, benv) : lower(L, x->b, benv);
    ir_entry_move_stmt(L->e, s, L->e->nstmts - 1);
    int n;
    LVal **rl = flat(L, r, &n);
    s->map = ir_lambda_new(m, 0, NULL, n);
    for (int i = 0; i < n; i++) { s->map->res[i] = scalar_of(L, rl[i], x->loc); }
    return outs_like(L, s, x->type, w0, w1, x->rank);
}

static LVal *lower_call(Lower *L, FeExpr *x, Env *env) {
    IrModule *m = L->m;
    if (x->builtin == FE_B_NONE) {
        /* a user fn: inline it (lifted calls of scalar fns are maps) */
        LVal **args = ir_alloc(m->arena, sizeof *args * (size_t)(x->nargs + 1));
        LVal f = { 0 };
        f.kind = LV_FUNC;
        f.fn = x->func;
        if (x->lifted) {
            /* map the scalar function over its (broadcast) arguments */
            for (int i = 0; i < x->nargs; i++) { args[i] = lower(L, x->args[i], env); }
            Ins in = { 0 };
            IrValue *shape[2] = { 0 };
            int rank = x->type->rank;
            LVal **el = ir_alloc(m->arena, sizeof *el * (size_t)(x->nargs + 1));
            lifted_shape(x->args, args, x->nargs, shape);
            const char *what = lifted_what(L, x);
            for (int i = 0; i < x->nargs; i++) { el[i] = lv_scalar(L, lifted_operand(L, x->args[i], args[i], &in, shape, rank, what, x->loc.line)); }
            IrStmt *s = ir_stmt_new(m, L->e, IR_S_SCREMA, rank == 2 ? IR_AOP_map2d : IR_AOP_map, x->loc.line);
            LVal *r = apply(L, &f, el, x->nargs, x->loc);
            ir_entry_move_stmt(L->e, s, L->e->nstmts - 1);
            s->rank = rank; s->w[0] = shape[0]; s->w[1] = shape[1];
            s->ins = in.ins; s->nins = in.nins;
            IrScalar *pt = ir_alloc(m->arena, sizeof *pt * (size_t)(in.nins + 1));
            for (int i = 0; i < in.nins; i++) { pt[i] = in.ins[i]->elem; }
            int n;
            LVal **rl = flat(L, r, &n);
            s->map = ir_lambda_new(m, in.nins, pt, n);
            for (int i = 0; i < n; i++) { s->map->res[i] = scalar_of(L, rl[i], x->loc); }
            return outs_like(L, s, x->type, shape[0], shape[1], rank);
        }
        for (int i = 0; i < x->nargs; i++) { args[i] = lower(L, x->args[i], env); }
        return apply(L, &f, args, x->nargs, x->loc);
    }
    return lower_builtin_call(L, x, env);
}

static LVal *lower_index(Lower *L, FeExpr *x, Env *env) {
    IrModule *m = L->m;
    LVal *a = lower(L, x->a, env);
    switch (x->index_kind) {
    case FE_IX_SCALAR: {
        int n;
        LVal **al = flat(L, a, &n);
        IrExpr *i0 = ir_e_cast(m, IR_I64, scalar_of(L, lower(L, x->idx[0], env), x->loc));
        IrExpr *i1 = x->nidx > 1 ? ir_e_cast(m, IR_I64, scalar_of(L, lower(L, x->idx[1], env), x->loc)) : NULL;
        LVal **el = ir_alloc(m->arena, sizeof *el * (size_t)(n + 1));
        for (int j = 0; j < n; j++) {
            if (al[j]->kind == LV_VARR) { el[j] = lv_scalar(L, subst_loopvar(L, al[j]->body, al[j]->var, i0)); continue; }
            el[j] = lv_scalar(L, ir_e_read(m, al[j]->arr, i0, i1));
        }
        int at = 0;
        return rebuild(L, a, el, &at);
    }
    case FE_IX_ROW: case FE_IX_COL: {
        if (a->kind != LV_ARRAY) { lerr(L, x->loc, "internal: slice of a non-array"); return a; }
        IrValue *A = a->arr;
        bool row = x->index_kind == FE_IX_ROW;
        IrExpr *i = ir_e_cast(m, IR_I64, scalar_of(L, lower(L, row ? x->idx[0] : x->idx[1], env), x->loc));
        LVal *v = lv_new(L, LV_VARR);
        v->var = L->next_var++;
        v->elem = A->elem;
        v->len = ir_e_free(m, A->dims[row ? 1 : 0]);
        v->body = row ? ir_e_read(m, A, i, ir_e_loopvar(m, v->var)) : ir_e_read(m, A, ir_e_loopvar(m, v->var), i);
        if (invariant(i)) { return lv_array(L, varr_to_value(L, v, x->loc.line)); }
        return v;
    }
    case FE_IX_GATHER: {
        LVal *idx = lower(L, x->idx[0], env);
        if (!lv_invariant(idx) || idx->kind == LV_VARR) {
            LVal *vi = as_varr(L, idx);
            if (!vi || a->kind != LV_ARRAY) { lerr(L, x->loc, "internal: gather inside a lambda"); return a; }
            LVal *v = lv_new(L, LV_VARR);
            v->var = vi->var; v->len = vi->len; v->elem = a->arr->elem;
            v->body = ir_e_read(m, a->arr, ir_e_cast(m, IR_I64, vi->body), NULL);
            return v;
        }
        IrValue *iv = need_array(L, idx, x->loc.line);
        int n;
        LVal **al = flat(L, a, &n);
        IrStmt *s = ir_stmt_new(m, L->e, IR_S_SCREMA, IR_AOP_gather, x->loc.line);
        s->w[0] = iv->dims[0];
        s->nins = 1;
        s->ins = ir_alloc(m->arena, sizeof *s->ins);
        s->ins[0] = iv;
        IrScalar pt[1] = { iv->elem };
        s->map = ir_lambda_new(m, 1, pt, n);
        LVal **outl = ir_alloc(m->arena, sizeof *outl * (size_t)(n + 1));
        for (int j = 0; j < n; j++) {
            s->map->res[j] = ir_e_read(m, al[j]->arr, ir_e_cast(m, IR_I64, ir_e_param(m, pt[0], 0)), NULL);
            IrValue *o = ir_value_new(m, L->e, al[j]->arr->elem, 1, iv->dims[0], NULL);
            ir_stmt_add_out(m, s, o);
            outl[j] = lv_array(L, o);
        }
        int at = 0;
        return rebuild(L, a, outl, &at);
    }
    }
    return a;
}

/* Array literal [e0, e1, ...]: a map over its index choosing element i.
 * Elements may be tuples or structs (one output per leaf). A 2-D literal
 * [r0, r1, ...] has 1-D arrays as rows, read at the column index; the rows
 * must have one size value (literal rows do, and so do rows sized by one
 * size variable): rows of run-time sizes are not supported yet. */
static LVal *lower_array_lit(Lower *L, FeExpr *x, Env *env) {
    IrModule *m = L->m;
    int n = x->nargs, rank = x->type->rank, nleaves = 0;
    LVal ***el = ir_alloc(m->arena, sizeof *el * (size_t)(n + 1));
    for (int i = 0; i < n; i++) {
        LVal *v = lower(L, x->args[i], env);
        el[i] = flat(L, v, &nleaves);
        for (int k = 0; rank == 2 && k < nleaves; k++) {
            IrValue *row = need_array(L, el[i][k], x->loc.line);
            if (!row || row->rank != 1) {
                lerr(L, x->args[i]->loc, "internal: a row of a 2-D array literal is not a 1-D array");
                return lv_scalar(L, ir_e_const_i(m, IR_I32, 0));
            }
            el[i][k] = lv_array(L, row);
        }
    }
    IrValue *w0 = ir_size_const(m, L->e, n, x->loc.line), *w1 = NULL;
    if (rank == 2) {
        w1 = el[0][0]->arr->dims[0];
        for (int i = 0; i < n; i++) {
            for (int k = 0; k < nleaves; k++) {
                IrValue *d = el[i][k]->arr->dims[0];
                bool same = d == w1 || (d->has_const && w1->has_const && d->const_val == w1->const_val);
                if (!same) {
                    lerr(L, x->args[i]->loc, "the rows of a 2-D array literal must have sizes known to be equal "
                                             "(rows of run-time sizes are not supported yet)");
                    return lv_scalar(L, ir_e_const_i(m, IR_I32, 0));
                }
            }
        }
    }
    IrStmt *s = ir_stmt_new(m, L->e, IR_S_SCREMA, rank == 2 ? IR_AOP_for2d : IR_AOP_for1d, x->loc.line);
    s->rank = rank;
    s->w[0] = w0;
    s->w[1] = w1;
    s->map = ir_lambda_new(m, 0, NULL, nleaves);
    for (int k = 0; k < nleaves; k++) {
        IrExpr *body = NULL;
        for (int i = n - 1; i >= 0; i--) {
            IrExpr *v = rank == 2 ? ir_e_read(m, el[i][k]->arr, ir_e_idx(m, 1), NULL) : scalar_of(L, el[i][k], x->args[i]->loc);
            body = body ? ir_e_select(m, ir_e_bin(m, IR_BIN_eq, ir_e_idx(m, 0), ir_e_const_i(m, IR_I64, i)), v, body) : v;
        }
        s->map->res[k] = body;
    }
    return outs_like(L, s, x->type, w0, w1, rank);
}

/* Does v hold an expression whose expanded tree passes IR_MAX_EXPR_TREE? */
static bool lv_too_big(LVal *v) {
    switch (v->kind) {
    case LV_SCALAR: return ir_expr_tree_size(v->x) > IR_MAX_EXPR_TREE;
    case LV_VARR: return ir_expr_tree_size(v->body) > IR_MAX_EXPR_TREE || ir_expr_tree_size(v->len) > IR_MAX_EXPR_TREE;
    case LV_TUPLE:
        for (int i = 0; i < v->n; i++) { if (lv_too_big(v->elems[i])) { return true; } }
        return false;
    default: return false;
    }
}

static LVal *lower_expr(Lower *L, FeExpr *x, Env *env);

/* Lower x. A value used twice is shared, so lets that each use the previous
 * one twice double the expanded expression: past IR_MAX_EXPR_TREE operations
 * that is an error, rather than passes that walk trees taking forever. */
LVal *lower(Lower *L, FeExpr *x, Env *env) {
    LVal *v = lower_expr(L, x, env);
    if (v && lv_too_big(v)) {
        lerr(L, x->loc, "this expression is too large once its shared values are expanded (more than 20000 operations)");
        return lv_scalar(L, ir_e_const_i(L->m, IR_I32, 0));
    }
    return v;
}

static LVal *lower_expr(Lower *L, FeExpr *x, Env *env) {
    IrModule *m = L->m;
    switch (x->kind) {
    case FE_EX_INT: {
        IrScalar t = sc(x->type);
        if (ir_scalar_is_float(t)) { return lv_scalar(L, ir_e_const_f(m, t, (double)x->ival)); }
        IrExpr *c = ir_e_const_i(m, t, (int64_t)x->ival);
        if (t == IR_U64) { c->c.u = x->ival; }
        return lv_scalar(L, c);
    }
    case FE_EX_FLOAT: return lv_scalar(L, ir_e_const_f(m, sc(x->type), x->fval));
    case FE_EX_BOOL: return lv_scalar(L, ir_e_const_b(m, x->ival != 0));
    case FE_EX_NAME:
        switch (x->name_kind) {
        case FE_NAME_VAR: {
            LVal *v = lookup(env, x->bind);
            if (!v) { lerr(L, x->loc, "internal: unbound variable in lowering"); return lv_scalar(L, ir_e_const_i(m, IR_I32, 0)); }
            return v;
        }
        case FE_NAME_SIZE:
            for (int i = 0; i < L->e->nsizes; i++) {
                if (strcmp(L->e->sizes[i]->name, x->text) == 0) { return lv_scalar(L, ir_e_free(m, L->e->sizes[i])); }
            }
            lerr(L, x->loc, "internal: unknown size variable");
            return lv_scalar(L, ir_e_const_i(m, IR_I64, 0));
        default: return func_value(L, x, env);
        }
    case FE_EX_UNARY:
        if (x->lifted) { return lifted(L, x, &x->a, 1, env); }
        { IrExpr *a = scalar_of(L, lower(L, x->a, env), x->loc); return lv_scalar(L, scalar_op(L, x, &a, 1)); }
    case FE_EX_BINARY:
        if (x->lifted) { FeExpr *ops[2] = { x->a, x->b }; return lifted(L, x, ops, 2, env); }
        {
            IrExpr *a[2] = { scalar_of(L, lower(L, x->a, env), x->loc), scalar_of(L, lower(L, x->b, env), x->loc) };
            return lv_scalar(L, scalar_op(L, x, a, 2));
        }
    case FE_EX_CAST:
        if (x->lifted) { return lifted(L, x, &x->a, 1, env); }
        { IrExpr *a = scalar_of(L, lower(L, x->a, env), x->loc); return lv_scalar(L, scalar_op(L, x, &a, 1)); }
    case FE_EX_CALL: return lower_call(L, x, env);
    case FE_EX_LAMBDA: case FE_EX_SECTION: return func_value(L, x, env);
    case FE_EX_TUPLE: case FE_EX_STRUCT: {
        LVal *t = lv_tuple(L, x->nargs);
        for (int i = 0; i < x->nargs; i++) { t->elems[i] = lower(L, x->args[i], env); }
        return t;
    }
    case FE_EX_ARRAY: return lower_array_lit(L, x, env);
    case FE_EX_FIELD: case FE_EX_TUPIDX: {
        LVal *v = lower(L, x->a, env);
        if (v->kind != LV_TUPLE || x->field_index >= v->n) { lerr(L, x->loc, "internal: field of a non-tuple"); return v; }
        return v->elems[x->field_index];
    }
    case FE_EX_INDEX: return lower_index(L, x, env);
    case FE_EX_IF: {
        LVal *c = lower(L, x->a, env);
        LVal *t = lower(L, x->b, env);
        LVal *f = lower(L, x->c, env);
        IrExpr *cx = scalar_of(L, c, x->loc);
        int nt, nf;
        LVal **tl = flat(L, t, &nt);
        LVal **fl = flat(L, f, &nf);
        LVal **r = ir_alloc(m->arena, sizeof *r * (size_t)(nt + 1));
        for (int i = 0; i < nt && i < nf; i++) {
            if (tl[i]->kind == LV_SCALAR && fl[i]->kind == LV_SCALAR) {
                r[i] = lv_scalar(L, ir_e_select(m, cx, tl[i]->x, fl[i]->x));
            } else if (tl[i]->kind == LV_ARRAY && fl[i]->kind == LV_ARRAY && invariant(cx)) {
                IrValue *a = tl[i]->arr;
                IrValue *b = conform(L, fl[i]->arr, a->dims[0], a->rank == 2 ? a->dims[1] : NULL, x->loc.line, "'if'");
                IrStmt *s = ir_stmt_new(m, L->e, IR_S_SCREMA, a->rank == 2 ? IR_AOP_map2d : IR_AOP_map, x->loc.line);
                s->rank = a->rank; s->w[0] = a->dims[0]; s->w[1] = a->dims[1];
                s->nins = 2;
                s->ins = ir_alloc(m->arena, sizeof *s->ins * 2);
                s->ins[0] = a; s->ins[1] = b;
                IrScalar pt[2] = { a->elem, b->elem };
                s->map = ir_lambda_new(m, 2, pt, 1);
                s->map->res[0] = ir_e_select(m, cx, ir_e_param(m, a->elem, 0), ir_e_param(m, b->elem, 1));
                IrValue *o = ir_value_new(m, L->e, a->elem, a->rank, a->dims[0], a->dims[1]);
                ir_stmt_add_out(m, s, o);
                r[i] = lv_array(L, o);
            } else {
                lerr(L, x->loc, "an if-then-else choosing between arrays inside a lambda is not supported yet");
                r[i] = tl[i];
            }
        }
        int at = 0;
        return rebuild(L, t, r, &at);
    }
    case FE_EX_LET: {
        LVal *v = lower(L, x->a, env);
        Env *e2 = env;
        bind_pattern(L, x->pat, v, &e2);
        return lower(L, x->b, e2);
    }
    case FE_EX_FOR: return lower_for(L, x, env);
    }
    lerr(L, x->loc, "internal: unsupported expression in lowering");
    return lv_scalar(L, ir_e_const_i(m, IR_I32, 0));
}

/* ---- entries ---- */
static IrValue *size_value(Lower *L, const FeDim *d) {
    if (d->kind == FE_DIM_VAR) {
        for (int i = 0; i < L->e->nsizes; i++) { if (strcmp(L->e->sizes[i]->name, d->name) == 0) { return L->e->sizes[i]; } }
    }
    if (d->kind == FE_DIM_CONST) {
        IrValue *v = ir_value_new(L->m, L->e, IR_I64, 0, NULL, NULL);
        v->has_const = true;
        v->const_val = d->value;
        return v;
    }
    return NULL;
}

/* Parameter of an entry: flattened into values, grouped for I/O. */
static LVal *param_value(Lower *L, const FeType *t, const char *name, bool *tuple_seen) {
    IrModule *m = L->m;
    IrEntry *e = L->e;
    if (t->kind == FE_TY_TUPLE || t->kind == FE_TY_STRUCT) {
        *tuple_seen = true;
        int n = t->kind == FE_TY_TUPLE ? t->nelems : t->sdecl->nfields;
        LVal *v = lv_tuple(L, n);
        for (int i = 0; i < n; i++) {
            v->elems[i] = param_value(L, t->kind == FE_TY_TUPLE ? t->elems[i] : t->sdecl->field_types[i],
                                      ir_fmt(m->arena, "%s_%d", name, i), tuple_seen);
        }
        return v;
    }
    if (t->kind == FE_TY_ARRAY && (t->elem->kind == FE_TY_TUPLE || t->elem->kind == FE_TY_STRUCT)) {
        /* array of tuples: a tuple of arrays (structure of arrays) */
        *tuple_seen = true;
        const FeType *el = t->elem;
        int n = el->kind == FE_TY_TUPLE ? el->nelems : el->sdecl->nfields;
        LVal *v = lv_tuple(L, n);
        for (int i = 0; i < n; i++) {
            FeType sub = *t;
            sub.elem = el->kind == FE_TY_TUPLE ? el->elems[i] : el->sdecl->field_types[i];
            v->elems[i] = param_value(L, &sub, ir_fmt(m->arena, "%s_%d", name, i), tuple_seen);
        }
        return v;
    }
    IrValue *v;
    if (t->kind == FE_TY_ARRAY) {
        v = ir_value_new(m, e, sc(t->elem), t->rank, size_value(L, &t->dims[0]), t->rank == 2 ? size_value(L, &t->dims[1]) : NULL);
    } else {
        v = ir_value_new(m, e, sc(t), 0, NULL, NULL);
    }
    v->name = name;
    v->is_param = true;
    e->params = realloc(e->params, sizeof *e->params * (size_t)(e->nparams + 1));
    e->params[e->nparams++] = v;
    return t->kind == FE_TY_ARRAY ? lv_array(L, v) : lv_scalar(L, ir_e_free(m, v));
}

/* A gdsl type string with structs spelled out ("Point { x: f32, y: f32 }[n]"),
 * as the program runner reads them. */
static const char *type_str(IrModule *m, const FeType *t) {
    switch (t->kind) {
    case FE_TY_TUPLE: {
        const char *s = "(";
        for (int i = 0; i < t->nelems; i++) { s = ir_fmt(m->arena, "%s%s%s", s, i ? ", " : "", type_str(m, t->elems[i])); }
        return ir_fmt(m->arena, "%s)", s);
    }
    case FE_TY_STRUCT: {
        const char *s = ir_fmt(m->arena, "%s {", t->sdecl->name);
        for (int i = 0; i < t->sdecl->nfields; i++) {
            s = ir_fmt(m->arena, "%s%s %s: %s", s, i ? "," : "", t->sdecl->field_names[i], type_str(m, t->sdecl->field_types[i]));
        }
        return ir_fmt(m->arena, "%s }", s);
    }
    case FE_TY_ARRAY: {
        const char *s = type_str(m, t->elem);
        for (int d = 0; d < t->rank; d++) {
            const FeDim *dm = &t->dims[d];
            if (dm->kind == FE_DIM_VAR) { s = ir_fmt(m->arena, "%s[%s]", s, dm->name); }
            else if (dm->kind == FE_DIM_CONST) { s = ir_fmt(m->arena, "%s[%lld]", s, (long long)dm->value); }
            else { s = ir_fmt(m->arena, "%s[_]", s); }
        }
        return s;
    }
    default:
        return t->kind <= FE_TY_F64 ? ir_scalar_name((IrScalar)t->kind) : "?";
    }
}

/* An entry's result of a size known only at run time where its type names
 * the size (`-> f32[n]` returning a filter's result): checked at run time. */
static void check_result_sizes(Lower *L, const FeType *t, LVal *v, int line, const char *what) {
    if (!t || !v) { return; }
    if ((t->kind == FE_TY_TUPLE || t->kind == FE_TY_STRUCT) && v->kind == LV_TUPLE) {
        int n = t->kind == FE_TY_TUPLE ? t->nelems : t->sdecl->nfields;
        for (int i = 0; i < n && i < v->n; i++) {
            check_result_sizes(L, t->kind == FE_TY_TUPLE ? t->elems[i] : t->sdecl->field_types[i], v->elems[i], line, what);
        }
        return;
    }
    if (t->kind != FE_TY_ARRAY) { return; }
    int n;
    LVal **lv = flat(L, v, &n);  /* an array of tuples is a tuple of arrays */
    for (int j = 0; j < n; j++) {
        if (lv[j]->kind != LV_ARRAY || lv[j]->arr->rank != t->rank) { continue; }
        IrValue *a = lv[j]->arr;
        for (int d = 0; d < t->rank; d++) {
            const FeDim *dim = &t->dims[d];
            IrValue *want = NULL;
            if (dim->kind == FE_DIM_VAR) {
                for (int k = 0; k < L->e->nsizes; k++) {
                    if (strcmp(L->e->sizes[k]->name, dim->name) == 0) { want = L->e->sizes[k]; }
                }
            } else if (dim->kind == FE_DIM_CONST && !(a->dims[d]->has_const && a->dims[d]->const_val == dim->value)) {
                want = ir_size_const(L->m, L->e, dim->value, line);
            }
            const char *w = t->rank == 2 ? ir_fmt(L->m->arena, "the %s of %s", d ? "columns" : "rows", what) : what;
            check_same_size(L, want, a->dims[d], line, w);
        }
    }
}

static void lower_entry(Lower *L, FeFunc *f) {
    IrModule *m = L->m;
    const char *name = f->inst_name ? f->inst_name : f->name;
    IrEntry *e = ir_entry_new(m, name, f->loc.line);
    L->e = e;
    L->entry = f;
    L->entry_errors = 0;
    L->inlined = 0;
    e->attr_block = (int)f->block;
    e->attr_unroll = (int)f->unroll;
    e->attr_items = (int)f->items;
    e->attr_tile = (int)f->tile;
    FeFunc *g = f->generic ? f->generic : f;
    if (g->ntparams && f->targs) {
        e->ntargs = g->ntparams;
        e->targs = ir_alloc(m->arena, sizeof *e->targs * (size_t)g->ntparams);
        for (int i = 0; i < g->ntparams; i++) {
            e->targs[i].name = g->tparams[i].name;
            e->targs[i].is_type = !f->targs[i].is_int;
            if (f->targs[i].is_int) { e->targs[i].value = f->targs[i].ival; }
            else { e->targs[i].type = sc(f->targs[i].type); }
        }
    }
    /* size variables first */
    e->sizes = ir_alloc(m->arena, sizeof *e->sizes * (size_t)(f->nsize_vars + 1));
    for (int i = 0; i < f->nsize_vars; i++) {
        IrValue *v = ir_value_new(m, e, IR_I64, 0, NULL, NULL);
        v->name = f->size_vars[i];
        v->is_size = true;
        e->sizes[e->nsizes++] = v;
    }
    Env *env = NULL;
    /* type strings for the program table (runner/gpuc_program.h) */
    e->param_types = ir_alloc(m->arena, sizeof *e->param_types * (size_t)(f->nparams + 1));
    for (int i = 0; i < f->nparams; i++) { e->param_types[i] = type_str(m, f->params[i].type); }
    e->result_type = type_str(m, f->result);
    e->groups_in = ir_alloc(m->arena, sizeof *e->groups_in * (size_t)(f->nparams + 1));
    e->params = NULL;
    for (int i = 0; i < f->nparams; i++) {
        int first = e->nparams;
        bool tup = false;
        LVal *v = param_value(L, f->params[i].type, f->params[i].name, &tup);
        IrGroup *gr = &e->groups_in[e->ngroups_in++];
        gr->name = f->params[i].name;
        gr->first = first;
        gr->count = e->nparams - first;
        gr->tuple = tup;
        env = bind(L, env, f->params[i].bind, v);
    }
    /* move params into the arena */
    IrValue **ps = ir_alloc(m->arena, sizeof *ps * (size_t)(e->nparams + 1));
    if (e->nparams) { memcpy(ps, e->params, sizeof *ps * (size_t)e->nparams); }
    free(e->params);
    e->params = ps;

    /* a size that is also a scalar parameter (`n: i64` with `-> f32[n]`)
     * is computed from it rather than passed separately */
    for (int i = 0; i < e->nsizes; i++) {
        IrValue *sv = e->sizes[i];
        for (int j = 0; j < e->nparams; j++) {
            IrValue *pv = e->params[j];
            if (pv->rank || !ir_scalar_is_int(pv->elem) || strcmp(pv->name, sv->name) != 0) { continue; }
            /* checked: a negative one fails the entry (ops.def: nonneg_size) */
            IrStmt *st = ir_stmt_new(m, e, IR_S_SCALAR, IR_AOP_nonneg_size, f->loc.line);
            st->what = ir_fmt(m->arena, "parameter '%s'", pv->name);
            st->map = ir_lambda_new(m, 0, NULL, 1);
            st->map->res[0] = ir_e_cast(m, IR_I64, ir_e_free(m, pv));
            sv->is_size = false;
            sv->name = NULL;
            ir_stmt_add_out(m, st, sv);
            ir_entry_move_stmt(e, st, 0);
            for (int k = i; k + 1 < e->nsizes; k++) { e->sizes[k] = e->sizes[k + 1]; }
            e->nsizes--;
            i--;
            break;
        }
    }
    LVal *r = lower(L, f->body, env);
    check_result_sizes(L, f->result, r, f->loc.line, ir_fmt(m->arena, "the result of '%s'", name));
    int n;
    LVal **rl = flat(L, r, &n);
    e->results = ir_alloc(m->arena, sizeof *e->results * (size_t)(n + 1));
    for (int i = 0; i < n; i++) {
        IrValue *v = NULL;
        if (rl[i]->kind == LV_ARRAY) { v = rl[i]->arr; }
        else if (rl[i]->kind == LV_SCALAR) { v = to_value(L, rl[i]->x, f->loc.line); }
        else if (rl[i]->kind == LV_VARR) { v = need_array(L, rl[i], f->loc.line); }
        if (!v) { lerr(L, f->loc, "internal: unsupported result"); v = ir_size_const(m, e, 0, f->loc.line); }
        e->results[e->nresults++] = v;
    }
    e->groups_out = ir_alloc(m->arena, sizeof *e->groups_out);
    e->ngroups_out = 1;
    e->groups_out[0].name = "result";
    e->groups_out[0].first = 0;
    e->groups_out[0].count = n;
    e->groups_out[0].tuple = r->kind == LV_TUPLE;
}

static bool has_func_type(const FeType *t) {
    if (!t) { return false; }
    if (t->kind == FE_TY_FUNC) { return true; }
    if (t->kind == FE_TY_ARRAY) { return has_func_type(t->elem); }
    if (t->kind == FE_TY_TUPLE) {
        for (int i = 0; i < t->nelems; i++) { if (has_func_type(t->elems[i])) { return true; } }
    }
    return false;
}

IrModule *ir_lower(struct FeProgram *prog, const IrLowerOptions *opts) {
    const char *file = prog->nmodules ? prog->modules[0]->path : "<input>";
    IrModule *m = ir_module_new(file);
    Lower L = { 0 };
    L.m = m;
    L.next_var = 0;
    for (int i = 0; i < prog->ninstances; i++) {
        FeFunc *f = prog->instances[i];
        if (!f->is_entry) { continue; }
        /* entries of the main file only (imported entries are not ours) */
        if (prog->nmodules && f->loc.file && strcmp(f->loc.file, prog->modules[0]->path) != 0) { continue; }
        lower_entry(&L, f);
    }
    if (L.errors) {
        ir_module_free(m);
        return NULL;
    }
    if (opts && opts->fns_as_entries) {
        /* non-template helper fns of the main file, so test blocks can call
         * them; one that cannot be lowered as an entry is left out */
        for (int i = 0; i < prog->ninstances; i++) {
            FeFunc *f = prog->instances[i];
            FeFunc *g = f->generic ? f->generic : f;
            if (f->is_entry || g->ntparams) { continue; }
            if (prog->nmodules && f->loc.file && strcmp(f->loc.file, prog->modules[0]->path) != 0) { continue; }
            bool skip = has_func_type(f->result);
            for (int k = 0; k < f->nparams; k++) { skip = skip || has_func_type(f->params[k].type); }
            const char *name = f->inst_name ? f->inst_name : f->name;
            for (int k = 0; k < m->nentries; k++) { skip = skip || strcmp(m->entries[k]->name, name) == 0; }
            if (skip) { continue; }
            int before = m->nentries;
            L.quiet = true;
            L.errors = 0;
            lower_entry(&L, f);
            if (L.errors) { m->nentries = before; }
            L.quiet = false;
            L.errors = 0;
        }
    }
    return m;
}

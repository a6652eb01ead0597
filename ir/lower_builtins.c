/* lower_builtins.c: builtin calls, lowered as their row of
 * frontend/builtins.def says: map, reductions (a fold inside a lambda, a
 * reduce statement elsewhere), scans, filter, scatter, zip, iota,
 * replicate, shape queries, and scalar functions (scalar_builtin: a binary
 * operator, a math function or clamp; also for builtins passed as
 * functions and the operators of sum, prod, min, max, all, any). */
#include "lower_internal.h"

/* What one application of a builtin to scalars is (builtins.def's scalar
 * and op columns): lifted calls, builtins passed as functions, and the
 * combining operator of sum, prod, min, max, all and any. */
typedef enum { SCALAR_NONE, SCALAR_BIN, SCALAR_MATH, SCALAR_CLAMP } ScalarKind;
typedef struct { ScalarKind kind; int op; /* IrBinop or IrMath */ } BuiltinScalar;
#define SCALAR_OP_NONE(op) 0
#define SCALAR_OP_CLAMP(op) 0
#define SCALAR_OP_BIN(op) IR_BIN_##op
#define SCALAR_OP_MATH(op) IR_MATH_##op
static const BuiltinScalar builtin_scalars[FE_B_COUNT] = {
#define FE_BUILTIN(id, name, kind, min_args, max_args, rule, operands, result, lower, scalar, op) \
    [FE_B_##id] = { SCALAR_##scalar, SCALAR_OP_##scalar(op) },
#include "builtins.def"
#undef FE_BUILTIN
};

/* Builtin b applied to the scalars a[0..]; NULL when b has no scalar form. */
IrExpr *scalar_builtin(IrModule *m, FeBuiltin b, IrExpr **a) {
    const BuiltinScalar *s = &builtin_scalars[b];
    switch (s->kind) {
    case SCALAR_BIN: return ir_e_bin(m, (IrBinop)s->op, a[0], a[1]);
    case SCALAR_MATH: return ir_e_math(m, (IrMath)s->op, a);
    case SCALAR_CLAMP: return ir_e_bin(m, IR_BIN_min, ir_e_bin(m, IR_BIN_max, a[0], a[1]), a[2]);
    case SCALAR_NONE: break;
    }
    return NULL;
}

/* The combining operator of sum, prod, min, max, all, any (builtins.def). */
static IrBinop reduce_binop(FeBuiltin b, IrScalar t) {
    (void)t;
    const BuiltinScalar *s = &builtin_scalars[b];
    return s->kind == SCALAR_BIN ? (IrBinop)s->op : IR_BIN_add;
}

/* The neutral element of reduction `op` over `count` elements of type t.
 * Float min and max ignore NaN unless every element is NaN
 * (docs/language.md): their neutral element is NaN (fmin(NaN, x) = x, and
 * all-NaN stays NaN), except that no element at all gives +-inf, so it is
 * `count == 0 ? +-inf : NaN`, still a neutral element wherever it is used. */
static IrExpr *reduce_neutral(IrModule *m, IrBinop op, IrScalar t, IrExpr *count) {
    IrExpr *ne = ir_neutral(m, op, t);
    if ((op != IR_BIN_min && op != IR_BIN_max) || !ir_scalar_is_float(t)) { return ne; }
    IrExpr *empty = ir_e_bin(m, IR_BIN_eq, count, ir_e_const_i(m, count->ty, 0));
    return ir_e_select(m, empty, ne, ir_e_const_f(m, t, NAN));
}

/* Index `idx` of element `v` for argmin/argmax, -1 ("none") when v is NaN:
 * NaN elements are skipped. */
static IrExpr *arg_index(IrModule *m, IrExpr *v, IrExpr *idx) {
    if (!ir_scalar_is_float(v->ty)) { return idx; }
    IrExpr *a[1] = { v };
    return ir_e_select(m, ir_e_math(m, IR_MATH_isnan, a), ir_e_const_i(m, IR_I64, -1), idx);
}

/* reduce over a virtual array inside a lambda: a fold */
static LVal *fold_varr(Lower *L, LVal *va, IrBinop op, SrcLoc loc) {
    (void)loc;
    IrExpr *ne = reduce_neutral(L->m, op, va->elem, va->len);
    return lv_scalar(L, ir_e_fold(L->m, va->var, op, va->len, ne, va->body));
}

/* The reduction x (sum, ..., argmax, reduce) of the array arr (x's array
 * operand, already lowered), along `axis` (-1: all of a 1-D array). */
LVal *reduce_lval(Lower *L, FeExpr *x, LVal *arr, int axis, Env *env) {
    IrModule *m = L->m;
    FeBuiltin b = x->builtin;
    bool general = b == FE_B_REDUCE;
    FeExpr *arr_x = general ? x->args[2] : x->args[0];
    if (arr->kind == LV_VARR || (!lv_invariant(arr) && arr->kind != LV_TUPLE)) {
        if (general || b == FE_B_ARGMIN || b == FE_B_ARGMAX) {
            const char *what = general ? "reduce(op, ne, A" : b == FE_B_ARGMIN ? "argmin(A" : "argmax(A";
            lerr(L, x->loc, ir_fmt(m->arena, "%s of an array computed inside a lambda is supported only as the whole body of "
                                   "a comprehension over rows (for i in n => %s[i, :])%s); write %s, 1) for a row-wise %s",
                                   general ? "reduce" : x->text, what, general ? ", op and ne not using i" : "", what,
                                   general ? "reduce" : x->text));
            return lv_scalar(L, ir_e_const_i(m, IR_I32, 0));
        }
        LVal *va = as_varr(L, arr);
        return fold_varr(L, va, reduce_binop(b, va->elem), x->loc);
    }
    const FeType *at = arr_x->type;
    const FeType *elem_t = at->elem;
    Ins in = { 0 };
    IrValue *w = NULL;
    collect_arrays(L, arr, &in, &w, x->loc, ir_fmt(m->arena, "'%s'", fe_builtin_name(x->builtin)));
    if (!in.nins) { return lv_scalar(L, ir_e_const_i(m, IR_I32, 0)); }
    IrValue *A = in.ins[0];
    IrStmt *s;
    if (axis >= 0 && A->rank == 2) {
        s = ir_stmt_new(m, L->e, IR_S_SEGRED, IR_AOP_reduce_axis, x->loc.line);
        s->rank = 2;
        s->w[0] = A->dims[0];
        s->w[1] = A->dims[1];
        s->axis = axis;
    } else {
        s = ir_stmt_new(m, L->e, IR_S_SCREMA, IR_AOP_reduce, x->loc.line);
        s->w[0] = w;
    }
    s->ins = in.ins;
    s->nins = in.nins;
    IrScalar *pt = ir_alloc(m->arena, sizeof *pt * (size_t)(in.nins + 3));
    for (int i = 0; i < in.nins; i++) { pt[i] = in.ins[i]->elem; }
    IrOperator op;
    if (general) {
        LVal *f = func_value(L, x->args[0], env);
        LVal *ne = lower(L, x->args[1], env);
        op = make_operator(L, f, ne, elem_t, x->loc);
        s->map = ir_lambda_new(m, in.nins, pt, in.nins);
        for (int i = 0; i < in.nins; i++) { s->map->res[i] = ir_e_param(m, pt[i], i); }
    } else if (b == FE_B_ARGMIN || b == FE_B_ARGMAX) {
        IrScalar t = pt[0];
        IrScalar opt[4] = { t, IR_I64, t, IR_I64 };
        op.arity = 2;
        op.op = ir_lambda_new(m, 4, opt, 2);
        IrExpr *v1 = ir_e_param(m, t, 0), *i1 = ir_e_param(m, IR_I64, 1), *v2 = ir_e_param(m, t, 2), *i2 = ir_e_param(m, IR_I64, 3);
        IrBinop better = b == FE_B_ARGMIN ? IR_BIN_lt : IR_BIN_gt;
        /* take the second if strictly better, or equal with a smaller index; -1
         * marks "none" (no element yet, or a NaN one: arg_index skips NaN) */
        IrExpr *take2 = ir_e_bin(m, IR_BIN_lor, ir_e_bin(m, IR_BIN_lt, i1, ir_e_const_i(m, IR_I64, 0)),
                                 ir_e_bin(m, IR_BIN_land, ir_e_bin(m, IR_BIN_ge, i2, ir_e_const_i(m, IR_I64, 0)),
                                          ir_e_bin(m, IR_BIN_lor, ir_e_bin(m, better, v2, v1),
                                                   ir_e_bin(m, IR_BIN_land, ir_e_bin(m, IR_BIN_eq, v2, v1), ir_e_bin(m, IR_BIN_lt, i2, i1)))));
        op.op->res[0] = ir_e_select(m, take2, v2, v1);
        op.op->res[1] = ir_e_select(m, take2, i2, i1);
        op.ne = ir_alloc(m->arena, sizeof *op.ne * 2);
        op.ne[0] = ir_e_const_i(m, t, 0);
        op.ne[1] = ir_e_const_i(m, IR_I64, -1);
        op.commutative = true;
        op.name = b == FE_B_ARGMIN ? "argmin" : "argmax";
        s->map = ir_lambda_new(m, 1, pt, 2);
        s->map->res[0] = ir_e_param(m, t, 0);
        s->map->res[1] = arg_index(m, s->map->res[0], ir_e_idx(m, axis == 0 ? 0 : (s->rank == 2 ? 1 : 0)));
        op.exclusive = false;
        s->reds = ir_alloc(m->arena, sizeof *s->reds);
        s->reds[0] = op;
        s->nreds = 1;
        IrValue *d = s->rank == 2 ? (axis == 1 ? s->w[0] : s->w[1]) : NULL;
        IrValue *vv = ir_value_new(m, L->e, t, s->rank == 2 ? 1 : 0, d, NULL);
        IrValue *iv = ir_value_new(m, L->e, IR_I64, s->rank == 2 ? 1 : 0, d, NULL);
        ir_stmt_add_out(m, s, vv);
        ir_stmt_add_out(m, s, iv);
        /* no element: index -1 becomes 0?  keep -1 as the language's "none" */
        return s->rank == 2 ? lv_array(L, iv) : lv_scalar(L, ir_e_free(m, iv));
    } else {
        op = ir_operator_binop(m, reduce_binop(b, pt[0]), pt[0], false);
        IrValue *count = s->kind == IR_S_SEGRED ? (axis == 1 ? s->w[1] : s->w[0]) : s->w[0];
        op.ne[0] = reduce_neutral(m, reduce_binop(b, pt[0]), pt[0], ir_e_free(m, count));
        s->map = ir_lambda_new(m, 1, pt, 1);
        s->map->res[0] = ir_e_param(m, pt[0], 0);
    }
    s->reds = ir_alloc(m->arena, sizeof *s->reds);
    s->reds[0] = op;
    s->nreds = 1;
    if (s->kind == IR_S_SEGRED) {
        IrValue *d = axis == 1 ? s->w[0] : s->w[1];
        return outs_like(L, s, x->type, d, NULL, 1);
    }
    return outs_like(L, s, x->type, NULL, NULL, 0);
}

static LVal *lower_reduce_builtin(Lower *L, FeExpr *x, Env *env) {
    FeExpr *arr_x = x->builtin == FE_B_REDUCE ? x->args[2] : x->args[0];
    return reduce_lval(L, x, lower(L, arr_x, env), x->axis, env);
}

/* Does x use the variable b? */
static bool mentions(const FeExpr *x, const FeBinding *b) {
    if (!x) { return false; }
    if (x->kind == FE_EX_NAME && x->bind == b) { return true; }
    if (mentions(x->a, b) || mentions(x->b, b) || (x->c != x->a && mentions(x->c, b)) || mentions(x->idx[0], b) ||
        mentions(x->idx[1], b)) {
        return true;
    }
    for (int i = 0; i < x->nargs; i++) {
        if (mentions(x->args[i], b)) { return true; }
    }
    return false;
}

/* Is x a reduction of one whole 1-D array (sum(v), argmax(v), reduce(op, ne, v))? */
bool is_whole_reduction(const FeExpr *x) {
    if (x->kind != FE_EX_CALL || x->axis >= 0) { return false; }
    switch (x->builtin) {
    case FE_B_SUM: case FE_B_PROD: case FE_B_MIN: case FE_B_MAX: case FE_B_ALL: case FE_B_ANY:
    case FE_B_ARGMIN: case FE_B_ARGMAX: return x->nargs == 1;
    case FE_B_REDUCE: return x->nargs == 3;
    default: return false;
    }
}

/* Reads A[i0, i1] of a 2-D array of shape [w0][w1] in e as parameters of a
 * map over that shape (A an input, as a lifted operation has it: fusion
 * then reads it the way RED(A, 1) does, vector loads included). */
static IrExpr *reads_as_params(Lower *L, IrExpr *e, IrValue *w0, IrValue *w1, Ins *in) {
    if (!e) { return NULL; }
    if (e->kind == IR_E_READ && e->val->rank == 2 && same_size(e->val->dims[0], w0) && same_size(e->val->dims[1], w1) &&
        e->a[0] && e->a[0]->kind == IR_E_IDX && e->a[0]->index == 0 && e->a[1] && e->a[1]->kind == IR_E_IDX &&
        e->a[1]->index == 1) {
        int k = add_in(L, in, e->val);
        return ir_e_param(L->m, e->val->elem, k);
    }
    IrExpr *a0 = reads_as_params(L, e->a[0], w0, w1, in);
    IrExpr *a1 = reads_as_params(L, e->a[1], w0, w1, in);
    IrExpr *a2 = reads_as_params(L, e->a[2], w0, w1, in);
    if (a0 == e->a[0] && a1 == e->a[1] && a2 == e->a[2]) { return e; }
    IrExpr *r = ir_alloc(L->m->arena, sizeof *r);
    *r = *e;
    r->a[0] = a0; r->a[1] = a1; r->a[2] = a2;
    r->tree = 0;
    return r;
}

/* e with the index dimensions 0 and 1 exchanged (the 2-D map transposed). */
static IrExpr *swap_idx(Lower *L, IrExpr *e) {
    if (!e) { return NULL; }
    if (e->kind == IR_E_IDX) { return ir_e_idx(L->m, 1 - e->index); }
    IrExpr *a0 = swap_idx(L, e->a[0]), *a1 = swap_idx(L, e->a[1]), *a2 = swap_idx(L, e->a[2]);
    if (a0 == e->a[0] && a1 == e->a[1] && a2 == e->a[2]) { return e; }
    IrExpr *r = ir_alloc(L->m->arena, sizeof *r);
    *r = *e;
    r->a[0] = a0; r->a[1] = a1; r->a[2] = a2;
    r->tree = 0;
    return r;
}

/* `for i in n => RED(row)`, the row an array computed from row i (A[i, :],
 * A[i, :] * w, zip(A[i, :], B[i, :]), ...) as a virtual array of a length
 * that does not depend on i and reading rows A[i, j] of a 2-D A[n][len]:
 * the rows materialised as one 2-D map [n][len] over A (fused into the
 * reduction later) and reduced along axis 1, the IR's row reduction that
 * RED(A, 1) is, rather than a fold in each element. NULL when arr is not
 * such a row. */
LVal *row_reduction(Lower *L, FeExpr *red, const FeBinding *row_var, LVal *arr, IrValue *w0, Env *env, int line) {
    IrModule *m = L->m;
    int n;
    LVal **rows = flat(L, arr, &n);
    for (int k = 0; k < n; k++) {
        if (rows[k]->kind != LV_VARR || !invariant(rows[k]->len)) { return NULL; }
    }
    /* the reduction's operator and neutral element are one for all rows */
    if (red->builtin == FE_B_REDUCE && (mentions(red->args[0], row_var) || mentions(red->args[1], row_var))) { return NULL; }
    IrValue *w1 = to_value(L, ir_e_cast(m, IR_I64, rows[0]->len), line);
    IrExpr **res = ir_alloc(m->arena, sizeof *res * (size_t)(n + 1));
    Ins in = { 0 };
    for (int k = 0; k < n; k++) {
        res[k] = reads_as_params(L, subst_loopvar(L, rows[k]->body, rows[k]->var, ir_e_idx(m, 1)), w0, w1, &in);
    }
    /* `for j in m => sum(A[:, j])` reads only columns: the same reduction
     * over A's own layout along axis 0 (sum(A, 0)), whose reads are
     * coalesced, rather than over rows of the transpose */
    Ins cols = { 0 };
    IrExpr **cres = ir_alloc(m->arena, sizeof *cres * (size_t)(n + 1));
    for (int k = 0; k < n && !in.nins; k++) {
        IrExpr *body = subst_loopvar(L, rows[k]->body, rows[k]->var, ir_e_idx(m, 1));
        cres[k] = reads_as_params(L, swap_idx(L, body), w1, w0, &cols);
    }
    if (!in.nins && !cols.nins) {
        return NULL; /* no row or column of a 2-D array (a histogram's map over x): a fold in each element */
    }
    bool by_cols = !in.nins && cols.nins;
    if (by_cols) {
        in = cols;
        res = cres;
    }
    IrValue *d0 = by_cols ? w1 : w0, *d1 = by_cols ? w0 : w1;
    IrStmt *s = ir_stmt_new(m, L->e, IR_S_SCREMA, IR_AOP_map2d, line);
    s->rank = 2;
    s->w[0] = d0;
    s->w[1] = d1;
    s->nins = in.nins;
    s->ins = in.ins;
    IrScalar *pt = ir_alloc(m->arena, sizeof *pt * (size_t)(in.nins + 1));
    for (int i = 0; i < in.nins; i++) { pt[i] = in.ins[i]->elem; }
    s->map = ir_lambda_new(m, in.nins, pt, n);
    LVal **whole = ir_alloc(m->arena, sizeof *whole * (size_t)(n + 1));
    for (int k = 0; k < n; k++) {
        s->map->res[k] = res[k];
        IrValue *o = ir_value_new(m, L->e, rows[k]->elem, 2, d0, d1);
        ir_stmt_add_out(m, s, o);
        whole[k] = lv_array(L, o);
    }
    int at = 0;
    return reduce_lval(L, red, rebuild(L, arr, whole, &at), by_cols ? 0 : 1, env);
}

static LVal *lower_scan(Lower *L, FeExpr *x, Env *env) {
    IrModule *m = L->m;
    FeBuiltin b = x->builtin;
    bool cumsum = b == FE_B_CUMSUM;
    FeExpr *arr_x = cumsum ? x->args[0] : x->args[2];
    LVal *arr = lower(L, arr_x, env);
    Ins in = { 0 };
    IrValue *w = NULL;
    collect_arrays(L, arr, &in, &w, x->loc, ir_fmt(m->arena, "'%s'", fe_builtin_name(x->builtin)));
    if (!in.nins) { return arr; }
    IrStmt *s = ir_stmt_new(m, L->e, IR_S_SCREMA, b == FE_B_EXSCAN ? IR_AOP_exscan : IR_AOP_scan, x->loc.line);
    s->w[0] = w;
    s->ins = in.ins;
    s->nins = in.nins;
    IrScalar *pt = ir_alloc(m->arena, sizeof *pt * (size_t)(in.nins + 1));
    for (int i = 0; i < in.nins; i++) { pt[i] = in.ins[i]->elem; }
    s->map = ir_lambda_new(m, in.nins, pt, in.nins);
    for (int i = 0; i < in.nins; i++) { s->map->res[i] = ir_e_param(m, pt[i], i); }
    IrOperator op;
    if (cumsum) {
        op = ir_operator_binop(m, IR_BIN_add, pt[0], false);
    } else {
        LVal *f = func_value(L, x->args[0], env);
        LVal *ne = lower(L, x->args[1], env);
        op = make_operator(L, f, ne, arr_x->type->elem, x->loc);
        op.exclusive = b == FE_B_EXSCAN;
    }
    s->scans = ir_alloc(m->arena, sizeof *s->scans);
    s->scans[0] = op;
    s->nscans = 1;
    return outs_like(L, s, x->type, w, NULL, 1);
}

static LVal *lower_map(Lower *L, FeExpr *x, Env *env) {
    IrModule *m = L->m;
    LVal *f = func_value(L, x->args[0], env);
    int narr = x->nargs - 1;
    LVal **arrs = ir_alloc(m->arena, sizeof *arrs * (size_t)(narr + 1));
    bool inv = true;
    for (int i = 0; i < narr; i++) {
        arrs[i] = lower(L, x->args[1 + i], env);
        if (!lv_invariant(arrs[i])) { inv = false; }
    }
    if (!inv) {
        /* a map inside a lambda over virtual arrays: a virtual array */
        int var = L->next_var++;
        LVal **el = ir_alloc(m->arena, sizeof *el * (size_t)(narr + 1));
        IrExpr *len = NULL;
        for (int i = 0; i < narr; i++) {
            LVal *va = as_varr(L, arrs[i]);
            if (!va) { lerr(L, x->loc, "internal: unsupported map inside a lambda"); return arrs[i]; }
            el[i] = lv_scalar(L, subst_loopvar(L, va->body, va->var, ir_e_loopvar(m, var)));
            if (!len) { len = va->len; }
        }
        LVal *r = apply(L, f, el, narr, x->loc);
        LVal *v = lv_new(L, LV_VARR);
        v->var = var; v->len = len; v->body = scalar_of(L, r, x->loc); v->elem = v->body->ty;
        return v;
    }
    /* Does the function capture values of an enclosing lambda or
     * comprehension (its index, its parameters)?  Then this map cannot be a
     * statement of its own: it is a virtual array over the inputs. */
    if (narr == 1 && arrs[0]->kind == LV_ARRAY && arrs[0]->arr->rank == 1) {
        int var = L->next_var++;
        LVal *el = lv_scalar(L, ir_e_read(m, arrs[0]->arr, ir_e_loopvar(m, var), NULL));
        LVal *r = apply(L, f, &el, 1, x->loc);
        if (r->kind == LV_SCALAR &&
            !invariant(subst_loopvar(L, r->x, var, ir_e_const_i(m, IR_I64, 0)))) {
            LVal *v = lv_new(L, LV_VARR);
            v->var = var;
            v->len = ir_e_free(m, arrs[0]->arr->dims[0]);
            v->body = r->x;
            v->elem = r->x->ty;
            return v;
        }
    }
    Ins in = { 0 };
    IrValue *w = NULL;
    int k = 0;
    LVal **params = ir_alloc(m->arena, sizeof *params * (size_t)(narr + 1));
    for (int i = 0; i < narr; i++) { collect_arrays(L, arrs[i], &in, &w, x->loc, "'map'"); }
    /* element parameters with each argument's structure (leaves now arrays) */
    k = 0;
    for (int i = 0; i < narr; i++) {
        int n = count_leaves(arrs[i]);
        LVal **el = ir_alloc(m->arena, sizeof *el * (size_t)(n + 1));
        for (int j = 0; j < n; j++) { el[j] = lv_scalar(L, ir_e_param(m, in.ins[k]->elem, k)); k++; }
        int at = 0;
        params[i] = rebuild(L, arrs[i], el, &at);
    }
    int rank = in.nins ? in.ins[0]->rank : 1;
    IrStmt *s = ir_stmt_new(m, L->e, IR_S_SCREMA, rank == 2 ? IR_AOP_map2d : IR_AOP_map, x->loc.line);
    s->rank = rank;
    s->w[0] = w;
    if (rank == 2) { s->w[1] = in.ins[0]->dims[1]; }
    s->ins = in.ins;
    s->nins = in.nins;
    IrScalar *pt = ir_alloc(m->arena, sizeof *pt * (size_t)(in.nins + 1));
    for (int i = 0; i < in.nins; i++) { pt[i] = in.ins[i]->elem; }
    /* the statement must come after anything the body creates: lower the
     * body first, then move the statement to the end */
    LVal *r = apply(L, f, params, narr, x->loc);
    int n;
    LVal **rl = flat(L, r, &n);
    s->map = ir_lambda_new(m, in.nins, pt, n);
    for (int i = 0; i < n; i++) { s->map->res[i] = scalar_of(L, rl[i], x->loc); }
    ir_entry_move_stmt(L->e, s, L->e->nstmts - 1);
    return outs_like(L, s, x->type, s->w[0], s->w[1], rank);
}

static LVal *lower_filter(Lower *L, FeExpr *x, Env *env) {
    IrModule *m = L->m;
    LVal *f = func_value(L, x->args[0], env);
    LVal *arr = lower(L, x->args[1], env);
    Ins in = { 0 };
    IrValue *w = NULL;
    collect_arrays(L, arr, &in, &w, x->loc, ir_fmt(m->arena, "'%s'", fe_builtin_name(x->builtin)));
    int n = count_leaves(arr);
    LVal **el = ir_alloc(m->arena, sizeof *el * (size_t)(n + 1));
    IrScalar *pt = ir_alloc(m->arena, sizeof *pt * (size_t)(n + 1));
    for (int j = 0; j < n; j++) { pt[j] = in.ins[j]->elem; el[j] = lv_scalar(L, ir_e_param(m, pt[j], j)); }
    int at = 0;
    LVal *param = rebuild(L, arr, el, &at);
    IrStmt *s = ir_stmt_new(m, L->e, IR_S_FILTER, IR_AOP_filter, x->loc.line);
    LVal *pred = apply(L, f, &param, 1, x->loc);
    ir_entry_move_stmt(L->e, s, L->e->nstmts - 1);
    s->w[0] = w;
    s->ins = in.ins;
    s->nins = in.nins;
    s->map = ir_lambda_new(m, n, pt, n + 1);
    s->map->res[0] = scalar_of(L, pred, x->loc);
    for (int j = 0; j < n; j++) { s->map->res[1 + j] = ir_e_param(m, pt[j], j); }
    /* outs: the kept arrays, then their count */
    IrValue *cnt = ir_value_new(m, L->e, IR_I64, 0, NULL, NULL);
    LVal **outl = ir_alloc(m->arena, sizeof *outl * (size_t)(n + 1));
    for (int j = 0; j < n; j++) {
        IrValue *o = ir_value_new(m, L->e, pt[j], 1, cnt, NULL);
        ir_stmt_add_out(m, s, o);
        outl[j] = lv_array(L, o);
    }
    ir_stmt_add_out(m, s, cnt);
    at = 0;
    return rebuild(L, arr, outl, &at);
}

static LVal *lower_scatter(Lower *L, FeExpr *x, Env *env) {
    IrModule *m = L->m;
    LVal *dest = lower(L, x->args[0], env);
    LVal *idx = lower(L, x->args[1], env);
    LVal *vals = lower(L, x->args[2], env);
    IrValue *iv = need_array(L, idx, x->loc.line);
    int nd, nv;
    LVal **dl = flat(L, dest, &nd);
    LVal **vl = flat(L, vals, &nv);
    LVal **outl = ir_alloc(m->arena, sizeof *outl * (size_t)(nd + 1));
    for (int j = 0; j < nd && j < nv; j++) {
        IrValue *dv = need_array(L, dl[j], x->loc.line), *vv = need_array(L, vl[j], x->loc.line);
        if (!dv || !vv || !iv) { lerr(L, x->loc, "internal: scatter arguments"); return dest; }
        vv = conform(L, vv, iv->dims[0], NULL, x->loc.line, "'scatter'");
        IrStmt *s = ir_stmt_new(m, L->e, IR_S_SCATTER, IR_AOP_scatter, x->loc.line);
        s->w[0] = iv->dims[0];
        s->dest = dv;
        s->nins = 2;
        s->ins = ir_alloc(m->arena, sizeof *s->ins * 2);
        s->ins[0] = iv; s->ins[1] = vv;
        IrScalar pt[2] = { iv->elem, vv->elem };
        s->map = ir_lambda_new(m, 2, pt, 2);
        s->map->res[0] = ir_e_cast(m, IR_I64, ir_e_param(m, pt[0], 0));
        s->map->res[1] = ir_e_param(m, pt[1], 1);
        IrValue *o = ir_value_new(m, L->e, dv->elem, 1, dv->dims[0], NULL);
        ir_stmt_add_out(m, s, o);
        outl[j] = lv_array(L, o);
    }
    int at = 0;
    return rebuild(L, dest, outl, &at);
}

/* zip(xs, ys, ...): a tuple of the arrays (element tuples are the arrays'
 * elements side by side). */
static LVal *lower_zip(Lower *L, FeExpr *x, Env *env) {
    LVal *t = lv_tuple(L, x->nargs);
    IrValue *w = NULL;
    for (int i = 0; i < x->nargs; i++) {
        t->elems[i] = lower(L, x->args[i], env);
        if (!lv_invariant(t->elems[i])) { continue; }  /* inside a lambda: virtual arrays */
        /* every array of the zip has the first one's size (run-time checked) */
        int n, at = 0;
        LVal **lv = flat(L, t->elems[i], &n);
        for (int j = 0; j < n; j++) {
            if (lv[j]->kind != LV_ARRAY) { continue; }
            if (!w) { w = lv[j]->arr->dims[0]; }
            IrValue *a = conform(L, lv[j]->arr, w, NULL, x->loc.line, "'zip'");
            if (a != lv[j]->arr) { lv[j] = lv_array(L, a); }
        }
        t->elems[i] = rebuild(L, t->elems[i], lv, &at);
    }
    return t;
}

/* unzip(ps) and col(v): the argument itself (a zip is already a tuple of
 * arrays; col only marks a broadcast, read by the lifted operation). */
static LVal *lower_first_arg(Lower *L, FeExpr *x, Env *env) {
    return lower(L, x->args[0], env);
}

/* iota(n), replicate(n, v): a map over 0..n-1 without inputs. */
static LVal *lower_iota_replicate(Lower *L, FeExpr *x, Env *env) {
    IrModule *m = L->m;
    LVal *nv = lower(L, x->args[0], env);
    IrExpr *n = scalar_of(L, nv, x->loc);
    IrValue *w = checked_size(L, n, x->loc.line, ir_fmt(m->arena, "'%s'", fe_builtin_name(x->builtin)));
    IrStmt *s = ir_stmt_new(m, L->e, IR_S_SCREMA, x->builtin == FE_B_IOTA ? IR_AOP_iota : IR_AOP_replicate, x->loc.line);
    s->w[0] = w;
    if (x->builtin == FE_B_IOTA) {
        s->map = ir_lambda_new(m, 0, NULL, 1);
        s->map->res[0] = ir_e_cast(m, sc(x->type), ir_e_idx(m, 0));
    } else {
        LVal *v = lower(L, x->args[1], env);
        ir_entry_move_stmt(L->e, s, L->e->nstmts - 1);
        int k;
        LVal **vl = flat(L, v, &k);
        s->map = ir_lambda_new(m, 0, NULL, k);
        for (int i = 0; i < k; i++) { s->map->res[i] = scalar_of(L, vl[i], x->loc); }
    }
    return outs_like(L, s, x->type, w, NULL, 1);
}

/* length(xs), rows(A), cols(A): a size of the array. */
static LVal *lower_shape(Lower *L, FeExpr *x, Env *env) {
    IrModule *m = L->m;
    LVal *a = lower(L, x->args[0], env);
    int n;
    LVal **al = flat(L, a, &n);
    if (al[0]->kind == LV_VARR) { return lv_scalar(L, al[0]->len); }
    if (al[0]->kind != LV_ARRAY) { lerr(L, x->loc, "internal: length of a non-array"); return a; }
    IrValue *d = al[0]->arr->dims[x->builtin == FE_B_COLS ? 1 : 0];
    return lv_scalar(L, ir_e_cast(m, sc(x->type), ir_e_free(m, d)));
}

/* Scalar math builtins (sqrt, min(a, b), clamp, ...), lifted or not. */
static LVal *lower_scalar_builtin(Lower *L, FeExpr *x, Env *env) {
    if (x->lifted) { return lifted(L, x, x->args, x->nargs, env); }
    IrExpr *a[3] = { 0 };
    for (int i = 0; i < x->nargs && i < 3; i++) { a[i] = scalar_of(L, lower(L, x->args[i], env), x->loc); }
    return lv_scalar(L, scalar_op(L, x, a, x->nargs));
}

/* The lowering function of each builtin's calls (builtins.def). */
typedef LVal *(*BuiltinLowering)(Lower *L, FeExpr *x, Env *env);
static const BuiltinLowering builtin_lowerings[FE_B_COUNT] = {
#define FE_BUILTIN(id, name, kind, min_args, max_args, rule, operands, result, lower, ...) [FE_B_##id] = lower,
#include "builtins.def"
#undef FE_BUILTIN
};

/* A call of a builtin: the lowering function of its row. */
LVal *lower_builtin_call(Lower *L, FeExpr *x, Env *env) {
    return builtin_lowerings[x->builtin](L, x, env);
}

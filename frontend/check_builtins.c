/* check_builtins.c: builtin calls.  check_builtin checks the arity from
 * builtins.def and calls the row's typing rule: one rule_* function per way
 * of typing (rule_math for every scalar function, rule_reduction, rule_map,
 * ...).  The scalar builtins' operand classes and results (math_signature)
 * also serve builtins passed as functions (check_calls.c). */
#include "check_internal.h"

/* Scalar (MATH) builtin signatures, from builtins.def: class of the
 * operands, arity, result (FE_TY_ERROR = the operands' type). */
typedef struct MathSignature {
    bool math; /* a MATH builtin; the rest holds only then */
    OpClass operands;
    int arity;
    FeTypeKind result;
} MathSignature;

#define IS_MATH_MATH true
#define IS_MATH_REDUCE false
#define IS_MATH_SCAN false
#define IS_MATH_SOAC false
#define RESULT_SAME FE_TY_ERROR
#define RESULT_BOOL FE_TY_BOOL
static const MathSignature math_signatures[FE_B_COUNT] = {
#define FE_BUILTIN(id, name, kind, min_args, max_args, rule, operands, result, ...) \
    [FE_B_##id] = {IS_MATH_##kind, operands, min_args, RESULT_##result},
#include "builtins.def"
#undef FE_BUILTIN
};

bool math_signature(FeBuiltin b, OpClass *cl, int *arity, FeTypeKind *result)
{
    const MathSignature *s = &math_signatures[b];
    *cl = s->operands;
    *arity = s->arity;
    *result = s->result;
    return s->math;
}

static bool nargs_ok(FeExpr *e, int lo, int hi)
{
    if (e->nargs >= lo && e->nargs <= hi) {
        return true;
    }
    if (lo == hi) {
        fe_error(e->loc, "'%s' takes %s, got %d", e->text, plural(lo, "argument"), e->nargs);
    } else if (hi > 100) {
        fe_error(e->loc, "'%s' takes at least %s, got %d", e->text, plural(lo, "argument"), e->nargs);
    } else {
        fe_error(e->loc, "'%s' takes %d or %d arguments, got %d", e->text, lo, hi, e->nargs);
    }
    for (int i = 0; i < e->nargs; i++) {
        if (e->args[i]->kind != FE_EX_LAMBDA && e->args[i]->kind != FE_EX_SECTION) {
            check(e->args[i], NULL);
        }
    }
    return false;
}

/* An array argument of a builtin, of rank lo..hi. */
static FeType *need_array(FeExpr *arg, const char *fname, int lo, int hi)
{
    FeType *t = arg->type;
    if (is_err(t)) {
        return NULL;
    }
    if (t->kind != FE_TY_ARRAY) {
        fe_error(arg->loc, "'%s' needs an array, got %s", fname, tstr(t));
        return NULL;
    }
    if (t->rank < lo || t->rank > hi) {
        fe_error(arg->loc, "'%s' needs a %d-D array, got %s", fname, lo, tstr(t));
        return NULL;
    }
    return t;
}

/* The axis argument of a reduction: the literal 0 or 1. */
static int axis_of(FeExpr *e)
{
    check(e, fe_type_scalar(FE_TY_I32));
    if (e->kind != FE_EX_INT || e->ival > 1) {
        fe_error(e->loc, "the axis must be the literal 0 or 1");
        return -1;
    }
    return (int)e->ival;
}

/* Result of reducing array t (along axis, or all of a 1-D array) to elements of type r. */
static FeType *reduced(FeExpr *e, FeType *t, int axis, FeType *r)
{
    if (axis < 0) {
        if (t->rank != 1) {
            fe_error(e->loc, "'%s' of a 2-D array needs an axis: %s(A, 0) or %s(A, 1)", e->text, e->text, e->text);
            return err_type();
        }
        return r;
    }
    if (t->rank != 2) {
        fe_error(e->loc, "'%s' along an axis needs a 2-D array, got %s", e->text, tstr(t));
        return err_type();
    }
    e->axis = axis;
    FeDim d = t->dims[axis == 1 ? 0 : 1];
    return array_of(r, 1, &d);
}

/* sum, prod, all, any, argmin, argmax (and min, max of one array): (xs) or (A, axis) */
static FeType *rule_reduction(FeExpr *e, FeBuiltin b, FeType *hint)
{
    const char *name = e->text;
    FeExpr **args = e->args;
    bool logical = b == FE_B_ALL || b == FE_B_ANY;
    check(args[0], logical ? NULL : scalar_hint(hint));
    int axis = e->nargs == 2 ? axis_of(args[1]) : -1;
    FeType *t = need_array(args[0], name, 1, 2);
    if (!t || (e->nargs == 2 && axis < 0)) {
        return err_type();
    }
    if (logical ? t->elem->kind != FE_TY_BOOL : !fe_type_is_numeric(t->elem)) {
        fe_error(args[0]->loc, "'%s' needs %s elements, got %s", name, logical ? "bool" : "numeric", tstr(t));
        return err_type();
    }
    FeType *r = b == FE_B_ARGMIN || b == FE_B_ARGMAX ? fe_type_scalar(FE_TY_I64) : t->elem;
    return reduced(e, t, axis, r);
}

/* Is t what an untyped literal becomes without context (f32, i32)? */
static bool is_literal_default(const FeType *t)
{
    return t && (t->kind == FE_TY_F32 || t->kind == FE_TY_I32);
}

/* Can type t be the value of template type parameter tp? */
static bool fits_tparam(const FeTParam *tp, const FeType *t)
{
    return tp->kind == FE_TP_TYPE || (tp->kind == FE_TP_NUM && fe_type_is_numeric(t)) ||
           (tp->kind == FE_TP_FLOAT && fe_type_is_float(t));
}

/* infer_tparams for an operator's elements, where a type parameter met as
 * two types takes one that fits its kind, then one that is not a literal's
 * default: in map(|v| (v, 1.0), x) with x: f64[n] the 1.0 became f32 only
 * for want of context, so (T, T) against (f64, f32) gives T = f64. */
static void infer_tparams_from_elems(FeFunc *decl, FeType *pt, FeType *at, FeTArg *vals, bool *set)
{
    if (!pt || !at || is_err(at)) {
        return;
    }
    if (pt->kind == FE_TY_NAME) {
        for (int i = 0; i < decl->ntparams; i++) {
            if (decl->tparams[i].kind == FE_TP_INT || strcmp(decl->tparams[i].name, pt->name) != 0) {
                continue;
            }
            const FeTParam *tp = &decl->tparams[i];
            bool fits = fits_tparam(tp, at), had_fit = set[i] && fits_tparam(tp, vals[i].type);
            if (!set[i] || (fits && !had_fit) ||
                (fits == had_fit && is_literal_default(vals[i].type) && !is_literal_default(at))) {
                vals[i] = (FeTArg){ .is_int = false, .type = at, .loc = decl->tparams[i].loc };
                set[i] = true;
            }
        }
    } else if (pt->kind == FE_TY_TUPLE && at->kind == FE_TY_TUPLE && pt->nelems == at->nelems) {
        for (int i = 0; i < pt->nelems; i++) {
            infer_tparams_from_elems(decl, pt->elems[i], at->elems[i], vals, set);
        }
    }
}

/* The element type a template fn operator (reduce(pairmax, ...)) takes when
 * it combines elements of type et: its type parameters inferred from et (the
 * array being reduced or scanned), the others at their defaults. NULL when op
 * is not such a function or nothing can be inferred. */
static FeType *template_op_elem(FeExpr *op, FeType *et)
{
    if (op->kind != FE_EX_NAME || find_var(op->text) || is_err(et)) {
        return NULL;
    }
    Global *g = find_global(op->text);
    FeFunc *decl = g ? g->func : NULL;
    if (!decl || decl->ntparams == 0 || decl->nparams != 2) {
        return NULL;
    }
    FeTArg *vals = fe_alloc(C->a, sizeof(FeTArg) * (size_t)decl->ntparams);
    bool *set = fe_alloc(C->a, sizeof(bool) * (size_t)decl->ntparams);
    infer_tparams_from_elems(decl, decl->params[1].type, et, vals, set);
    infer_tparams_from_elems(decl, decl->params[0].type, et, vals, set);
    for (int i = 0; i < decl->ntparams; i++) {
        if (!set[i] && !decl->tparams[i].has_default) {
            return NULL;
        }
        if (!set[i]) {
            vals[i] = decl->tparams[i].def;
        }
    }
    const FeTParam *saved_tps = C->tps;
    const FeTArg *saved_targs = C->targs;
    int saved_ntps = C->ntps;
    C->tps = decl->tparams;
    C->targs = vals;
    C->ntps = decl->ntparams;
    int before = fe_error_count();
    FeType *r = resolve_type(decl->params[1].type);
    C->tps = saved_tps;
    C->targs = saved_targs;
    C->ntps = saved_ntps;
    return fe_error_count() == before && !is_err(r) ? r : NULL;
}
/* reduce(op, ne, xs), reduce(op, ne, A, axis), scan(op, ne, xs), exscan(op, ne, xs) */
static FeType *rule_reduce_scan(FeExpr *e, FeBuiltin b, FeType *hint)
{
    const char *name = e->text;
    FeExpr **args = e->args;
    bool is_reduce = b == FE_B_REDUCE;
    FeType *eh = op_param_hint(args[0]);
    if (!eh && hint) {
        eh = is_reduce ? (e->nargs == 4 && hint->kind == FE_TY_ARRAY ? hint->elem : hint) : elem_of(hint);
    }
    FeDim hd[2] = {runtime_dim(), runtime_dim()};
    check(args[2], eh && eh->kind != FE_TY_ARRAY && !is_err(eh) ? array_of(eh, 1, hd) : NULL);
    int axis = e->nargs == 4 ? axis_of(args[3]) : -1;
    FeType *t = need_array(args[2], name, 1, is_reduce ? 2 : 1);
    if (!t) {
        check(args[1], NULL);
        check_fnarg(args[0], NULL, 0, name, NULL);
        return err_type();
    }
    FeType *et = t->elem;
        /* A template fn operator: its type parameters come from the elements,
         * and literals in them (typed f32 for want of context) follow: the
         * array is checked again with the operator's element type. */
        FeType *op_elem = template_op_elem(args[0], et);
        if (op_elem && !fe_type_equal(op_elem, et)) {
            int before = fe_error_count();
            check(args[2], array_of(op_elem, 1, hd));
            t = fe_error_count() == before ? need_array(args[2], name, 1, is_reduce ? 2 : 1) : NULL;
            if (!t) {
                return err_type();
            }
            et = t->elem;
            if (!fe_type_equal(op_elem, et)) {
                fe_error(args[2]->loc,
                         "the elements of '%s' have type %s, but '%s' takes %s (its type parameters inferred "
                         "from them): convert them with 'as'",
                         name, tstr(et), args[0]->text, tstr(op_elem));
                check(args[1], et);
                return err_type();
            }
        }
    check(args[1], et);
    if (!is_err(args[1]->type) && !fe_type_equal(args[1]->type, et)) {
        fe_error(args[1]->loc, "the neutral element of '%s' has type %s, but the elements are %s", name,
                 tstr(args[1]->type), tstr(et));
    }
    FeType *ops[2] = {et, et};
    FeType *r = check_fnarg(args[0], ops, 2, fe_printf(C->a, "'%s'", name), NULL);
    if (is_err(r)) {
        return err_type();
    }
    if (!fe_type_equal(r, et)) {
        fe_error(args[0]->loc, "the operator of '%s' must return %s, but it returns %s", name, tstr(et), tstr(r));
        return err_type();
    }
    if (is_reduce) {
        if (e->nargs == 4 && axis < 0) {
            return err_type();
        }
        return reduced(e, t, axis, et);
    }
    return t;
}

/* cumsum(xs) */
static FeType *rule_cumsum(FeExpr *e, FeBuiltin b, FeType *hint)
{
    const char *name = e->text;
    FeExpr **args = e->args;
    check(args[0], NULL);
    FeType *t = need_array(args[0], name, 1, 1);
    if (!t) {
        return err_type();
    }
    if (!fe_type_is_numeric(t->elem)) {
        fe_error(args[0]->loc, "'cumsum' needs numeric elements, got %s", tstr(t));
        return err_type();
    }
    return t;
}

/* map(f, xs, ...) */
static FeType *rule_map(FeExpr *e, FeBuiltin b, FeType *hint)
{
    const char *name = e->text;
    FeExpr **args = e->args;
    FeType **ets = fe_alloc(C->a, sizeof(FeType *) * (size_t)e->nargs);
    FeType *shape = NULL;
    bool bad = false;
    for (int i = 1; i < e->nargs; i++) {
        check(args[i], NULL);
        FeType *t = need_array(args[i], name, 1, 2);
        if (!t) {
            bad = true;
            continue;
        }
        ets[i - 1] = t->elem;
        if (!shape) {
            shape = t;
        } else if (shape->rank != t->rank) {
            fe_error(args[i]->loc, "'map' arguments have different ranks: %s and %s", tstr(shape), tstr(t));
            bad = true;
        } else {
            for (int k = 0; k < t->rank; k++) {
                if (!fe_dim_equal(&shape->dims[k], &t->dims[k])) {
                    fe_error(args[i]->loc, "'map' arguments have different sizes: %s vs %s",
                             dim_str(&shape->dims[k]), dim_str(&t->dims[k]));
                    bad = true;
                    break;
                }
            }
        }
    }
    if (bad) {
        check_fnarg(args[0], NULL, 0, "'map'", NULL);
        return err_type();
    }
    FeType *r = check_fnarg(args[0], ets, e->nargs - 1, "'map'",
                            hint && hint->kind == FE_TY_ARRAY ? hint->elem : NULL);
    if (is_err(r)) {
        return err_type();
    }
    if (has_array(r)) {
        fe_error(args[0]->loc, "the function given to 'map' must return a scalar, tuple or struct, not %s",
                 tstr(r));
        return err_type();
    }
    return array_of(r, shape->rank, shape->dims);
}

/* filter(p, xs) */
static FeType *rule_filter(FeExpr *e, FeBuiltin b, FeType *hint)
{
    const char *name = e->text;
    FeExpr **args = e->args;
    check(args[1], NULL);
    FeType *t = need_array(args[1], name, 1, 1);
    if (!t) {
        check_fnarg(args[0], NULL, 0, "'filter'", NULL);
        return err_type();
    }
    FeType *r = check_fnarg(args[0], &t->elem, 1, "'filter'", NULL);
    if (is_err(r)) {
        return err_type();
    }
    if (r->kind != FE_TY_BOOL) {
        fe_error(args[0]->loc, "the predicate of 'filter' must return bool, not %s", tstr(r));
        return err_type();
    }
    FeDim d = runtime_dim();
    return array_of(t->elem, 1, &d);
}

/* scatter(dest, idx, vals) */
static FeType *rule_scatter(FeExpr *e, FeBuiltin b, FeType *hint)
{
    const char *name = e->text;
    FeExpr **args = e->args;
    check(args[0], NULL);
    check(args[1], NULL);
    FeType *dest = need_array(args[0], name, 1, 1);
    FeType *idx = need_array(args[1], name, 1, 1);
    check(args[2], dest ? dest->elem : NULL);
    FeType *vals = need_array(args[2], name, 1, 1);
    if (!dest || !idx || !vals) {
        return err_type();
    }
    if (!fe_type_is_int(idx->elem)) {
        fe_error(args[1]->loc, "the indices of 'scatter' must be integers, got %s", tstr(idx));
        return err_type();
    }
    if (!fe_type_equal(vals->elem, dest->elem)) {
        fe_error(args[2]->loc, "'scatter' values have type %s, but the destination is %s", tstr(vals),
                 tstr(dest));
        return err_type();
    }
    if (!fe_dim_equal(&idx->dims[0], &vals->dims[0])) {
        fe_error(e->loc, "size mismatch in 'scatter': %s indices vs %s values", dim_str(&idx->dims[0]),
                 dim_str(&vals->dims[0]));
        return err_type();
    }
    return dest;
}

/* zip(xs, ys, ...) */
static FeType *rule_zip(FeExpr *e, FeBuiltin b, FeType *hint)
{
    const char *name = e->text;
    FeExpr **args = e->args;
    FeType *tup = new_type(FE_TY_TUPLE);
    tup->nelems = e->nargs;
    tup->elems = fe_alloc(C->a, sizeof(FeType *) * (size_t)e->nargs);
    FeType *first = NULL;
    bool bad = false;
    for (int i = 0; i < e->nargs; i++) {
        check(args[i], NULL);
        FeType *t = need_array(args[i], name, 1, 1);
        if (!t) {
            bad = true;
            continue;
        }
        tup->elems[i] = t->elem;
        if (!first) {
            first = t;
        } else if (!fe_dim_equal(&first->dims[0], &t->dims[0])) {
            fe_error(args[i]->loc, "size mismatch in 'zip': %s vs %s", dim_str(&first->dims[0]),
                     dim_str(&t->dims[0]));
            bad = true;
        }
    }
    if (bad) {
        return err_type();
    }
    return array_of(tup, 1, first->dims);
}

/* unzip(ps) */
static FeType *rule_unzip(FeExpr *e, FeBuiltin b, FeType *hint)
{
    const char *name = e->text;
    FeExpr **args = e->args;
    check(args[0], NULL);
    FeType *t = need_array(args[0], name, 1, 1);
    if (!t) {
        return err_type();
    }
    if (t->elem->kind != FE_TY_TUPLE) {
        fe_error(args[0]->loc, "'unzip' needs an array of tuples, got %s", tstr(t));
        return err_type();
    }
    FeType *r = new_type(FE_TY_TUPLE);
    r->nelems = t->elem->nelems;
    r->elems = fe_alloc(C->a, sizeof(FeType *) * (size_t)r->nelems);
    for (int i = 0; i < r->nelems; i++) {
        r->elems[i] = array_of(t->elem->elems[i], 1, t->dims);
    }
    return r;
}

/* iota(n), replicate(n, v) */
static FeType *rule_iota_replicate(FeExpr *e, FeBuiltin b, FeType *hint)
{
    const char *name = e->text;
    FeExpr **args = e->args;
    bool iota = b == FE_B_IOTA;
    check(args[0], fe_type_scalar(FE_TY_I64));
    if (!need_int_scalar(args[0], fe_printf(C->a, "the length given to '%s'", name))) {
        if (!iota) {
            check(args[1], NULL);
        }
        return err_type();
    }
    FeDim d = dim_of(args[0]);
    if (iota) {
        return array_of(fe_type_scalar(FE_TY_I64), 1, &d);
    }
    FeType *v = check(args[1], scalar_hint(hint));
    if (is_err(v)) {
        return err_type();
    }
    if (has_array(v)) {
        fe_error(args[1]->loc, "'replicate' needs a scalar, tuple or struct value, got %s", tstr(v));
        return err_type();
    }
    return array_of(v, 1, &d);
}

/* length(xs), rows(A), cols(A), col(v) */
static FeType *rule_shape(FeExpr *e, FeBuiltin b, FeType *hint)
{
    const char *name = e->text;
    FeExpr **args = e->args;
    check(args[0], NULL);
    int rank = b == FE_B_ROWS || b == FE_B_COLS ? 2 : 1;
    FeType *t = need_array(args[0], name, rank, rank);
    if (!t) {
        return err_type();
    }
    if (b == FE_B_COL) {
        FeDim d[2] = {t->dims[0], {.kind = FE_DIM_CONST, .value = 1}};
        return array_of(t->elem, 2, d);
    }
    return fe_type_scalar(FE_TY_I64);
}

/* sqrt, abs, clamp, isnan, ... and the elementwise min(a, b), max(a, b):
 * scalar functions lifted elementwise, their operands' class and result
 * from the table. */
static FeType *rule_math(FeExpr *e, FeBuiltin b, FeType *hint)
{
    const char *name = e->text;
    FeExpr **args = e->args;
    FeTypeKind res;
    OpClass cl;
    int arity;
    math_signature(b, &cl, &arity, &res);
    check_operands(args, e->nargs, scalar_hint(hint), true);
    if (any_error(args, e->nargs)) {
        return err_type();
    }
    const char *what = fe_printf(C->a, "'%s'", name);
    FeType *et = common_elem(args, e->nargs, cl, e->loc, what);
    if (!et) {
        return err_type();
    }
    for (int i = 0; i < e->nargs; i++) {
        e->lifted = e->lifted || args[i]->type->kind == FE_TY_ARRAY;
    }
    return broadcast(args, e->nargs, res == FE_TY_ERROR ? et : fe_type_scalar(res), e->loc, what);
}

/* min, max: one array (reduction), (A, axis) on a 2-D array, else elementwise */
static FeType *rule_min_max(FeExpr *e, FeBuiltin b, FeType *hint)
{
    const char *name = e->text;
    FeExpr **args = e->args;
    if (e->nargs != 2) {
        return rule_reduction(e, b, hint);
    }
    C->col_ok = true;
    check(args[0], scalar_hint(hint));
    if (args[0]->type && args[0]->type->kind == FE_TY_ARRAY && args[0]->type->rank == 2 &&
        args[1]->kind == FE_EX_INT && args[1]->suffix == FE_TY_ERROR) {
        FeType *t = args[0]->type;
        if (!fe_type_is_numeric(t->elem)) {
            fe_error(args[0]->loc, "'%s' needs numeric elements, got %s", name, tstr(t));
            return err_type();
        }
        return reduced(e, t, axis_of(args[1]), t->elem);
    }
    b = e->builtin = b == FE_B_MIN ? FE_B_MINIMUM : FE_B_MAXIMUM;
    C->col_ok = true;
    check(args[1], is_flex(args[1]) ? scalar_hint(args[0]->type) : scalar_hint(hint));
    if (any_error(args, 2)) {
        return err_type();
    }
    FeType *et = common_elem(args, 2, CL_NUM, e->loc, fe_printf(C->a, "'%s'", name));
    if (!et) {
        return err_type();
    }
    e->lifted = args[0]->type->kind == FE_TY_ARRAY || args[1]->type->kind == FE_TY_ARRAY;
    return broadcast(args, 2, et, e->loc, fe_printf(C->a, "'%s'", name));
}

/* Each builtin's arity and typing rule, from builtins.def. */
typedef struct BuiltinRule {
    int min_args, max_args;
    FeType *(*rule)(FeExpr *e, FeBuiltin b, FeType *hint);
} BuiltinRule;

static const BuiltinRule builtin_rules[FE_B_COUNT] = {
#define FE_BUILTIN(id, name, kind, min_args, max_args, rule, ...) [FE_B_##id] = {min_args, max_args, rule},
#include "builtins.def"
#undef FE_BUILTIN
};

/* A call of builtin b: its arity, then its rule. */
FeType *check_builtin(FeExpr *e, FeBuiltin b, FeType *hint)
{
    const BuiltinRule *r = &builtin_rules[b];
    e->builtin = b;
    if (!r->rule) {
        FE_INTERNAL_ERROR(e->loc, "builtin '%s' has no typing rule", e->text);
    }
    if (!nargs_ok(e, r->min_args, r->max_args)) {
        return err_type();
    }
    return r->rule(e, b, hint);
}


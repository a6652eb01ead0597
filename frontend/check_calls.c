/* check_calls.c: calls of user functions: unifying the callee's size
 * variables with the arguments' sizes, inferring template arguments, and
 * lifting scalar functions over arrays (apply_user); and operator arguments
 * (lambdas, function names, builtin names, sections) given to map, reduce,
 * scan and filter (check_fnarg). */
#include "check_internal.h"

/* A size variable of a callee bound to a caller's size at one call. */
typedef struct SizeBind {
    const char *name;
    FeDim dim;
} SizeBind;

static bool unify(FeType *pt, FeType *at, SizeBind *sb, int *nsb, SrcLoc loc, const char *fname, int argi)
{
    if (is_err(at)) {
        return false;
    }
    if (pt->kind == FE_TY_ARRAY && at->kind == FE_TY_ARRAY && pt->rank == at->rank) {
        for (int k = 0; k < pt->rank; k++) {
            const FeDim *pd = &pt->dims[k];
            if (pd->kind == FE_DIM_CONST && !fe_dim_equal(pd, &at->dims[k])) {
                fe_error(loc, "size mismatch in call to '%s': argument %d has size %s, expected %s", fname, argi + 1,
                         dim_str(&at->dims[k]), dim_str(pd));
                return false;
            }
            if (pd->kind != FE_DIM_VAR) {
                continue;
            }
            int j = 0;
            for (; j < *nsb; j++) {
                if (strcmp(sb[j].name, pd->name) == 0) {
                    break;
                }
            }
            if (j == *nsb) {
                sb[(*nsb)++] = (SizeBind){pd->name, at->dims[k]};
            } else if (!fe_dim_equal(&sb[j].dim, &at->dims[k])) {
                fe_error(loc, "size mismatch in call to '%s': '%s' is %s but argument %d has size %s", fname,
                         pd->name, dim_str(&sb[j].dim), argi + 1, dim_str(&at->dims[k]));
                return false;
            }
        }
    }
    return true;
}

/* Substitute size variables bound at a call into a callee's result type. */
static FeType *subst_dims(FeType *t, SizeBind *sb, int nsb)
{
    if (!t || is_err(t)) {
        return t;
    }
    if (t->kind == FE_TY_TUPLE) {
        FeType *r = new_type(FE_TY_TUPLE);
        r->nelems = t->nelems;
        r->elems = fe_alloc(C->a, sizeof(FeType *) * (size_t)t->nelems);
        for (int i = 0; i < t->nelems; i++) {
            r->elems[i] = subst_dims(t->elems[i], sb, nsb);
        }
        return r;
    }
    if (t->kind != FE_TY_ARRAY) {
        return t;
    }
    FeType *r = array_of(t->elem, t->rank, t->dims);
    for (int k = 0; k < t->rank; k++) {
        if (r->dims[k].kind != FE_DIM_VAR) {
            continue;
        }
        bool found = false;
        for (int j = 0; j < nsb; j++) {
            if (strcmp(sb[j].name, r->dims[k].name) == 0) {
                r->dims[k] = sb[j].dim;
                found = true;
            }
        }
        if (!found) {
            r->dims[k] = runtime_dim(); /* not bound by a parameter: known at run time */
        }
    }
    return r;
}

/* Match a declared parameter type against an argument type to infer
 * template type parameters of decl (positional in vals). */
static void infer_tparams(FeFunc *decl, FeType *pt, FeType *at, FeTArg *vals, bool *set)
{
    if (!pt || !at || is_err(at)) {
        return;
    }
    if (pt->kind == FE_TY_NAME) {
        for (int i = 0; i < decl->ntparams; i++) {
            if (decl->tparams[i].kind != FE_TP_INT && strcmp(decl->tparams[i].name, pt->name) == 0 && !set[i]) {
                vals[i].is_int = false;
                vals[i].type = at->kind == FE_TY_ARRAY ? at->elem : at;
                vals[i].loc = decl->tparams[i].loc;
                set[i] = true;
            }
        }
        return;
    }
    if (pt->kind == FE_TY_ARRAY && at->kind == FE_TY_ARRAY) {
        infer_tparams(decl, pt->elem, at->elem, vals, set);
    } else if (pt->kind == FE_TY_TUPLE && at->kind == FE_TY_TUPLE && pt->nelems == at->nelems) {
        for (int i = 0; i < pt->nelems; i++) {
            infer_tparams(decl, pt->elems[i], at->elems[i], vals, set);
        }
    }
}

/* A user function applied to argument types (a call or an op argument).
 * Infers template type parameters from the arguments, unifies array size
 * variables, and returns the result type, or err_type after an error.
 * `args` (may be NULL for op arguments) get hints and broadcast marks;
 * *inst receives the checked instance; *lifted says it is applied elementwise. */
FeType *apply_user(FeFunc *decl, FeExpr **args, FeType **argtys, int n, SrcLoc loc, FeFunc **inst,
                   bool *lifted)
{
    *inst = NULL;
    *lifted = false;
    if (n != decl->nparams) {
        fe_error(loc, "'%s' takes %s, got %d", decl->name, plural(decl->nparams, "argument"), n);
        return err_type();
    }
    for (int i = 0; i < n; i++) {
        if (is_err(argtys[i])) {
            return err_type();
        }
    }
    FeTArg *vals = fe_alloc(C->a, sizeof(FeTArg) * (size_t)(decl->ntparams + 1));
    bool *set = fe_alloc(C->a, sizeof(bool) * (size_t)(decl->ntparams + 1));
    for (int i = 0; i < n; i++) {
        infer_tparams(decl, decl->params[i].type, argtys[i], vals, set);
    }
    int ntargs = 0;
    for (int i = 0; i < decl->ntparams; i++) {
        if (set[i]) {
            ntargs = i + 1;
        }
    }
    for (int i = 0; i < ntargs; i++) {
        if (!set[i]) {
            if (!decl->tparams[i].has_default) {
                fe_error(loc, "cannot infer template parameter '%s' of '%s'", decl->tparams[i].name, decl->name);
                return err_type();
            }
            vals[i] = decl->tparams[i].def;
        }
    }
    FeFunc *f = instantiate(decl, vals, ntargs, NULL, loc);
    *inst = f;
    if (!f || f->has_errors) {
        return err_type();
    }
    /* Elementwise application: no parameter is an array (scalars, tuples,
     * structs), some argument is an array of the parameter's type. */
    bool all_elems = !has_array(f->result), any_array = false;
    for (int i = 0; i < n; i++) {
        all_elems = all_elems && !has_array(f->params[i].type);
        any_array = any_array || argtys[i]->kind == FE_TY_ARRAY;
    }
    if (all_elems && any_array && args) {
        for (int i = 0; i < n; i++) {
            if (!fe_type_equal(elem_of(argtys[i]), f->params[i].type)) {
                fe_error(args[i]->loc, "argument %d of '%s' has type %s, expected %s", i + 1, decl->name,
                         tstr(argtys[i]), tstr(f->params[i].type));
                return err_type();
            }
        }
        *lifted = true;
        return broadcast(args, n, f->result, loc, fe_printf(C->a, "call to '%s'", decl->name));
    }
    /* each parameter binds at most two dims (an array) or one size (an integer) */
    SizeBind *sb = fe_alloc(C->a, sizeof(SizeBind) * (size_t)(2 * n + 1));
    int nsb = 0;
    for (int i = 0; i < n && args; i++) {
        bool size_param = false;
        for (int k = 0; k < f->nsize_vars; k++) {
            size_param = size_param || strcmp(f->size_vars[k], f->params[i].name) == 0;
        }
        if (size_param && fe_type_is_scalar(f->params[i].type)) {
            sb[nsb++] = (SizeBind){f->params[i].name, dim_of(args[i])};
        }
    }
    for (int i = 0; i < n; i++) {
        FeType *pt = f->params[i].type;
        /* compare without dims first, then unify the size variables */
        FeType *at = argtys[i];
        bool same_shape = pt->kind == at->kind &&
                          (pt->kind != FE_TY_ARRAY || (pt->rank == at->rank && fe_type_equal(pt->elem, at->elem)));
        if (!same_shape || (pt->kind != FE_TY_ARRAY && !fe_type_equal(pt, at))) {
            fe_error(args ? args[i]->loc : loc, "argument %d of '%s' has type %s, expected %s", i + 1, decl->name,
                     tstr(at), tstr(pt));
            return err_type();
        }
        if (!unify(pt, at, sb, &nsb, args ? args[i]->loc : loc, decl->name, i)) {
            return err_type();
        }
    }
    return subst_dims(f->result, sb, nsb);
}

/* The element type an operator argument expects, when it says so: an
 * annotated lambda parameter or a non-template fn. Used as a hint for the
 * array being reduced or scanned, so `map(|v| (1.0, v), x)` feeding
 * reduce(chan, ...) types its literals like chan's parameters. */
FeType *op_param_hint(FeExpr *op)
{
    FeType *t = NULL;
    if (op->kind == FE_EX_LAMBDA && op->nparams >= 1 && op->params[0]->annot) {
        t = op->params[0]->annot;
    } else if (op->kind == FE_EX_NAME && !find_var(op->text)) {
        Global *g = find_global(op->text);
        if (g && g->func && g->func->ntparams == 0 && g->func->nparams >= 1) {
            t = g->func->params[0].type;
        }
    }
    if (!t) {
        return NULL;
    }
    int saved = C->ntps;
    if (op->kind == FE_EX_NAME) {
        C->ntps = 0; /* the callee's types are global */
    }
    int before = fe_error_count();
    FeType *r = resolve_type(t);
    C->ntps = saved;
    return fe_error_count() == before ? r : NULL;
}

/* Check an operator argument (lambda, function name, builtin name, operator
 * section) applied to argument types argtys; returns its result type. */
FeType *check_fnarg(FeExpr *e, FeType **argtys, int n, const char *who, FeType *ret_hint)
{
    if (!argtys) { /* the arrays it would apply to are already in error */
        e->type = err_type();
        return err_type();
    }
    for (int i = 0; i < n; i++) {
        if (is_err(argtys[i])) {
            e->type = err_type();
            return err_type();
        }
    }
    switch (e->kind) {
    case FE_EX_LAMBDA: {
        if (e->nparams != n) {
            fe_error(e->loc, "this lambda takes %s, but %s passes %d", plural(e->nparams, "parameter"), who, n);
            e->type = err_type();
            return err_type();
        }
        Scope *saved = C->scope;
        for (int i = 0; i < n; i++) {
            FePattern *p = e->params[i];
            if (p->annot) {
                FeType *want = resolve_type(p->annot);
                p->annot = want;
                if (!is_err(want) && !fe_type_equal(want, argtys[i])) {
                    fe_error(p->loc, "lambda parameter has type %s, but %s passes %s", tstr(want), who,
                             tstr(argtys[i]));
                }
            }
            bind_pattern(p, argtys[i]);
        }
        check_dup_names(e->params, e->nparams);
        FeType *r = check(e->a, ret_hint);
        C->scope = saved;
        e->type = func_type(argtys, n, r);
        return r;
    }
    case FE_EX_SECTION: {
        if (n != 2) {
            fe_error(e->loc, "operator section (%s) takes 2 operands, but %s passes %d", fe_op_name(e->op), who, n);
            e->type = err_type();
            return err_type();
        }
        OpClass cl = op_class(e->op);
        if (!fe_type_is_scalar(argtys[0]) || !fe_type_equal(argtys[0], argtys[1]) || !class_ok(cl, argtys[0])) {
            fe_error(e->loc, "operator section (%s) needs two %s scalars of one type, but %s passes %s and %s",
                     fe_op_name(e->op), class_name(cl), who, tstr(argtys[0]), tstr(argtys[1]));
            e->type = err_type();
            return err_type();
        }
        FeType *r = is_compare(e->op) ? fe_type_scalar(FE_TY_BOOL) : argtys[0];
        e->type = func_type(argtys, n, r);
        return r;
    }
    case FE_EX_NAME: {
        if (find_var(e->text) || is_size_var(e->text)) {
            fe_error(e->loc, "'%s' is a variable; %s needs a function", e->text, who);
            e->type = err_type();
            return err_type();
        }
        Global *g = find_global(e->text);
        if (g && g->func) {
            FeFunc *inst;
            bool lifted;
            FeType *r = apply_user(g->func, NULL, argtys, n, e->loc, &inst, &lifted);
            e->name_kind = FE_NAME_FUNC;
            e->func = inst;
            e->type = is_err(r) ? r : func_type(argtys, n, r);
            return r;
        }
        FeBuiltin b = find_builtin(e->text);
        if (b == FE_B_MIN) {
            b = FE_B_MINIMUM;
        } else if (b == FE_B_MAX) {
            b = FE_B_MAXIMUM;
        }
        OpClass cl;
        int arity;
        FeTypeKind res;
        if (b != FE_B_NONE && math_signature(b, &cl, &arity, &res)) {
            if (arity != n) {
                fe_error(e->loc, "'%s' takes %s, but %s passes %d", e->text, plural(arity, "argument"), who, n);
                e->type = err_type();
                return err_type();
            }
            for (int i = 0; i < n; i++) {
                if (!fe_type_is_scalar(argtys[i]) || !class_ok(cl, argtys[i]) || argtys[i] != argtys[0]) {
                    fe_error(e->loc, "'%s' needs %s scalars of one type, but %s passes %s", e->text, class_name(cl),
                             who, tstr(argtys[i]));
                    e->type = err_type();
                    return err_type();
                }
            }
            e->name_kind = FE_NAME_BUILTIN;
            e->builtin = b;
            FeType *r = res == FE_TY_ERROR ? argtys[0] : fe_type_scalar(res);
            e->type = func_type(argtys, n, r);
            return r;
        }
        if (b != FE_B_NONE) {
            fe_error(e->loc, "builtin '%s' cannot be passed as a function", e->text);
        } else {
            fe_error(e->loc, "unknown function '%s'%s", e->text, did_you_mean(e->text, false, true, false));
        }
        e->type = err_type();
        return err_type();
    }
    default:
        check(e, NULL);
        if (!is_err(e->type)) {
            fe_error(e->loc, "%s needs a function here (a lambda |x| ..., a function name or an operator section "
                             "like (+)), got %s", who, tstr(e->type));
        }
        e->type = err_type();
        return err_type();
    }
}


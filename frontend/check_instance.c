/* check_instance.c: instances.  Every function is checked as a clone of its
 * declaration with its template arguments substituted; this file clones
 * declarations, names and mangles instances, checks template arguments and
 * launch attributes, infers result sizes, and checks an instance's body
 * (callees first, recursion rejected). */
#include "check_internal.h"

/* ------------------------------------------------------ instantiation -- */

static FeExpr *clone_expr(FeExpr *e);

static FePattern *clone_pat(FePattern *p)
{
    if (!p) {
        return NULL;
    }
    FePattern *q = fe_alloc(C->a, sizeof *q);
    *q = *p;
    if (p->bind) {
        q->bind = fe_alloc(C->a, sizeof *q->bind);
        *q->bind = *p->bind;
    }
    if (p->nelems) {
        q->elems = fe_alloc(C->a, sizeof(FePattern *) * (size_t)p->nelems);
        for (int i = 0; i < p->nelems; i++) {
            q->elems[i] = clone_pat(p->elems[i]);
        }
    }
    return q;
}

/* A copy of a declaration's body for one instance; integer template
 * parameters become literals. */
static FeExpr *clone_expr(FeExpr *e)
{
    if (!e) {
        return NULL;
    }
    FeExpr *c = fe_alloc(C->a, sizeof *c);
    *c = *e;
    if (e->kind == FE_EX_NAME) {
        FeTParamKind k;
        const FeTArg *v = tparam_value(e->text, &k);
        if (v && k == FE_TP_INT) {
            c->kind = FE_EX_INT;
            c->ival = v->ival < 0 ? (uint64_t)0 - (uint64_t)v->ival : (uint64_t)v->ival;
            c->text = fe_printf(C->a, "%llu", (unsigned long long)c->ival);
            c->suffix = FE_TY_ERROR;
            if (v->ival < 0) {
                FeExpr *neg = fe_alloc(C->a, sizeof *neg);
                *neg = *c;
                neg->kind = FE_EX_UNARY;
                neg->op = FE_OP_NEG;
                neg->a = c;
                return neg;
            }
            return c;
        }
    }
    c->a = clone_expr(e->a);
    c->b = clone_expr(e->b);
    c->c = e->c == e->a ? c->a : clone_expr(e->c);
    if (e->nargs) {
        c->args = fe_alloc(C->a, sizeof(FeExpr *) * (size_t)e->nargs);
        for (int i = 0; i < e->nargs; i++) {
            c->args[i] = clone_expr(e->args[i]);
        }
    }
    c->idx[0] = clone_expr(e->idx[0]);
    c->idx[1] = clone_expr(e->idx[1]);
    c->pat = clone_pat(e->pat);
    if (e->nparams) {
        c->params = fe_alloc(C->a, sizeof(FePattern *) * (size_t)e->nparams);
        for (int i = 0; i < e->nparams; i++) {
            c->params[i] = clone_pat(e->params[i]);
        }
    }
    return c;
}

static bool targ_equal(const FeTArg *x, const FeTArg *y)
{
    if (x->is_int != y->is_int) {
        return false;
    }
    return x->is_int ? x->ival == y->ival : fe_type_equal(x->type, y->type);
}

static const char *targ_str(const FeTArg *t)
{
    return t->is_int ? fe_printf(C->a, "%lld", (long long)t->ival) : tstr(t->type);
}

/* Mangled symbol for a fn template instance: name__f64__8 */
static const char *mangle(const FeFunc *decl, const FeTArg *targs)
{
    const char *s = decl->name;
    for (int i = 0; i < decl->ntparams; i++) {
        const char *a = targ_str(&targs[i]);
        char *m = fe_strdup(C->a, a);
        for (char *q = m; *q; q++) {
            if (!((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9'))) {
                *q = '_';
            }
        }
        s = fe_printf(C->a, "%s__%s", s, m);
    }
    return s;
}

/* Evaluate an attribute argument: a compile-time integer expression of
 * literals (template ints are literals by now) and + - * / %. Overflow makes
 * it non-constant rather than undefined. */
static bool const_int(const FeExpr *e, int64_t *out)
{
    int64_t x, y;
    switch (e->kind) {
    case FE_EX_INT:
        if (e->ival > (uint64_t)INT64_MAX) {
            return false;
        }
        *out = (int64_t)e->ival;
        return true;
    case FE_EX_UNARY:
        if (e->op != FE_OP_NEG || !const_int(e->a, &x) || x == INT64_MIN) {
            return false;
        }
        *out = -x;
        return true;
    case FE_EX_BINARY:
        if (!const_int(e->a, &x) || !const_int(e->b, &y)) {
            return false;
        }
        switch (e->op) {
        case FE_OP_ADD: return !__builtin_add_overflow(x, y, out);
        case FE_OP_SUB: return !__builtin_sub_overflow(x, y, out);
        case FE_OP_MUL: return !__builtin_mul_overflow(x, y, out);
        case FE_OP_DIV:
        case FE_OP_MOD:
            if (y == -1 && x == INT64_MIN) {
                return false;
            }
            *out = y == 0 ? 0 : e->op == FE_OP_DIV ? x / y : x % y;
            return true;
        default: return false;
        }
    default:
        return false;
    }
}

static const char *attr_name(FeAttrKind k)
{
    static const char *names[] = {"block", "unroll", "items", "tile"};
    return names[k];
}

static void check_attrs(FeFunc *f)
{
    bool seen[4] = {false};
    for (int i = 0; i < f->nattrs; i++) {
        FeAttr *at = &f->attrs[i];
        if (!at->arg) {
            continue;
        }
        if (seen[at->kind]) {
            fe_error(at->loc, "duplicate attribute '@%s'", attr_name(at->kind));
            continue;
        }
        seen[at->kind] = true;
        int64_t v;
        if (at->arg->kind == FE_EX_NAME && !find_var(at->arg->text) && !is_size_var(at->arg->text)) {
            Suggest sg = {at->arg->text, NULL, 99};
            for (int k = 0; k < C->ntps; k++) {
                if (C->tps[k].kind == FE_TP_INT) {
                    suggest(&sg, C->tps[k].name);
                }
            }
            fe_error(at->arg->loc, "unknown template parameter '%s' in '@%s'%s", at->arg->text, attr_name(at->kind),
                     sg.best ? fe_printf(C->a, "; did you mean '%s'?", sg.best) : "");
            continue;
        }
        if (!const_int(at->arg, &v)) {
            fe_error(at->arg->loc, "the argument of '@%s' must be a compile-time integer", attr_name(at->kind));
            continue;
        }
        at->value = v;
        switch (at->kind) {
        case FE_AT_BLOCK:
            if (v < 1) {
                fe_error(at->arg->loc, "block size %lld must be at least 32", (long long)v);
            } else if (v > 1024) {
                fe_error(at->arg->loc, "block size %lld exceeds the limit of 1024 threads per block", (long long)v);
            } else if (v % 32 != 0) {
                fe_error(at->arg->loc, "block size %lld is not a multiple of 32 (the warp size)", (long long)v);
            }
            f->block = v;
            break;
        case FE_AT_UNROLL:
            if (v < 1) {
                fe_error(at->arg->loc, "unroll factor %lld must be at least 1", (long long)v);
            }
            f->unroll = v;
            break;
        case FE_AT_ITEMS:
            if (v < 1) {
                fe_error(at->arg->loc, "items per thread %lld must be at least 1", (long long)v);
            }
            f->items = v;
            break;
        case FE_AT_TILE:
            if (v < 1) {
                fe_error(at->arg->loc, "tile size %lld must be at least 1", (long long)v);
            } else if (v > 32) {
                /* the seed's T x T threads per block bound T; the generated
                 * kernel computes result tiles of 2T (at most 64) per 128 threads */
                fe_error(at->arg->loc, "tile size %lld exceeds the limit of 32", (long long)v);
            }
            f->tile = v;
            break;
        }
    }
}

/* Result dims named by a parameter must match; others are run-time sizes. */
static FeType *loosen_result(FeType *t, FeFunc *f)
{
    if (!t || t->kind != FE_TY_ARRAY) {
        if (t && t->kind == FE_TY_TUPLE) {
            FeType *r = new_type(FE_TY_TUPLE);
            *r = *t;
            r->elems = fe_alloc(C->a, sizeof(FeType *) * (size_t)t->nelems);
            for (int i = 0; i < t->nelems; i++) {
                r->elems[i] = loosen_result(t->elems[i], f);
            }
            return r;
        }
        return t;
    }
    FeType *r = array_of(t->elem, t->rank, t->dims);
    for (int k = 0; k < r->rank; k++) {
        if (r->dims[k].kind == FE_DIM_VAR) {
            bool bound = false;
            for (int i = 0; i < f->nsize_vars; i++) {
                bound = bound || strcmp(f->size_vars[i], r->dims[k].name) == 0;
            }
            if (!bound) {
                r->dims[k] = runtime_dim();
            }
        }
    }
    return r;
}

static bool type_mentions_dim(const FeType *t, const char *name)
{
    if (!t) {
        return false;
    }
    if (t->kind == FE_TY_TUPLE) {
        for (int i = 0; i < t->nelems; i++) {
            if (type_mentions_dim(t->elems[i], name)) {
                return true;
            }
        }
    }
    if (t->kind != FE_TY_ARRAY) {
        return false;
    }
    for (int k = 0; k < t->rank; k++) {
        if (t->dims[k].kind == FE_DIM_VAR && strcmp(t->dims[k].name, name) == 0) {
            return true;
        }
    }
    return false;
}

static void collect_size_vars(FeFunc *f, FeType *t)
{
    if (!t) {
        return;
    }
    if (t->kind == FE_TY_TUPLE) {
        for (int i = 0; i < t->nelems; i++) {
            collect_size_vars(f, t->elems[i]);
        }
    }
    if (t->kind != FE_TY_ARRAY) {
        return;
    }
    for (int k = 0; k < t->rank; k++) {
        if (t->dims[k].kind != FE_DIM_VAR) {
            continue;
        }
        bool have = false;
        for (int i = 0; i < f->nsize_vars; i++) {
            have = have || strcmp(f->size_vars[i], t->dims[k].name) == 0;
        }
        if (!have) {
            int cap = f->nsize_vars;
            FE_PUSH(C->a, f->size_vars, f->nsize_vars, cap, t->dims[k].name);
        }
    }
}

static void check_instance(FeFunc *f)
{
    FeFunc *decl = f->generic;
    /* save the caller's context */
    FeFunc *saved_cur = C->cur;
    Scope *saved_scope = C->scope;
    const FeTParam *saved_tps = C->tps;
    const FeTArg *saved_targs = C->targs;
    int saved_ntps = C->ntps;
    bool saved_neg = C->neg_literal;
    int errors_before = fe_error_count();

    C->cur = f;
    C->scope = NULL;
    C->tps = decl->tparams;
    C->targs = f->targs;
    C->ntps = decl->ntparams;
    f->check_state = 1;
    FE_PUSH(C->a, C->stack, C->nstack, C->cap_stack, f);

    f->params = fe_alloc(C->a, sizeof(FeParam) * (size_t)(decl->nparams + 1));
    for (int i = 0; i < decl->nparams; i++) {
        f->params[i] = decl->params[i];
        f->params[i].type = resolve_type(decl->params[i].type);
        collect_size_vars(f, f->params[i].type);
        for (int j = 0; j < i; j++) {
            if (strcmp(decl->params[j].name, decl->params[i].name) == 0) {
                fe_error(decl->params[i].loc, "duplicate parameter '%s'", decl->params[i].name);
            }
        }
    }
    /* an integer parameter named like a size binds that size to its value */
    for (int i = 0; i < decl->nparams; i++) {
        const char *pn = decl->params[i].name;
        if (!fe_type_is_int(f->params[i].type) || is_size_var(pn)) {
            continue;
        }
        bool used = type_mentions_dim(decl->result, pn);
        for (int j = 0; j < decl->nparams; j++) {
            used = used || type_mentions_dim(decl->params[j].type, pn);
        }
        if (used) {
            int cap = f->nsize_vars;
            FE_PUSH(C->a, f->size_vars, f->nsize_vars, cap, pn);
        }
    }
    for (int i = 0; i < decl->nparams; i++) {
        f->params[i].bind = new_binding(decl->params[i].name, decl->params[i].loc, f->params[i].type);
        push_var(f->params[i].bind);
    }
    f->result = resolve_type(decl->result);
    f->attrs = fe_alloc(C->a, sizeof(FeAttr) * (size_t)(decl->nattrs + 1));
    for (int i = 0; i < decl->nattrs; i++) {
        f->attrs[i] = decl->attrs[i];
        f->attrs[i].arg = clone_expr(decl->attrs[i].arg);
    }
    check_attrs(f);
    f->body = clone_expr(decl->body);
    FeType *bt = check(f->body, f->result);
    if (!is_err(bt) && !is_err(f->result)) {
        FeType *want = loosen_result(f->result, f);
        if (!fe_type_equal(want, bt)) {
            fe_error(f->body->loc, "'%s' returns %s, but its body has type %s", decl->name, tstr(f->result),
                     tstr(bt));
        } else if (bt->kind == FE_TY_FUNC) {
            fe_error(f->body->loc, "functions cannot be returned");
        }
    }
    f->check_state = 2;
    C->nstack--;
    f->has_errors = fe_error_count() > errors_before;
    FE_PUSH(C->a, C->prog->instances, C->prog->ninstances, C->cap_instances, f);

    C->cur = saved_cur;
    C->scope = saved_scope;
    C->tps = saved_tps;
    C->targs = saved_targs;
    C->ntps = saved_ntps;
    C->neg_literal = saved_neg;
}

/* Resolve template argument types in the context where they were written
 * (exports, -D: global scope). */
bool check_targ_kind(const FeFunc *decl, int i, FeTArg *v, SrcLoc at)
{
    const FeTParam *tp = &decl->tparams[i];
    if (tp->kind == FE_TP_INT) {
        if (!v->is_int) {
            fe_error(at, "template parameter '%s' of '%s' is an integer, got the type %s", tp->name, decl->name,
                     tstr(v->type));
            return false;
        }
        return true;
    }
    if (v->is_int) {
        fe_error(at, "template parameter '%s' of '%s' is a type, got the integer %lld", tp->name, decl->name,
                 (long long)v->ival);
        return false;
    }
    if (is_err(v->type)) {
        return false;
    }
    if (tp->kind == FE_TP_NUM && !fe_type_is_numeric(v->type)) {
        fe_error(at, "template parameter '%s' of '%s' must be a numeric type, got %s", tp->name, decl->name,
                 tstr(v->type));
        return false;
    }
    if (tp->kind == FE_TP_FLOAT && !fe_type_is_float(v->type)) {
        fe_error(at, "template parameter '%s' of '%s' must be f32 or f64, got %s", tp->name, decl->name,
                 tstr(v->type));
        return false;
    }
    return true;
}

/* Make (or find) the checked instance of decl for these template arguments.
 * Missing trailing arguments take their defaults. */
FeFunc *instantiate(FeFunc *decl, const FeTArg *targs, int ntargs, const char *inst_name, SrcLoc at)
{
    if (ntargs > decl->ntparams) {
        fe_error(at, "too many template arguments for '%s' (it has %s)", decl->name,
                 plural(decl->ntparams, "parameter"));
        return NULL;
    }
    FeTArg *vals = fe_alloc(C->a, sizeof(FeTArg) * (size_t)(decl->ntparams + 1));
    bool ok = true;
    for (int i = 0; i < decl->ntparams; i++) {
        if (i < ntargs) {
            vals[i] = targs[i];
        } else if (decl->tparams[i].has_default) {
            vals[i] = decl->tparams[i].def;
        } else {
            fe_error(at, "template parameter '%s' of '%s' has no default and no value", decl->tparams[i].name,
                     decl->name);
            ok = false;
            continue;
        }
        if (!check_targ_kind(decl, i, &vals[i], i < ntargs ? targs[i].loc : at)) {
            ok = false;
        }
    }
    if (!ok) {
        return NULL;
    }
    /* an existing instance with these arguments? */
    for (FeFunc *f = decl->first_instance; f; f = f->next_instance) {
        bool same = true;
        for (int k = 0; k < decl->ntparams; k++) {
            same = same && targ_equal(&f->targs[k], &vals[k]);
        }
        if (!same) {
            continue;
        }
        if (f->check_state == 1) {
            int start = C->nstack - 1;
            while (start > 0 && C->stack[start] != f) {
                start--;
            }
            const char *chain = "";
            for (int k = start; k < C->nstack; k++) {
                chain = fe_printf(C->a, "%s%s -> ", chain, C->stack[k]->generic->name);
            }
            fe_error(at, "recursive call to '%s' (%s%s); recursion is not supported", decl->name, chain, decl->name);
            return NULL;
        }
        if (!inst_name || (f->inst_name && strcmp(f->inst_name, inst_name) == 0)) {
            return f;
        }
    }
    if (C->nstack >= MAX_CALL_DEPTH) {
        if (!C->deep_reported) {
            fe_error(at, "calls nested too deeply: checking '%s' needs %d functions in progress (the limit is %d)",
                     decl->name, C->nstack + 1, MAX_CALL_DEPTH);
            C->deep_reported = true;
        }
        return NULL;
    }
    FeFunc *f = fe_alloc(C->a, sizeof *f);
    *f = *decl;
    f->generic = decl;
    f->first_instance = NULL;
    f->next_instance = decl->first_instance;
    decl->first_instance = f;
    f->targs = vals;
    f->size_vars = NULL;
    f->nsize_vars = 0;
    f->inst_name = inst_name ? inst_name : decl->ntparams && !decl->is_entry ? mangle(decl, vals) : decl->name;
    int before = fe_error_count();
    check_instance(f);
    if (fe_error_count() > before && decl->ntparams > 0 && at.file) {
        const char *args = "";
        for (int i = 0; i < decl->ntparams; i++) {
            args = fe_printf(C->a, "%s%s%s", args, i ? ", " : "", targ_str(&vals[i]));
        }
        fe_note(at, "in instance '%s' = %s<%s>", f->inst_name, decl->name, args);
    }
    return f;
}

FeFunc *fe_instantiate(FeArena *a, FeProgram *p, FeFunc *generic, const FeTArg *targs, int ntargs,
                       const char *inst_name, SrcLoc loc)
{
    (void)a;
    (void)p;
    if (!C) {
        FE_INTERNAL_ERROR(loc, "fe_instantiate called before fe_check");
    }
    FeFunc *f = instantiate(generic, targs, ntargs, inst_name, loc);
    return f && !f->has_errors ? f : NULL;
}


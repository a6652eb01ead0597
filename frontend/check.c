/* check.c: the checker. Resolves names (scopes, imports share one global
 * namespace), checks types with contextual literal typing, array size
 * agreement and NumPy broadcasting, types every builtin, instantiates
 * templates (entry defaults with -D overrides, `export ... as`, and fn
 * templates at their calls), checks launch attributes and rejects recursion.
 *
 * Every function is checked as a *clone* of its declaration with its template
 * arguments substituted (an instance); instances go to FeProgram.instances
 * once checked, callees first. Errors are reported and checking goes on; a
 * poisoned FE_TY_ERROR type silences errors that would only follow from an
 * earlier one.
 *
 * requires: parsed program without syntax errors
 * provides: FeProgram.instances, every FeExpr.type, lifted/bcast annotations
 *
 * This file has fe_check (the program: globals, structs, -D defines), names
 * and declared types; the rest of the checker is in check_*.c, listed in
 * check_internal.h. */
#include "check_internal.h"

Checker *fe_checker; /* C in check_internal.h */

FeType *err_type(void)
{
    return fe_type_scalar(FE_TY_ERROR);
}

bool is_err(const FeType *t)
{
    return !t || t->kind == FE_TY_ERROR;
}

const char *tstr(const FeType *t)
{
    return fe_type_str(C->a, t);
}

FeType *new_type(FeTypeKind k)
{
    FeType *t = fe_alloc(C->a, sizeof *t);
    t->kind = k;
    return t;
}

FeType *array_of(FeType *elem, int rank, const FeDim *dims)
{
    FeType *t = new_type(FE_TY_ARRAY);
    t->elem = elem;
    t->rank = rank;
    for (int i = 0; i < rank; i++) {
        t->dims[i] = dims[i];
    }
    return t;
}

FeType *elem_of(FeType *t)
{
    return t && t->kind == FE_TY_ARRAY ? t->elem : t;
}

/* Does t hold an array or a function anywhere (arrays cannot have such elements)? */
bool has_array(const FeType *t)
{
    if (!t) {
        return false;
    }
    if (t->kind == FE_TY_ARRAY || t->kind == FE_TY_FUNC) {
        return true;
    }
    if (t->kind == FE_TY_TUPLE) {
        for (int i = 0; i < t->nelems; i++) {
            if (has_array(t->elems[i])) {
                return true;
            }
        }
    }
    return false;
}

FeDim runtime_dim(void)
{
    FeDim d = {0};
    d.kind = FE_DIM_RUNTIME;
    d.id = ++C->next_dim_id;
    return d;
}

const char *dim_str(const FeDim *d)
{
    if (d->kind == FE_DIM_VAR) {
        return fe_printf(C->a, "'%s'", d->name);
    }
    if (d->kind == FE_DIM_CONST) {
        return fe_printf(C->a, "%lld", (long long)d->value);
    }
    return "a run-time size";
}

/* ------------------------------------------------------------ names -- */

static size_t min3(size_t a, size_t b, size_t c)
{
    size_t m = a < b ? a : b;
    return m < c ? m : c;
}

/* Edit distance, for "did you mean". Short names only. */
static size_t edit_distance(const char *s, const char *t)
{
    size_t n = strlen(s), m = strlen(t);
    if (n > 32 || m > 32) {
        return 99;
    }
    size_t d[33][33];
    for (size_t i = 0; i <= n; i++) {
        d[i][0] = i;
    }
    for (size_t j = 0; j <= m; j++) {
        d[0][j] = j;
    }
    for (size_t i = 1; i <= n; i++) {
        for (size_t j = 1; j <= m; j++) {
            d[i][j] = min3(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (s[i - 1] != t[j - 1]));
        }
    }
    return d[n][m];
}

void suggest(Suggest *s, const char *cand)
{
    size_t d = edit_distance(s->name, cand);
    size_t limit = strlen(s->name) <= 3 ? 1 : 2;
    if (d > 0 && d <= limit && d < s->dist) {
        s->dist = d;
        s->best = cand;
    }
}

static const char *builtin_names[] = {
#define FE_BUILTIN(id, name, ...) name,
#include "builtins.def"
#undef FE_BUILTIN
};

FeBuiltin find_builtin(const char *name)
{
    for (int i = 0; i < FE_B_COUNT - 1; i++) {
        if (strcmp(builtin_names[i], name) == 0) {
            return (FeBuiltin)(i + 1);
        }
    }
    return FE_B_NONE;
}

static unsigned hash_name(const char *s)
{
    unsigned h = 2166136261u; /* FNV-1a */
    for (; *s; s++) {
        h = (h ^ (unsigned char)*s) * 16777619u;
    }
    return h;
}

Global *find_global(const char *name)
{
    if (!C->gindex_size) {
        return NULL;
    }
    unsigned mask = (unsigned)C->gindex_size - 1;
    for (unsigned h = hash_name(name) & mask;; h = (h + 1) & mask) {
        int i = C->gindex[h];
        if (i == 0) {
            return NULL;
        }
        if (strcmp(C->globals[i - 1].name, name) == 0) {
            return &C->globals[i - 1];
        }
    }
}

/* Insert globals[i] into the hash, growing it to keep it at most half full. */
static void index_global(int i)
{
    if (2 * C->nglobals > C->gindex_size) {
        C->gindex_size = C->gindex_size ? 2 * C->gindex_size : 64;
        C->gindex = fe_alloc(C->a, sizeof(int) * (size_t)C->gindex_size);
        for (int k = 0; k < C->nglobals; k++) {
            if (k != i) {
                index_global(k);
            }
        }
    }
    unsigned mask = (unsigned)C->gindex_size - 1;
    unsigned h = hash_name(C->globals[i].name) & mask;
    while (C->gindex[h] != 0) {
        h = (h + 1) & mask;
    }
    C->gindex[h] = i + 1;
}

FeBinding *find_var(const char *name)
{
    for (Scope *s = C->scope; s; s = s->next) {
        if (strcmp(s->name, name) == 0) {
            return s->bind;
        }
    }
    return NULL;
}

bool is_size_var(const char *name)
{
    if (!C->cur) {
        return false;
    }
    for (int i = 0; i < C->cur->nsize_vars; i++) {
        if (strcmp(C->cur->size_vars[i], name) == 0) {
            return true;
        }
    }
    return false;
}

/* " (did you mean 'x'?)" or "" */
const char *did_you_mean(const char *name, bool values, bool funcs, bool types)
{
    Suggest s = {name, NULL, 99};
    if (++C->suggestions > 100) {
        return ""; /* each search scans every name: keep thousands of errors fast */
    }
    if (values) {
        for (Scope *sc = C->scope; sc; sc = sc->next) {
            suggest(&s, sc->name);
        }
        if (C->cur) {
            for (int i = 0; i < C->cur->nsize_vars; i++) {
                suggest(&s, C->cur->size_vars[i]);
            }
        }
    }
    for (int i = 0; i < C->nglobals; i++) {
        if ((funcs && C->globals[i].func) || (types && C->globals[i].sdecl)) {
            suggest(&s, C->globals[i].name);
        }
    }
    if (funcs) {
        for (int i = 0; i < FE_B_COUNT - 1; i++) {
            suggest(&s, builtin_names[i]);
        }
    }
    if (types) {
        for (int k = FE_TY_BOOL; k <= FE_TY_F64; k++) {
            suggest(&s, fe_scalar_name((FeTypeKind)k));
        }
        for (int i = 0; i < C->ntps; i++) {
            if (C->tps[i].kind != FE_TP_INT) {
                suggest(&s, C->tps[i].name);
            }
        }
    }
    return s.best ? fe_printf(C->a, "; did you mean '%s'?", s.best) : "";
}

FeBinding *new_binding(const char *name, SrcLoc loc, FeType *t)
{
    FeBinding *b = fe_alloc(C->a, sizeof *b);
    b->name = name;
    b->loc = loc;
    b->type = t;
    b->id = ++C->next_bind_id;
    return b;
}

void push_var(FeBinding *b)
{
    Scope *s = fe_alloc(C->a, sizeof *s);
    s->name = b->name;
    s->bind = b;
    s->next = C->scope;
    C->scope = s;
}

/* ------------------------------------------------------------ types -- */

const FeTArg *tparam_value(const char *name, FeTParamKind *kind)
{
    for (int i = 0; i < C->ntps; i++) {
        if (strcmp(C->tps[i].name, name) == 0) {
            if (kind) {
                *kind = C->tps[i].kind;
            }
            return &C->targs[i];
        }
    }
    return NULL;
}

/* Resolve a written type: scalars, struct names, template type parameters. */
FeType *resolve_type(FeType *t)
{
    if (!t) {
        return err_type();
    }
    switch (t->kind) {
    case FE_TY_NAME: {
        FeTParamKind k;
        const FeTArg *v = tparam_value(t->name, &k);
        if (v) {
            if (k == FE_TP_INT) {
                fe_error(t->loc, "'%s' is an integer template parameter, not a type", t->name);
                return err_type();
            }
            return v->type;
        }
        Global *g = find_global(t->name);
        if (g && g->sdecl) {
            FeType *s = new_type(FE_TY_STRUCT);
            s->sdecl = g->sdecl;
            s->name = g->sdecl->name;
            return s;
        }
        fe_error(t->loc, "unknown type '%s'%s", t->name, did_you_mean(t->name, false, false, true));
        return err_type();
    }
    case FE_TY_TUPLE: {
        FeType *r = new_type(FE_TY_TUPLE);
        r->nelems = t->nelems;
        r->elems = fe_alloc(C->a, sizeof(FeType *) * (size_t)t->nelems);
        for (int i = 0; i < t->nelems; i++) {
            r->elems[i] = resolve_type(t->elems[i]);
            if (is_err(r->elems[i])) {
                return err_type();
            }
        }
        return r;
    }
    case FE_TY_ARRAY: {
        FeType *e = resolve_type(t->elem);
        if (is_err(e)) {
            return e;
        }
        if (e->kind == FE_TY_ARRAY) {
            fe_error(t->loc, "arrays have at most 2 dimensions");
            return err_type();
        }
        if (has_array(e)) {
            fe_error(t->loc, "array elements cannot hold arrays: %s", tstr(e));
            return err_type();
        }
        FeType *r = array_of(e, t->rank, t->dims);
        for (int i = 0; i < r->rank; i++) {
            FeTParamKind k;
            const FeTArg *v;
            if (r->dims[i].kind == FE_DIM_RUNTIME) {
                r->dims[i] = runtime_dim();
            } else if (r->dims[i].kind == FE_DIM_VAR && (v = tparam_value(r->dims[i].name, &k)) != NULL) {
                SrcLoc at = r->dims[i].loc.file ? r->dims[i].loc : t->loc;
                if (k != FE_TP_INT) {
                    fe_error(at, "'%s' is a type parameter, not a size", r->dims[i].name);
                    return err_type();
                }
                if (v->ival < 0 || v->ival > INT32_MAX) {
                    fe_error(at, "array size %s = %lld is out of range (0 to 2147483647)", r->dims[i].name,
                             (long long)v->ival);
                    return err_type();
                }
                r->dims[i].kind = FE_DIM_CONST;
                r->dims[i].value = v->ival;
            }
        }
        return r;
    }
    case FE_TY_ERROR:
    case FE_TY_STRUCT:
    case FE_TY_FUNC:
        return t; /* already resolved */
    default:
        return fe_type_scalar(t->kind);
    }
}

/* ---------------------------------------------------------- program -- */

static void add_global(const char *name, SrcLoc loc, FeStruct *s, FeFunc *f)
{
    if (find_builtin(name)) {
        fe_error(loc, "'%s' is a builtin and cannot be redefined", name);
        return;
    }
    Global *g = find_global(name);
    if (g) {
        fe_error(loc, "redefinition of '%s'", name);
        fe_note(g->loc, "'%s' was first defined here", name);
        return;
    }
    Global ng = {name, loc, s, f};
    FE_PUSH(C->a, C->globals, C->nglobals, C->cap_globals, ng);
    index_global(C->nglobals - 1);
}

/* A struct used directly by a field of another (through tuples, not through
 * other structs): an edge of the containment graph. */
typedef struct StructEdge {
    FeStruct *to;
    int field;
} StructEdge;

static void struct_edges(FeType *t, int field, StructEdge **edges, int *n, int *cap)
{
    if (!t) {
        return;
    }
    if (t->kind == FE_TY_STRUCT) {
        StructEdge e = {t->sdecl, field};
        FE_PUSH(C->a, *edges, *n, *cap, e);
    } else if (t->kind == FE_TY_TUPLE) {
        for (int i = 0; i < t->nelems; i++) {
            struct_edges(t->elems[i], field, edges, n, cap);
        }
    }
}

typedef struct StructFrame {
    FeStruct *s;
    StructEdge *edges;
    int nedges, next;
} StructFrame;

/* Struct containment must be acyclic (a struct cannot contain itself) and at
 * most FE_MAX_DEPTH deep, so every later recursion over struct types ends.
 * An iterative depth-first search: any number of structs is fine. */
static void check_struct_graph(FeProgram *p)
{
    StructFrame *stack = NULL;
    int nstack = 0, cap_stack = 0;
    bool deep_reported = false;
    for (int m = 0; m < p->nmodules; m++) {
        for (int i = 0; i < p->modules[m]->nstructs; i++) {
            FeStruct *root = p->modules[m]->structs[i];
            if (root->check_state != 0) {
                continue;
            }
            StructFrame f0 = {root, NULL, 0, 0};
            FE_PUSH(C->a, stack, nstack, cap_stack, f0);
            root->check_state = 1;
            root->depth = 1;
            bool fresh = true;
            while (nstack > 0) {
                StructFrame *top = &stack[nstack - 1];
                if (fresh) {
                    int cap = 0;
                    for (int k = 0; k < top->s->nfields; k++) {
                        struct_edges(top->s->field_types[k], k, &top->edges, &top->nedges, &cap);
                    }
                    fresh = false;
                }
                if (top->next < top->nedges) {
                    StructEdge e = top->edges[top->next++];
                    FeStruct *s = top->s;
                    if (e.to->check_state == 1) {
                        if (!is_err(s->field_types[e.field])) {
                            fe_error(s->field_locs[e.field], "struct '%s' contains itself through field '%s'",
                                     s->name, s->field_names[e.field]);
                            s->field_types[e.field] = err_type();
                            deep_reported = true; /* depths through a cycle mean nothing */
                        }
                    } else if (e.to->check_state == 2) {
                        if (e.to->depth + 1 > s->depth) {
                            s->depth = e.to->depth + 1;
                        }
                    } else {
                        e.to->check_state = 1;
                        e.to->depth = 1;
                        StructFrame f = {e.to, NULL, 0, 0};
                        FE_PUSH(C->a, stack, nstack, cap_stack, f);
                        fresh = true;
                    }
                    continue;
                }
                FeStruct *done = top->s;
                done->check_state = 2;
                nstack--;
                if (done->depth > FE_MAX_DEPTH && !deep_reported) {
                    fe_error(done->loc, "struct '%s' nests structs too deeply (the limit is %d levels)", done->name,
                             FE_MAX_DEPTH);
                    deep_reported = true;
                }
                if (nstack > 0 && done->depth + 1 > stack[nstack - 1].s->depth) {
                    stack[nstack - 1].s->depth = done->depth + 1;
                }
            }
        }
    }
}

static void check_struct(FeStruct *s)
{
    for (int i = 0; i < s->nfields; i++) {
        for (int j = 0; j < i; j++) {
            if (strcmp(s->field_names[i], s->field_names[j]) == 0) {
                fe_error(s->field_locs[i], "duplicate field '%s' in struct '%s'", s->field_names[i], s->name);
            }
        }
        SrcLoc loc = s->field_types[i]->loc;
        FeType *t = resolve_type(s->field_types[i]);
        if (!is_err(t) && t->kind == FE_TY_ARRAY) {
            fe_error(loc, "struct fields must be scalars, tuples or structs, not arrays");
            t = err_type();
        }
        s->field_types[i] = t;
    }
}

/* -D NAME=VALUE: parse the value as an integer or a type name. */
static bool parse_define_value(const char *v, FeTArg *out)
{
    memset(out, 0, sizeof *out);
    char *end;
    long long x = strtoll(v, &end, 0);
    if (*v && *end == 0) {
        out->is_int = true;
        out->ival = x;
        return true;
    }
    for (int k = FE_TY_BOOL; k <= FE_TY_F64; k++) {
        if (strcmp(v, fe_scalar_name((FeTypeKind)k)) == 0) {
            out->type = fe_type_scalar((FeTypeKind)k);
            return true;
        }
    }
    Global *g = find_global(v);
    if (g && g->sdecl) {
        FeType *t = new_type(FE_TY_STRUCT);
        t->sdecl = g->sdecl;
        t->name = g->sdecl->name;
        out->type = t;
        return true;
    }
    return false;
}

static void apply_defines(const FeOptions *opts)
{
    for (int i = 0; opts && i < opts->ndefines; i++) {
        const FeDefine *d = &opts->defines[i];
        const char *spell = d->entry ? fe_printf(C->a, "%s.%s=%s", d->entry, d->name, d->value)
                                     : fe_printf(C->a, "%s=%s", d->name, d->value);
        FeTArg v;
        if (!parse_define_value(d->value, &v)) {
            fe_error_noloc("-D %s: '%s' is neither an integer nor a type", spell, d->value);
            continue;
        }
        bool used = false, entry_found = false;
        Suggest near = {d->name, NULL, 99};
        for (int m = 0; m < C->prog->nmodules; m++) {
            FeModule *mod = C->prog->modules[m];
            for (int f = 0; f < mod->nfuncs; f++) {
                FeFunc *fn = mod->funcs[f];
                if (d->entry && strcmp(d->entry, fn->name) != 0) {
                    continue;
                }
                entry_found = true;
                for (int k = 0; k < fn->ntparams; k++) {
                    suggest(&near, fn->tparams[k].name);
                    if (strcmp(fn->tparams[k].name, d->name) == 0) {
                        FeTArg val = v;
                        val.loc = fn->tparams[k].loc;
                        if (check_targ_kind(fn, k, &val, fn->tparams[k].loc)) {
                            fn->tparams[k].def = val;
                            fn->tparams[k].has_default = true;
                        }
                        used = true;
                    }
                }
            }
        }
        if (d->entry && !entry_found) {
            fe_error_noloc("-D %s: there is no function named '%s'", spell, d->entry);
        } else if (!used) {
            const char *hint = near.best ? fe_printf(C->a, "; did you mean '%s'?", near.best) : "";
            if (d->entry) {
                fe_error_noloc("-D %s: '%s' has no template parameter named '%s'%s", spell, d->entry, d->name, hint);
            } else {
                fe_error_noloc("-D %s: no function has a template parameter named '%s'%s", spell, d->name, hint);
            }
        }
    }
}

int fe_check(FeArena *a, FeProgram *p, const FeOptions *opts)
{
    /* the checker lives in the arena so fe_instantiate can use it afterwards */
    C = fe_alloc(a, sizeof *C);
    C->a = a;
    C->prog = p;
    C->opts = opts;
    int before = fe_error_count();

    /* 1. global names (all modules share one namespace) */
    for (int m = 0; m < p->nmodules; m++) {
        FeModule *mod = p->modules[m];
        for (int i = 0; i < mod->nstructs; i++) {
            add_global(mod->structs[i]->name, mod->structs[i]->loc, mod->structs[i], NULL);
        }
        for (int i = 0; i < mod->nfuncs; i++) {
            add_global(mod->funcs[i]->name, mod->funcs[i]->loc, NULL, mod->funcs[i]);
        }
    }
    for (int m = 0; m < p->nmodules; m++) {
        FeModule *mod = p->modules[m];
        for (int i = 0; i < mod->nexports; i++) {
            add_global(mod->exports[i].as_name, mod->exports[i].loc, NULL, NULL);
        }
    }
    /* 2. structs, template parameter lists */
    for (int m = 0; m < p->nmodules; m++) {
        FeModule *mod = p->modules[m];
        for (int i = 0; i < mod->nstructs; i++) {
            check_struct(mod->structs[i]);
        }
    }
    check_struct_graph(p);
    for (int m = 0; m < p->nmodules; m++) {
        FeModule *mod = p->modules[m];
        for (int i = 0; i < mod->nfuncs; i++) {
            FeFunc *f = mod->funcs[i];
            for (int k = 0; k < f->ntparams; k++) {
                for (int j = 0; j < k; j++) {
                    if (strcmp(f->tparams[j].name, f->tparams[k].name) == 0) {
                        fe_error(f->tparams[k].loc, "duplicate template parameter '%s'", f->tparams[k].name);
                    }
                }
                FeTParam *tp = &f->tparams[k];
                if (tp->has_default && !tp->def.is_int) {
                    tp->def.type = resolve_type(tp->def.type);
                }
                if (tp->has_default && !check_targ_kind(f, k, &tp->def, tp->def.loc)) {
                    tp->has_default = false;
                }
            }
        }
    }
    int before_defines = fe_error_count();
    apply_defines(opts);
    if (fe_error_count() > before_defines) {
        return fe_error_count() - before; /* instances would only repeat what -D got wrong */
    }
    /* 3. every function that can be instantiated without arguments, then exports */
    for (int m = 0; m < p->nmodules; m++) {
        FeModule *mod = p->modules[m];
        for (int i = 0; i < mod->nfuncs; i++) {
            FeFunc *f = mod->funcs[i];
            bool complete = true;
            for (int k = 0; k < f->ntparams; k++) {
                complete = complete && f->tparams[k].has_default;
            }
            if (f->ntparams == 0 || (f->is_entry && complete)) {
                SrcLoc none = {0};
                FeFunc *inst = instantiate(f, NULL, 0, NULL, none);
                if (inst && f->is_entry && m == 0) {
                    inst->entry_point = true;
                }
            }
        }
    }
    for (int m = 0; m < p->nmodules; m++) {
        FeModule *mod = p->modules[m];
        for (int i = 0; i < mod->nexports; i++) {
            FeExport *x = &mod->exports[i];
            Global *g = find_global(x->entry);
            if (!g || !g->func) {
                fe_error(x->entry_loc, "unknown entry '%s'%s", x->entry, did_you_mean(x->entry, false, true, false));
                continue;
            }
            if (!g->func->is_entry) {
                fe_error(x->entry_loc, "'%s' is a fn; only entries can be exported", x->entry);
                continue;
            }
            if (g->func->ntparams == 0) {
                fe_error(x->entry_loc, "'%s' has no template parameters; 'export ... as' names template instances",
                         x->entry);
                continue;
            }
            bool ok = true;
            for (int k = 0; k < x->ntargs; k++) {
                if (!x->targs[k].is_int) {
                    x->targs[k].type = resolve_type(x->targs[k].type);
                    ok = ok && !is_err(x->targs[k].type);
                }
            }
            if (ok) {
                x->instance = instantiate(g->func, x->targs, x->ntargs, x->as_name, x->loc);
                if (x->instance && m == 0) {
                    x->instance->entry_point = true;
                }
            }
        }
    }
    return fe_error_count() - before;
}

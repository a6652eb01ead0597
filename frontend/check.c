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
 * provides: FeProgram.instances, every FeExpr.type, lifted/bcast annotations */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend.h"
#include "parse.h" /* FE_MAX_DEPTH */

/* A lexical scope entry: one variable. */
typedef struct Scope {
    struct Scope *next;
    const char *name;
    FeBinding *bind;
} Scope;

/* A global name: a struct or a function declaration. */
typedef struct Global {
    const char *name;
    SrcLoc loc;
    FeStruct *sdecl;
    FeFunc *func;
} Global;

typedef struct Checker {
    FeArena *a;
    FeProgram *prog;
    const FeOptions *opts;
    Global *globals;
    int nglobals, cap_globals;
    int *gindex;         /* hash of global names: index + 1 into globals, 0 = empty */
    int gindex_size;     /* a power of two, at least twice nglobals */
    int suggestions;     /* "did you mean" searches so far (capped: they are quadratic) */
    int cap_instances;
    int next_bind_id;
    int next_dim_id;
    /* the instance being checked */
    FeFunc *cur;
    Scope *scope;
    const FeTParam *tps; /* its template parameters and arguments */
    const FeTArg *targs;
    int ntps;
    FeFunc **stack;      /* instances being checked, for recursion messages */
    int nstack, cap_stack;
    bool neg_literal;    /* the literal being checked is the operand of unary minus */
    bool col_ok;         /* the expression being checked is an operand of a lifted operation */
    int depth;           /* nesting of check() calls, across instances checked from calls */
    bool deep_reported;
} Checker;

static Checker *C; /* the checker of this compilation (fe_instantiate uses it) */

static FeType *err_type(void)
{
    return fe_type_scalar(FE_TY_ERROR);
}

static bool is_err(const FeType *t)
{
    return !t || t->kind == FE_TY_ERROR;
}

static const char *tstr(const FeType *t)
{
    return fe_type_str(C->a, t);
}

static FeType *new_type(FeTypeKind k)
{
    FeType *t = fe_alloc(C->a, sizeof *t);
    t->kind = k;
    return t;
}

static FeType *array_of(FeType *elem, int rank, const FeDim *dims)
{
    FeType *t = new_type(FE_TY_ARRAY);
    t->elem = elem;
    t->rank = rank;
    for (int i = 0; i < rank; i++) {
        t->dims[i] = dims[i];
    }
    return t;
}

static FeType *elem_of(FeType *t)
{
    return t && t->kind == FE_TY_ARRAY ? t->elem : t;
}

/* Does t hold an array or a function anywhere (arrays cannot have such elements)? */
static bool has_array(const FeType *t)
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

static FeDim runtime_dim(void)
{
    FeDim d = {0};
    d.kind = FE_DIM_RUNTIME;
    d.id = ++C->next_dim_id;
    return d;
}

static const char *dim_str(const FeDim *d)
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

typedef struct Suggest {
    const char *name;
    const char *best;
    size_t dist;
} Suggest;

static void suggest(Suggest *s, const char *cand)
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

static FeBuiltin find_builtin(const char *name)
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

static Global *find_global(const char *name)
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

static FeBinding *find_var(const char *name)
{
    for (Scope *s = C->scope; s; s = s->next) {
        if (strcmp(s->name, name) == 0) {
            return s->bind;
        }
    }
    return NULL;
}

static bool is_size_var(const char *name)
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
static const char *did_you_mean(const char *name, bool values, bool funcs, bool types)
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

static FeBinding *new_binding(const char *name, SrcLoc loc, FeType *t)
{
    FeBinding *b = fe_alloc(C->a, sizeof *b);
    b->name = name;
    b->loc = loc;
    b->type = t;
    b->id = ++C->next_bind_id;
    return b;
}

static void push_var(FeBinding *b)
{
    Scope *s = fe_alloc(C->a, sizeof *s);
    s->name = b->name;
    s->bind = b;
    s->next = C->scope;
    C->scope = s;
}

/* ------------------------------------------------------------ types -- */

static const FeTArg *tparam_value(const char *name, FeTParamKind *kind)
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
static FeType *resolve_type(FeType *t)
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

/* ------------------------------------------------------- expressions -- */

static FeType *check(FeExpr *e, FeType *hint);
static FeType *check_depth(FeExpr *e, FeType *hint);
static FeFunc *instantiate(FeFunc *decl, const FeTArg *targs, int ntargs, const char *inst_name,
                           SrcLoc at);

/* An untyped literal (or an expression of only such literals) that takes its
 * type from the other operand. */
static bool is_flex(const FeExpr *e)
{
    switch (e->kind) {
    case FE_EX_INT:
    case FE_EX_FLOAT:
        return e->suffix == FE_TY_ERROR;
    case FE_EX_UNARY:
        return e->op != FE_OP_NOT && is_flex(e->a);
    case FE_EX_BINARY:
        return e->op <= FE_OP_SHR && is_flex(e->a) && is_flex(e->b);
    default:
        return false;
    }
}

static FeType *scalar_hint(FeType *hint)
{
    FeType *h = elem_of(hint);
    return fe_type_is_scalar(h) ? h : NULL;
}

static FeType *check_int_literal(FeExpr *e, FeType *hint)
{
    bool neg = C->neg_literal;
    C->neg_literal = false;
    FeType *t;
    if (e->suffix != FE_TY_ERROR) {
        t = fe_type_scalar(e->suffix);
    } else if (hint && fe_type_is_numeric(hint)) {
        t = hint;
    } else {
        t = fe_type_scalar(FE_TY_I32);
    }
    uint64_t max = 0;
    switch (t->kind) {
    case FE_TY_I32: max = neg ? 2147483648u : 2147483647u; break;
    case FE_TY_I64: max = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX; break;
    case FE_TY_U32: max = 4294967295u; break;
    case FE_TY_U64: max = UINT64_MAX; break;
    case FE_TY_F32: max = (uint64_t)1 << 24; break;  /* exactly representable */
    case FE_TY_F64: max = (uint64_t)1 << 53; break;
    default: break;
    }
    if (e->ival > max) {
        if (fe_type_is_float(t)) {
            fe_error(e->loc, "integer literal %s is not exactly representable in %s", e->text,
                     fe_scalar_name(t->kind));
        } else {
            fe_error(e->loc, "integer literal %s%s does not fit in %s", neg ? "-" : "", e->text,
                     fe_scalar_name(t->kind));
        }
        return e->type = err_type();
    }
    return e->type = t;
}

static FeType *check_float_literal(FeExpr *e, FeType *hint)
{
    C->neg_literal = false;
    FeType *t;
    if (e->suffix != FE_TY_ERROR) {
        t = fe_type_scalar(e->suffix);
    } else if (hint && fe_type_is_float(hint)) {
        t = hint;
    } else {
        t = fe_type_scalar(FE_TY_F32);
    }
    /* values from FLT_MAX + half an ulp up round to infinity in f32 */
    if (t->kind == FE_TY_F32 && fabs(e->fval) >= 3.4028235677973366e38) {
        fe_error(e->loc, "float literal %s is out of range for f32", e->text);
        return e->type = err_type();
    }
    return e->type = t;
}

typedef enum OpClass { CL_NUM, CL_INT, CL_BOOL, CL_INTBOOL, CL_ANY, CL_FLOAT } OpClass;

static OpClass op_class(FeOp op)
{
    switch (op) {
    case FE_OP_NOT:
    case FE_OP_AND:
    case FE_OP_OR:
        return CL_BOOL;
    case FE_OP_BITNOT:
    case FE_OP_SHL:
    case FE_OP_SHR:
        return CL_INT;
    case FE_OP_BITAND:
    case FE_OP_BITOR:
    case FE_OP_BITXOR:
        return CL_INTBOOL;
    case FE_OP_EQ:
    case FE_OP_NE:
        return CL_ANY;
    default:
        return CL_NUM;
    }
}

static bool class_ok(OpClass cl, const FeType *t)
{
    switch (cl) {
    case CL_NUM: return fe_type_is_numeric(t);
    case CL_INT: return fe_type_is_int(t);
    case CL_BOOL: return t->kind == FE_TY_BOOL;
    case CL_INTBOOL: return fe_type_is_int(t) || t->kind == FE_TY_BOOL;
    case CL_FLOAT: return fe_type_is_float(t);
    default: return fe_type_is_scalar(t);
    }
}

static const char *class_name(OpClass cl)
{
    switch (cl) {
    case CL_NUM: return "numeric";
    case CL_INT: return "integer";
    case CL_BOOL: return "bool";
    case CL_INTBOOL: return "integer or bool";
    case CL_FLOAT: return "f32 or f64";
    default: return "scalar";
    }
}

static bool is_compare(FeOp op)
{
    return op >= FE_OP_EQ;
}

/* Broadcast the operands of an elementwise operation (NumPy rules, see
 * docs/language.md): scalars everywhere, equal shapes, T[m] down the rows of
 * T[n][m], col(v) = T[n][1] across the columns. Sets each operand's bcast and
 * returns the result shape as an array type with element `elem` (or elem
 * itself when all operands are scalars). */
static FeType *broadcast(FeExpr **ops, int n, FeType *elem, SrcLoc loc, const char *what)
{
    int rank = 0;
    for (int i = 0; i < n; i++) {
        FeType *t = ops[i]->type;
        if (t && t->kind == FE_TY_ARRAY && t->rank > rank) {
            rank = t->rank;
        }
    }
    if (rank == 0) {
        return elem;
    }
    /* result dims: first operand of full rank, preferring a non-1 last dim */
    FeDim dims[2];
    bool have = false;
    for (int i = 0; i < n; i++) {
        FeType *t = ops[i]->type;
        if (t->kind == FE_TY_ARRAY && t->rank == rank) {
            if (!have || (rank == 2 && dims[1].kind == FE_DIM_CONST && dims[1].value == 1)) {
                dims[0] = t->dims[0];
                if (rank == 2) {
                    dims[1] = t->dims[1];
                }
                have = true;
            }
        }
    }
    if (rank == 2 && dims[1].kind == FE_DIM_CONST && dims[1].value == 1) {
        /* only columns: take a row operand's length if there is one */
        for (int i = 0; i < n; i++) {
            FeType *t = ops[i]->type;
            if (t->kind == FE_TY_ARRAY && t->rank == 1) {
                dims[1] = t->dims[0];
                break;
            }
        }
    }
    bool ok = true;
    for (int i = 0; i < n && ok; i++) {
        FeType *t = ops[i]->type;
        if (t->kind != FE_TY_ARRAY) {
            ops[i]->bcast = FE_BC_SCALAR;
            continue;
        }
        if (t->rank < rank) {
            ops[i]->bcast = FE_BC_ROW;
            if (!fe_dim_equal(&t->dims[0], &dims[1])) {
                fe_error(loc, "size mismatch in %s: a row of length %s does not match %s columns",
                         what, dim_str(&t->dims[0]), dim_str(&dims[1]));
                ok = false;
            }
            continue;
        }
        for (int k = 0; k < rank; k++) {
            if (k == 1 && t->dims[1].kind == FE_DIM_CONST && t->dims[1].value == 1 &&
                !(dims[1].kind == FE_DIM_CONST && dims[1].value == 1)) {
                ops[i]->bcast = FE_BC_COL;
                continue;
            }
            if (!fe_dim_equal(&t->dims[k], &dims[k])) {
                fe_error(loc, "size mismatch in %s: %s vs %s", what, dim_str(&dims[k]),
                         dim_str(&t->dims[k]));
                ok = false;
                break;
            }
        }
    }
    if (!ok) {
        return err_type();
    }
    if (rank == 2 && dims[1].kind == FE_DIM_CONST && dims[1].value == 1) {
        for (int i = 0; i < n; i++) {
            if (ops[i]->kind == FE_EX_CALL && ops[i]->builtin == FE_B_COL) {
                fe_error(ops[i]->loc, "col(v) only broadcasts against a 2-D array");
                return err_type();
            }
        }
    }
    return array_of(elem, rank, dims);
}

/* Check operands so that untyped literals take the other operands' type:
 * the non-literal operands first, then the literals with their element type. */
static void check_operands(FeExpr **ops, int n, FeType *hint, bool lifting)
{
    FeType *h = NULL;
    for (int i = 0; i < n; i++) {
        if (!is_flex(ops[i])) {
            C->col_ok = lifting;
            check(ops[i], hint);
            if (!h && fe_type_is_scalar(elem_of(ops[i]->type))) {
                h = elem_of(ops[i]->type);
            }
        }
    }
    if (!h) {
        h = hint;
    }
    for (int i = 0; i < n; i++) {
        if (is_flex(ops[i])) {
            C->col_ok = lifting;
            check(ops[i], h);
        }
    }
}

static bool any_error(FeExpr **ops, int n)
{
    for (int i = 0; i < n; i++) {
        if (is_err(ops[i]->type)) {
            return true;
        }
    }
    return false;
}

/* The typing of a scalar operator or function applied to operands of
 * (possibly array) types: all element types equal and of class cl. Returns
 * the common element type or NULL after an error. */
static FeType *common_elem(FeExpr **ops, int n, OpClass cl, SrcLoc loc, const char *what)
{
    FeType *e0 = NULL;
    for (int i = 0; i < n; i++) {
        FeType *t = ops[i]->type;
        FeType *et = elem_of(t);
        if (t->kind == FE_TY_FUNC) {
            fe_error(ops[i]->loc, "%s needs a value here, not a function", what);
            return NULL;
        }
        if (!fe_type_is_scalar(et)) {
            fe_error(ops[i]->loc, "%s needs %s operands, got %s", what,
                     cl == CL_ANY ? "scalar" : class_name(cl), tstr(t));
            return NULL;
        }
        if (!class_ok(cl, et)) {
            fe_error(ops[i]->loc, "%s needs %s operands, got %s", what, class_name(cl), tstr(t));
            return NULL;
        }
        if (!e0) {
            e0 = et;
        } else if (e0 != et) {
            fe_error(loc, "mismatched types %s and %s in %s (convert with 'as')", fe_scalar_name(e0->kind),
                     fe_scalar_name(et->kind), what);
            return NULL;
        }
    }
    return e0;
}

static FeType *check_unary(FeExpr *e, FeType *hint)
{
    if (e->op == FE_OP_NEG && e->a->kind == FE_EX_INT) {
        C->neg_literal = true;
    }
    C->col_ok = true;
    check(e->a, e->op == FE_OP_NOT ? NULL : scalar_hint(hint));
    C->neg_literal = false;
    if (is_err(e->a->type)) {
        return err_type();
    }
    const char *what = fe_printf(C->a, "operator '%s'", fe_op_name(e->op));
    FeType *et = common_elem(&e->a, 1, op_class(e->op), e->loc, what);
    if (!et) {
        return err_type();
    }
    e->lifted = e->a->type->kind == FE_TY_ARRAY;
    return broadcast(&e->a, 1, et, e->loc, what);
}

static FeType *check_binary(FeExpr *e, FeType *hint)
{
    FeExpr *ops[2] = {e->a, e->b};
    FeType *h = is_compare(e->op) || e->op == FE_OP_AND || e->op == FE_OP_OR ? NULL : scalar_hint(hint);
    if (e->op == FE_OP_SHL || e->op == FE_OP_SHR) {
        check_operands(ops, 1, h, true);
        C->col_ok = true;
        check(e->b, scalar_hint(e->a->type));
    } else {
        check_operands(ops, 2, h, true);
    }
    if (any_error(ops, 2)) {
        return err_type();
    }
    const char *what = fe_printf(C->a, "operator '%s'", fe_op_name(e->op));
    FeType *et = common_elem(ops, 2, op_class(e->op), e->loc, what);
    if (!et) {
        return err_type();
    }
    if (is_compare(e->op)) {
        et = fe_type_scalar(FE_TY_BOOL);
    }
    e->lifted = e->a->type->kind == FE_TY_ARRAY || e->b->type->kind == FE_TY_ARRAY;
    return broadcast(ops, 2, et, e->loc, what);
}

/* Is b an integer parameter of the current function that binds a size? */
static bool is_param_size(const FeBinding *b)
{
    if (!C->cur || !b) {
        return false;
    }
    for (int i = 0; i < C->cur->nparams; i++) {
        if (C->cur->params[i].bind == b) {
            return is_size_var(b->name);
        }
    }
    return false;
}

/* The size an extent expression stands for (iota(n), replicate(n, v), for loops). */
static FeDim dim_of(const FeExpr *e)
{
    FeDim d = {0};
    if (e->kind == FE_EX_NAME && (e->name_kind == FE_NAME_SIZE ||
                                  (e->name_kind == FE_NAME_VAR && is_param_size(e->bind)))) {
        d.kind = FE_DIM_VAR;
        d.name = e->text;
        return d;
    }
    if (e->kind == FE_EX_INT && e->ival >= 1 && e->ival <= INT32_MAX) {
        d.kind = FE_DIM_CONST;
        d.value = (int64_t)e->ival;
        return d;
    }
    if (e->kind == FE_EX_CALL && e->nargs == 1 && e->args[0]->type &&
        e->args[0]->type->kind == FE_TY_ARRAY) {
        const FeType *t = e->args[0]->type;
        if (e->builtin == FE_B_LENGTH || e->builtin == FE_B_ROWS) {
            return t->dims[0];
        }
        if (e->builtin == FE_B_COLS && t->rank == 2) {
            return t->dims[1];
        }
    }
    return runtime_dim();
}

static bool need_int_scalar(FeExpr *e, const char *what)
{
    if (is_err(e->type)) {
        return false;
    }
    if (!fe_type_is_int(e->type)) {
        fe_error(e->loc, "%s must be an integer scalar, got %s", what, tstr(e->type));
        return false;
    }
    return true;
}

static void collect_names(FePattern *p, FePattern **seen, int *n)
{
    if (p->kind == FE_PAT_NAME) {
        for (int i = 0; i < *n; i++) {
            if (strcmp(seen[i]->bind->name, p->bind->name) == 0) {
                fe_error(p->loc, "'%s' is bound twice in this pattern", p->bind->name);
                return;
            }
        }
        if (*n < 64) {
            seen[(*n)++] = p;
        }
    } else if (p->kind == FE_PAT_TUPLE) {
        for (int i = 0; i < p->nelems; i++) {
            collect_names(p->elems[i], seen, n);
        }
    }
}

/* Report a name bound twice by one pattern (or one lambda's parameters). */
static void check_dup_names(FePattern **pats, int npats)
{
    FePattern *seen[64];
    int n = 0;
    for (int i = 0; i < npats; i++) {
        collect_names(pats[i], seen, &n);
    }
}

/* Bind a pattern to a value of type t in the current scope. */
static bool bind_pattern(FePattern *p, FeType *t)
{
    p->type = t;
    switch (p->kind) {
    case FE_PAT_NAME:
        p->bind = new_binding(p->bind->name, p->loc, t);
        push_var(p->bind);
        return true;
    case FE_PAT_WILD:
        return true;
    case FE_PAT_TUPLE:
        if (is_err(t)) {
            for (int i = 0; i < p->nelems; i++) {
                bind_pattern(p->elems[i], t);
            }
            return false;
        }
        if (t->kind != FE_TY_TUPLE || t->nelems != p->nelems) {
            fe_error(p->loc, "cannot destructure a value of type %s with a pattern of %d elements",
                     tstr(t), p->nelems);
            for (int i = 0; i < p->nelems; i++) {
                bind_pattern(p->elems[i], err_type());
            }
            return false;
        }
        for (int i = 0; i < p->nelems; i++) {
            bind_pattern(p->elems[i], t->elems[i]);
        }
        return true;
    }
    return false;
}

static FeType *func_type(FeType **params, int n, FeType *ret)
{
    FeType *t = new_type(FE_TY_FUNC);
    t->nelems = n;
    t->elems = fe_alloc(C->a, sizeof(FeType *) * (size_t)(n ? n : 1));
    for (int i = 0; i < n; i++) {
        t->elems[i] = params[i];
    }
    t->ret = ret;
    return t;
}

static const char *plural(int n, const char *word)
{
    return fe_printf(C->a, "%d %s%s", n, word, n == 1 ? "" : "s");
}

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

static bool math_signature(FeBuiltin b, OpClass *cl, int *arity, FeTypeKind *result)
{
    const MathSignature *s = &math_signatures[b];
    *cl = s->operands;
    *arity = s->arity;
    *result = s->result;
    return s->math;
}

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
static FeType *apply_user(FeFunc *decl, FeExpr **args, FeType **argtys, int n, SrcLoc loc, FeFunc **inst,
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
static FeType *op_param_hint(FeExpr *op)
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
static FeType *check_fnarg(FeExpr *e, FeType **argtys, int n, const char *who, FeType *ret_hint)
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
static FeType *check_builtin(FeExpr *e, FeBuiltin b, FeType *hint)
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

static FeType *check_call(FeExpr *e, FeType *hint)
{
    FeExpr *callee = e->a;
    if (callee->kind != FE_EX_NAME) {
        fe_error(callee->loc, "only named functions can be called");
        for (int i = 0; i < e->nargs; i++) {
            check(e->args[i], NULL);
        }
        return err_type();
    }
    const char *name = callee->text;
    if (find_var(name) || is_size_var(name)) {
        fe_error(callee->loc, "'%s' is a variable, not a function", name);
        for (int i = 0; i < e->nargs; i++) {
            check(e->args[i], NULL);
        }
        return err_type();
    }
    Global *g = find_global(name);
    if (g && g->func) {
        FeFunc *decl = g->func;
        /* hints from the declared parameter types when they are plain scalars */
        FeType **tys = fe_alloc(C->a, sizeof(FeType *) * (size_t)(e->nargs + 1));
        for (int pass = 0; pass < 2; pass++) {
            for (int i = 0; i < e->nargs; i++) {
                if (is_flex(e->args[i]) != (pass == 1)) {
                    continue;
                }
                FeType *h = NULL;
                if (i < decl->nparams && decl->params[i].type->kind <= FE_TY_F64) {
                    h = fe_type_scalar(decl->params[i].type->kind);
                } else if (i < decl->nparams && decl->params[i].type->kind == FE_TY_NAME) {
                    for (int j = 0; j < e->nargs; j++) {
                        if (j != i && !is_flex(e->args[j]) && j < decl->nparams &&
                            decl->params[j].type->kind == FE_TY_NAME &&
                            strcmp(decl->params[j].type->name, decl->params[i].type->name) == 0) {
                            h = scalar_hint(e->args[j]->type);
                        }
                    }
                }
                tys[i] = check(e->args[i], h);
            }
        }
        callee->name_kind = FE_NAME_FUNC;
        FeFunc *inst;
        bool lifted;
        FeType *r = apply_user(decl, e->args, tys, e->nargs, e->loc, &inst, &lifted);
        e->func = inst;
        callee->func = inst;
        e->lifted = lifted;
        return r;
    }
    FeBuiltin b = find_builtin(name);
    if (b != FE_B_NONE) {
        callee->name_kind = FE_NAME_BUILTIN;
        callee->builtin = b;
        return check_builtin(e, b, hint);
    }
    if (g && g->sdecl) {
        fe_error(callee->loc, "'%s' is a struct; build one with %s { field: value, ... }", name, name);
    } else {
        fe_error(callee->loc, "unknown function '%s'%s", name, did_you_mean(name, false, true, false));
    }
    for (int i = 0; i < e->nargs; i++) {
        if (e->args[i]->kind != FE_EX_LAMBDA && e->args[i]->kind != FE_EX_SECTION) {
            check(e->args[i], NULL);
        }
    }
    return err_type();
}

static FeType *check_name(FeExpr *e, FeType *hint)
{
    (void)hint;
    FeBinding *b = find_var(e->text);
    if (b) {
        e->name_kind = FE_NAME_VAR;
        e->bind = b;
        return b->type;
    }
    if (is_size_var(e->text)) {
        e->name_kind = FE_NAME_SIZE;
        return fe_type_scalar(FE_TY_I64);
    }
    FeTParamKind k;
    if (tparam_value(e->text, &k)) {
        fe_error(e->loc, "'%s' is a type parameter, not a value", e->text);
        return err_type();
    }
    Global *g = find_global(e->text);
    if ((g && g->func) || find_builtin(e->text)) {
        fe_error(e->loc, "'%s' is a function; call it, or pass it to map, reduce, scan or filter", e->text);
        return err_type();
    }
    if (g && g->sdecl) {
        fe_error(e->loc, "'%s' is a struct, not a value", e->text);
        return err_type();
    }
    fe_error(e->loc, "unknown name '%s'%s", e->text, did_you_mean(e->text, true, false, false));
    return err_type();
}

static FeType *check_index(FeExpr *e)
{
    FeType *t = check(e->a, NULL);
    for (int i = 0; i < e->nidx; i++) {
        if (e->idx[i]) {
            check(e->idx[i], fe_type_scalar(FE_TY_I64));
        }
    }
    if (is_err(t)) {
        return err_type();
    }
    for (int i = 0; i < e->nidx; i++) {
        if (e->idx[i] && is_err(e->idx[i]->type)) {
            return err_type();
        }
    }
    if (t->kind != FE_TY_ARRAY) {
        fe_error(e->loc, "cannot index a value of type %s", tstr(t));
        return err_type();
    }
    if (e->nidx == 1) {
        FeExpr *ix = e->idx[0];
        if (ix->type->kind == FE_TY_ARRAY) {
            if (!fe_type_is_int(ix->type->elem)) {
                fe_error(ix->loc, "a gather index array must hold integers, got %s", tstr(ix->type));
                return err_type();
            }
            if (t->rank != 1) {
                fe_error(e->loc, "gather needs a 1-D array, got %s", tstr(t));
                return err_type();
            }
            e->index_kind = FE_IX_GATHER;
            return array_of(t->elem, ix->type->rank, ix->type->dims);
        }
        if (t->rank == 2) {
            fe_error(e->loc, "a 2-D array needs two indices: A[i, j], A[i, :] or A[:, j]");
            return err_type();
        }
        if (!need_int_scalar(ix, "an array index")) {
            return err_type();
        }
        e->index_kind = FE_IX_SCALAR;
        return t->elem;
    }
    if (t->rank != 2) {
        fe_error(e->loc, "a 1-D array takes one index, got 2");
        return err_type();
    }
    for (int i = 0; i < 2; i++) {
        if (e->idx[i] && !need_int_scalar(e->idx[i], "an array index")) {
            return err_type();
        }
    }
    if (e->idx[0] && e->idx[1]) {
        e->index_kind = FE_IX_SCALAR;
        return t->elem;
    }
    if (e->idx[0]) {
        e->index_kind = FE_IX_ROW;
        return array_of(t->elem, 1, &t->dims[1]);
    }
    e->index_kind = FE_IX_COL;
    return array_of(t->elem, 1, &t->dims[0]);
}

static FeType *check_struct_lit(FeExpr *e)
{
    Global *g = find_global(e->text);
    if (!g || !g->sdecl) {
        fe_error(e->loc, "unknown struct '%s'%s", e->text, did_you_mean(e->text, false, false, true));
        for (int i = 0; i < e->nargs; i++) {
            check(e->args[i], NULL);
        }
        return err_type();
    }
    FeStruct *s = g->sdecl;
    FeExpr **ordered = fe_alloc(C->a, sizeof(FeExpr *) * (size_t)(s->nfields + 1));
    bool bad = false;
    for (int i = 0; i < e->nargs; i++) {
        int k = 0;
        while (k < s->nfields && strcmp(s->field_names[k], e->fields[i]) != 0) {
            k++;
        }
        if (k == s->nfields) {
            fe_error(e->field_locs[i], "struct '%s' has no field '%s'", s->name, e->fields[i]);
            check(e->args[i], NULL);
            bad = true;
            continue;
        }
        if (ordered[k]) {
            fe_error(e->field_locs[i], "field '%s' is given twice", e->fields[i]);
            check(e->args[i], NULL);
            bad = true;
            continue;
        }
        ordered[k] = e->args[i];
        FeType *want = s->field_types[k];
        FeType *got = check(e->args[i], want);
        if (!is_err(got) && !is_err(want) && !fe_type_equal(got, want)) {
            fe_error(e->args[i]->loc, "field '%s' of '%s' has type %s, got %s", s->field_names[k], s->name,
                     tstr(want), tstr(got));
            bad = true;
        }
    }
    for (int k = 0; k < s->nfields; k++) {
        if (!ordered[k] && !bad) {
            fe_error(e->loc, "missing field '%s' in '%s' literal", s->field_names[k], s->name);
            bad = true;
        }
    }
    if (bad) {
        return err_type();
    }
    e->args = ordered;
    e->nargs = s->nfields;
    e->fields = s->field_names;
    FeType *t = new_type(FE_TY_STRUCT);
    t->sdecl = s;
    t->name = s->name;
    return t;
}

static FeType *check_array_lit(FeExpr *e, FeType *hint)
{
    check_operands(e->args, e->nargs, hint && hint->kind == FE_TY_ARRAY ? hint->elem : hint, false);
    if (any_error(e->args, e->nargs)) {
        return err_type();
    }
    FeType *t0 = e->args[0]->type;
    for (int i = 1; i < e->nargs; i++) {
        if (!fe_type_equal(e->args[i]->type, t0)) {
            fe_error(e->args[i]->loc, "array elements have different types: %s and %s", tstr(t0),
                     tstr(e->args[i]->type));
            return err_type();
        }
    }
    if (t0->kind == FE_TY_FUNC || (t0->kind != FE_TY_ARRAY && has_array(t0))) {
        fe_error(e->args[0]->loc, "array elements cannot hold arrays or functions: %s", tstr(t0));
        return err_type();
    }
    FeDim d = {.kind = FE_DIM_CONST, .value = e->nargs};
    if (t0->kind == FE_TY_ARRAY) {
        if (t0->rank != 1) {
            fe_error(e->loc, "arrays have at most 2 dimensions");
            return err_type();
        }
        FeDim dims[2] = {d, t0->dims[0]};
        return array_of(t0->elem, 2, dims);
    }
    return array_of(t0, 1, &d);
}

static FeType *check_for(FeExpr *e)
{
    FeExpr *ext[2] = {e->a, e->c};
    FeDim dims[2];
    bool ok = true;
    for (int i = 0; i < e->rank; i++) {
        check(ext[i], fe_type_scalar(FE_TY_I64));
        ok = need_int_scalar(ext[i], "a comprehension extent") && ok;
        if (e->rank == 2 && i == 0 && e->a == e->c) {
            break; /* parse error already reported */
        }
        dims[i] = dim_of(ext[i]);
    }
    Scope *saved = C->scope;
    for (int i = 0; i < e->rank; i++) {
        e->loop_vars[i] = new_binding(e->loop_vars[i]->name, e->loop_vars[i]->loc, fe_type_scalar(FE_TY_I64));
        push_var(e->loop_vars[i]);
    }
    FeType *r = check(e->b, NULL);
    C->scope = saved;
    if (!ok || is_err(r)) {
        return err_type();
    }
    if (has_array(r)) {
        fe_error(e->b->loc, "a comprehension body must be a scalar, tuple or struct, not %s", tstr(r));
        return err_type();
    }
    return array_of(r, e->rank, dims);
}

static FeType *check_inner(FeExpr *e, FeType *hint)
{
    switch (e->kind) {
    case FE_EX_INT:
        return check_int_literal(e, scalar_hint(hint));
    case FE_EX_FLOAT:
        return check_float_literal(e, scalar_hint(hint));
    case FE_EX_BOOL:
        return fe_type_scalar(FE_TY_BOOL);
    case FE_EX_NAME:
        return check_name(e, hint);
    case FE_EX_UNARY:
        return check_unary(e, hint);
    case FE_EX_BINARY:
        return check_binary(e, hint);
    case FE_EX_CALL:
        return check_call(e, hint);
    case FE_EX_LAMBDA:
    case FE_EX_SECTION:
        fe_error(e->loc, "%s can only be passed to map, reduce, scan, exscan or filter",
                 e->kind == FE_EX_LAMBDA ? "a lambda" : "an operator section");
        return err_type();
    case FE_EX_TUPLE: {
        FeType *t = new_type(FE_TY_TUPLE);
        t->nelems = e->nargs;
        t->elems = fe_alloc(C->a, sizeof(FeType *) * (size_t)e->nargs);
        bool bad = false;
        for (int i = 0; i < e->nargs; i++) {
            FeType *h = hint && hint->kind == FE_TY_TUPLE && hint->nelems == e->nargs ? hint->elems[i] : NULL;
            t->elems[i] = check(e->args[i], h);
            if (is_err(t->elems[i])) {
                bad = true;
            } else if (t->elems[i]->kind == FE_TY_FUNC) {
                fe_error(e->args[i]->loc, "tuples cannot hold functions");
                bad = true;
            }
        }
        return bad ? err_type() : t;
    }
    case FE_EX_STRUCT:
        return check_struct_lit(e);
    case FE_EX_ARRAY:
        return check_array_lit(e, hint);
    case FE_EX_FIELD: {
        FeType *t = check(e->a, NULL);
        if (is_err(t)) {
            return t;
        }
        if (t->kind != FE_TY_STRUCT) {
            fe_error(e->loc, "no field '%s' in a value of type %s", e->text, tstr(t));
            return err_type();
        }
        for (int i = 0; i < t->sdecl->nfields; i++) {
            if (strcmp(t->sdecl->field_names[i], e->text) == 0) {
                e->field_index = i;
                return t->sdecl->field_types[i];
            }
        }
        Suggest s = {e->text, NULL, 99};
        for (int i = 0; i < t->sdecl->nfields; i++) {
            suggest(&s, t->sdecl->field_names[i]);
        }
        fe_error(e->loc, "struct '%s' has no field '%s'%s", t->sdecl->name, e->text,
                 s.best ? fe_printf(C->a, "; did you mean '%s'?", s.best) : "");
        return err_type();
    }
    case FE_EX_TUPIDX: {
        FeType *t = check(e->a, NULL);
        if (is_err(t)) {
            return t;
        }
        if (t->kind != FE_TY_TUPLE) {
            fe_error(e->loc, "'.%d' needs a tuple, got %s", e->field_index, tstr(t));
            return err_type();
        }
        if (e->field_index >= t->nelems) {
            fe_error(e->loc, "tuple index %d is out of range for %s", e->field_index, tstr(t));
            return err_type();
        }
        return t->elems[e->field_index];
    }
    case FE_EX_INDEX:
        return check_index(e);
    case FE_EX_IF: {
        FeType *ct = check(e->a, NULL);
        if (!is_err(ct) && ct->kind != FE_TY_BOOL) {
            fe_error(e->a->loc, "the condition of 'if' must be a bool scalar, got %s", tstr(ct));
        }
        FeExpr *br[2] = {e->b, e->c};
        check_operands(br, 2, hint, false);
        if (is_err(e->b->type) || is_err(e->c->type) || is_err(ct) || ct->kind != FE_TY_BOOL) {
            return err_type();
        }
        if (!fe_type_equal(e->b->type, e->c->type)) {
            fe_error(e->loc, "the branches of 'if' have different types: %s and %s", tstr(e->b->type),
                     tstr(e->c->type));
            return err_type();
        }
        if (e->b->type->kind == FE_TY_FUNC) {
            fe_error(e->loc, "'if' cannot choose between functions");
            return err_type();
        }
        return e->b->type;
    }
    case FE_EX_CAST: {
        FeType *to = resolve_type(e->cast_to);
        e->cast_to = to;
        C->col_ok = true;
        FeType *t = check(e->a, fe_type_is_scalar(to) ? to : NULL);
        if (is_err(to) || is_err(t)) {
            return err_type();
        }
        if (!fe_type_is_scalar(to)) {
            fe_error(e->loc, "can only convert to a scalar type, not %s", tstr(to));
            return err_type();
        }
        if (!fe_type_is_scalar(elem_of(t))) {
            fe_error(e->loc, "cannot convert %s to %s", tstr(t), tstr(to));
            return err_type();
        }
        e->lifted = t->kind == FE_TY_ARRAY;
        return broadcast(&e->a, 1, to, e->loc, "a conversion");
    }
    case FE_EX_LET: {
        FeType *want = NULL;
        if (e->annot) {
            want = resolve_type(e->annot);
            e->annot = want;
        }
        FeType *t = check(e->a, want);
        if (want && !is_err(want) && !is_err(t) && !fe_type_equal(want, t)) {
            fe_error(e->a->loc, "'let' declares type %s, but the value has type %s", tstr(want), tstr(t));
            t = err_type();
        }
        if (!is_err(t) && t->kind == FE_TY_FUNC) {
            fe_error(e->a->loc, "functions cannot be bound with 'let'");
            t = err_type();
        }
        Scope *saved = C->scope;
        check_dup_names(&e->pat, 1);
        bind_pattern(e->pat, want && !is_err(want) ? want : t);
        FeType *r = check(e->b, hint);
        C->scope = saved;
        return r;
    }
    case FE_EX_FOR:
        return check_for(e);
    }
    FE_UNREACHABLE(e->loc);
}

/* Expressions nest at most FE_MAX_DEPTH levels (the parser's limit), but a
 * call checks its callee's body from inside the caller's: the total nesting is
 * capped here so that chains of calls cannot overflow the stack either. */
enum { CHECK_MAX_DEPTH = 4 * FE_MAX_DEPTH, MAX_CALL_DEPTH = 128 };

static FeType *check(FeExpr *e, FeType *hint)
{
    if (C->depth >= CHECK_MAX_DEPTH) {
        if (!C->deep_reported) {
            fe_error(e->loc, "expressions nested too deeply through function calls (the limit is %d levels)",
                     CHECK_MAX_DEPTH);
            C->deep_reported = true;
        }
        return e->type = err_type();
    }
    C->depth++;
    FeType *t = check_depth(e, hint);
    C->depth--;
    return t;
}

static FeType *check_depth(FeExpr *e, FeType *hint)
{
    bool col_ok = C->col_ok;
    C->col_ok = false;
    if (e->kind == FE_EX_CALL && e->a->kind == FE_EX_NAME && strcmp(e->a->text, "col") == 0 && !col_ok &&
        !find_var("col") && !find_global("col")) {
        fe_error(e->loc, "col(v) is only allowed as an operand of an elementwise operation with a 2-D array");
    }
    e->type = check_inner(e, hint);
    if (!e->type) {
        e->type = err_type();
    }
    return e->type;
}

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
static bool check_targ_kind(const FeFunc *decl, int i, FeTArg *v, SrcLoc at)
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
static FeFunc *instantiate(FeFunc *decl, const FeTArg *targs, int ntargs, const char *inst_name, SrcLoc at)
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

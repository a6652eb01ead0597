/* check_expr.c: the checker's expressions: contextual typing of literals,
 * operators and their operand classes, NumPy broadcasting of lifted
 * operations, patterns, names, indexing and gathers, struct and array
 * literals, comprehensions, and the dispatch of calls to user functions
 * (check_calls.c) and builtins (check_builtins.c).  check() is the entry. */
#include "check_internal.h"

/* ------------------------------------------------------- expressions -- */

static FeType *check_depth(FeExpr *e, FeType *hint);

/* An untyped literal (or an expression of only such literals) that takes its
 * type from the other operand. */
bool is_flex(const FeExpr *e)
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

FeType *scalar_hint(FeType *hint)
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


OpClass op_class(FeOp op)
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

bool class_ok(OpClass cl, const FeType *t)
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

const char *class_name(OpClass cl)
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

bool is_compare(FeOp op)
{
    return op >= FE_OP_EQ;
}

/* Broadcast the operands of an elementwise operation (NumPy rules, see
 * docs/language.md): scalars everywhere, equal shapes, T[m] down the rows of
 * T[n][m], col(v) = T[n][1] across the columns. Sets each operand's bcast and
 * returns the result shape as an array type with element `elem` (or elem
 * itself when all operands are scalars). */
FeType *broadcast(FeExpr **ops, int n, FeType *elem, SrcLoc loc, const char *what)
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
void check_operands(FeExpr **ops, int n, FeType *hint, bool lifting)
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

bool any_error(FeExpr **ops, int n)
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
FeType *common_elem(FeExpr **ops, int n, OpClass cl, SrcLoc loc, const char *what)
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
FeDim dim_of(const FeExpr *e)
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

bool need_int_scalar(FeExpr *e, const char *what)
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
void check_dup_names(FePattern **pats, int npats)
{
    FePattern *seen[64];
    int n = 0;
    for (int i = 0; i < npats; i++) {
        collect_names(pats[i], seen, &n);
    }
}

/* Bind a pattern to a value of type t in the current scope. */
bool bind_pattern(FePattern *p, FeType *t)
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

FeType *func_type(FeType **params, int n, FeType *ret)
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

const char *plural(int n, const char *word)
{
    return fe_printf(C->a, "%d %s%s", n, word, n == 1 ? "" : "s");
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

FeType *check(FeExpr *e, FeType *hint)
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


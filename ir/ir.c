/* ir.c: the IR's arena, operation tables, constructors and small rewriting
 * helpers shared by lowering, the passes and the emitters. */
#include "ir.h"
#include "frontend.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---- arena: one list of blocks, freed once ---- */
typedef struct IrBlock { struct IrBlock *next; size_t used, cap; char data[]; } IrBlock;
struct IrArena { IrBlock *head; };

IrArena *ir_arena_new(void) {
    IrArena *a = calloc(1, sizeof *a);
    if (!a) { IR_UNREACHABLE("out of memory"); }
    return a;
}

void ir_arena_free(IrArena *a) {
    if (!a) { return; }
    IrBlock *b = a->head;
    while (b) { IrBlock *n = b->next; free(b); b = n; }
    free(a);
}

void *ir_alloc(IrArena *a, size_t n) {
    n = (n + 15) & ~(size_t)15;
    if (!a->head || a->head->used + n > a->head->cap) {
        size_t cap = n > 65536 ? n : 65536;
        IrBlock *b = malloc(sizeof *b + cap);
        if (!b) { IR_UNREACHABLE("out of memory"); }
        b->next = a->head; b->used = 0; b->cap = cap;
        a->head = b;
    }
    void *p = a->head->data + a->head->used;
    a->head->used += n;
    memset(p, 0, n);
    return p;
}

char *ir_strdup(IrArena *a, const char *s) {
    size_t n = strlen(s) + 1;
    char *p = ir_alloc(a, n);
    memcpy(p, s, n);
    return p;
}

char *ir_fmt(IrArena *a, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *p = ir_alloc(a, (size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return p;
}

_Noreturn void ir_internal_error(const char *file, int line, const char *msg) {
    char text[2048];
    snprintf(text, sizeof text, "%s (%s:%d; this is a gpuc bug)", msg, file, line);
    SrcLoc none = { 0 };
    fe_fatal("internal error", none, 70, text); /* 70: EX_SOFTWARE; frontend/diag.c */
}

/* ---- scalar types ---- */
static const char *const scalar_names[] = { "bool", "i32", "i64", "u32", "u64", "f32", "f64" };
static const char *const scalar_ctypes[] = { "bool", "int32_t", "int64_t", "uint32_t", "uint64_t", "float", "double" };
static const int scalar_sizes[] = { 1, 4, 8, 4, 8, 4, 8 };

const char *ir_scalar_name(IrScalar t) { return scalar_names[t]; }
const char *ir_scalar_ctype(IrScalar t) { return scalar_ctypes[t]; }
int ir_scalar_size(IrScalar t) { return scalar_sizes[t]; }
bool ir_scalar_is_float(IrScalar t) { return t == IR_F32 || t == IR_F64; }
bool ir_scalar_is_signed(IrScalar t) { return t == IR_I32 || t == IR_I64; }
bool ir_scalar_is_int(IrScalar t) { return t == IR_I32 || t == IR_I64 || t == IR_U32 || t == IR_U64; }

/* ---- tables ---- */
const IrAopInfo ir_aop_info[IR_NAOP] = {
#define IR_AOP(name, kind, flags) { #name, kind, flags },
#include "ops.def"
#undef IR_AOP
};
const IrBinopInfo ir_binop_info[IR_NBINOP] = {
#define IR_BINOP(name, text, cop, flags) { text, cop, flags },
#include "ops.def"
#undef IR_BINOP
};
const char *const ir_unop_name[IR_NUNOP] = {
#define IR_UNOP(name, text) text,
#include "ops.def"
#undef IR_UNOP
};
const IrMathInfo ir_math_info[IR_NMATH] = {
#define IR_MATH(name, arity, f32, f64) { #name, arity, f32, f64 },
#include "ops.def"
#undef IR_MATH
};

int ir_math_lookup(const char *name) {
    for (int i = 0; i < IR_NMATH; i++) {
        if (strcmp(ir_math_info[i].name, name) == 0) { return i; }
    }
    return -1;
}

/* ---- module, entries, values, statements ---- */
IrModule *ir_module_new(const char *file) {
    IrArena *a = ir_arena_new();
    IrModule *m = ir_alloc(a, sizeof *m);
    m->arena = a;
    m->file = ir_strdup(a, file ? file : "<input>");
    return m;
}

void ir_module_free(IrModule *m) {
    if (m) { ir_arena_free(m->arena); }
}

IrEntry *ir_entry_new(IrModule *m, const char *name, int line) {
    IrEntry *e = ir_alloc(m->arena, sizeof *e);
    e->name = ir_strdup(m->arena, name);
    e->line = line;
    if (m->nentries == m->capentries) {
        int cap = m->capentries ? 2 * m->capentries : 8;
        IrEntry **n = ir_alloc(m->arena, sizeof *n * (size_t)cap);
        if (m->nentries) { memcpy(n, m->entries, sizeof *n * (size_t)m->nentries); }
        m->entries = n; m->capentries = cap;
    }
    m->entries[m->nentries++] = e;
    return e;
}

IrValue *ir_value_new(IrModule *m, IrEntry *e, IrScalar elem, int rank, IrValue *d0, IrValue *d1) {
    IrValue *v = ir_alloc(m->arena, sizeof *v);
    v->id = e->nvalues++;
    v->elem = elem;
    v->rank = rank;
    v->dims[0] = d0;
    v->dims[1] = d1;
    return v;
}

IrStmt *ir_stmt_new(IrModule *m, IrEntry *e, IrStmtKind kind, IrAop src, int line) {
    IrStmt *s = ir_alloc(m->arena, sizeof *s);
    s->kind = kind; s->src = src; s->line = line; s->rank = 1;
    if (e->nstmts == e->capstmts) {
        int cap = e->capstmts ? 2 * e->capstmts : 16;
        IrStmt **n = ir_alloc(m->arena, sizeof *n * (size_t)cap);
        if (e->nstmts) { memcpy(n, e->stmts, sizeof *n * (size_t)e->nstmts); }
        e->stmts = n; e->capstmts = cap;
    }
    e->stmts[e->nstmts++] = s;
    return s;
}

IrValue *ir_size_const(IrModule *m, IrEntry *e, int64_t v, int line) {
    IrStmt *s = ir_stmt_new(m, e, IR_S_SCALAR, IR_AOP_scalar, line);
    s->map = ir_lambda_new(m, 0, NULL, 1);
    s->map->res[0] = ir_e_const_i(m, IR_I64, v);
    IrValue *out = ir_value_new(m, e, IR_I64, 0, NULL, NULL);
    out->has_const = true;
    out->const_val = v;
    ir_stmt_add_out(m, s, out);
    return out;
}

void ir_stmt_add_out(IrModule *m, IrStmt *s, IrValue *v) {
    IrValue **n = ir_alloc(m->arena, sizeof *n * (size_t)(s->nouts + 1));
    if (s->nouts) { memcpy(n, s->outs, sizeof *n * (size_t)s->nouts); }
    n[s->nouts++] = v;
    s->outs = n;
    v->def = s;
}

IrLambda *ir_lambda_new(IrModule *m, int nparams, const IrScalar *ptypes, int nres) {
    IrLambda *l = ir_alloc(m->arena, sizeof *l);
    l->nparams = nparams;
    l->ptypes = ir_alloc(m->arena, sizeof *l->ptypes * (size_t)(nparams + 1));
    if (nparams) { memcpy(l->ptypes, ptypes, sizeof *ptypes * (size_t)nparams); }
    l->nres = nres;
    l->res = ir_alloc(m->arena, sizeof *l->res * (size_t)(nres + 1));
    return l;
}

int ir_stmt_scan_width(const IrStmt *s) {
    int n = 0;
    for (int i = 0; i < s->nscans; i++) { n += s->scans[i].arity; }
    return n;
}
int ir_stmt_red_width(const IrStmt *s) {
    int n = 0;
    for (int i = 0; i < s->nreds; i++) { n += s->reds[i].arity; }
    return n;
}
int ir_stmt_nmapped(const IrStmt *s) {
    return s->map->nres - ir_stmt_scan_width(s) - ir_stmt_red_width(s);
}
IrValue *ir_scan_copied_input(const IrStmt *s) {
    if (s->kind != IR_S_SCREMA || s->sharded || s->rank != 1) { return NULL; }
    if (s->nscans != 1 || s->scans[0].arity != 1 || s->nreds != 0 || s->nouts != 1 || ir_stmt_nmapped(s) != 0) { return NULL; }
    if (s->post && s->post->nres != 1) { return NULL; }
    IrScalar t = s->scans[0].op->ptypes[0];
    IrExpr *r = s->map && s->map->nres == 1 ? s->map->res[0] : NULL;
    if (ir_scalar_size(t) != 4 || !r || r->kind != IR_E_PARAM || r->index < 0 || r->index >= s->nins) { return NULL; }
    IrValue *in = s->ins[r->index];
    if (in->elem != t || in->rank != 1 || ir_scalar_size(s->outs[0]->elem) != 4) { return NULL; }
    return in;
}

/* ---- expressions ---- */
static IrExpr *enew(IrModule *m, IrExprKind k, IrScalar ty) {
    IrExpr *e = ir_alloc(m->arena, sizeof *e);
    e->kind = k; e->ty = ty;
    return e;
}
IrExpr *ir_e_const_i(IrModule *m, IrScalar ty, int64_t v) {
    IrExpr *e = enew(m, IR_E_CONST, ty);
    if (ir_scalar_is_float(ty)) { e->c.f = (double)v; }
    else if (ty == IR_BOOL) { e->c.b = v != 0; }
    else if (ty == IR_U32) { e->c.u = (uint32_t)v; }
    else if (ty == IR_I32) { e->c.i = (int32_t)v; }
    else { e->c.i = v; }
    return e;
}
IrExpr *ir_e_const_f(IrModule *m, IrScalar ty, double v) {
    if (!ir_scalar_is_float(ty)) { return ir_e_const_i(m, ty, (int64_t)v); }
    IrExpr *e = enew(m, IR_E_CONST, ty);
    e->c.f = ty == IR_F32 ? (double)(float)v : v;
    return e;
}
IrExpr *ir_e_const_b(IrModule *m, bool v) {
    IrExpr *e = enew(m, IR_E_CONST, IR_BOOL);
    e->c.b = v;
    return e;
}
IrExpr *ir_e_param(IrModule *m, IrScalar ty, int index) {
    IrExpr *e = enew(m, IR_E_PARAM, ty);
    e->index = index;
    return e;
}
IrExpr *ir_e_idx(IrModule *m, int dim) {
    IrExpr *e = enew(m, IR_E_IDX, IR_I64);
    e->index = dim;
    return e;
}
IrExpr *ir_e_free(IrModule *m, IrValue *v) {
    IrExpr *e = enew(m, IR_E_FREE, v->elem);
    e->val = v;
    return e;
}
IrExpr *ir_e_bin(IrModule *m, IrBinop op, IrExpr *a, IrExpr *b) {
    IrScalar ty = (ir_binop_info[op].flags & IR_BF_CMP) ? IR_BOOL : a->ty;
    IrExpr *e = enew(m, IR_E_BIN, ty);
    e->op = op; e->a[0] = a; e->a[1] = b;
    return e;
}
IrExpr *ir_e_un(IrModule *m, IrUnop op, IrExpr *a) {
    IrExpr *e = enew(m, IR_E_UN, a->ty);
    e->op = op; e->a[0] = a;
    return e;
}
IrExpr *ir_e_math(IrModule *m, IrMath f, IrExpr **args) {
    IrScalar ty = (f == IR_MATH_isnan || f == IR_MATH_isinf) ? IR_BOOL : args[0]->ty;
    IrExpr *e = enew(m, IR_E_MATH, ty);
    e->op = f;
    for (int i = 0; i < ir_math_info[f].arity; i++) { e->a[i] = args[i]; }
    return e;
}
IrExpr *ir_e_select(IrModule *m, IrExpr *c, IrExpr *t, IrExpr *f) {
    IrExpr *e = enew(m, IR_E_SELECT, t->ty);
    e->a[0] = c; e->a[1] = t; e->a[2] = f;
    return e;
}
IrExpr *ir_e_cast(IrModule *m, IrScalar ty, IrExpr *a) {
    if (a->ty == ty) { return a; }
    IrExpr *e = enew(m, IR_E_CAST, ty);
    e->a[0] = a;
    return e;
}
IrExpr *ir_e_read(IrModule *m, IrValue *arr, IrExpr *i0, IrExpr *i1) {
    IrExpr *e = enew(m, IR_E_READ, arr->elem);
    e->val = arr; e->a[0] = i0; e->a[1] = i1;
    return e;
}
IrExpr *ir_e_fold(IrModule *m, int id, IrBinop op, IrExpr *count, IrExpr *init, IrExpr *body) {
    IrExpr *e = enew(m, IR_E_FOLD, init->ty);
    e->op = op; e->index = id; e->a[0] = count; e->a[1] = init; e->a[2] = body;
    return e;
}
IrExpr *ir_e_loopvar(IrModule *m, int id) {
    IrExpr *e = enew(m, IR_E_LOOPVAR, IR_I64);
    e->index = id;
    return e;
}

IrExpr *ir_neutral(IrModule *m, IrBinop op, IrScalar t) {
    switch (op) {
    case IR_BIN_add: case IR_BIN_or: case IR_BIN_xor: return ir_e_const_i(m, t, 0);
    case IR_BIN_mul: return ir_e_const_i(m, t, 1);
    case IR_BIN_and: return ir_e_const_i(m, t, -1);
    case IR_BIN_land: return ir_e_const_b(m, true);
    case IR_BIN_lor: return ir_e_const_b(m, false);
    case IR_BIN_min:
        switch (t) {
        case IR_F32: case IR_F64: return ir_e_const_f(m, t, INFINITY);
        case IR_I32: return ir_e_const_i(m, t, INT32_MAX);
        case IR_I64: return ir_e_const_i(m, t, INT64_MAX);
        case IR_U32: return ir_e_const_i(m, t, (int64_t)UINT32_MAX);
        case IR_U64: { IrExpr *e = ir_e_const_i(m, t, 0); e->c.u = UINT64_MAX; return e; }
        default: return ir_e_const_b(m, true);
        }
    case IR_BIN_max:
        switch (t) {
        case IR_F32: case IR_F64: return ir_e_const_f(m, t, -INFINITY);
        case IR_I32: return ir_e_const_i(m, t, INT32_MIN);
        case IR_I64: return ir_e_const_i(m, t, INT64_MIN);
        default: return ir_e_const_i(m, t, 0);
        }
    default: IR_UNREACHABLE("no neutral element for operator");
    }
}

IrOperator ir_operator_binop(IrModule *m, IrBinop op, IrScalar t, bool exclusive) {
    IrOperator o = { 0 };
    IrScalar pt[2] = { t, t };
    o.arity = 1;
    o.op = ir_lambda_new(m, 2, pt, 1);
    o.op->res[0] = ir_e_bin(m, op, ir_e_param(m, t, 0), ir_e_param(m, t, 1));
    o.ne = ir_alloc(m->arena, sizeof *o.ne);
    o.ne[0] = ir_neutral(m, op, t);
    o.exclusive = exclusive;
    o.commutative = (ir_binop_info[op].flags & IR_BF_COMM) != 0;
    /* float + and * are commutative but not associative; the GPU reassociates
     * them anyway, within the documented tolerance. */
    o.name = ir_binop_info[op].name;
    return o;
}

/* ---- rewriting ---- */
typedef struct { IrExpr **from; IrExpr **to; int n, cap; } Memo;

static IrExpr *memo_get(Memo *mm, IrExpr *e) {
    for (int i = 0; i < mm->n; i++) { if (mm->from[i] == e) { return mm->to[i]; } }
    return NULL;
}
static void memo_put(Memo *mm, IrExpr *e, IrExpr *r) {
    if (mm->n == mm->cap) {
        mm->cap = mm->cap ? 2 * mm->cap : 32;
        mm->from = realloc(mm->from, sizeof *mm->from * (size_t)mm->cap);
        mm->to = realloc(mm->to, sizeof *mm->to * (size_t)mm->cap);
        if (!mm->from || !mm->to) { IR_UNREACHABLE("out of memory"); }
    }
    mm->from[mm->n] = e; mm->to[mm->n] = r; mm->n++;
}

typedef struct { IrExpr **args; IrValue *from; IrExpr *to; } Subst;

static IrExpr *subst_rec(IrModule *m, IrExpr *e, Subst *s, Memo *mm) {
    if (!e) { return NULL; }
    IrExpr *r = memo_get(mm, e);
    if (r) { return r; }
    if (e->kind == IR_E_PARAM && s->args && s->args[e->index]) {
        r = s->args[e->index];
    } else if (e->kind == IR_E_FREE && s->from && e->val == s->from) {
        r = s->to;
    } else {
        IrExpr *a0 = subst_rec(m, e->a[0], s, mm);
        IrExpr *a1 = subst_rec(m, e->a[1], s, mm);
        IrExpr *a2 = subst_rec(m, e->a[2], s, mm);
        if (a0 == e->a[0] && a1 == e->a[1] && a2 == e->a[2]) {
            r = e;
        } else {
            r = ir_alloc(m->arena, sizeof *r);
            *r = *e;
            r->a[0] = a0; r->a[1] = a1; r->a[2] = a2;
            r->tree = 0;
        }
    }
    memo_put(mm, e, r);
    return r;
}

IrExpr *ir_subst_params(IrModule *m, IrExpr *e, IrExpr **args) {
    Subst s = { args, NULL, NULL };
    Memo mm = { 0 };
    IrExpr *r = subst_rec(m, e, &s, &mm);
    free(mm.from); free(mm.to);
    return r;
}

IrExpr *ir_subst_free(IrModule *m, IrExpr *e, IrValue *from, IrExpr *to) {
    Subst s = { NULL, from, to };
    Memo mm = { 0 };
    IrExpr *r = subst_rec(m, e, &s, &mm);
    free(mm.from); free(mm.to);
    return r;
}

int64_t ir_expr_tree_size(IrExpr *e) {
    if (!e) { return 0; }
    if (!e->tree) {
        int64_t n = 1;
        for (int i = 0; i < 3; i++) { n += ir_expr_tree_size(e->a[i]); }
        e->tree = n > IR_MAX_EXPR_TREE ? IR_MAX_EXPR_TREE + 1 : n;
    }
    return e->tree;
}

bool ir_expr_uses_value(const IrExpr *e, const IrValue *v) {
    if (!e) { return false; }
    if ((e->kind == IR_E_FREE || e->kind == IR_E_READ) && e->val == v) { return true; }
    return ir_expr_uses_value(e->a[0], v) || ir_expr_uses_value(e->a[1], v) || ir_expr_uses_value(e->a[2], v);
}

bool ir_expr_equal(const IrExpr *a, const IrExpr *b) {
    if (a == b) { return true; }
    if (!a || !b) { return false; }
    if (a->kind != b->kind || a->ty != b->ty || a->op != b->op || a->index != b->index || a->val != b->val) {
        return false;
    }
    if (a->kind == IR_E_CONST && memcmp(&a->c, &b->c, sizeof a->c) != 0) { return false; }
    return ir_expr_equal(a->a[0], b->a[0]) && ir_expr_equal(a->a[1], b->a[1]) && ir_expr_equal(a->a[2], b->a[2]);
}

void ir_expr_visit_reads(IrExpr *e, IrValueVisitor f, void *ctx) {
    if (!e) { return; }
    if (e->kind == IR_E_FREE || e->kind == IR_E_READ) { f(e->val, ctx); }
    for (int i = 0; i < 3; i++) { ir_expr_visit_reads(e->a[i], f, ctx); }
}

static void visit_lambda(IrLambda *l, IrValueVisitor f, void *ctx) {
    if (!l) { return; }
    for (int i = 0; i < l->nres; i++) { ir_expr_visit_reads(l->res[i], f, ctx); }
}

void ir_stmt_visit_reads(IrStmt *s, IrValueVisitor f, void *ctx) {
    for (int i = 0; i < s->rank; i++) { if (s->w[i]) { f(s->w[i], ctx); } }
    for (int i = 0; i < s->nins; i++) { f(s->ins[i], ctx); }
    if (s->dest) { f(s->dest, ctx); }
    visit_lambda(s->map, f, ctx);
    visit_lambda(s->post, f, ctx);
    visit_lambda(s->per_row, f, ctx);
    for (int i = 0; i < s->nscans; i++) { visit_lambda(s->scans[i].op, f, ctx); }
    for (int i = 0; i < s->nreds; i++) { visit_lambda(s->reds[i].op, f, ctx); }
}

typedef struct { const IrValue *v; bool found; } FindCtx;
static void find_visit(IrValue *v, void *ctx) {
    FindCtx *c = ctx;
    if (v == c->v) { c->found = true; }
}
bool ir_stmt_reads(IrStmt *s, const IrValue *v) {
    FindCtx c = { v, false };
    ir_stmt_visit_reads(s, find_visit, &c);
    return c.found;
}

static void count_visit(IrValue *v, void *ctx) { (void)ctx; v->nuses++; }

void ir_count_uses(IrEntry *e) {
    for (int i = 0; i < e->nstmts; i++) {
        for (int j = 0; j < e->stmts[i]->nouts; j++) { e->stmts[i]->outs[j]->nuses = 0; }
    }
    for (int i = 0; i < e->nparams; i++) { e->params[i]->nuses = 0; }
    for (int i = 0; i < e->nsizes; i++) { e->sizes[i]->nuses = 0; }
    for (int i = 0; i < e->nstmts; i++) {
        if (!e->stmts[i]->dead) { ir_stmt_visit_reads(e->stmts[i], count_visit, NULL); }
    }
    for (int i = 0; i < e->nresults; i++) {
        e->results[i]->nuses++;
        for (int d = 0; d < e->results[i]->rank; d++) { e->results[i]->dims[d]->nuses++; }
    }
}

void ir_explain(IrModule *m, IrEntry *e, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    size_t old = e->explain ? strlen(e->explain) : 0;
    {
        /* the passes iterate to a fixpoint: report each fact once */
        char *line = ir_alloc(m->arena, (size_t)n + 1);
        va_start(ap, fmt);
        vsnprintf(line, (size_t)n + 1, fmt, ap);
        va_end(ap);
        if (e->explain && strstr(e->explain, line)) { return; }
    }
    char *p = ir_alloc(m->arena, old + (size_t)n + 2);
    if (old) { memcpy(p, e->explain, old); }
    va_start(ap, fmt);
    vsnprintf(p + old, (size_t)n + 1, fmt, ap);
    va_end(ap);
    p[old + (size_t)n] = '\n';
    e->explain = p;
}

/* ---- whole-entry rewriting ---- */
static void replace_in_expr(IrExpr *e, IrValue *from, IrValue *to) {
    if (!e) { return; }
    if ((e->kind == IR_E_FREE || e->kind == IR_E_READ) && e->val == from) { e->val = to; }
    for (int i = 0; i < 3; i++) { replace_in_expr(e->a[i], from, to); }
}
static void replace_in_lambda(IrLambda *l, IrValue *from, IrValue *to) {
    if (!l) { return; }
    for (int i = 0; i < l->nres; i++) { replace_in_expr(l->res[i], from, to); }
}

void ir_replace_uses(IrEntry *e, IrValue *from, IrValue *to) {
    for (int i = 0; i < e->nstmts; i++) {
        IrStmt *s = e->stmts[i];
        for (int d = 0; d < 2; d++) { if (s->w[d] == from) { s->w[d] = to; } }
        for (int k = 0; k < s->nins; k++) { if (s->ins[k] == from) { s->ins[k] = to; } }
        if (s->dest == from) { s->dest = to; }
        replace_in_lambda(s->map, from, to);
        replace_in_lambda(s->post, from, to);
        replace_in_lambda(s->per_row, from, to);
        for (int k = 0; k < s->nscans; k++) { replace_in_lambda(s->scans[k].op, from, to); }
        for (int k = 0; k < s->nreds; k++) { replace_in_lambda(s->reds[k].op, from, to); }
        for (int k = 0; k < s->nouts; k++) {
            for (int d = 0; d < 2; d++) { if (s->outs[k]->dims[d] == from) { s->outs[k]->dims[d] = to; } }
        }
    }
    for (int i = 0; i < e->nresults; i++) {
        if (e->results[i] == from) { e->results[i] = to; }
        for (int d = 0; d < 2; d++) { if (e->results[i]->dims[d] == from) { e->results[i]->dims[d] = to; } }
    }
}

int ir_stmt_index(IrEntry *e, IrStmt *s) {
    for (int i = 0; i < e->nstmts; i++) { if (e->stmts[i] == s) { return i; } }
    return -1;
}

void ir_entry_move_stmt(IrEntry *e, IrStmt *s, int pos) {
    int at = ir_stmt_index(e, s);
    if (at < 0) { IR_UNREACHABLE("statement not in entry"); }
    if (at < pos) {
        for (int i = at; i < pos; i++) { e->stmts[i] = e->stmts[i + 1]; }
    } else {
        for (int i = at; i > pos; i--) { e->stmts[i] = e->stmts[i - 1]; }
    }
    e->stmts[pos] = s;
}

/* Is this lambda's work cheap enough to recompute (no folds, small)? */
static int expr_cost(const IrExpr *e, int budget) {
    if (!e || budget <= 0) { return 0; }
    if (e->kind == IR_E_FOLD) { return 1000; }
    int c = 1;
    for (int i = 0; i < 3; i++) { c += expr_cost(e->a[i], budget - c); }
    return c;
}
bool ir_lambda_is_cheap(const IrLambda *l) {
    int c = 0;
    for (int i = 0; i < l->nres; i++) { c += expr_cost(l->res[i], 200); }
    return c < 64;
}

bool ir_size_check_stmt(const IrStmt *s) {
    return s->kind == IR_S_SCALAR && (s->src == IR_AOP_nonneg_size || s->src == IR_AOP_same_size);
}

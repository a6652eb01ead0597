/* emit_expr.c: scalar lambda bodies to C / CUDA C statements, shared by
 * both emitters, plus the output buffer.
 *
 * A lambda body is a DAG: each inner node becomes one `const T tN = ...;`
 * emitted once (memoised), leaves are written inline.  The language's
 * integer semantics (wrapping, x/0 == 0, shift counts modulo the width,
 * saturating float->int) go through the gpuc_* helpers of the prelude, so
 * the emitted C has no undefined behaviour; f32 code uses the f-suffixed
 * literals and the float functions (expf, fminf), never double ones.
 */
#include "backend.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---- buffer ---- */
static void grow(BeBuf *b, size_t extra) {
    if (b->n + extra + 1 <= b->cap) { return; }
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->n + extra + 1) { cap *= 2; }
    char *p = realloc(b->p, cap);
    if (!p) { IR_UNREACHABLE("out of memory"); }
    b->p = p; b->cap = cap;
}

static void vappend(BeBuf *b, const char *fmt, va_list ap) {
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    grow(b, (size_t)n);
    vsnprintf(b->p + b->n, (size_t)n + 1, fmt, ap);
    b->n += (size_t)n;
}

void be_printf(BeBuf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vappend(b, fmt, ap);
    va_end(ap);
}

void be_line(BeBuf *b, const char *fmt, ...) {
    grow(b, (size_t)b->indent * 4);
    for (int i = 0; i < b->indent * 4; i++) { b->p[b->n++] = ' '; }
    b->p[b->n] = 0;
    va_list ap;
    va_start(ap, fmt);
    vappend(b, fmt, ap);
    va_end(ap);
    be_printf(b, "\n");
}

void be_buf_free(BeBuf *b) { free(b->p); b->p = NULL; b->n = b->cap = 0; }

/* ---- a pool for generated strings, freed by be_expr_free ---- */
static char **pool;
static int npool, cappool;

static char *pool_add(char *s) {
    if (npool == cappool) {
        cappool = cappool ? 2 * cappool : 256;
        pool = realloc(pool, sizeof *pool * (size_t)cappool);
        if (!pool) { IR_UNREACHABLE("out of memory"); }
    }
    pool[npool++] = s;
    return s;
}

char *be_strf(BeExprCtx *c, const char *fmt, ...) {
    (void)c;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *p = malloc((size_t)n + 1);
    if (!p) { IR_UNREACHABLE("out of memory"); }
    va_start(ap, fmt);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return pool_add(p);
}

const char *be_vname(const IrValue *v) {
    static char ring[8][96];
    static int at;
    char *s = ring[at++ & 7];
    if (v->has_const && !v->name) { snprintf(s, 96, "((int64_t)%" PRId64 "LL)", v->const_val); }
    else if (v->name && (v->is_param || v->is_size)) { snprintf(s, 96, "v_%s", v->name); }
    else { snprintf(s, 96, "v%d", v->id); }
    return s;
}

/* ---- memo ---- */
static const char *memo_get(BeExprCtx *c, const IrExpr *e) {
    for (int i = c->nmemo - 1; i >= 0; i--) { if (c->mexpr[i] == e) { return c->mname[i]; } }
    return NULL;
}

static void memo_put(BeExprCtx *c, const IrExpr *e, char *name) {
    if (c->nmemo == c->capmemo) {
        c->capmemo = c->capmemo ? 2 * c->capmemo : 64;
        c->mexpr = realloc(c->mexpr, sizeof *c->mexpr * (size_t)c->capmemo);
        c->mname = realloc(c->mname, sizeof *c->mname * (size_t)c->capmemo);
        if (!c->mexpr || !c->mname) { IR_UNREACHABLE("out of memory"); }
    }
    c->mexpr[c->nmemo] = e;
    c->mname[c->nmemo] = name;
    c->nmemo++;
}

void be_expr_bind(BeExprCtx *c, const IrExpr *e, const char *name) { memo_put(c, e, be_strf(c, "%s", name)); }
void be_expr_reset(BeExprCtx *c) { c->nmemo = 0; }

void be_expr_free(BeExprCtx *c) {
    free(c->mexpr); free(c->mname);
    c->mexpr = NULL; c->mname = NULL; c->nmemo = c->capmemo = 0;
    for (int i = 0; i < npool; i++) { free(pool[i]); }
    free(pool);
    pool = NULL; npool = cappool = 0;
}

/* ---- constants ---- */
const char *be_const(BeExprCtx *c, const IrExpr *e) {
    switch (e->ty) {
    case IR_BOOL: return e->c.b ? "true" : "false";
    case IR_I32:
        if (e->c.i == INT32_MIN) { return "((int32_t)(-2147483647 - 1))"; }
        return be_strf(c, e->c.i < 0 ? "((int32_t)%" PRId64 ")" : "%" PRId64, e->c.i);
    case IR_I64:
        if (e->c.i == INT64_MIN) { return "((int64_t)(-9223372036854775807LL - 1))"; }
        return be_strf(c, e->c.i < 0 ? "((int64_t)%" PRId64 "LL)" : "((int64_t)%" PRId64 "LL)", e->c.i);
    case IR_U32: return be_strf(c, "%" PRIu64 "u", e->c.u & 0xffffffffu);
    case IR_U64: return be_strf(c, "((uint64_t)%" PRIu64 "ULL)", e->c.u);
    case IR_F32: case IR_F64: {
        bool f = e->ty == IR_F32;
        if (isnan(e->c.f)) { return f ? "gpuc_nanf()" : "gpuc_nan()"; }
        if (isinf(e->c.f)) { return e->c.f < 0 ? (f ? "(-gpuc_inff())" : "(-gpuc_inf())") : (f ? "gpuc_inff()" : "gpuc_inf()"); }
        char buf[64];
        snprintf(buf, sizeof buf, f ? "%.9g" : "%.17g", e->c.f);
        if (!strpbrk(buf, ".eEn")) { strcat(buf, ".0"); }
        if (buf[0] == '-') { return be_strf(c, "(%s%s)", buf, f ? "f" : ""); }
        return be_strf(c, "%s%s", buf, f ? "f" : "");
    }
    default: IR_UNREACHABLE("bad constant type");
    }
}

/* suffix used by the helpers: i32 i64 u32 u64 f32 f64 */
static const char *sfx(IrScalar t) { return ir_scalar_name(t); }

const char *be_binop(BeExprCtx *c, int op, IrScalar t, const char *a, const char *b) {
    const char *ct = ir_scalar_ctype(t);
    bool fl = ir_scalar_is_float(t), f32 = t == IR_F32;
    switch ((IrBinop)op) {
    case IR_BIN_add: case IR_BIN_sub: case IR_BIN_mul:
        if (fl) { return be_strf(c, "(%s %s %s)", a, ir_binop_info[op].cop, b); }
        if (ir_scalar_is_signed(t)) { return be_strf(c, "gpuc_%s_%s(%s, %s)", ir_binop_info[op].name, sfx(t), a, b); }
        return be_strf(c, "((%s)(%s %s %s))", ct, a, ir_binop_info[op].cop, b);
    case IR_BIN_div:
        if (fl) { return be_strf(c, "(%s / %s)", a, b); }
        return be_strf(c, "gpuc_div_%s(%s, %s)", sfx(t), a, b);
    case IR_BIN_rem:
        if (fl) { return be_strf(c, "%s(%s, %s)", f32 ? "fmodf" : "fmod", a, b); }
        return be_strf(c, "gpuc_rem_%s(%s, %s)", sfx(t), a, b);
    case IR_BIN_pow:
        if (fl) { return be_strf(c, "%s(%s, %s)", f32 ? "powf" : "pow", a, b); }
        return be_strf(c, "gpuc_pow_%s(%s, %s)", sfx(t), a, b);
    case IR_BIN_atan2:
        return be_strf(c, "%s(%s, %s)", f32 ? "atan2f" : "atan2", a, b);
    case IR_BIN_shl: case IR_BIN_shr:
        return be_strf(c, "gpuc_%s_%s(%s, %s)", ir_binop_info[op].name, sfx(t), a, b);
    case IR_BIN_and: case IR_BIN_or: case IR_BIN_xor:
        return be_strf(c, "((%s)(%s %s %s))", ct, a, ir_binop_info[op].cop, b);
    case IR_BIN_min: case IR_BIN_max:
        if (fl) { return be_strf(c, "%s%s(%s, %s)", op == IR_BIN_min ? "fmin" : "fmax", f32 ? "f" : "", a, b); }
        if (c->cuda && (t == IR_I32 || t == IR_U32)) {  /* see GPUC_MINMAX32 in the prelude */
            return be_strf(c, "gpuc_%s_%s(%s, %s)", op == IR_BIN_min ? "min" : "max", sfx(t), a, b);
        }
        return be_strf(c, "(%s %s %s ? %s : %s)", a, op == IR_BIN_min ? "<" : ">", b, a, b);
    case IR_BIN_land: case IR_BIN_lor:
        return be_strf(c, "(%s %s %s)", a, ir_binop_info[op].cop, b);
    case IR_BIN_eq: case IR_BIN_ne: case IR_BIN_lt: case IR_BIN_le: case IR_BIN_gt: case IR_BIN_ge:
        return be_strf(c, "(%s %s %s)", a, ir_binop_info[op].cop, b);
    default: IR_UNREACHABLE("bad binop");
    }
}

static const char *name_of(BeExprCtx *c, const IrExpr *e) { return be_expr(c, e); }

/* Does evaluating e read an array (so it must not be evaluated speculatively)? */
static bool reads_memory(const IrExpr *e) {
    if (!e) { return false; }
    if (e->kind == IR_E_READ || e->kind == IR_E_FOLD) { return true; }
    return reads_memory(e->a[0]) || reads_memory(e->a[1]) || reads_memory(e->a[2]);
}

static const char *emit_inner(BeExprCtx *c, const IrExpr *e) {
    IrScalar t = e->ty;
    switch (e->kind) {
    case IR_E_BIN: {
        const char *a = name_of(c, e->a[0]), *b = name_of(c, e->a[1]);
        return be_binop(c, e->op, e->a[0]->ty, a, b);
    }
    case IR_E_UN: {
        const char *a = name_of(c, e->a[0]);
        switch ((IrUnop)e->op) {
        case IR_UN_neg:
            if (ir_scalar_is_float(t)) { return be_strf(c, "(-%s)", a); }
            if (ir_scalar_is_signed(t)) { return be_strf(c, "gpuc_neg_%s(%s)", sfx(t), a); }
            return be_strf(c, "((%s)(0u - %s))", ir_scalar_ctype(t), a);
        case IR_UN_not: return be_strf(c, "(!%s)", a);
        case IR_UN_bnot:
            if (t == IR_BOOL) { return be_strf(c, "(!%s)", a); }
            return be_strf(c, "((%s)~%s)", ir_scalar_ctype(t), a);
        default: IR_UNREACHABLE("bad unop");
        }
    }
    case IR_E_MATH: {
        const IrMathInfo *mi = &ir_math_info[e->op];
        const char *a[3] = { 0 };
        for (int i = 0; i < mi->arity; i++) { a[i] = name_of(c, e->a[i]); }
        IrScalar at = e->a[0]->ty;
        if (e->op == IR_MATH_isnan || e->op == IR_MATH_isinf) {
            if (!ir_scalar_is_float(at)) { return "false"; }
            return be_strf(c, "(%s(%s) != 0)", mi->f32, a[0]);
        }
        if (!ir_scalar_is_float(at)) {
            if (e->op == IR_MATH_abs) { return be_strf(c, "gpuc_abs_%s(%s)", sfx(at), a[0]); }
            /* rounding functions are the identity on integers */
            return a[0];
        }
        const char *fn = at == IR_F32 ? mi->f32 : mi->f64;
        if (mi->arity == 1) { return be_strf(c, "%s(%s)", fn, a[0]); }
        if (mi->arity == 2) { return be_strf(c, "%s(%s, %s)", fn, a[0], a[1]); }
        return be_strf(c, "%s(%s, %s, %s)", fn, a[0], a[1], a[2]);
    }
    case IR_E_SELECT: {
        const char *x = name_of(c, e->a[0]);
        if (!reads_memory(e->a[1]) && !reads_memory(e->a[2])) {
            const char *y = name_of(c, e->a[1]), *z = name_of(c, e->a[2]);
            return be_strf(c, "(%s ? %s : %s)", x, y, z);
        }
        /* an arm reads an array: only the taken arm is evaluated (an index
         * out of bounds in the other arm is no error) */
        char *r = be_strf(c, "t%d", c->ntmp++);
        be_line(c->b, "%s %s;", ir_scalar_ctype(t), r);
        be_line(c->b, "if (%s) {", x);
        c->b->indent++;
        int saved = c->nmemo;
        be_line(c->b, "%s = %s;", r, name_of(c, e->a[1]));
        c->nmemo = saved;
        c->b->indent--;
        be_line(c->b, "} else {");
        c->b->indent++;
        be_line(c->b, "%s = %s;", r, name_of(c, e->a[2]));
        c->nmemo = saved;
        c->b->indent--;
        be_line(c->b, "}");
        c->is_var = true;
        return r;
    }
    case IR_E_CAST: {
        const char *a = name_of(c, e->a[0]);
        IrScalar from = e->a[0]->ty;
        if (t == IR_BOOL) { return be_strf(c, "(%s != 0)", a); }
        if (ir_scalar_is_float(from) && ir_scalar_is_int(t)) { return be_strf(c, "gpuc_cvt_%s_%s(%s)", sfx(t), sfx(from), a); }
        return be_strf(c, "((%s)%s)", ir_scalar_ctype(t), a);
    }
    case IR_E_READ: {
        const IrValue *v = e->val;
        const char *i0 = name_of(c, e->a[0]);
        char arr[96];
        snprintf(arr, sizeof arr, "%s", be_vname(v));
        if (c->host_reads) {
            if (v->rank == 1 || !e->a[1]) {
                return be_strf(c, "gpuc_dread(gpuc_h, %s, %s, %s, (int64_t)0, (int64_t)1)", arr, i0, be_vname(v->dims[0]));
            }
            const char *j = name_of(c, e->a[1]);
            char d0[96];
            snprintf(d0, sizeof d0, "%s", be_vname(v->dims[0]));
            return be_strf(c, "gpuc_dread(gpuc_h, %s, %s, %s, %s, %s)", arr, i0, d0, j, be_vname(v->dims[1]));
        }
        if (e->in_bounds) {  /* ir/bounds.c: no check */
            if (v->rank == 1 || !e->a[1]) { return be_strf(c, "%s[%s]", arr, i0); }
            return be_strf(c, "%s[(%s) * %s + (%s)]", arr, i0, be_vname(v->dims[1]), name_of(c, e->a[1]));
        }
        if (v->rank == 1 || !e->a[1]) {
            char d0[96];
            snprintf(d0, sizeof d0, "%s", be_vname(v->dims[0]));
            return be_strf(c, "((uint64_t)(%s) < (uint64_t)%s ? %s[%s] : (%s)gpuc_oob(%s, %s))", i0, d0, arr, i0, ir_scalar_ctype(t), i0, d0);
        }
        const char *i1 = name_of(c, e->a[1]);
        char d0[96], d1[96];
        snprintf(d0, sizeof d0, "%s", be_vname(v->dims[0]));
        snprintf(d1, sizeof d1, "%s", be_vname(v->dims[1]));
        return be_strf(c, "((uint64_t)(%s) < (uint64_t)%s && (uint64_t)(%s) < (uint64_t)%s ? %s[(%s) * %s + (%s)] : (%s)gpuc_oob((uint64_t)(%s) < (uint64_t)%s ? (%s) : (%s), (uint64_t)(%s) < (uint64_t)%s ? %s : %s))",
                       i0, d0, i1, d1, arr, i0, d1, i1, ir_scalar_ctype(t), i0, d0, i1, i0, i0, d0, d1, d0);
    }
    case IR_E_FOLD: {
        const char *cnt = name_of(c, e->a[0]);
        const char *init = name_of(c, e->a[1]);
        char *acc = be_strf(c, "t%d", c->ntmp++);
        be_line(c->b, "%s %s = %s;", ir_scalar_ctype(t), acc, init);
        be_line(c->b, "for (int64_t k%d = 0; k%d < %s; k%d++) {", e->index, e->index, cnt, e->index);
        c->b->indent++;
        int saved = c->nmemo;
        const char *body = name_of(c, e->a[2]);
        be_line(c->b, "%s = %s;", acc, be_binop(c, e->op, t, acc, body));
        c->nmemo = saved;
        c->b->indent--;
        be_line(c->b, "}");
        c->is_var = true;
        return acc;
    }
    default: IR_UNREACHABLE("not an inner expression");
    }
}

const char *be_expr(BeExprCtx *c, const IrExpr *e) {
    const char *m = memo_get(c, e);
    if (m) { return m; }
    switch (e->kind) {
    case IR_E_CONST: return be_const(c, e);
    case IR_E_PARAM: return c->params[e->index];
    case IR_E_IDX:
        if (e->index == 0 && c->idx0_offset) { return be_strf(c, "(%s + %s)", c->idx[0], c->idx0_offset); }
        return c->idx[e->index];
    case IR_E_LOOPVAR: return be_strf(c, "k%d", e->index);
    case IR_E_FREE: return be_strf(c, "%s", be_vname(e->val));
    default: break;
    }
    c->is_var = false;
    const char *rhs = emit_inner(c, e);
    char *name;
    if (c->is_var) {
        c->is_var = false;
        name = (char *)rhs;
    } else {
        name = be_strf(c, "t%d", c->ntmp++);
        be_line(c->b, "const %s %s = %s;", ir_scalar_ctype(e->ty), name, rhs);
    }
    memo_put(c, e, name);
    return name;
}

void be_lambda(BeExprCtx *c, const IrLambda *l, const char *const *args, const char **res) {
    /* memoisation is per application: the same nodes mean other values
     * when the lambda is applied again to other arguments */
    const char *const *saved = c->params;
    int saved_memo = c->nmemo;
    c->params = args;
    for (int i = 0; i < l->nres; i++) { res[i] = be_expr(c, l->res[i]); }
    c->params = saved;
    c->nmemo = saved_memo;
}

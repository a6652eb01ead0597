/* signature.c: a kernel's parameters, its `extern "C" __global__`
 * signature and the comment above it (source line, what was fused).  The
 * same parameter list gives the host launcher its argument array. */
#include "cuda_emit.h"

void kp_add(CuEmit *c, KParams *p, const char *decl, const char *arg) {
    if (p->n == p->cap) {
        p->cap = p->cap ? 2 * p->cap : 16;
        p->decl = realloc(p->decl, sizeof *p->decl * (size_t)p->cap);
        p->arg = realloc(p->arg, sizeof *p->arg * (size_t)p->cap);
        if (!p->decl || !p->arg) { IR_UNREACHABLE("out of memory"); }
    }
    p->decl[p->n] = be_strf(&c->x, "%s", decl);
    p->arg[p->n] = be_strf(&c->x, "%s", arg);
    p->n++;
}

static bool kp_has(KParams *p, IrValue *v) {
    for (int i = 0; i < p->nvals; i++) { if (p->vals[i] == v) { return true; } }
    return false;
}
static void kp_mark(KParams *p, IrValue *v) {
    if (p->nvals == p->capvals) {
        p->capvals = p->capvals ? 2 * p->capvals : 16;
        p->vals = realloc(p->vals, sizeof *p->vals * (size_t)p->capvals);
        if (!p->vals) { IR_UNREACHABLE("out of memory"); }
    }
    p->vals[p->nvals++] = v;
}

typedef struct { CuEmit *c; KParams *p; } KpCtx;

static void kp_value(CuEmit *c, KParams *p, IrValue *v) {
    if (kp_has(p, v) || (v->has_const && !v->name)) { return; }
    kp_mark(p, v);
    char d[160];
    const char *n = be_vname(v);
    if (v->rank) {
        snprintf(d, sizeof d, "const %s *__restrict__ %s", ct(v->elem), n);
        kp_add(c, p, d, n);
        for (int k = 0; k < v->rank; k++) { kp_value(c, p, v->dims[k]); }
    } else {
        snprintf(d, sizeof d, "const %s %s", ct(v->elem), n);
        kp_add(c, p, d, n);
    }
}

static void kp_visit(IrValue *v, void *ctx) {
    KpCtx *k = ctx;
    kp_value(k->c, k->p, v);
}

void kp_free(KParams *p) { free(p->decl); free(p->arg); free(p->vals); }

/* The inputs, free values and outputs of statement s. */
void stmt_params(CuEmit *c, IrStmt *s, KParams *p) {
    for (int d = 0; d < s->rank; d++) { if (s->w[d]) { kp_value(c, p, s->w[d]); } }
    for (int i = 0; i < s->nins; i++) { kp_value(c, p, s->ins[i]); }
    if (s->dest) { kp_value(c, p, s->dest); }
    KpCtx k = { c, p };
    ir_stmt_visit_reads(s, kp_visit, &k);
    for (int i = 0; i < s->nscans; i++) { for (int j = 0; j < s->scans[i].arity; j++) { ir_expr_visit_reads(s->scans[i].ne[j], kp_visit, &k); } }
    for (int i = 0; i < s->nreds; i++) { for (int j = 0; j < s->reds[i].arity; j++) { ir_expr_visit_reads(s->reds[i].ne[j], kp_visit, &k); } }
    /* a sharded statement's global row index is the local one plus the shard's first row */
    if (c->shard && s->sharded) { kp_add(c, p, "const int64_t g_shard_off", shard_offset_name(c->e, s)); }
    for (int o = 0; o < s->nouts; o++) {
        IrValue *v = s->outs[o];
        char d[160], a[160];
        kp_mark(p, v);
        if (v->rank) {
            snprintf(d, sizeof d, "%s *__restrict__ %s", ct(v->elem), be_vname(v));
            kp_add(c, p, d, be_vname(v));
        } else {
            snprintf(d, sizeof d, "%s *__restrict__ %s_out", ct(v->elem), be_vname(v));
            snprintf(a, sizeof a, "%s_d", be_vname(v));
            kp_add(c, p, d, a);
        }
    }
    /* output dims are read by later statements only; still mark them passed */
}

/* The kernel's signature; min_blocks > 0 asks for that many blocks per SM
 * (__launch_bounds__'s second argument caps the registers to match). */
void signature_attrs(CuEmit *c, IrKernel *k, KParams *p, const char *attrs) {
    BeBuf *b = c->b;
    be_printf(b, "extern \"C\" __global__ void %s\n%s(", attrs, k->name);
    for (int i = 0; i < p->n; i++) { be_printf(b, "%s%s", i ? ",\n    " : "", p->decl[i]); }
    be_printf(b, ")\n{\n");
    b->indent = 1;
}
void signature_min(CuEmit *c, IrKernel *k, KParams *p, int min_blocks) {
    signature_attrs(c, k, p, min_blocks > 0 ? be_strf(&c->x, "__launch_bounds__(%d, %d)", k->block, min_blocks) : be_strf(&c->x, "__launch_bounds__(%d)", k->block));
}
void signature(CuEmit *c, IrKernel *k, KParams *p) { signature_min(c, k, p, 0); }

void kernel_comment(CuEmit *c, IrKernel *k) {
    be_printf(c->b, "/* %s:%d: %s", c->m->file, k->line, k->name);
    if (k->stmt->note) { be_printf(c->b, "; fused: %s", k->stmt->note); }
    be_printf(c->b, " */\n");
}


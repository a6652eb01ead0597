/* emit_c.c: the reference C99 backend.
 *
 * Every statement of the fused IR becomes a plain sequential loop in index
 * order: reductions and scans combine left to right, so this backend's
 * result is *the* meaning of a program; the CUDA backend must match it bit
 * for bit on integers and within the documented tolerance on floats.
 * Output: the prelude, one `int gpuc_entry_NAME(...)` per entry (arrays
 * in as const pointers, results out through pointers, array results
 * malloc'ed for the caller), and under GPUC_MAIN a text main().
 */
#include "backend.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    BeBuf *b;
    BeExprCtx x;
    IrEntry *e;
    IrModule *m;
} CEmit;

static const char *ct(IrScalar t) { return ir_scalar_ctype(t); }

/* Element count of an array value as a C expression. */
static const char *count_of(CEmit *c, const IrValue *v) {
    if (v->rank == 1) { return be_strf(&c->x, "%s", be_vname(v->dims[0])); }
    char d0[96];
    snprintf(d0, sizeof d0, "%s", be_vname(v->dims[0]));
    return be_strf(&c->x, "(%s * %s)", d0, be_vname(v->dims[1]));
}

static void alloc_array(CEmit *c, IrValue *v, const char *count) {
    be_line(c->b, "%s *%s = (%s *)gpuc_alloc((size_t)(%s) * sizeof(%s));", ct(v->elem), be_vname(v), ct(v->elem), count, ct(v->elem));
}

/* Parameter names p0.. for the map lambda, loaded from the inputs at `at`. */
static const char **load_params(CEmit *c, IrStmt *s, const char *at) {
    const char **p = calloc((size_t)s->nins + 1, sizeof *p);
    for (int i = 0; i < s->nins; i++) {
        char *n = be_strf(&c->x, "x%d", i);
        be_line(c->b, "const %s %s = %s[%s];  (void)%s;", ct(s->ins[i]->elem), n, be_vname(s->ins[i]), at, n);
        p[i] = n;
    }
    return p;
}

/* acc[0..arity) = op(acc, x) */
static void combine(CEmit *c, IrOperator *op, char **acc, const char **x) {
    const char **args = calloc((size_t)op->arity * 2 + 1, sizeof *args);
    const char **res = calloc((size_t)op->arity + 1, sizeof *res);
    for (int k = 0; k < op->arity; k++) { args[k] = acc[k]; args[op->arity + k] = x[k]; }
    be_lambda(&c->x, op->op, args, res);
    /* assign through temporaries: later results may read earlier accs */
    if (op->arity > 1) {
        for (int k = 0; k < op->arity; k++) {
            char *t = be_strf(&c->x, "t%d", c->x.ntmp++);
            be_line(c->b, "const %s %s = %s;", ct(op->op->ptypes[k]), t, res[k]);
            res[k] = t;
        }
    }
    for (int k = 0; k < op->arity; k++) { be_line(c->b, "%s = %s;", acc[k], res[k]); }
    free(args);
    free(res);
}

static char **declare_accs(CEmit *c, IrOperator *op, const char *prefix, int idx) {
    char **acc = calloc((size_t)op->arity + 1, sizeof *acc);
    for (int k = 0; k < op->arity; k++) {
        acc[k] = be_strf(&c->x, "%s%d_%d", prefix, idx, k);
        be_line(c->b, "%s %s = %s;", ct(op->op->ptypes[k]), acc[k], be_expr(&c->x, op->ne[k]));
    }
    return acc;
}

static void emit_screma(CEmit *c, IrStmt *s) {
    BeBuf *b = c->b;
    int sw = ir_stmt_scan_width(s), rw = ir_stmt_red_width(s), nm = ir_stmt_nmapped(s);
    int nscanouts = s->post ? s->post->nres : sw;
    /* declare outputs */
    for (int o = 0; o < s->nouts; o++) {
        IrValue *v = s->outs[o];
        if (v->rank) { alloc_array(c, v, count_of(c, v)); }
        else { be_line(b, "%s %s;", ct(v->elem), be_vname(v)); }
    }
    be_line(b, "{");
    b->indent++;
    char ***sacc = calloc((size_t)s->nscans + 1, sizeof *sacc);
    char ***racc = calloc((size_t)s->nreds + 1, sizeof *racc);
    for (int i = 0; i < s->nscans; i++) { sacc[i] = declare_accs(c, &s->scans[i], "s", i); }
    for (int i = 0; i < s->nreds; i++) { racc[i] = declare_accs(c, &s->reds[i], "r", i); }
    if (s->rank == 1) {
        be_line(b, "for (int64_t i0 = 0; i0 < %s; i0++) {", be_vname(s->w[0]));
        b->indent++;
        c->x.idx[0] = "i0";
        c->x.idx[1] = "i0";
        const char **p = load_params(c, s, "i0");
        const char **res = calloc((size_t)s->map->nres + 1, sizeof *res);
        be_lambda(&c->x, s->map, p, res);
        /* scans */
        const char **scanres = calloc((size_t)sw + 1, sizeof *scanres);
        int at = 0;
        for (int i = 0; i < s->nscans; i++) {
            IrOperator *op = &s->scans[i];
            if (op->exclusive) {
                for (int k = 0; k < op->arity; k++) {
                    char *t = be_strf(&c->x, "e%d_%d", i, k);
                    be_line(b, "const %s %s = %s;", ct(op->op->ptypes[k]), t, sacc[i][k]);
                    scanres[at + k] = t;
                }
                combine(c, op, sacc[i], res + at);
            } else {
                combine(c, op, sacc[i], res + at);
                for (int k = 0; k < op->arity; k++) { scanres[at + k] = sacc[i][k]; }
            }
            at += op->arity;
        }
        if (s->post) {
            const char **pres = calloc((size_t)s->post->nres + 1, sizeof *pres);
            be_lambda(&c->x, s->post, scanres, pres);
            for (int o = 0; o < s->post->nres; o++) { be_line(b, "%s[i0] = %s;", be_vname(s->outs[o]), pres[o]); }
            free(pres);
        } else {
            for (int o = 0; o < sw; o++) { be_line(b, "%s[i0] = %s;", be_vname(s->outs[o]), scanres[o]); }
        }
        at = sw;
        for (int i = 0; i < s->nreds; i++) {
            combine(c, &s->reds[i], racc[i], res + at);
            at += s->reds[i].arity;
        }
        for (int k = 0; k < nm; k++) {
            be_line(b, "%s[i0] = %s;", be_vname(s->outs[nscanouts + rw + k]), res[sw + rw + k]);
        }
        free(scanres);
        free(res);
        free(p);
        b->indent--;
        be_line(b, "}");
    } else {
        /* 2-D map over a row-major n x m shape */
        const char *w1 = be_strf(&c->x, "%s", be_vname(s->w[1]));
        be_line(b, "for (int64_t i0 = 0; i0 < %s; i0++) {", be_vname(s->w[0]));
        b->indent++;
        be_line(b, "for (int64_t i1 = 0; i1 < %s; i1++) {", w1);
        b->indent++;
        be_line(b, "const int64_t f = i0 * %s + i1;", w1);
        c->x.idx[0] = "i0";
        c->x.idx[1] = "i1";
        const char **p = load_params(c, s, "f");
        const char **res = calloc((size_t)s->map->nres + 1, sizeof *res);
        be_lambda(&c->x, s->map, p, res);
        int at = sw;
        for (int i = 0; i < s->nreds; i++) {
            combine(c, &s->reds[i], racc[i], res + at);
            at += s->reds[i].arity;
        }
        for (int k = 0; k < nm; k++) { be_line(b, "%s[f] = %s;", be_vname(s->outs[nscanouts + rw + k]), res[sw + rw + k]); }
        free(res);
        free(p);
        b->indent--;
        be_line(b, "}");
        b->indent--;
        be_line(b, "}");
    }
    int o = nscanouts;
    for (int i = 0; i < s->nreds; i++) {
        for (int k = 0; k < s->reds[i].arity; k++) {
            be_line(b, "%s = %s;", be_vname(s->outs[o]), racc[i][k]);
            be_line(b, "(void)%s;", be_vname(s->outs[o]));
            o++;
        }
    }
    for (int i = 0; i < s->nscans; i++) { free(sacc[i]); }
    for (int i = 0; i < s->nreds; i++) { free(racc[i]); }
    free(sacc);
    free(racc);
    b->indent--;
    be_line(b, "}");
}

static void emit_filter(CEmit *c, IrStmt *s) {
    BeBuf *b = c->b;
    int nv = s->nouts - 1;
    IrValue *cnt = s->outs[nv];
    for (int o = 0; o < nv; o++) { alloc_array(c, s->outs[o], be_vname(s->w[0])); }
    be_line(b, "int64_t %s = 0;", be_vname(cnt));
    be_line(b, "for (int64_t i0 = 0; i0 < %s; i0++) {", be_vname(s->w[0]));
    b->indent++;
    c->x.idx[0] = "i0";
    const char **p = load_params(c, s, "i0");
    const char **res = calloc((size_t)s->map->nres + 1, sizeof *res);
    be_lambda(&c->x, s->map, p, res);
    be_line(b, "if (%s) {", res[0]);
    b->indent++;
    for (int o = 0; o < nv; o++) { be_line(b, "%s[%s] = %s;", be_vname(s->outs[o]), be_vname(cnt), res[1 + o]); }
    be_line(b, "%s++;", be_vname(cnt));
    b->indent--;
    be_line(b, "}");
    free(res);
    free(p);
    b->indent--;
    be_line(b, "}");
}

static void emit_scatter(CEmit *c, IrStmt *s) {
    BeBuf *b = c->b;
    IrValue *out = s->outs[0];
    const char *n = count_of(c, s->dest);
    alloc_array(c, out, n);
    be_line(b, "if (%s > 0) { memcpy(%s, %s, (size_t)(%s) * sizeof(%s)); }", n, be_vname(out), be_vname(s->dest), n, ct(out->elem));
    be_line(b, "for (int64_t i0 = 0; i0 < %s; i0++) {", be_vname(s->w[0]));
    b->indent++;
    c->x.idx[0] = "i0";
    const char **p = load_params(c, s, "i0");
    const char **res = calloc((size_t)s->map->nres + 1, sizeof *res);
    be_lambda(&c->x, s->map, p, res);
    be_line(b, "if ((uint64_t)(%s) < (uint64_t)(%s)) { %s[%s] = %s; }", res[0], n, be_vname(out), res[0], res[1]);
    free(res);
    free(p);
    b->indent--;
    be_line(b, "}");
}

static void emit_segred(CEmit *c, IrStmt *s) {
    BeBuf *b = c->b;
    const char *rows = be_strf(&c->x, "%s", be_vname(s->w[0]));
    const char *cols = be_strf(&c->x, "%s", be_vname(s->w[1]));
    for (int o = 0; o < s->nouts; o++) { alloc_array(c, s->outs[o], s->axis == 1 ? rows : cols); }
    const char *outer = s->axis == 1 ? "i0" : "i1", *inner = s->axis == 1 ? "i1" : "i0";
    be_line(b, "for (int64_t %s = 0; %s < %s; %s++) {", outer, outer, s->axis == 1 ? rows : cols, outer);
    b->indent++;
    char ***racc = calloc((size_t)s->nreds + 1, sizeof *racc);
    for (int i = 0; i < s->nreds; i++) { racc[i] = declare_accs(c, &s->reds[i], "r", i); }
    be_line(b, "for (int64_t %s = 0; %s < %s; %s++) {", inner, inner, s->axis == 1 ? cols : rows, inner);
    b->indent++;
    be_line(b, "const int64_t f = i0 * %s + i1;", cols);
    c->x.idx[0] = "i0";
    c->x.idx[1] = "i1";
    const char **p = load_params(c, s, "f");
    const char **res = calloc((size_t)s->map->nres + 1, sizeof *res);
    be_lambda(&c->x, s->map, p, res);
    int at = 0;
    for (int i = 0; i < s->nreds; i++) {
        combine(c, &s->reds[i], racc[i], res + at);
        at += s->reds[i].arity;
    }
    free(res);
    free(p);
    b->indent--;
    be_line(b, "}");
    int o = 0;
    for (int i = 0; i < s->nreds; i++) {
        for (int k = 0; k < s->reds[i].arity; k++) { be_line(b, "%s[%s] = %s;", be_vname(s->outs[o++]), outer, racc[i][k]); }
        free(racc[i]);
    }
    free(racc);
    b->indent--;
    be_line(b, "}");
}

static void emit_scalar(CEmit *c, IrStmt *s) {
    if (s->nouts == 1 && s->outs[0]->has_const && !s->outs[0]->name) {
        return;  /* a constant size: written as a literal where used */
    }
    const char **res = calloc((size_t)s->map->nres + 1, sizeof *res);
    be_lambda(&c->x, s->map, NULL, res);
    for (int o = 0; o < s->nouts; o++) {
        be_line(c->b, "const %s %s = %s;", ct(s->outs[o]->elem), be_vname(s->outs[o]), res[o]);
    }
    free(res);
}

static bool is_result(IrEntry *e, IrValue *v, int before) {
    for (int i = 0; i < before; i++) { if (e->results[i] == v) { return true; } }
    return false;
}

static void emit_entry(CEmit *c, IrEntry *e) {
    BeBuf *b = c->b;
    be_printf(b, "/* %s:%d: entry %s */\n", c->m->file, e->line, e->name);
    be_entry_signature(b, e, "gpuc_entry_", NULL);
    be_printf(b, " {\n");
    b->indent = 1;
    c->e = e;
    c->x.ntmp = 0;
    for (int i = 0; i < e->nstmts; i++) {
        IrStmt *s = e->stmts[i];
        if (s->dead) { continue; }
        be_expr_reset(&c->x);
        if (s->kind != IR_S_SCALAR || !(s->nouts == 1 && s->outs[0]->has_const)) {
            be_line(b, "/* %s:%d */", c->m->file, s->line);
        }
        switch (s->kind) {
        case IR_S_SCREMA: emit_screma(c, s); break;
        case IR_S_FILTER: emit_filter(c, s); break;
        case IR_S_SCATTER: emit_scatter(c, s); break;
        case IR_S_SEGRED: emit_segred(c, s); break;
        case IR_S_SCALAR: emit_scalar(c, s); break;
        }
    }
    /* an index out of bounds anywhere fails the entry (no results) */
    be_line(b, "if (gpuc_oob_hit) {");
    b->indent++;
    for (int i = 0; i < e->nstmts; i++) {
        IrStmt *s = e->stmts[i];
        if (s->dead) { continue; }
        for (int o = 0; o < s->nouts; o++) {
            if (s->outs[o]->rank) { be_line(b, "free(%s);", be_vname(s->outs[o])); }
        }
    }
    be_line(b, "return 2;");
    b->indent--;
    be_line(b, "}");
    /* results: hand arrays over (copying inputs and repeats), free the rest */
    for (int i = 0; i < e->nresults; i++) {
        IrValue *v = e->results[i];
        if (!v->rank) { be_line(b, "*out%d = %s;", i, be_vname(v)); continue; }
        const char *n = count_of(c, v);
        be_line(b, "out%d_shape[0] = %s;", i, be_vname(v->dims[0]));
        be_line(b, "out%d_shape[1] = %s;", i, v->rank == 2 ? be_vname(v->dims[1]) : "1");
        if (v->is_param || is_result(e, v, i)) {
            be_line(b, "*out%d = (%s *)gpuc_alloc((size_t)(%s) * sizeof(%s));", i, ct(v->elem), n, ct(v->elem));
            be_line(b, "if (%s > 0) { memcpy(*out%d, %s, (size_t)(%s) * sizeof(%s)); }", n, i, be_vname(v), n, ct(v->elem));
        } else {
            be_line(b, "*out%d = %s;", i, be_vname(v));
        }
    }
    for (int i = 0; i < e->nstmts; i++) {
        IrStmt *s = e->stmts[i];
        if (s->dead) { continue; }
        for (int o = 0; o < s->nouts; o++) {
            IrValue *v = s->outs[o];
            if (v->rank && !is_result(e, v, e->nresults)) { be_line(b, "free(%s);", be_vname(v)); }
        }
    }
    be_line(b, "return 0;");
    b->indent = 0;
    be_printf(b, "}\n\n");
}

int be_emit_c(FILE *out, IrModule *m) {
    BeBuf b = { 0 };
    CEmit c = { 0 };
    c.b = &b;
    c.m = m;
    c.x.b = &b;
    c.x.cuda = false;
    be_printf(&b, "/* Generated by gpuc from %s: reference C backend (C99). */\n", m->file);
    be_prelude(&b, false);
    be_printf(&b,
        "static inline void *gpuc_alloc(size_t n) {\n"
        "    void *p = malloc(n ? n : 1);\n"
        "    if (!p) { fprintf(stderr, \"gpuc: out of memory\\n\"); exit(1); }\n"
        "    return p;\n"
        "}\n\n");
    for (int i = 0; i < m->nentries; i++) {
        be_entry_signature(&b, m->entries[i], "gpuc_entry_", NULL);
        be_printf(&b, ";\n");
    }
    be_printf(&b, "\n");
    for (int i = 0; i < m->nentries; i++) { emit_entry(&c, m->entries[i]); }
    be_printf(&b, "#ifdef GPUC_MAIN\n");
    be_main(&b, m);
    be_printf(&b, "#endif /* GPUC_MAIN */\n");
    fwrite(b.p, 1, b.n, out);
    be_buf_free(&b);
    be_expr_free(&c.x);
    return 0;
}

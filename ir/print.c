/* print.c: the stable text form of the IR (--emit=ir, --dump-after=PASS),
 * the kernel list and the --explain-fusion report.  Tests check this text
 * with FileCheck, so change it only together with tests/ir/.
 *
 * Values print as %name for entry parameters and sizes and as %N (numbered
 * in definition order at print time) otherwise; lambda parameters as p0, p1,
 * element indices as i0 (row / flat) and i1 (column), fold counters as k0.. */
#include "ir.h"

#include <inttypes.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

typedef struct { IrEntry *e; int *num; int nnum; } Pr;

static void pval(FILE *o, Pr *p, const IrValue *v) {
    if (v->has_const && !v->name) { fprintf(o, "%" PRId64, v->const_val); return; }
    if (v->name && (v->is_param || v->is_size)) { fprintf(o, "%%%s", v->name); return; }
    int n = v->id < p->nnum ? p->num[v->id] : 0;
    if (n > 0) { fprintf(o, "%%%d", n); } else { fprintf(o, "%%v%d", v->id); }
}

static void ptype(FILE *o, Pr *p, const IrValue *v) {
    fputs(ir_scalar_name(v->elem), o);
    for (int d = 0; d < v->rank; d++) {
        fputc('[', o);
        pval(o, p, v->dims[d]);
        fputc(']', o);
    }
}

void ir_print_const(FILE *o, const IrExpr *e);
void ir_print_const(FILE *o, const IrExpr *e) {
    switch (e->ty) {
    case IR_BOOL: fputs(e->c.b ? "true" : "false", o); break;
    case IR_I32: case IR_I64: fprintf(o, "%" PRId64, e->c.i); break;
    case IR_U32: case IR_U64: fprintf(o, "%" PRIu64 "u", e->c.u); break;
    case IR_F32: case IR_F64:
        if (isinf(e->c.f)) { fputs(e->c.f < 0 ? "-inf" : "inf", o); }
        else if (isnan(e->c.f)) { fputs("nan", o); }
        else {
            char buf[64];
            snprintf(buf, sizeof buf, "%.9g", e->c.f);
            if (!strpbrk(buf, ".eE")) { strcat(buf, ".0"); }
            fputs(buf, o);
        }
        fputs(e->ty == IR_F32 ? "f32" : "f64", o);
        break;
    default: break;
    }
}

static void pexpr(FILE *o, Pr *p, const IrExpr *e) {
    switch (e->kind) {
    case IR_E_CONST: ir_print_const(o, e); return;
    case IR_E_PARAM: fprintf(o, "p%d", e->index); return;
    case IR_E_IDX: fprintf(o, "i%d", e->index); return;
    case IR_E_LOOPVAR: fprintf(o, "k%d", e->index); return;
    case IR_E_FREE: pval(o, p, e->val); return;
    case IR_E_BIN:
        fprintf(o, "%s(", ir_binop_info[e->op].name);
        pexpr(o, p, e->a[0]); fputs(", ", o); pexpr(o, p, e->a[1]); fputc(')', o);
        return;
    case IR_E_UN:
        fprintf(o, "%s(", ir_unop_name[e->op]); pexpr(o, p, e->a[0]); fputc(')', o);
        return;
    case IR_E_MATH:
        fprintf(o, "%s(", ir_math_info[e->op].name);
        for (int i = 0; i < ir_math_info[e->op].arity; i++) {
            if (i) { fputs(", ", o); }
            pexpr(o, p, e->a[i]);
        }
        fputc(')', o);
        return;
    case IR_E_SELECT:
        fputs("select(", o); pexpr(o, p, e->a[0]); fputs(", ", o); pexpr(o, p, e->a[1]);
        fputs(", ", o); pexpr(o, p, e->a[2]); fputc(')', o);
        return;
    case IR_E_CAST:
        fprintf(o, "%s(", ir_scalar_name(e->ty)); pexpr(o, p, e->a[0]); fputc(')', o);
        return;
    case IR_E_READ:
        fputs("read(", o); pval(o, p, e->val); fputs(", ", o); pexpr(o, p, e->a[0]);
        if (e->a[1]) { fputs(", ", o); pexpr(o, p, e->a[1]); }
        fputc(')', o);
        return;
    case IR_E_FOLD:
        fprintf(o, "fold[k%d < ", e->index); pexpr(o, p, e->a[0]);
        fprintf(o, "](%s, ", ir_binop_info[e->op].name); pexpr(o, p, e->a[1]);
        fputs(", ", o); pexpr(o, p, e->a[2]); fputc(')', o);
        return;
    }
}

static void plambda(FILE *o, Pr *p, const IrLambda *l) {
    fputc('|', o);
    for (int i = 0; i < l->nparams; i++) {
        fprintf(o, "%sp%d: %s", i ? ", " : "", i, ir_scalar_name(l->ptypes[i]));
    }
    fputs("| (", o);
    for (int i = 0; i < l->nres; i++) {
        if (i) { fputs(", ", o); }
        pexpr(o, p, l->res[i]);
    }
    fputc(')', o);
}

static void poperator(FILE *o, Pr *p, const IrOperator *op) {
    /* A named single binop prints as its name; anything else in full. */
    bool simple = op->arity == 1 && op->op->res[0]->kind == IR_E_BIN &&
                  op->op->res[0]->a[0]->kind == IR_E_PARAM && op->op->res[0]->a[0]->index == 0 &&
                  op->op->res[0]->a[1]->kind == IR_E_PARAM && op->op->res[0]->a[1]->index == 1;
    if (simple) {
        fputs(ir_binop_info[op->op->res[0]->op].name, o);
    } else {
        fprintf(o, "%s ", op->name ? op->name : "op");
        plambda(o, p, op->op);
    }
    fputs(" ne (", o);
    for (int i = 0; i < op->arity; i++) {
        if (i) { fputs(", ", o); }
        pexpr(o, p, op->ne[i]);
    }
    fputc(')', o);
}

static bool lambda_is_identity(const IrLambda *l) {
    if (l->nres != l->nparams) { return false; }
    for (int i = 0; i < l->nres; i++) {
        if (l->res[i]->kind != IR_E_PARAM || l->res[i]->index != i) { return false; }
    }
    return true;
}

static const char *stmt_opname(const IrStmt *s) {
    switch (s->kind) {
    case IR_S_FILTER: return "filter";
    case IR_S_SCATTER: return "scatter";
    case IR_S_SEGRED: return "reduce_axis";
    case IR_S_SCALAR: return ir_aop_info[s->src].name;  /* scalar, nonneg_size, same_size */
    case IR_S_SCREMA: break;
    }
    bool ident = lambda_is_identity(s->map);
    if (s->nscans == 0 && s->nreds == 0) {
        switch (s->src) {
        case IR_AOP_iota: case IR_AOP_replicate: case IR_AOP_gather: case IR_AOP_for1d: case IR_AOP_for2d:
            return ir_aop_info[s->src].name;
        default: return s->rank == 2 ? "map2d" : "map";
        }
    }
    if (s->nscans == 0 && !s->post) { return ident && ir_stmt_nmapped(s) == 0 ? "reduce" : "redomap"; }
    if (s->nreds == 0 && !s->post && ir_stmt_nmapped(s) == 0) {
        if (ident) { return s->scans[0].exclusive ? "exscan" : "scan"; }
        return "scanomap";
    }
    return "screma";
}

static void number_values(Pr *p, IrEntry *e) {
    p->e = e;
    p->nnum = e->nvalues;
    p->num = calloc((size_t)e->nvalues + 1, sizeof *p->num);
    int n = 1;
    for (int i = 0; i < e->nstmts; i++) {
        IrStmt *s = e->stmts[i];
        if (s->dead) { continue; }
        for (int j = 0; j < s->nouts; j++) {
            if (!(s->outs[j]->name && (s->outs[j]->is_param || s->outs[j]->is_size))) {
                p->num[s->outs[j]->id] = n++;
            }
        }
    }
}

static void print_stmt(FILE *o, Pr *p, IrStmt *s) {
    fputs("  ", o);
    for (int j = 0; j < s->nouts; j++) {
        if (j) { fputs(", ", o); }
        pval(o, p, s->outs[j]);
        fputs(": ", o);
        ptype(o, p, s->outs[j]);
    }
    fprintf(o, s->nouts ? " = %s" : "%s", stmt_opname(s));
    if (s->kind != IR_S_SCALAR) {
        fputc('<', o);
        pval(o, p, s->w[0]);
        if (s->rank == 2) { fputs(", ", o); pval(o, p, s->w[1]); }
        fputc('>', o);
        if (s->kind == IR_S_SEGRED) { fprintf(o, "[axis %d]", s->axis); }
        fputc('(', o);
        if (s->dest) { pval(o, p, s->dest); fputs(s->nins ? "; " : "", o); }
        for (int i = 0; i < s->nins; i++) {
            if (i) { fputs(", ", o); }
            pval(o, p, s->ins[i]);
        }
        fputc(')', o);
    }
    fputc(' ', o);
    plambda(o, p, s->map);
    for (int i = 0; i < s->nscans; i++) {
        fputs(s->scans[i].exclusive ? " exscan " : " scan ", o);
        poperator(o, p, &s->scans[i]);
    }
    for (int i = 0; i < s->nreds; i++) {
        fputs(" red ", o);
        poperator(o, p, &s->reds[i]);
    }
    if (s->post) {
        fputs(" post ", o);
        plambda(o, p, s->post);
    }
    if (s->per_row) {
        fputs(" per_row ", o);
        plambda(o, p, s->per_row);
    }
    if (s->what) { fprintf(o, "  ; %s", s->what); }
    fprintf(o, "  ; line %d\n", s->line);
}

static void print_entry(FILE *o, IrEntry *e) {
    Pr p = { 0 };
    number_values(&p, e);
    fprintf(o, "entry %s(", e->name);
    for (int i = 0; i < e->nparams; i++) {
        if (i) { fputs(", ", o); }
        pval(o, &p, e->params[i]);
        fputs(": ", o);
        ptype(o, &p, e->params[i]);
    }
    fputs(") -> (", o);
    for (int i = 0; i < e->nresults; i++) {
        if (i) { fputs(", ", o); }
        ptype(o, &p, e->results[i]);
    }
    fputs(")", o);
    if (e->ntargs) {
        fputs(" template<", o);
        for (int i = 0; i < e->ntargs; i++) {
            if (i) { fputs(", ", o); }
            if (e->targs[i].is_type) { fprintf(o, "%s = %s", e->targs[i].name, ir_scalar_name(e->targs[i].type)); }
            else { fprintf(o, "%s = %lld", e->targs[i].name, (long long)e->targs[i].value); }
        }
        fputs(">", o);
    }
    if (e->attr_block) { fprintf(o, " @block(%d)", e->attr_block); }
    if (e->attr_items) { fprintf(o, " @items(%d)", e->attr_items); }
    if (e->attr_unroll) { fprintf(o, " @unroll(%d)", e->attr_unroll); }
    if (e->attr_tile) { fprintf(o, " @tile(%d)", e->attr_tile); }
    fprintf(o, " {  ; line %d\n", e->line);
    for (int i = 0; i < e->nstmts; i++) {
        if (!e->stmts[i]->dead) { print_stmt(o, &p, e->stmts[i]); }
    }
    fputs("  return ", o);
    for (int i = 0; i < e->nresults; i++) {
        if (i) { fputs(", ", o); }
        pval(o, &p, e->results[i]);
    }
    fputs("\n}\n", o);
    free(p.num);
}

void ir_print_module(FILE *out, IrModule *m) {
    for (int i = 0; i < m->nentries; i++) {
        if (i) { fputc('\n', out); }
        print_entry(out, m->entries[i]);
    }
}

static const char *const kernel_kind_names[] = {
    "map", "reduce", "scan", "filter", "scatter", "segred_row", "segred_col", "matmul_tiled", "host",
};
static const char *const grid_names[] = { "cover", "saturate", "rows", "tiles2d" };

void ir_print_kernels(FILE *out, IrModule *m) {
    for (int i = 0; i < m->nentries; i++) {
        IrEntry *e = m->entries[i];
        int ngpu = 0;
        for (int k = 0; k < e->nkernels; k++) { ngpu += e->kernels[k].kind != IR_K_HOST; }
        fprintf(out, "kernels %s: %d\n", e->name, ngpu);
        for (int k = 0; k < e->nkernels; k++) {
            IrKernel *kn = &e->kernels[k];
            if (kn->kind == IR_K_HOST) {
                fprintf(out, "  host %s  ; line %d\n", kn->name, kn->line);
                continue;
            }
            fprintf(out, "  kernel %s: %s block=%d items=%d unroll=%d", kn->name,
                    kernel_kind_names[kn->kind], kn->block, kn->items, kn->unroll);
            if (kn->kind == IR_K_MATMUL) { fprintf(out, " tile=%d", kn->tile); }
            fprintf(out, " grid=%s", grid_names[kn->grid]);
            if (kn->vectorize) { fprintf(out, " vec=%d", kn->vec); }
            if (kn->ordered) { fputs(" ordered", out); }
            fprintf(out, "  ; line %d\n", kn->line);
        }
    }
}

void ir_print_explain(FILE *out, IrModule *m) {
    for (int i = 0; i < m->nentries; i++) {
        IrEntry *e = m->entries[i];
        fprintf(out, "entry %s:\n", e->name);
        if (e->explain) { fputs(e->explain, out); }
        int ngpu = 0;
        for (int k = 0; k < e->nkernels; k++) { ngpu += e->kernels[k].kind != IR_K_HOST; }
        fprintf(out, "  %d kernel%s\n", ngpu, ngpu == 1 ? "" : "s");
    }
}

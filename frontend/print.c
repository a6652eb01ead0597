/* print.c: the checked program as indented text (`gpuc --emit=ast`) and the
 * tunable parameter list (`gpuc --list-params`: `dot.BLOCK: int = 256`). The format is stable and
 * meant for FileCheck: one node per line, two spaces of indent per level,
 *   <node> <details> : <type> [lifted] [bcast=scalar|row|col]
 * Declarations print their checked instances; templates print each instance
 * (default, export, or fn instance made at a call) under the declaration. */
#include <stdio.h>
#include <string.h>

#include "frontend.h"

typedef struct Printer {
    FILE *out;
    FeArena *a;
} Printer;

static const char *ty(Printer *p, const FeType *t)
{
    return fe_type_str(p->a, t);
}

static void indent(Printer *p, int n)
{
    for (int i = 0; i < n; i++) {
        fputs("  ", p->out);
    }
}

static void print_pattern(Printer *p, const FePattern *pt)
{
    switch (pt->kind) {
    case FE_PAT_NAME:
        fputs(pt->bind->name, p->out);
        break;
    case FE_PAT_WILD:
        fputs("_", p->out);
        break;
    case FE_PAT_TUPLE:
        fputs("(", p->out);
        for (int i = 0; i < pt->nelems; i++) {
            if (i) {
                fputs(", ", p->out);
            }
            print_pattern(p, pt->elems[i]);
        }
        fputs(")", p->out);
        break;
    }
}

static void print_node(Printer *p, const FeExpr *e, int depth, const char *label);

static void tail(Printer *p, const FeExpr *e)
{
    fprintf(p->out, " : %s", ty(p, e->type));
    if (e->lifted) {
        fputs(" lifted", p->out);
    }
    static const char *bc[] = {"", " bcast=scalar", " bcast=row", " bcast=col"};
    fputs(bc[e->bcast], p->out);
    fputc('\n', p->out);
}

static const char *call_name(const FeExpr *e)
{
    if (e->builtin == FE_B_MINIMUM || e->builtin == FE_B_MAXIMUM) {
        return e->builtin == FE_B_MINIMUM ? "min (elementwise)" : "max (elementwise)";
    }
    if (e->builtin != FE_B_NONE) {
        return fe_builtin_name(e->builtin);
    }
    return e->text ? e->text : "?";
}

static void print_node(Printer *p, const FeExpr *e, int d, const char *label)
{
    indent(p, d);
    if (label) {
        fprintf(p->out, "%s", label);
    }
    FILE *o = p->out;
    switch (e->kind) {
    case FE_EX_INT:
        fprintf(o, "int %s", e->text);
        tail(p, e);
        return;
    case FE_EX_FLOAT:
        fprintf(o, "float %s", e->text);
        tail(p, e);
        return;
    case FE_EX_BOOL:
        fprintf(o, "bool %s", e->ival ? "true" : "false");
        tail(p, e);
        return;
    case FE_EX_NAME: {
        static const char *kinds[] = {"name", "var", "size", "fn", "builtin"};
        fprintf(o, "%s %s", kinds[e->name_kind], e->text);
        if (e->name_kind == FE_NAME_FUNC && e->func && strcmp(e->func->inst_name, e->text) != 0) {
            fprintf(o, " [%s]", e->func->inst_name);
        }
        if (e->name_kind == FE_NAME_BUILTIN && e->builtin != FE_B_NONE &&
            (e->builtin == FE_B_MINIMUM || e->builtin == FE_B_MAXIMUM)) {
            fputs(" (elementwise)", o);
        }
        tail(p, e);
        return;
    }
    case FE_EX_UNARY:
        fprintf(o, "unary '%s'", fe_op_name(e->op));
        tail(p, e);
        print_node(p, e->a, d + 1, NULL);
        return;
    case FE_EX_BINARY:
        fprintf(o, "binary '%s'", fe_op_name(e->op));
        tail(p, e);
        print_node(p, e->a, d + 1, NULL);
        print_node(p, e->b, d + 1, NULL);
        return;
    case FE_EX_CALL:
        fprintf(o, "call %s", call_name(e));
        if (e->builtin == FE_B_NONE && e->func && e->text && strcmp(e->func->inst_name, e->text) != 0) {
            fprintf(o, " [%s]", e->func->inst_name);
        }
        if (e->axis >= 0) {
            fprintf(o, " axis=%d", e->axis);
        }
        tail(p, e);
        for (int i = 0; i < e->nargs; i++) {
            print_node(p, e->args[i], d + 1, NULL);
        }
        return;
    case FE_EX_LAMBDA:
        fputs("lambda |", o);
        for (int i = 0; i < e->nparams; i++) {
            if (i) {
                fputs(", ", o);
            }
            print_pattern(p, e->params[i]);
        }
        fputs("|", o);
        tail(p, e);
        print_node(p, e->a, d + 1, NULL);
        return;
    case FE_EX_SECTION:
        fprintf(o, "section (%s)", fe_op_name(e->op));
        tail(p, e);
        return;
    case FE_EX_TUPLE:
        fputs("tuple", o);
        tail(p, e);
        for (int i = 0; i < e->nargs; i++) {
            print_node(p, e->args[i], d + 1, NULL);
        }
        return;
    case FE_EX_STRUCT:
        fprintf(o, "struct %s", e->text);
        tail(p, e);
        for (int i = 0; i < e->nargs; i++) {
            print_node(p, e->args[i], d + 1, fe_printf(p->a, "%s = ", e->fields[i]));
        }
        return;
    case FE_EX_ARRAY:
        fputs("array", o);
        tail(p, e);
        for (int i = 0; i < e->nargs; i++) {
            print_node(p, e->args[i], d + 1, NULL);
        }
        return;
    case FE_EX_FIELD:
        fprintf(o, "field .%s", e->text);
        tail(p, e);
        print_node(p, e->a, d + 1, NULL);
        return;
    case FE_EX_TUPIDX:
        fprintf(o, "tupidx .%d", e->field_index);
        tail(p, e);
        print_node(p, e->a, d + 1, NULL);
        return;
    case FE_EX_INDEX: {
        static const char *kinds[] = {"scalar", "row", "col", "gather"};
        fprintf(o, "index %s", kinds[e->index_kind]);
        tail(p, e);
        print_node(p, e->a, d + 1, NULL);
        for (int i = 0; i < e->nidx; i++) {
            if (e->idx[i]) {
                print_node(p, e->idx[i], d + 1, NULL);
            } else {
                indent(p, d + 1);
                fputs("slice :\n", o);
            }
        }
        return;
    }
    case FE_EX_IF:
        fputs("if", o);
        tail(p, e);
        print_node(p, e->a, d + 1, NULL);
        print_node(p, e->b, d + 1, "then ");
        print_node(p, e->c, d + 1, "else ");
        return;
    case FE_EX_CAST:
        fprintf(o, "cast %s", ty(p, e->cast_to));
        tail(p, e);
        print_node(p, e->a, d + 1, NULL);
        return;
    case FE_EX_LET:
        fputs("let ", o);
        print_pattern(p, e->pat);
        if (e->pat->type) {
            fprintf(o, ": %s", ty(p, e->pat->type));
        }
        tail(p, e);
        print_node(p, e->a, d + 1, "= ");
        print_node(p, e->b, d + 1, NULL);
        return;
    case FE_EX_FOR:
        if (e->rank == 1) {
            fprintf(o, "for %s", e->loop_vars[0]->name);
        } else {
            fprintf(o, "for (%s, %s)", e->loop_vars[0]->name, e->loop_vars[1]->name);
        }
        tail(p, e);
        print_node(p, e->a, d + 1, "extent ");
        if (e->rank == 2) {
            print_node(p, e->c, d + 1, "extent ");
        }
        print_node(p, e->b, d + 1, NULL);
        return;
    }
}

void fe_print_expr(FILE *out, FeArena *a, const FeExpr *e, int depth)
{
    Printer p = {out, a};
    print_node(&p, e, depth, NULL);
}

static void print_targ(Printer *p, const FeTArg *t)
{
    if (t->is_int) {
        fprintf(p->out, "%lld", (long long)t->ival);
    } else {
        fputs(ty(p, t->type), p->out);
    }
}

static void print_signature(Printer *p, const FeFunc *f)
{
    fputc('(', p->out);
    for (int i = 0; i < f->nparams; i++) {
        fprintf(p->out, "%s%s: %s", i ? ", " : "", f->params[i].name, ty(p, f->params[i].type));
    }
    fprintf(p->out, ") -> %s", ty(p, f->result));
}

static void print_instance_attrs(Printer *p, const FeFunc *f)
{
    const char *names[] = {"block", "unroll", "items", "tile"};
    int64_t values[] = {f->block, f->unroll, f->items, f->tile};
    for (int i = 0; i < 4; i++) {
        if (values[i]) {
            fprintf(p->out, " @%s(%lld)", names[i], (long long)values[i]);
        }
    }
}

static const char *tparam_kind_name(FeTParamKind k)
{
    static const char *names[] = {"type", "num", "float", "int"};
    return names[k];
}

static void print_func(Printer *p, const FeProgram *prog, const FeFunc *decl)
{
    const char *kw = decl->is_entry ? "entry" : "fn";
    if (decl->ntparams == 0) {
        for (int i = 0; i < prog->ninstances; i++) {
            const FeFunc *f = prog->instances[i];
            if (f->generic != decl) {
                continue;
            }
            fprintf(p->out, "%s %s", kw, f->inst_name);
            print_signature(p, f);
            print_instance_attrs(p, f);
            fputc('\n', p->out);
            print_node(p, f->body, 1, NULL);
        }
        return;
    }
    fprintf(p->out, "%s %s<", kw, decl->name);
    for (int i = 0; i < decl->ntparams; i++) {
        const FeTParam *tp = &decl->tparams[i];
        fprintf(p->out, "%s%s: %s", i ? ", " : "", tp->name, tparam_kind_name(tp->kind));
        if (tp->has_default) {
            fputs(" = ", p->out);
            print_targ(p, &tp->def);
        }
    }
    fputs(">", p->out);
    print_signature(p, decl);
    fputc('\n', p->out);
    for (int i = 0; i < prog->ninstances; i++) {
        const FeFunc *f = prog->instances[i];
        if (f->generic != decl) {
            continue;
        }
        indent(p, 1);
        fprintf(p->out, "instance %s = %s<", f->inst_name, decl->name);
        for (int k = 0; k < decl->ntparams; k++) {
            if (k) {
                fputs(", ", p->out);
            }
            print_targ(p, &f->targs[k]);
        }
        fputs(">", p->out);
        print_signature(p, f);
        print_instance_attrs(p, f);
        fputc('\n', p->out);
        print_node(p, f->body, 2, NULL);
    }
}

void fe_print_program(FILE *out, FeArena *a, const FeProgram *prog)
{
    Printer p = {out, a};
    for (int m = 0; m < prog->nmodules; m++) {
        const FeModule *mod = prog->modules[m];
        if (m > 0) {
            /* imported modules: names only, their bodies belong to their own tests */
            fprintf(out, "module %s (imported)\n", mod->path);
            for (int i = 0; i < mod->nstructs; i++) {
                fprintf(out, "  struct %s\n", mod->structs[i]->name);
            }
            for (int i = 0; i < mod->nfuncs; i++) {
                fprintf(out, "  %s %s\n", mod->funcs[i]->is_entry ? "entry" : "fn", mod->funcs[i]->name);
            }
            continue;
        }
        fprintf(out, "module %s\n", mod->path);
        for (int i = 0; i < mod->nimports; i++) {
            fprintf(out, "import \"%s\"\n", mod->imports[i].path);
        }
        for (int i = 0; i < mod->nstructs; i++) {
            const FeStruct *s = mod->structs[i];
            fprintf(out, "struct %s {", s->name);
            for (int k = 0; k < s->nfields; k++) {
                fprintf(out, "%s %s: %s", k ? "," : "", s->field_names[k], ty(&p, s->field_types[k]));
            }
            fputs(" }\n", out);
        }
        for (int i = 0; i < mod->nfuncs; i++) {
            print_func(&p, prog, mod->funcs[i]);
        }
        for (int i = 0; i < mod->nexports; i++) {
            const FeExport *x = &mod->exports[i];
            fprintf(out, "export %s<", x->entry);
            for (int k = 0; k < x->ntargs; k++) {
                if (k) {
                    fputs(", ", out);
                }
                print_targ(&p, &x->targs[k]);
            }
            fprintf(out, "> as %s\n", x->as_name);
        }
    }
}

void fe_list_params(FILE *out, FeArena *a, const FeProgram *prog)
{
    Printer p = {out, a};
    for (int m = 0; m < prog->nmodules && m < 1; m++) { /* entries of the main file only */
        const FeModule *mod = prog->modules[m];
        for (int i = 0; i < mod->nfuncs; i++) {
            const FeFunc *f = mod->funcs[i];
            if (!f->is_entry) {
                continue;
            }
            for (int k = 0; k < f->ntparams; k++) {
                const FeTParam *tp = &f->tparams[k];
                fprintf(out, "%s.%s: %s", f->name, tp->name, tparam_kind_name(tp->kind));
                if (tp->has_default) {
                    fputs(" = ", out);
                    print_targ(&p, &tp->def);
                }
                /* the launch attributes it sets, for gpuc tune */
                static const char *const attr_names[] = {"block", "unroll", "items", "tile"}; /* ORDER FeAttrKind */
                for (int t = 0; t < f->nattrs; t++) {
                    const FeExpr *arg = f->attrs[t].arg;
                    if (arg && arg->kind == FE_EX_NAME && arg->text && strcmp(arg->text, tp->name) == 0) {
                        fprintf(out, " @%s", attr_names[f->attrs[t].kind]);
                    }
                }
                fputc('\n', out);
            }
        }
    }
}

/* emit_program.c: `--emit=program`: the reference C backend plus what the
 * program runner needs (runner/gpuc_program.h): per entry an adapter
 * `run_c(args, results, err, errlen)` over gpuc_entry_NAME, the GpucProgram
 * table with the gdsl type strings, and main().  The CUDA side (run_cuda
 * through the runtime with embedded images) is not emitted yet: entries have
 * run_cuda = NULL and the runner uses the C backend with a notice.
 * Build: cc -std=c99 prog.c -Iruntime -Irunner libgpuc_runner.a libgpuc_runtime.a -lm -ldl */
#include "backend.h"

static void c_string(BeBuf *b, const char *s) {
    be_printf(b, "\"");
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') { be_printf(b, "\\%c", *s); }
        else { be_printf(b, "%c", *s); }
    }
    be_printf(b, "\"");
}

static void adapter(BeBuf *b, IrEntry *e) {
    be_line(b, "static int gpuc_run_c_%s(const GpucValue *args, GpucValue *results, char *err, size_t errlen) {", e->name);
    b->indent++;
    be_line(b, "(void)args; (void)results; (void)err; (void)errlen;");
    /* sizes from the first array argument that has them */
    for (int i = 0; i < e->nsizes; i++) {
        IrValue *sv = e->sizes[i];
        const char *src = NULL;
        char buf[64];
        for (int j = 0; j < e->nparams && !src; j++) {
            for (int d = 0; d < e->params[j]->rank; d++) {
                if (e->params[j]->dims[d] == sv) { snprintf(buf, sizeof buf, "args[%d].shape[%d]", j, d); src = buf; break; }
            }
        }
        be_line(b, "const int64_t %s = %s;", be_vname(sv), src ? src : "0");
    }
    for (int i = 0; i < e->nresults; i++) {
        IrValue *v = e->results[i];
        if (v->rank) {
            be_line(b, "%s *out%d = NULL;", ir_scalar_ctype(v->elem), i);
            be_line(b, "int64_t out%d_shape[2] = { 0, 1 };", i);
        } else {
            be_line(b, "%s out%d;", ir_scalar_ctype(v->elem), i);
        }
    }
    be_printf(b, "%*sint rc = gpuc_entry_%s(", b->indent * 4, "", e->name);
    bool first = true;
    for (int i = 0; i < e->nsizes; i++) { be_printf(b, "%s%s", first ? "" : ", ", be_vname(e->sizes[i])); first = false; }
    for (int i = 0; i < e->nparams; i++) {
        IrValue *v = e->params[i];
        if (v->rank) { be_printf(b, "%s(const %s *)args[%d].data", first ? "" : ", ", ir_scalar_ctype(v->elem), i); }
        else { be_printf(b, "%s*(const %s *)args[%d].data", first ? "" : ", ", ir_scalar_ctype(v->elem), i); }
        first = false;
    }
    for (int i = 0; i < e->nresults; i++) {
        if (e->results[i]->rank) { be_printf(b, "%s&out%d, out%d_shape", first ? "" : ", ", i, i); }
        else { be_printf(b, "%s&out%d", first ? "" : ", ", i); }
        first = false;
    }
    be_printf(b, ");\n");
    be_line(b, "if (rc != 0) {");
    be_line(b, "    if (gpuc_oob_hit) {");
    be_line(b, "        snprintf(err, errlen, \"index %%lld out of bounds for size %%lld\", (long long)gpuc_oob_at[0], (long long)gpuc_oob_at[1]);");
    be_line(b, "        gpuc_oob_hit = 0;");
    be_line(b, "        return rc;");
    be_line(b, "    }");
    be_line(b, "    snprintf(err, errlen, \"the entry failed (%%d)\", rc);");
    be_line(b, "    return rc;");
    be_line(b, "}");
    for (int i = 0; i < e->nresults; i++) {
        IrValue *v = e->results[i];
        const char *t = ir_scalar_ctype(v->elem);
        if (!v->rank) {
            be_line(b, "*(%s *)results[%d].data = out%d;", t, i, i);
            continue;
        }
        be_line(b, "{");
        b->indent++;
        be_line(b, "GpucValue *r = &results[%d];", i);
        if (v->rank == 2) {
            be_line(b, "if (!r->data || r->shape[0] != out%d_shape[0] || r->shape[1] != out%d_shape[1]) {", i, i);
        } else {
            be_line(b, "if (!r->data || r->shape[0] != out%d_shape[0]) {", i);
        }
        b->indent++;
        be_line(b, "r->shape[0] = out%d_shape[0];", i);
        if (v->rank == 2) { be_line(b, "r->shape[1] = out%d_shape[1];", i); }
        be_line(b, "if (gpuc_value_alloc(r) != 0) {");
        be_line(b, "    free(out%d);", i);
        be_line(b, "    snprintf(err, errlen, \"out of memory for the result\");");
        be_line(b, "    return 1;");
        be_line(b, "}");
        b->indent--;
        be_line(b, "}");
        be_line(b, "const int64_t cnt = out%d_shape[0] * out%d_shape[1];", i, i);
        be_line(b, "if (cnt > 0) {");
        be_line(b, "    memcpy(r->data, out%d, (size_t)cnt * sizeof(%s));", i, t);
        be_line(b, "}");
        be_line(b, "free(out%d);", i);
        b->indent--;
        be_line(b, "}");
    }
    be_line(b, "return 0;");
    b->indent--;
    be_line(b, "}");
    be_printf(b, "\n");
}

int be_emit_program(FILE *out, IrModule *m);

int be_emit_program(FILE *out, IrModule *m) {
    if (be_emit_c(out, m) != 0) {
        return 1;
    }
    BeBuf b = { 0 };
    be_printf(&b, "\n/* ---- the program table for the runner (runner/gpuc_program.h) ---- */\n");
    be_printf(&b, "#include \"gpuc_program.h\"\n\n");
    for (int i = 0; i < m->nentries; i++) { adapter(&b, m->entries[i]); }
    for (int i = 0; i < m->nentries; i++) {
        IrEntry *e = m->entries[i];
        be_printf(&b, "static const GpucParam gpuc_params_%s[] = {\n", e->name);
        for (int g = 0; g < e->ngroups_in; g++) {
            be_printf(&b, "    { ");
            c_string(&b, e->groups_in[g].name);
            be_printf(&b, ", ");
            c_string(&b, e->param_types ? e->param_types[g] : "?");
            be_printf(&b, " },\n");
        }
        if (!e->ngroups_in) { be_printf(&b, "    { 0, 0 },\n"); }
        be_printf(&b, "};\n");
    }
    be_printf(&b, "static const GpucEntry gpuc_entries[] = {\n");
    for (int i = 0; i < m->nentries; i++) {
        IrEntry *e = m->entries[i];
        be_printf(&b, "    { \"%s\", %d, gpuc_params_%s, ", e->name, e->ngroups_in, e->name);
        c_string(&b, e->result_type ? e->result_type : "?");
        be_printf(&b, ", gpuc_run_c_%s, NULL },\n", e->name);
    }
    if (!m->nentries) { be_printf(&b, "    { 0, 0, 0, 0, 0, 0 },\n"); }
    be_printf(&b, "};\n");
    be_printf(&b, "static const GpucProgram gpuc_program = { \"%s\", %d, gpuc_entries, 0, NULL };\n\n", "gpuc", m->nentries);
    be_printf(&b, "int main(int argc, char **argv) {\n    return gpuc_program_main(&gpuc_program, argc, argv);\n}\n");
    fwrite(b.p, 1, b.n, out);
    be_buf_free(&b);
    return 0;
}

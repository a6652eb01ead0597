/* driver_glue.c: the calls the driver makes for --emit=ir|c|cuda (and lib):
 * lower the checked program, run the pass pipeline (with --dump-after and
 * --explain-fusion), and print the requested form.  Keeping this here lets
 * driver/main.c stay free of IR and backend types. */
#include <string.h>

#include "backend.h"
#include "frontend.h"

/* Returns 0 on success, 1 after errors (already reported). no_opt (-O0)
 * skips simplify and every fusion pass. */
int be_driver_emit(FeProgram *prog, const char *emit, const char *dump_after, bool explain, bool no_opt, FILE *out);

int be_driver_emit(FeProgram *prog, const char *emit, const char *dump_after, bool explain, bool no_opt, FILE *out) {
    if (dump_after) {
        bool known = strcmp(dump_after, "all") == 0;
        for (int i = 0; ir_pass_names[i]; i++) { known = known || strcmp(ir_pass_names[i], dump_after) == 0; }
        if (!known) {
            fprintf(stderr, "gpuc: error: unknown pass '%s' for --dump-after (passes:", dump_after);
            for (int i = 0; ir_pass_names[i]; i++) { fprintf(stderr, " %s", ir_pass_names[i]); }
            fprintf(stderr, ", all)\n");
            return 1;
        }
    }
    IrLowerOptions lo = { 0 };
    lo.fns_as_entries = strcmp(emit, "program") == 0;  /* test blocks may call helper fns */
    IrModule *m = ir_lower(prog, &lo);
    if (!m || fe_error_count()) {
        ir_module_free(m);
        return 1;
    }
    m->explain = explain;
    IrPipelineOptions po = { dump_after, out, no_opt || strcmp(emit, "ir-unfused") == 0, no_opt };
    ir_run_pipeline(m, &po);
    if (explain) { ir_print_explain(out, m); }
    int rc = 0;
    if (strcmp(emit, "ir") == 0 || strcmp(emit, "ir-unfused") == 0) {
        if (!dump_after) {
            ir_print_module(out, m);
            ir_print_kernels(out, m);
        }
    } else if (strcmp(emit, "c") == 0) {
        rc = be_emit_c(out, m);
    } else if (strcmp(emit, "program") == 0) {
        rc = be_emit_program(out, m);
    } else if (strcmp(emit, "cuda") == 0) {
        rc = be_emit_cuda(out, m);
    }
    ir_module_free(m);
    return rc;
}

/* --emit=lib: lower and optimize once, then write the library's C file,
 * header and manifest (backend/emit_lib.c). name is the C prefix, archs the
 * embedded images ("sm_80,sm_90,compute_90", or NULL). Returns 0, or 1 after
 * errors (already reported). */
int be_driver_emit_lib(FeProgram *prog, const char *name, const char *archs, const char *version, bool no_opt,
                       FILE *source, FILE *header, FILE *manifest);

int be_driver_emit_lib(FeProgram *prog, const char *name, const char *archs, const char *version, bool no_opt,
                       FILE *source, FILE *header, FILE *manifest) {
    IrLowerOptions lo = { 0 };
    IrModule *m = ir_lower(prog, &lo);
    if (!m || fe_error_count()) {
        ir_module_free(m);
        return 1;
    }
    IrPipelineOptions po = { NULL, NULL, no_opt, no_opt };
    ir_run_pipeline(m, &po);
    BeLibOptions o = { name, archs, prog->nmodules ? prog->modules[0]->path : m->file, version };
    int rc = be_emit_lib_source(source, m, &o) || be_emit_lib_header(header, m, &o) || be_emit_lib_manifest(manifest, m, &o);
    ir_module_free(m);
    return rc;
}

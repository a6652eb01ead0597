/* pipeline.c: the IR pass pipeline, written out in one function.
 *
 *   simplify -> fuse_vertical -> fuse_dependent_reduce -> fuse_vertical
 *   -> fuse_horizontal -> fuse_rows -> dce -> bounds -> to_kernels
 *
 * `--dump-after=PASS` prints the IR after the named pass (or after every
 * pass with "all"); the second vertical run is named fuse_vertical2.
 * `-O0` (no_rewrites + no_fusion) keeps only dce and to_kernels (not bounds,
 * which drops the checks of reads that cannot leave their arrays: the
 * reference keeps every check, so a wrong drop shows as a difference): one kernel
 * per lowered statement, the reference that differential testing
 * (difftest/) compares optimized builds against.
 */
#include "ir.h"

#include <string.h>

const char *const ir_pass_names[] = {
    "lower", "simplify", "fuse_vertical", "fuse_dependent_reduce", "fuse_vertical2",
    "fuse_horizontal", "fuse_rows", "dce", "bounds", "to_kernels", NULL,
};

static void dump(IrModule *m, const IrPipelineOptions *o, const char *pass) {
    if (!o || !o->dump_after || !o->dump_to) { return; }
    if (strcmp(o->dump_after, pass) != 0 && strcmp(o->dump_after, "all") != 0) { return; }
    fprintf(o->dump_to, "// ---- IR after %s ----\n", pass);
    if (strcmp(pass, "to_kernels") == 0) { ir_print_kernels(o->dump_to, m); }
    else { ir_print_module(o->dump_to, m); }
}

void ir_run_pipeline(IrModule *m, const IrPipelineOptions *o) {
    dump(m, o, "lower");
    ir_dce(m);
    if (!o || !o->no_rewrites) {
        ir_simplify(m);             dump(m, o, "simplify");
    }
    if (!o || !o->no_fusion) {
        ir_fuse_vertical(m);        dump(m, o, "fuse_vertical");
        ir_fuse_dependent_reduce(m); dump(m, o, "fuse_dependent_reduce");
        ir_fuse_vertical(m);        dump(m, o, "fuse_vertical2");
        ir_fuse_horizontal(m);      dump(m, o, "fuse_horizontal");
        ir_fuse_rows(m);            dump(m, o, "fuse_rows");
    }
    ir_dce(m);                      dump(m, o, "dce");
    if (!o || !o->no_rewrites) {
        ir_bounds(m);               dump(m, o, "bounds");
    }
    ir_to_kernels(m);               dump(m, o, "to_kernels");
}

/* fuzz_frontend.c: a fuzz target for the whole compile pipeline up to emitted
 * code, through the compiler library (compiler/gpuc_compiler.h) exactly as
 * the gpuc command and the Python package call it. The input bytes are the
 * text of a .gdsl file; they are parsed, checked, printed (ast, params), and
 * every program the checker accepts is then lowered to the IR, run through
 * the pass pipeline and emitted as IR text (with --explain-fusion), C, CUDA,
 * --emit=program and the library's source, header and manifest, each into
 * memory, and freed. Any crash, hang, sanitizer report, leak or internal
 * error (the library's status 70, turned into an abort) is a finding;
 * diagnostics are not.
 *
 * Built two ways (fuzz/CMakeLists.txt): with libFuzzer (clang, GPUC_FUZZ=ON),
 * and as a plain program with standalone_main.c that runs files given on the
 * command line, which replays regression inputs in lit and serves AFL++. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "gpuc_compiler.h"

#ifndef GPUC_STDLIB_DIR
#define GPUC_STDLIB_DIR "stdlib"
#endif

/* Compile one form; false if it reported errors (the later forms would
 * report the same). An internal error is a gpuc bug: abort, so the fuzzer
 * keeps the input. */
static bool compile_form(const GpucCompileOptions *o, GpucEmit emit)
{
    GpucCompileResult *r = NULL;
    int status = gpuc_compiler_compile(o, emit, &r);
    if (status == GPUC_COMPILE_INTERNAL_ERROR) {
        fputs(gpuc_compiler_result_rendered(r), stderr);
        abort();
    }
    gpuc_compiler_result_free(r);
    return status == GPUC_COMPILE_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* the text need not be NUL-terminated nor free of NUL bytes */
    GpucCompileOptions o;
    gpuc_compiler_options_init(&o);
    o.source = size ? (const char *)data : ""; /* source_len 0 means strlen */
    o.source_len = size;
    o.source_name = "/tmp/gpuc-fuzz.gdsl";
    o.stdlib_dir = GPUC_STDLIB_DIR;
    if (!compile_form(&o, GPUC_EMIT_AST) || !compile_form(&o, GPUC_EMIT_PARAMS)) {
        return 0;
    }
    /* the later stages, as gpuc --emit=ir|c|cuda|program|lib runs them */
    static const GpucEmit forms[] = { GPUC_EMIT_IR, GPUC_EMIT_C, GPUC_EMIT_CUDA, GPUC_EMIT_PROGRAM, GPUC_EMIT_LIB };
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        o.explain_fusion = i == 0;
        if (!compile_form(&o, forms[i])) {
            break;
        }
    }
    return 0;
}

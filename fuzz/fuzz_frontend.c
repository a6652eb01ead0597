/* fuzz_frontend.c: a fuzz target for the whole compile pipeline up to emitted
 * code. The input bytes are a .gdsl file; they are parsed, checked, printed,
 * and every program the checker accepts is then lowered to the IR, run
 * through the pass pipeline and emitted as IR text, C, CUDA and
 * --emit=program, each into memory (exactly as the driver does it, through
 * be_driver_emit), and freed. Any crash, hang, sanitizer report or leak is a
 * finding; diagnostics are not.
 *
 * Built two ways (fuzz/CMakeLists.txt): with libFuzzer (clang, GPUC_FUZZ=ON),
 * and as a plain program with standalone_main.c that runs files given on the
 * command line, which replays regression inputs in lit and serves AFL++. */
#define _POSIX_C_SOURCE 200809L /* open_memstream */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "frontend.h"

#ifndef GPUC_STDLIB_DIR
#define GPUC_STDLIB_DIR "stdlib"
#endif

/* backend/driver_glue.c: lower, run the passes, emit one form (0 = success). */
int be_driver_emit(FeProgram *prog, const char *emit, const char *dump_after, bool explain, bool no_opt, FILE *out);

static char input_path[64];
static FILE *devnull;

/* The frontend reads files (imports are resolved relative to them), so each
 * input is written to a private file under /tmp first. */
static int write_input(const uint8_t *data, size_t size)
{
    if (!input_path[0]) {
        snprintf(input_path, sizeof input_path, "/tmp/gpuc-fuzz-%ld.gdsl", (long)getpid());
        devnull = fopen("/dev/null", "w");
    }
    FILE *f = fopen(input_path, "wb");
    if (!f) {
        return -1;
    }
    size_t written = size ? fwrite(data, 1, size, f) : 0;
    int ok = fclose(f) == 0 && written == size;
    return ok ? 0 : -1;
}

/* Emit one form of the checked program into memory; stop at the first form
 * that reports errors (the later ones would report the same). */
static bool emit_to_memory(FeProgram *prog, const char *emit, bool explain)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    if (!out) {
        return false;
    }
    int rc = be_driver_emit(prog, emit, NULL, explain, false, out);
    fclose(out);
    free(text);
    return rc == 0 && fe_error_count() == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (write_input(data, size) != 0 || !devnull) {
        return 0;
    }
    FeArena *arena = fe_arena_new();
    FeOptions opts = {.stdlib_dir = GPUC_STDLIB_DIR};
    FeProgram *prog = fe_parse(arena, input_path, &opts);
    if (prog && fe_error_count() == 0) {
        fe_check(arena, prog, &opts);
        if (fe_error_count() == 0) {
            fe_print_program(devnull, arena, prog);
            fe_list_params(devnull, arena, prog);
            /* the later stages, as gpuc --emit=ir|c|cuda|program runs them */
            static const char *const forms[] = {"ir", "c", "cuda", "program"};
            for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
                if (!emit_to_memory(prog, forms[i], i == 0)) {
                    break;
                }
            }
        }
    }
    fe_arena_free(arena);
    fe_diag_reset();
    return 0;
}

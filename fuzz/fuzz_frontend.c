/* fuzz_frontend.c: a fuzz target for the whole compile pipeline up to emitted
 * code. The input bytes are a .gdsl file; they are parsed, checked and printed,
 * and (when the IR and backends are linked) lowered and emitted as C and CUDA.
 * Any crash, hang, sanitizer report or leak is a finding; diagnostics are not.
 *
 * Built two ways (fuzz/CMakeLists.txt): with libFuzzer (clang, GPUC_FUZZ=ON),
 * and as a plain program with standalone_main.c that runs files given on the
 * command line, which replays regression inputs in lit and serves AFL++. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "frontend.h"

#ifndef GPUC_STDLIB_DIR
#define GPUC_STDLIB_DIR "stdlib"
#endif

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
        }
    }
    fe_arena_free(arena);
    fe_diag_reset();
    return 0;
}

/* oom_midprogram.c: out of memory in the middle of a generated program
 * leaves the context usable and frees what the failed call allocated
 * (issue 8). Includes the --emit=program output of tests/gpu/oom.gdsl and
 * calls its CUDA entry directly, as the runner would:
 *   1. grow(x, k = 2^40): the map's result is allocated and computed, then
 *      iota's 8 TiB fail; the call must fail with an out-of-memory message
 *      and leave the context's live device memory where it was;
 *   2. grow(x, k = 1000) on the same context must then succeed with the
 *      right results, and again leave no device memory live.
 * Build: tests/gpu/oom_build.sh DIR_OF_PROGRAM_C OUTPUT (tests/gpu/check.sh
 *   does it on the GPU machine).
 * Usage: oom_midprogram KERNELS.cu   (the --emit=cuda output, compiled here
 * with NVRTC). Prints PASS/FAIL lines; exit status 0 when all pass. */
#define main gpuc_generated_main
#include PROGRAM_C
#undef main

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

static void check(int ok, const char *what, const char *detail)
{
    printf("%s %s%s%s\n", ok ? "PASS" : "FAIL", what, detail && *detail ? ": " : "", detail ? detail : "");
    failures += !ok;
}

static size_t live_bytes(GpucContext *ctx)
{
    GpucMemStats st;
    return gpuc_mem_stats(ctx, &st) == GPUC_SUCCESS ? st.live_bytes : (size_t)-1;
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        return NULL;
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
        free(s);
        s = NULL;
    }
    if (s) {
        s[n] = 0;
    }
    fclose(f);
    return s;
}

/* One call of grow(x, k); returns the entry's status, err holds its message. */
static int call_grow(GpucContext *ctx, GpucModule *module, float *x, int64_t n, int64_t k, GpucValue res[2],
                     char *err, size_t errlen)
{
    GpucValue args[2];
    memset(args, 0, sizeof args);
    args[0].kind = GPUC_KIND_F32;
    args[0].rank = 1;
    args[0].shape[0] = n;
    args[0].data = x;
    args[1].kind = GPUC_KIND_I64;
    args[1].data = &k;
    memset(res, 0, 2 * sizeof *res);
    res[0].kind = GPUC_KIND_F32;
    res[0].rank = 1;
    res[0].shape[0] = n;
    res[0].data = calloc((size_t)n, sizeof(float));
    res[1].kind = GPUC_KIND_I64;
    res[1].rank = 1;
    res[1].shape[0] = -1; /* too big to allocate on the host before the call */
    /* directly, not through gpuc_entries[0].run_cuda: the table's CUDA slot is
     * filled only when kernel images are compiled in (GPUC_IMAGES), and here
     * the kernels come from NVRTC at run time */
    return gpuc_run_cuda_grow(ctx, module, NULL, args, res, err, errlen);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s KERNELS.cu\n", argv[0]);
        return 2;
    }
    setvbuf(stdout, NULL, _IONBF, 0); /* every line out before a crash */
    char *source = read_file(argv[1]);
    GpucContext *ctx = NULL;
    GpucModule *module = NULL;
    if (!source || gpuc_context_new(NULL, &ctx) != GPUC_SUCCESS ||
        gpuc_module_load_source(ctx, "oom", source, NULL, 0, &module) != GPUC_SUCCESS) {
        fprintf(stderr, "setup failed: %s\n", ctx && gpuc_context_error(ctx) ? gpuc_context_error(ctx) : gpuc_last_error());
        return 1;
    }
    const int64_t n = 1 << 20;
    float *x = malloc((size_t)n * sizeof *x);
    for (int64_t i = 0; i < n; i++) {
        x[i] = (float)((i * 7919) % 1000) / 1000.0f - 0.5f;
    }
    const size_t before = live_bytes(ctx);
    char err[1024] = "";
    GpucValue res[2];

    int rc = call_grow(ctx, module, x, n, (int64_t)1 << 40, res, err, sizeof err);
    check(rc != 0, "huge call fails", err);
    check(strstr(err, "out of device memory") != NULL || strstr(err, "out of memory") != NULL, "with an out-of-memory message", err);
    char detail[128];
    snprintf(detail, sizeof detail, "%zu live bytes before, %zu after", before, live_bytes(ctx));
    check(live_bytes(ctx) == before, "the failed call freed what it allocated", detail);
    free(res[0].data);
    free(res[1].data);
    gpuc_context_clear_error(ctx);

    err[0] = '\0';
    rc = call_grow(ctx, module, x, n, 1000, res, err, sizeof err);
    check(rc == 0, "the next call on the same context succeeds", err);
    int good = rc == 0 && res[1].shape[0] == 1000;
    for (int64_t i = 0; good && i < 1000; i++) {
        good = ((int64_t *)res[1].data)[i] == i;
    }
    for (int64_t i = 0; good && i < n; i++) {
        float want = expf(x[i]) + 1.0f, got = ((float *)res[0].data)[i];
        good = fabsf(got - want) <= 1e-6f * fabsf(want);
    }
    check(good, "and its results are right", "");
    snprintf(detail, sizeof detail, "%zu live bytes before, %zu after", before, live_bytes(ctx));
    check(live_bytes(ctx) == before, "and leaves no device memory live", detail);
    free(res[0].data);
    free(res[1].data);
    free(x);
    free(source);
    gpuc_module_free(module);
    gpuc_context_free(ctx);
    printf("%d passed, %d failed\n", 6 - failures, failures);
    return failures != 0;
}

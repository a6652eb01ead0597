/* try_scan_lib.c: the f32 inclusive scan of bench/programs/scan.gdsl through
 * its --emit=lib library (libscanb, built by bench/try_scan.sh), called as
 * the Python/CuPy path calls it: the input wraps a device pointer allocated
 * with the CUDA runtime (zero copy), the result is an array the library
 * allocates, the default context on the device's primary context and the
 * legacy stream. Timed with CUDA events around each call (median of 30 after
 * 3 warm-ups), checked exactly against a host prefix sum of dyadic values.
 * Prints "LIB scan_incl f32 N US CHECK"; exit status 1 when wrong.
 *   try_scan_lib [LOG2N]   (default 28) */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scanb.h"

#define REPS 30

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void check_cuda(cudaError_t e, const char *what) {
    if (e != cudaSuccess) {
        fprintf(stderr, "try_scan_lib: %s: %s\n", what, cudaGetErrorString(e));
        exit(2);
    }
}

static void check_gpuc(GpucStatus s, const char *what) {
    if (s != GPUC_SUCCESS) {
        fprintf(stderr, "try_scan_lib: %s: %s\n", what, scanb_last_error());
        exit(2);
    }
}

int main(int argc, char **argv) {
    const int64_t n = (int64_t)1 << (argc > 1 ? atoi(argv[1]) : 28);
    float *h = malloc((size_t)n * sizeof *h), *got = malloc((size_t)n * sizeof *got);
    if (!h || !got) {
        fprintf(stderr, "try_scan_lib: out of host memory\n");
        return 2;
    }
    /* dyadic values k/8, k in -8..8 without 0: every prefix is exact in f32 */
    unsigned long long z = 12345;
    for (int64_t i = 0; i < n; i++) {
        z = z * 6364136223846793005ull + 1442695040888963407ull;
        int k = (int)((z >> 33) % 16) - 8;
        h[i] = (float)(k >= 0 ? k + 1 : k) / 8.0f;
    }
    float *x = NULL;
    check_cuda(cudaMalloc((void **)&x, (size_t)n * sizeof *x), "cudaMalloc");
    check_cuda(cudaMemcpy(x, h, (size_t)n * sizeof *x, cudaMemcpyHostToDevice), "cudaMemcpy");
    scanb_lib *lib = NULL;
    scanb_f32_1d *xa = NULL, *out = NULL;
    check_gpuc(scanb_new(NULL, &lib), "scanb_new");
    check_gpuc(scanb_f32_1d_from_device(lib, (GpucDevPtr)(uintptr_t)x, n, &xa), "from_device");
    cudaEvent_t e0, e1;
    check_cuda(cudaEventCreate(&e0), "event");
    check_cuda(cudaEventCreate(&e1), "event");
    double t[REPS];
    for (int r = -3; r < REPS; r++) {
        check_cuda(cudaEventRecord(e0, 0), "record");
        check_gpuc(scanb_incl_f32(lib, xa, &out), "scanb_incl_f32");
        check_cuda(cudaEventRecord(e1, 0), "record");
        check_cuda(cudaEventSynchronize(e1), "sync");
        float ms = 0;
        check_cuda(cudaEventElapsedTime(&ms, e0, e1), "elapsed");
        if (r >= 0) {
            t[r] = ms * 1000.0;
        }
        if (r < REPS - 1) {
            check_gpuc(scanb_f32_1d_free(lib, out), "free");
        }
    }
    qsort(t, REPS, sizeof t[0], cmp_double);
    check_gpuc(scanb_f32_1d_read(lib, out, got), "read");
    const char *chk = "ok";
    double acc = 0;
    for (int64_t i = 0; i < n; i++) {
        acc += h[i];
        if ((double)got[i] != acc) {
            chk = "WRONG";
            fprintf(stderr, "try_scan_lib: element %lld is %g, want %g\n", (long long)i, got[i], acc);
            break;
        }
    }
    printf("LIB scan_incl f32 %lld %.3f %s\n", (long long)n, 0.5 * (t[REPS / 2 - 1] + t[REPS / 2]), chk);
    check_gpuc(scanb_f32_1d_free(lib, out), "free");
    check_gpuc(scanb_f32_1d_free(lib, xa), "free");
    check_gpuc(scanb_free(lib), "scanb_free");
    cudaFree(x);
    free(h);
    free(got);
    return strcmp(chk, "ok") != 0;
}

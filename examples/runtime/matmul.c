/* matmul.c: the seeds' metaprogrammed tiled matrix product (float64, shared
 * memory tiles of BLOCK_SIZE x BLOCK_SIZE, one output per thread), in C against
 * gpuc.h. The template parameters reach NVRTC as -D options, so each
 * (N, BLOCK_SIZE) pair is its own cached cubin. Checks sampled entries against
 * a host product, times with events, and shows the runtime's error for the
 * notebook's 33x33 block. Usage: matmul [N [BLOCK_SIZE]]  (default 1024 32;
 * N a multiple of BLOCK_SIZE). Exit status 2 without a GPU. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "gpuc.h"

static const char *source =
    "extern \"C\" __global__ void mm(const double *A, const double *B, double *C) {\n"
    "  const unsigned bx = blockIdx.x, by = blockIdx.y, tx = threadIdx.x, ty = threadIdx.y;\n"
    "  const unsigned aBegin = N * BLOCK_SIZE * by, aEnd = aBegin + N - 1, aStep = BLOCK_SIZE;\n"
    "  const unsigned bBegin = BLOCK_SIZE * bx, bStep = BLOCK_SIZE * N;\n"
    "  double Csub = 0;\n"
    "  for (unsigned a = aBegin, b = bBegin; a <= aEnd; a += aStep, b += bStep) {\n"
    "    __shared__ double As[BLOCK_SIZE][BLOCK_SIZE];\n"
    "    __shared__ double Bs[BLOCK_SIZE][BLOCK_SIZE];\n"
    "    As[ty][tx] = A[a + N * ty + tx];\n"
    "    Bs[ty][tx] = B[b + N * ty + tx];\n"
    "    __syncthreads();\n"
    "    for (int k = 0; k < BLOCK_SIZE; ++k) Csub += As[ty][k] * Bs[k][tx];\n"
    "    __syncthreads();\n"
    "  }\n"
    "  C[N * BLOCK_SIZE * by + BLOCK_SIZE * bx + N * ty + tx] = Csub;\n"
    "}\n";

static int fail(GpucContext *ctx, const char *what) {
  const char *e = ctx ? gpuc_context_error(ctx) : NULL;
  fprintf(stderr, "matmul: %s: %s\n", what, e ? e : gpuc_last_error());
  gpuc_context_free(ctx);
  return 1;
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 1024;
  int bs = argc > 2 ? atoi(argv[2]) : 32;
  if (n <= 0 || bs <= 0 || bs > 32 || n % bs) {
    fprintf(stderr, "usage: matmul [N [BLOCK_SIZE <= 32]], N a multiple of BLOCK_SIZE\n");
    return 1;
  }
  GpucContext *ctx = NULL;
  if (gpuc_context_new(NULL, &ctx) != GPUC_SUCCESS) {
    fprintf(stderr, "matmul: %s\n", gpuc_last_error());
    return 2;
  }
  char def_n[32], def_bs[32];
  snprintf(def_n, sizeof def_n, "-DN=%d", n);
  snprintf(def_bs, sizeof def_bs, "-DBLOCK_SIZE=%d", bs);
  const char *opts[] = {def_n, def_bs};
  GpucModule *mod;
  GpucFunction *mm;
  if (gpuc_module_load_source(ctx, "matmul.cu", source, opts, 2, &mod) || gpuc_module_get_function(mod, "mm", &mm)) {
    return fail(ctx, "loading the kernel");
  }
  size_t elems = (size_t)n * n, bytes = elems * sizeof(double);
  double *a = malloc(bytes), *b = malloc(bytes), *c = malloc(bytes);
  if (!a || !b || !c) {
    return fail(ctx, "out of host memory");
  }
  srand(2);
  for (size_t i = 0; i < elems; i++) {
    a[i] = (double)rand() / RAND_MAX;
    b[i] = (double)rand() / RAND_MAX;
  }
  GpucDevPtr da, db, dc;
  if (gpuc_mem_alloc(ctx, bytes, &da) || gpuc_mem_alloc(ctx, bytes, &db) || gpuc_mem_alloc(ctx, bytes, &dc) ||
      gpuc_memcpy_htod(ctx, da, a, bytes) || gpuc_memcpy_htod(ctx, db, b, bytes)) {
    return fail(ctx, "allocating and copying in");
  }
  void *args[] = {&da, &db, &dc};
  GpucLaunchConfig cfg = {{(unsigned)(n / bs), (unsigned)(n / bs), 1}, {(unsigned)bs, (unsigned)bs, 1}, 0, NULL, 0};
  GpucEvent *start, *stop;
  if (gpuc_event_new(ctx, &start) || gpuc_event_new(ctx, &stop) || gpuc_launch(mm, &cfg, args)) {
    return fail(ctx, "warm-up launch");
  }
  const int reps = 5;
  gpuc_event_record(start, NULL);
  for (int r = 0; r < reps; r++) {
    gpuc_launch(mm, &cfg, args);
  }
  gpuc_event_record(stop, NULL);
  float ms = 0;
  if (gpuc_event_elapsed_ms(start, stop, &ms) || gpuc_memcpy_dtoh(ctx, c, dc, bytes)) {
    return fail(ctx, "running");
  }
  ms /= reps;
  /* Check 256 sampled entries against the host. */
  double max_rel = 0;
  for (int s = 0; s < 256; s++) {
    size_t i = (size_t)rand() % n, j = (size_t)rand() % n;
    double ref = 0;
    for (int k = 0; k < n; k++) {
      ref += a[i * n + k] * b[(size_t)k * n + j];
    }
    double rel = fabs(c[i * n + j] - ref) / fabs(ref);
    max_rel = rel > max_rel ? rel : max_rel;
  }
  bool ok = max_rel < 1e-12;
  printf("matmul: N = %d, BLOCK_SIZE = %d, %s (max rel. error %.1e over 256 samples), %.3f ms, %.1f GFLOP/s (f64)\n",
         n, bs, ok ? "correct" : "WRONG", max_rel, ms, 2.0 * n * n * (double)n / (ms * 1e-3) / 1e9);

  /* The notebook's mistake: BLOCK_SIZE 33 gives 1089 threads per block. */
  GpucLaunchConfig bad = {{1, 1, 1}, {33, 33, 1}, 0, NULL, 0};
  if (gpuc_launch(mm, &bad, args) == GPUC_ERROR_LAUNCH_CONFIG) {
    printf("matmul: a 33x33 block is refused: %s\n", gpuc_last_error());
  }
  free(a);
  free(b);
  free(c);
  gpuc_context_free(ctx);
  return ok ? 0 : 1;
}

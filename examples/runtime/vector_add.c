/* vector_add.c: the seeds' first PyCUDA example in C against gpuc.h: CUDA C
 * compiled at run time with NVRTC (cached on disk), two input vectors copied
 * in, one kernel, the result copied back and checked, the kernel timed with
 * events. Usage: vector_add [N]   (default 2^24). On a machine without a GPU
 * it prints the runtime's message and exits with status 2. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "gpuc.h"

static const char *source =
    "extern \"C\" __global__ void add(const float *x, const float *y, float *out, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) out[i] = x[i] + y[i];\n"
    "}\n";

/* Print the context's first error and leave. */
static int fail(GpucContext *ctx, const char *what) {
  const char *e = ctx ? gpuc_context_error(ctx) : NULL;
  fprintf(stderr, "vector_add: %s: %s\n", what, e ? e : gpuc_last_error());
  gpuc_context_free(ctx);
  return 1;
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 1 << 24;
  if (n <= 0) {
    fprintf(stderr, "usage: vector_add [N > 0]\n");
    return 1;
  }
  GpucContext *ctx = NULL;
  if (gpuc_context_new(NULL, &ctx) != GPUC_SUCCESS) {
    fprintf(stderr, "vector_add: %s\n", gpuc_last_error());
    return 2;
  }
  GpucModule *mod;
  GpucFunction *add;
  if (gpuc_module_load_source(ctx, "vector_add.cu", source, NULL, 0, &mod) ||
      gpuc_module_get_function(mod, "add", &add)) {
    return fail(ctx, "loading the kernel");
  }
  size_t bytes = (size_t)n * sizeof(float);
  float *x = malloc(bytes), *y = malloc(bytes), *out = malloc(bytes);
  if (!x || !y || !out) {
    return fail(ctx, "out of host memory");
  }
  srand(1);
  for (int i = 0; i < n; i++) {
    x[i] = (float)rand() / RAND_MAX;
    y[i] = (float)rand() / RAND_MAX;
  }
  GpucDevPtr dx, dy, dout;
  if (gpuc_mem_alloc(ctx, bytes, &dx) || gpuc_mem_alloc(ctx, bytes, &dy) || gpuc_mem_alloc(ctx, bytes, &dout) ||
      gpuc_memcpy_htod(ctx, dx, x, bytes) || gpuc_memcpy_htod(ctx, dy, y, bytes)) {
    return fail(ctx, "allocating and copying in");
  }
  void *args[] = {&dx, &dy, &dout, &n};
  GpucLaunchConfig cfg = {{(unsigned)((n + 255) / 256), 1, 1}, {256, 1, 1}, 0, NULL, 3 * bytes};
  GpucEvent *start, *stop;
  if (gpuc_event_new(ctx, &start) || gpuc_event_new(ctx, &stop) || gpuc_launch(add, &cfg, args)) {
    return fail(ctx, "warm-up launch");
  }
  const int reps = 20;
  gpuc_event_record(start, NULL);
  for (int r = 0; r < reps; r++) {
    gpuc_launch(add, &cfg, args);
  }
  gpuc_event_record(stop, NULL);
  float ms = 0;
  if (gpuc_event_elapsed_ms(start, stop, &ms) || gpuc_memcpy_dtoh(ctx, out, dout, bytes)) {
    return fail(ctx, "running");
  }
  int wrong = 0;
  for (int i = 0; i < n; i++) {
    wrong += out[i] != x[i] + y[i];
  }
  ms /= reps;
  printf("vector_add: n = %d, %s, %.3f ms per kernel, %.1f GB/s\n", n, wrong ? "WRONG" : "correct", ms,
         3.0 * bytes / (ms * 1e-3) / 1e9);
  free(x);
  free(y);
  free(out);
  /* The buffers, module and events go with the context. */
  gpuc_context_free(ctx);
  return wrong ? 1 : 0;
}

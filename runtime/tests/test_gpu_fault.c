/* test_gpu_fault.c: a kernel that faults (an out-of-bounds write), run
 * through the runtime. argv[1] = "debug": with GPUC_DEBUG the fault is reported
 * by the gpuc_launch of the faulting kernel, naming it and its configuration;
 * "async": without it, the launch returns and the next synchronizing call
 * reports the fault with a hint to use GPUC_DEBUG=1. Either way the context is
 * freed quietly and the process exits 0. Not run under compute-sanitizer (the
 * fault is intended). */
#include <stdlib.h>

#include "gpuc.h"
#include "rt_test.h"

static const char *src =
    "extern \"C\" __global__ void fine(int *p) { p[threadIdx.x] = threadIdx.x; }\n"
    "extern \"C\" __global__ void oob_write(int *p) { p[threadIdx.x + (1ull << 38)] = 1; }\n";

int main(int argc, char **argv) {
  bool debug = argc > 1 && strcmp(argv[1], "debug") == 0;
  setenv("GPUC_CACHE", "0", 1);
  GpucConfig cfg;
  gpuc_config_init(&cfg);
  cfg.debug = debug;
  GpucContext *ctx = NULL;
  GpucModule *m = NULL;
  GpucFunction *fine = NULL, *oob = NULL;
  CHECK_STATUS(gpuc_context_new(&cfg, &ctx), GPUC_SUCCESS);
  if (!ctx) {
    return rt_test_summary("test_gpu_fault");
  }
  CHECK_STATUS(gpuc_module_load_source(ctx, "fault.cu", src, NULL, 0, &m), GPUC_SUCCESS);
  CHECK_STATUS(gpuc_module_get_function(m, "fine", &fine), GPUC_SUCCESS);
  CHECK_STATUS(gpuc_module_get_function(m, "oob_write", &oob), GPUC_SUCCESS);
  GpucDevPtr p = 0;
  CHECK_STATUS(gpuc_mem_alloc(ctx, 4096, &p), GPUC_SUCCESS);
  void *args[] = {&p};
  GpucLaunchConfig cfg_fine = {{1, 1, 1}, {128, 1, 1}, 0, NULL, 0};
  GpucLaunchConfig cfg_bad = {{3, 1, 1}, {64, 1, 1}, 0, NULL, 0};
  for (int i = 0; i < 3; i++) {
    CHECK_STATUS(gpuc_launch(fine, &cfg_fine, args), GPUC_SUCCESS);
  }
  GpucStatus s = gpuc_launch(oob, &cfg_bad, args);
  if (debug) {
    const char *e = gpuc_last_error();
    CHECK(s == GPUC_ERROR_LAUNCH_FAILED, "the faulting launch reports it: %s", gpuc_status_name(s));
    CHECK(strstr(e, "'oob_write'") && strstr(e, "grid 3x1x1, block 64x1x1") && strstr(e, "CUDA_ERROR_ILLEGAL_ADDRESS"),
          "message names the kernel: %s", e);
    printf("debug fault: %s\n", e);
  } else {
    CHECK(s == GPUC_SUCCESS, "an asynchronous fault is not seen at launch: %s", gpuc_status_name(s));
    int back[4];
    s = gpuc_memcpy_dtoh(ctx, back, p, sizeof back);
    const char *e = gpuc_last_error();
    CHECK(s == GPUC_ERROR_LAUNCH_FAILED, "the next synchronizing call reports it: %s", gpuc_status_name(s));
    CHECK(strstr(e, "GPUC_DEBUG=1") && strstr(e, "gpuc_memcpy_dtoh"), "message with the hint: %s", e);
    printf("async fault: %s\n", e);
  }
  /* The context is unusable; further calls fail cleanly and freeing is quiet. */
  CHECK(gpuc_launch(fine, &cfg_fine, args) != GPUC_SUCCESS, "later launches fail");
  CHECK(gpuc_context_error(ctx) != NULL, "context kept the first error");
  GpucStatus f = gpuc_context_free(ctx);
  printf("context_free after fault: %s\n", gpuc_status_name(f));
  return rt_test_summary(debug ? "test_gpu_fault debug" : "test_gpu_fault async");
}

/* fake_images.c: a one-entry stand-in for a generated program whose kernels
 * are embedded ahead of time (GpucProgram.images, written by mkimages.c), as
 * gpuc's code generator will do: the runner loads the image that fits the
 * device and the CUDA entry takes its kernel from the module it is given.
 * Built and run by run_gpu_tests.sh on a GPU machine. */
#include <stdio.h>

#include "gpuc_program.h"

extern const GpucImage fake_images[];
extern const int fake_num_images;

static int saxpy_c(const GpucValue *args, GpucValue *res, char *err, size_t errlen)
{
  float a = *(const float *)args[0].data;
  const float *x = args[1].data, *y = args[2].data;
  float *out = res[0].data;
  for (int64_t i = 0; i < args[1].shape[0]; i++) {
    out[i] = a * x[i] + y[i];
  }
  return 0;
}

static int saxpy_cuda(GpucContext *ctx, GpucModule *module, GpucRun *run, const GpucValue *args, GpucValue *res,
                      char *err, size_t errlen)
{
  GpucFunction *fn;
  float a = *(const float *)args[0].data;
  long long n = args[1].shape[0];
  size_t bytes = (size_t)(n > 0 ? n : 1) * sizeof(float);
  GpucDevPtr x = 0, y = 0, out = 0;
  int rc = -1;
  if (gpuc_module_get_function(module, "saxpy", &fn) || gpuc_mem_alloc(ctx, bytes, &x) ||
      gpuc_mem_alloc(ctx, bytes, &y) || gpuc_mem_alloc(ctx, bytes, &out) ||
      gpuc_memcpy_htod(ctx, x, args[1].data, (size_t)n * sizeof(float)) ||
      gpuc_memcpy_htod(ctx, y, args[2].data, (size_t)n * sizeof(float))) {
    goto done;
  }
  gpuc_run_mark_start(run);
  if (n > 0) {
    GpucLaunchConfig cfg = {{(unsigned)((n + 255) / 256), 1, 1}, {256, 1, 1}, 0, NULL, (size_t)n * 12};
    void *params[] = {&a, &x, &y, &out, &n};
    if (gpuc_launch(fn, &cfg, params)) {
      goto done;
    }
  }
  gpuc_run_mark_end(run);
  if (gpuc_memcpy_dtoh(ctx, res[0].data, out, (size_t)n * sizeof(float)) == GPUC_SUCCESS) {
    rc = 0;
  }
done:
  if (rc) {
    const char *msg = gpuc_context_error(ctx);
    snprintf(err, errlen, "%s", msg ? msg : gpuc_last_error());
  }
  gpuc_mem_free(ctx, x);
  gpuc_mem_free(ctx, y);
  gpuc_mem_free(ctx, out);
  return rc;
}

static const GpucParam saxpy_params[] = {{"a", "f32"}, {"x", "f32[n]"}, {"y", "f32[n]"}};
static const GpucEntry entries[] = {{"saxpy", 3, saxpy_params, "f32[n]", saxpy_c, saxpy_cuda, NULL}};

int main(int argc, char **argv)
{
  GpucProgram program = {"fake_images", 1, entries, fake_num_images, fake_images};
  return gpuc_program_main(&program, argc, argv);
}

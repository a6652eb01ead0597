/* bench_launch.c: host cost of one gpuc_launch against a bare cuLaunchKernel
 * of the same empty kernel, in the same run. Launches go in batches small
 * enough not to fill the launch queue; only the enqueue loop is timed; the
 * two variants alternate batch by batch; the median over batches is reported
 * (also with profiling on, for reference). Output ends with one summary line. */
#include <dlfcn.h>
#include <stdlib.h>
#include <time.h>

#include "gpuc.h"

typedef int (*PfnLaunch)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *,
                         void **, void **);

static const char *src =
    "extern \"C\" __global__ void empty1(int *p) { }\n"
    "extern \"C\" __global__ void empty4(int *p, int *q, int n, float a) { }\n";

enum { BATCH = 128, ROUNDS = 400 };

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* ns per launch for each variant: 0 gpuc, 1 bare. */
static int measure(GpucContext *ctx, GpucFunction *f, void **args, PfnLaunch bare, double out[2], double mins[2]) {
  static double t[2][ROUNDS];
  void *fn = gpuc_function_handle(f);
  GpucLaunchConfig cfg = {{1, 1, 1}, {32, 1, 1}, 0, NULL, 0};
  int rc;
  for (int r = 0; r < ROUNDS; r++) {
    for (int v = 0; v < 2; v++) {
      int variant = (r % 2) ? 1 - v : v;  /* alternate which goes first */
      double t0 = now_ns();
      for (int i = 0; i < BATCH; i++) {
        if (variant == 0) {
          if (gpuc_launch(f, &cfg, args) != GPUC_SUCCESS) {
            fprintf(stderr, "gpuc_launch: %s\n", gpuc_last_error());
            return 1;
          }
        } else if ((rc = bare(fn, 1, 1, 1, 32, 1, 1, 0, NULL, args, NULL)) != 0) {
          fprintf(stderr, "cuLaunchKernel failed: %d\n", rc);
          return 1;
        }
      }
      t[variant][r] = (now_ns() - t0) / BATCH;
      gpuc_context_synchronize(ctx);
    }
  }
  for (int v = 0; v < 2; v++) {
    mins[v] = t[v][0];
    for (int r = 1; r < ROUNDS; r++) {
      mins[v] = t[v][r] < mins[v] ? t[v][r] : mins[v];
    }
    out[v] = median(t[v], ROUNDS);
  }
  return 0;
}

static int run(int profile, double res[2][2], double mins[2][2]) {
  GpucConfig cfg;
  gpuc_config_init(&cfg);
  cfg.profile = profile;
  cfg.debug = 0;
  FILE *devnull = fopen("/dev/null", "w");
  cfg.profile_out = devnull;
  GpucContext *ctx = NULL;
  GpucModule *m = NULL;
  GpucFunction *f1 = NULL, *f4 = NULL;
  if (gpuc_context_new(&cfg, &ctx) != GPUC_SUCCESS || gpuc_module_load_source(ctx, "empty.cu", src, NULL, 0, &m) ||
      gpuc_module_get_function(m, "empty1", &f1) || gpuc_module_get_function(m, "empty4", &f4)) {
    fprintf(stderr, "setup: %s\n", gpuc_last_error());
    return 1;
  }
  /* gpuc makes its context current on this thread; the bare launches
   * rely on that (cuLaunchKernel needs a current context). */
  gpuc_context_synchronize(ctx);
  void *lib = dlopen("libcuda.so.1", RTLD_NOW);
  PfnLaunch bare = lib ? (PfnLaunch)dlsym(lib, "cuLaunchKernel") : NULL;
  if (!bare) {
    fprintf(stderr, "no cuLaunchKernel\n");
    return 1;
  }
  GpucDevPtr p = 0;
  gpuc_mem_alloc(ctx, 1024, &p);
  int n = 10;
  float a = 2;
  void *args1[] = {&p};
  void *args4[] = {&p, &p, &n, &a};
  /* Warm up: first launches load the module on the device. */
  double warm[2], wmin[2];
  int rc = measure(ctx, f1, args1, bare, warm, wmin);
  rc = rc || measure(ctx, f1, args1, bare, res[0], mins[0]);
  rc = rc || measure(ctx, f4, args4, bare, res[1], mins[1]);
  gpuc_mem_free(ctx, p);
  gpuc_context_free(ctx);
  fclose(devnull);
  return rc;
}

int main(void) {
  setenv("GPUC_CACHE", "0", 1);
  GpucDeviceInfo info;
  if (gpuc_device_info(0, &info) != GPUC_SUCCESS) {
    fprintf(stderr, "%s\n", gpuc_last_error());
    return 1;
  }
  double res[2][2], mins[2][2], pres[2][2], pmins[2][2];
  if (run(0, res, mins) || run(1, pres, pmins)) {
    return 1;
  }
  printf("launch overhead on %s: %d batches of %d launches each, median (min) ns per launch, host side\n",
         info.name, ROUNDS, BATCH);
  printf("%-28s %14s %14s %14s\n", "kernel", "cuLaunchKernel", "gpuc_launch", "difference");
  const char *names[2] = {"empty, 1 pointer arg", "empty, 4 args"};
  for (int k = 0; k < 2; k++) {
    printf("%-28s %7.0f (%4.0f) %7.0f (%4.0f) %+8.0f ns\n", names[k], res[k][1], mins[k][1], res[k][0], mins[k][0],
           res[k][0] - res[k][1]);
  }
  for (int k = 0; k < 2; k++) {
    printf("%-28s %7.0f (%4.0f) %7.0f (%4.0f) %+8.0f ns  [GPUC_PROFILE=1]\n", names[k], pres[k][1], pmins[k][1],
           pres[k][0], pmins[k][0], pres[k][0] - pres[k][1]);
  }
  printf("bench_launch: gpuc_launch %.0f ns, cuLaunchKernel %.0f ns, overhead %.0f ns per launch\n", res[0][0],
         res[0][1], res[0][0] - res[0][1]);
  return 0;
}

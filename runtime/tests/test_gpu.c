/* test_gpu.c: the runtime on a real GPU (run by run_gpu_tests.sh through the
 * device tool): devices, primary-context sharing and wrapping, the memory
 * pool, copies, modules from source, cubin, PTX and several images, the disk
 * cache (hit, corrupt and truncated entries), bad launch configurations,
 * large dynamic shared memory, out-of-memory, events and streams, profiling,
 * the debug-mode leak report, threads, and the error handler. Ends with
 * "test_gpu: N passed, N failed". Environment: GPUC_TEST_CUBIN / _FATBIN
 * (nvcc-built images of nvcc_kernel.cu), GPUC_TEST_NO_BIG=1 (skip filling
 * device memory, for compute-sanitizer), GPUC_TEST_SCRATCH (a directory). */
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gpuc.h"
#include "rt_test.h"

static const char *kernels =
    "extern \"C\" __global__ void vadd(const float *x, const float *y, float *out, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) out[i] = x[i] + y[i];\n"
    "}\n"
    "__device__ int counter;\n"
    "extern \"C\" __global__ void bump(int k) { atomicAdd(&counter, k); }\n"
    "extern \"C\" __global__ void big_block(int *out) { out[threadIdx.y * blockDim.x + threadIdx.x] = 1; }\n"
    "extern \"C\" __global__ void dyn_shared(int *out, int n) {\n"
    "  extern __shared__ int s[];\n"
    "  for (int k = threadIdx.x; k < n; k += blockDim.x) s[k] = k;\n"
    "  __syncthreads();\n"
    "  if (threadIdx.x == 0) { int t = 0; for (int k = 0; k < n; k++) t += s[k]; out[0] = t; }\n"
    "}\n"
    "__device__ long long *mapped;\n"
    "extern \"C\" __global__ void put_mapped(long long v) { mapped[threadIdx.x] = v + threadIdx.x; }\n"
    "extern \"C\" __global__ void spin(long long cycles) {\n"
    "  long long t0 = clock64(); while (clock64() - t0 < cycles) { }\n"
    "}\n";

/* The driver calls the tests make themselves, to check sharing. */
typedef int (*PfnRetain)(void **, int);
typedef int (*PfnRelease)(int);
typedef int (*PfnDeviceGet)(int *, int);
typedef int (*PfnPush)(void *);
typedef int (*PfnPop)(void **);
typedef int (*PfnStreamCreate)(void **, unsigned);
typedef int (*PfnStreamDestroy)(void *);
static PfnRetain drv_retain;
static PfnRelease drv_release;
static PfnDeviceGet drv_device_get;
static PfnPush drv_push;
static PfnPop drv_pop;
static PfnStreamCreate drv_stream_create;
static PfnStreamDestroy drv_stream_destroy;

static GpucContext *ctx;     /* the main context, on the primary context */
static GpucModule *mod;      /* kernels, from source */
static GpucDeviceInfo dev;
static char arch_sm[16], arch_ptx[16];
static char scratch[1024];

static void fill(float *a, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; i++) {
    seed = seed * 1664525u + 1013904223u;
    a[i] = (float)(seed >> 8) / 16777216.0f - 0.5f;
  }
}

/* Run vadd on n elements through module m and check the result. */
static bool run_vadd(GpucContext *c, GpucModule *m, int n, GpucStream *stream) {
  GpucFunction *f;
  if (gpuc_module_get_function(m, "vadd", &f) != GPUC_SUCCESS) {
    printf("  vadd: %s\n", gpuc_last_error());
    return false;
  }
  size_t bytes = (size_t)n * sizeof(float);
  float *x = malloc(bytes), *y = malloc(bytes), *out = malloc(bytes);
  fill(x, (size_t)n, 1);
  fill(y, (size_t)n, 2);
  memset(out, 0, bytes);
  GpucDevPtr dx = 0, dy = 0, dout = 0;
  bool ok = gpuc_mem_alloc(c, bytes, &dx) == GPUC_SUCCESS && gpuc_mem_alloc(c, bytes, &dy) == GPUC_SUCCESS &&
            gpuc_mem_alloc(c, bytes, &dout) == GPUC_SUCCESS;
  ok = ok && gpuc_memcpy_htod(c, dx, x, bytes) == GPUC_SUCCESS && gpuc_memcpy_htod(c, dy, y, bytes) == GPUC_SUCCESS;
  ok = ok && gpuc_memset(c, dout, 0xff, bytes) == GPUC_SUCCESS;   /* poison: NaN */
  void *args[] = {&dx, &dy, &dout, &n};
  GpucLaunchConfig cfg = {{(unsigned)(n + 255) / 256, 1, 1}, {256, 1, 1}, 0, stream, 3 * bytes};
  ok = ok && gpuc_launch(f, &cfg, args) == GPUC_SUCCESS;
  ok = ok && (stream ? gpuc_stream_synchronize(c, stream) : GPUC_SUCCESS) == GPUC_SUCCESS;
  ok = ok && gpuc_memcpy_dtoh(c, out, dout, bytes) == GPUC_SUCCESS;
  int wrong = 0;
  for (int i = 0; ok && i < n; i++) {
    if (out[i] != x[i] + y[i]) {
      wrong++;
    }
  }
  if (!ok || wrong) {
    printf("  vadd: %s (%d wrong): %s\n", ok ? "wrong results" : "a call failed", wrong, gpuc_last_error());
  }
  gpuc_mem_free(c, dx);
  gpuc_mem_free(c, dy);
  gpuc_mem_free(c, dout);
  free(x);
  free(y);
  free(out);
  return ok && wrong == 0;
}

/* gpuc_context_count_word: one mapped word per stream, zero when made; what
 * the device writes at its device address (a copy, then a kernel) the host
 * reads at its host address after a synchronize. */
static void t_count_word(void) {
  GpucDevPtr d = 0, d2 = 0, ds = 0;
  volatile int64_t *h = NULL, *h2 = NULL, *hs = NULL;
  CHECK_STATUS(gpuc_context_count_word(NULL, &d, &h), GPUC_ERROR_INVALID_VALUE);
  CHECK_STATUS(gpuc_context_count_word(ctx, NULL, &h), GPUC_ERROR_INVALID_VALUE);
  CHECK_STATUS(gpuc_context_count_word(ctx, &d, &h), GPUC_SUCCESS);
  CHECK(d != 0 && h != NULL && *h == 0, "count word: made and zero");
  CHECK_STATUS(gpuc_context_count_word(ctx, &d2, &h2), GPUC_SUCCESS);
  CHECK(d2 == d && h2 == h, "count word: the same word for the same stream");
  int64_t v = 0x123456789abcLL;
  CHECK_STATUS(gpuc_memcpy_htod(ctx, d, &v, sizeof v), GPUC_SUCCESS);
  CHECK(*h == v, "count word: a copy to the device address is read at the host address");
  /* a kernel's write: vadd of two floats into the word */
  GpucFunction *f = NULL;
  float x[2] = {1.5f, -2.0f}, y[2] = {0.25f, 8.0f};
  GpucDevPtr dx = 0, dy = 0;
  int n = 2;
  bool ok = gpuc_module_get_function(mod, "vadd", &f) == GPUC_SUCCESS && gpuc_mem_alloc(ctx, sizeof x, &dx) == GPUC_SUCCESS &&
            gpuc_mem_alloc(ctx, sizeof y, &dy) == GPUC_SUCCESS && gpuc_memcpy_htod(ctx, dx, x, sizeof x) == GPUC_SUCCESS &&
            gpuc_memcpy_htod(ctx, dy, y, sizeof y) == GPUC_SUCCESS;
  void *args[] = {&dx, &dy, &d, &n};
  GpucLaunchConfig cfg = {{1, 1, 1}, {32, 1, 1}, 0, NULL, 0};
  ok = ok && gpuc_launch(f, &cfg, args) == GPUC_SUCCESS && gpuc_stream_synchronize(ctx, NULL) == GPUC_SUCCESS;
  float got[2];
  int64_t w = *h;
  memcpy(got, &w, sizeof got);
  CHECK(ok && got[0] == 1.75f && got[1] == 6.0f, "count word: a kernel's write read at the host address (%s)", ok ? "wrong" : gpuc_last_error());
  gpuc_mem_free(ctx, dx);
  gpuc_mem_free(ctx, dy);
  /* another stream: another word */
  GpucStream *st = NULL;
  CHECK_STATUS(gpuc_stream_new(ctx, &st), GPUC_SUCCESS);
  void *old = gpuc_context_swap_stream(ctx, gpuc_stream_handle(ctx, st));
  CHECK_STATUS(gpuc_context_count_word(ctx, &ds, &hs), GPUC_SUCCESS);
  CHECK(ds != 0 && ds != d && hs != h && *hs == 0, "count word: another stream, another word");
  gpuc_context_swap_stream(ctx, old);
  CHECK_STATUS(gpuc_stream_free(st), GPUC_SUCCESS);
}

static void t_device(void) {
  int n = 0, ver = 0;
  CHECK_STATUS(gpuc_init(), GPUC_SUCCESS);
  CHECK_STATUS(gpuc_device_count(&n), GPUC_SUCCESS);
  CHECK(n >= 1, "device count %d", n);
  CHECK_STATUS(gpuc_driver_version(&ver), GPUC_SUCCESS);
  CHECK_STATUS(gpuc_device_info(0, &dev), GPUC_SUCCESS);
  CHECK(dev.cc_major >= 7 && dev.multiprocessors > 0 && dev.total_memory > 0 && dev.l2_bytes > 0 &&
            dev.warp_size == 32 && dev.max_threads_per_block == 1024,
        "device info");
  printf("device 0: %s, sm_%d%d, %d SMs, %.1f GiB, L2 %d KiB, driver %d, shared %d/%d\n", dev.name, dev.cc_major,
         dev.cc_minor, dev.multiprocessors, dev.total_memory / 1073741824.0, dev.l2_bytes / 1024, ver,
         dev.max_shared_per_block, dev.max_shared_per_block_optin);
  GpucDeviceInfo bad;
  GpucStatus s = gpuc_device_info(n, &bad);
  CHECK(s == GPUC_ERROR_NO_DEVICE && strstr(gpuc_last_error(), "no CUDA device"), "device %d: %s", n,
        gpuc_last_error());
  snprintf(arch_sm, sizeof arch_sm, "sm_%d%d", dev.cc_major, dev.cc_minor);
  snprintf(arch_ptx, sizeof arch_ptx, "compute_%d%d", dev.cc_major, dev.cc_minor);
}

static void t_context_primary(void) {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW);
  CHECK(lib != NULL, "dlopen libcuda");
  if (!lib) {
    return;
  }
  drv_retain = (PfnRetain)dlsym(lib, "cuDevicePrimaryCtxRetain");
  drv_release = (PfnRelease)dlsym(lib, "cuDevicePrimaryCtxRelease_v2");
  drv_device_get = (PfnDeviceGet)dlsym(lib, "cuDeviceGet");
  drv_push = (PfnPush)dlsym(lib, "cuCtxPushCurrent_v2");
  drv_pop = (PfnPop)dlsym(lib, "cuCtxPopCurrent_v2");
  drv_stream_create = (PfnStreamCreate)dlsym(lib, "cuStreamCreate");
  drv_stream_destroy = (PfnStreamDestroy)dlsym(lib, "cuStreamDestroy_v2");
  int d;
  void *primary = NULL;
  CHECK(drv_device_get(&d, 0) == 0 && drv_retain(&primary, d) == 0, "retain primary");
  CHECK(gpuc_context_handle(ctx) == primary, "gpuc's context is the device's primary context");
  GpucContext *c2 = NULL, *c3 = NULL;
  CHECK_STATUS(gpuc_context_new(NULL, &c2), GPUC_SUCCESS);
  CHECK(c2 && gpuc_context_handle(c2) == primary, "a second gpuc context shares it");
  GpucConfig cfg;
  gpuc_config_init(&cfg);
  cfg.cu_context = primary;
  CHECK_STATUS(gpuc_context_new(&cfg, &c3), GPUC_SUCCESS);
  CHECK(c3 && gpuc_context_handle(c3) == primary, "a wrapped context uses the caller's");
  /* Memory of one is usable from the other: same CUDA context. */
  GpucDevPtr p = 0;
  int v = 42, back = 0;
  CHECK_STATUS(gpuc_mem_alloc(c2, sizeof v, &p), GPUC_SUCCESS);
  CHECK_STATUS(gpuc_memcpy_htod(c3, p, &v, sizeof v), GPUC_SUCCESS);
  CHECK_STATUS(gpuc_memcpy_dtoh(ctx, &back, p, sizeof v), GPUC_SUCCESS);
  CHECK(back == 42, "shared memory round trip");
  CHECK_STATUS(gpuc_mem_free(c2, p), GPUC_SUCCESS);
  CHECK_STATUS(gpuc_context_free(c3), GPUC_SUCCESS);
  CHECK_STATUS(gpuc_context_free(c2), GPUC_SUCCESS);
  /* The primary context outlives gpuc's release: ctx still works. */
  CHECK(run_vadd(ctx, mod, 1000, NULL), "ctx usable after other contexts went");

  /* Wrap a caller's stream too. */
  void *stream = NULL;
  CHECK(drv_push(primary) == 0 && drv_stream_create(&stream, 1) == 0, "caller's stream");
  void *popped;
  drv_pop(&popped);
  cfg.cu_stream = stream;
  GpucContext *c4 = NULL;
  CHECK_STATUS(gpuc_context_new(&cfg, &c4), GPUC_SUCCESS);
  CHECK(gpuc_stream_handle(c4, NULL) == stream, "wrapped stream is the context's stream");
  GpucModule *m4 = NULL;
  CHECK_STATUS(gpuc_module_load_source(c4, "kernels.cu", kernels, NULL, 0, &m4), GPUC_SUCCESS);
  CHECK(m4 && run_vadd(c4, m4, 4097, NULL), "vadd on a caller's stream");
  CHECK_STATUS(gpuc_context_free(c4), GPUC_SUCCESS);
  drv_stream_destroy(stream);
  drv_release(d);
}

static void t_memory(void) {
  GpucDevPtr a = 0, b = 0, c = 0;
  GpucMemStats s0, s1;
  gpuc_mem_stats(ctx, &s0);
  CHECK_STATUS(gpuc_mem_alloc(ctx, 1000, &a), GPUC_SUCCESS);
  CHECK_STATUS(gpuc_mem_free(ctx, a), GPUC_SUCCESS);
  CHECK_STATUS(gpuc_mem_alloc(ctx, 900, &b), GPUC_SUCCESS);
  CHECK(a == b, "same size class reuses the pooled block");
  gpuc_mem_stats(ctx, &s1);
  CHECK(s1.pool_hits == s0.pool_hits + 1, "a pool hit");
  CHECK_STATUS(gpuc_mem_alloc(ctx, 0, &c), GPUC_ERROR_INVALID_VALUE);
  CHECK_STATUS(gpuc_mem_free(ctx, b), GPUC_SUCCESS);
  GpucStatus st = gpuc_mem_free(ctx, b);
  CHECK(st == GPUC_ERROR_INVALID_VALUE && strstr(gpuc_last_error(), "freed already"), "double free: %s",
        gpuc_last_error());
  CHECK_STATUS(gpuc_mem_free(ctx, 0), GPUC_SUCCESS);
  /* Large blocks: reused within 1/8. */
  CHECK_STATUS(gpuc_mem_alloc(ctx, 100 << 20, &a), GPUC_SUCCESS);
  CHECK_STATUS(gpuc_mem_free(ctx, a), GPUC_SUCCESS);
  CHECK_STATUS(gpuc_mem_alloc(ctx, 95 << 20, &b), GPUC_SUCCESS);
  CHECK(a == b, "large block reused");
  CHECK_STATUS(gpuc_mem_free(ctx, b), GPUC_SUCCESS);
  CHECK_STATUS(gpuc_mem_trim(ctx), GPUC_SUCCESS);
  gpuc_mem_stats(ctx, &s1);
  CHECK(s1.pooled_bytes == 0 && s1.pooled_count == 0, "trim empties the pool");
  size_t fr = 0, tot = 0;
  CHECK_STATUS(gpuc_mem_get_info(ctx, &fr, &tot), GPUC_SUCCESS);
  CHECK(fr > 0 && tot >= fr, "mem info");
  gpuc_context_clear_error(ctx);
}

static void t_copies(void) {
  const size_t n = 1 << 20, bytes = n * sizeof(float);
  float *h = malloc(bytes), *back = malloc(bytes);
  fill(h, n, 7);
  GpucDevPtr a = 0, b = 0;
  CHECK_STATUS(gpuc_mem_alloc(ctx, bytes, &a), GPUC_SUCCESS);
  CHECK_STATUS(gpuc_mem_alloc(ctx, bytes, &b), GPUC_SUCCESS);
  CHECK_STATUS(gpuc_memcpy_htod(ctx, a, h, bytes), GPUC_SUCCESS);
  CHECK_STATUS(gpuc_memcpy_dtod(ctx, b, a, bytes), GPUC_SUCCESS);
  CHECK_STATUS(gpuc_memcpy_dtoh(ctx, back, b, bytes), GPUC_SUCCESS);
  CHECK(memcmp(h, back, bytes) == 0, "htod, dtod, dtoh round trip");
  CHECK_STATUS(gpuc_memset(ctx, b, 0xab, bytes), GPUC_SUCCESS);
  CHECK_STATUS(gpuc_memcpy_dtoh(ctx, back, b, bytes), GPUC_SUCCESS);
  const unsigned char *bb = (const unsigned char *)back;
  CHECK(bb[0] == 0xab && bb[bytes - 1] == 0xab && bb[bytes / 2] == 0xab, "memset");
  CHECK_STATUS(gpuc_memcpy_htod(ctx, a, h, 0), GPUC_SUCCESS);
  CHECK_STATUS(gpuc_memcpy_htod(ctx, a, NULL, 4), GPUC_ERROR_INVALID_VALUE);

  /* Pinned memory and asynchronous copies on a stream. */
  float *pin = NULL, *pin2 = NULL;
  GpucStream *s = NULL;
  CHECK_STATUS(gpuc_host_alloc(ctx, bytes, (void **)&pin), GPUC_SUCCESS);
  CHECK_STATUS(gpuc_host_alloc(ctx, bytes, (void **)&pin2), GPUC_SUCCESS);
  CHECK_STATUS(gpuc_stream_new(ctx, &s), GPUC_SUCCESS);
  if (pin && pin2 && s) {
    fill(pin, n, 9);
    memset(pin2, 0, bytes);
    CHECK_STATUS(gpuc_memset_async(ctx, a, 0, bytes, s), GPUC_SUCCESS);
    CHECK_STATUS(gpuc_memcpy_htod_async(ctx, a, pin, bytes, s), GPUC_SUCCESS);
    CHECK_STATUS(gpuc_memcpy_dtod_async(ctx, b, a, bytes, s), GPUC_SUCCESS);
    CHECK_STATUS(gpuc_memcpy_dtoh_async(ctx, pin2, b, bytes, s), GPUC_SUCCESS);
    CHECK_STATUS(gpuc_stream_synchronize(ctx, s), GPUC_SUCCESS);
    CHECK(memcmp(pin, pin2, bytes) == 0, "async round trip through pinned buffers");
  }
  CHECK_STATUS(gpuc_host_free(ctx, pin2), GPUC_SUCCESS);
  CHECK_STATUS(gpuc_host_free(ctx, pin2), GPUC_ERROR_INVALID_VALUE);
  CHECK_STATUS(gpuc_host_free(ctx, h), GPUC_ERROR_INVALID_VALUE);  /* not pinned by gpuc */
  /* pin and s are left for gpuc_context_free to reclaim. */
  CHECK_STATUS(gpuc_mem_free(ctx, a), GPUC_SUCCESS);
  CHECK_STATUS(gpuc_mem_free(ctx, b), GPUC_SUCCESS);
  free(h);
  free(back);
  gpuc_context_clear_error(ctx);
}

static void t_module_source(void) {
  const char *opts[] = {"-DUNUSED=1"};
  CHECK_STATUS(gpuc_module_load_source(ctx, "kernels.cu", kernels, opts, 1, &mod), GPUC_SUCCESS);
  if (!mod) {
    return;
  }
  printf("module from source: arch %s\n", gpuc_module_arch(mod));
  CHECK(strcmp(gpuc_module_arch(mod), arch_sm) == 0, "compiled for the device's sm (%s)", gpuc_module_arch(mod));
  CHECK(run_vadd(ctx, mod, 1000003, NULL), "vadd from source");
  GpucFunction *f = NULL, *f2 = NULL;
  GpucStatus s = gpuc_module_get_function(mod, "nope", &f);
  CHECK(s == GPUC_ERROR_NOT_FOUND && strstr(gpuc_last_error(), "'nope'") && strstr(gpuc_last_error(), "extern"),
        "missing kernel: %s", gpuc_last_error());
  CHECK_STATUS(gpuc_module_get_function(mod, "vadd", &f), GPUC_SUCCESS);
  CHECK_STATUS(gpuc_module_get_function(mod, "vadd", &f2), GPUC_SUCCESS);
  CHECK(f == f2, "function looked up once");
  GpucFunctionInfo fi;
  CHECK_STATUS(gpuc_function_info(f, &fi), GPUC_SUCCESS);
  printf("vadd: %d regs, max %d threads, %d static shared\n", fi.num_regs, fi.max_threads_per_block,
         fi.static_shared_bytes);
  /* A global: counter += k from 320 threads. */
  GpucDevPtr g = 0;
  size_t gbytes = 0;
  CHECK_STATUS(gpuc_module_get_global(mod, "counter", &g, &gbytes), GPUC_SUCCESS);
  CHECK(g && gbytes == sizeof(int), "global counter, %zu bytes", gbytes);
  CHECK_STATUS(gpuc_module_get_global(mod, "no_such_global", &g, NULL), GPUC_ERROR_NOT_FOUND);
  CHECK_STATUS(gpuc_module_get_global(mod, "counter", &g, NULL), GPUC_SUCCESS);
  GpucFunction *bump = NULL;
  CHECK_STATUS(gpuc_module_get_function(mod, "bump", &bump), GPUC_SUCCESS);
  int k = 5, total = 0;
  void *args[] = {&k};
  GpucLaunchConfig cfg = {{10, 1, 1}, {32, 1, 1}, 0, NULL, 0};
  CHECK_STATUS(gpuc_memset(ctx, g, 0, sizeof(int)), GPUC_SUCCESS);
  CHECK_STATUS(gpuc_launch(bump, &cfg, args), GPUC_SUCCESS);
  CHECK_STATUS(gpuc_memcpy_dtoh(ctx, &total, g, sizeof total), GPUC_SUCCESS);
  CHECK(total == 1600, "counter = %d", total);
  /* gpuc_module_map_host: a pointer global set to mapped pinned memory that a
   * kernel writes and the host reads after a synchronize, with no copy */
  volatile void *mh = NULL, *mh2 = NULL;
  CHECK_STATUS(gpuc_module_map_host(NULL, "mapped", 32, &mh), GPUC_ERROR_INVALID_VALUE);
  CHECK_STATUS(gpuc_module_map_host(mod, "mapped", 0, &mh), GPUC_ERROR_INVALID_VALUE);
  CHECK_STATUS(gpuc_module_map_host(mod, "no_such_global", 32, &mh), GPUC_ERROR_NOT_FOUND);
  gpuc_context_clear_error(ctx);  /* the context keeps its first message */
  CHECK_STATUS(gpuc_module_map_host(mod, "counter", 32, &mh), GPUC_ERROR_INVALID_VALUE);
  CHECK(mh == NULL && strstr(gpuc_context_error(ctx), "not a pointer"), "map_host of an int: %s", gpuc_context_error(ctx));
  CHECK_STATUS(gpuc_module_map_host(mod, "mapped", 32, &mh), GPUC_SUCCESS);
  const volatile long long *words = (const volatile long long *)mh;
  CHECK(words && words[0] == 0 && words[3] == 0, "map_host: zeroed");
  CHECK_STATUS(gpuc_module_map_host(mod, "mapped", 16, &mh2), GPUC_SUCCESS);
  CHECK(mh2 == mh, "map_host: the same memory asked again");
  CHECK_STATUS(gpuc_module_map_host(mod, "mapped", 64, &mh2), GPUC_ERROR_INVALID_VALUE);
  GpucFunction *put = NULL;
  long long base = 1000;
  void *put_args[] = {&base};
  GpucLaunchConfig put_cfg = {{1, 1, 1}, {4, 1, 1}, 0, NULL, 0};
  CHECK_STATUS(gpuc_module_get_function(mod, "put_mapped", &put), GPUC_SUCCESS);
  CHECK_STATUS(gpuc_launch(put, &put_cfg, put_args), GPUC_SUCCESS);
  CHECK_STATUS(gpuc_stream_synchronize(ctx, NULL), GPUC_SUCCESS);
  CHECK(words && words[0] == 1000 && words[1] == 1001 && words[3] == 1003, "map_host: a kernel's writes read on the host");
  /* A compile error reaches the context's message with NVRTC's log. */
  GpucModule *bad = NULL;
  gpuc_context_clear_error(ctx);
  s = gpuc_module_load_source(ctx, "broken.cu", "extern \"C\" __global__ void k() { nope(); }", NULL, 0, &bad);
  CHECK(s == GPUC_ERROR_COMPILE && bad == NULL, "compile error: %s", gpuc_status_name(s));
  const char *e = gpuc_context_error(ctx);
  CHECK(e && strstr(e, "broken.cu") && strstr(e, "nope"), "message has the log: %s", e ? e : "(null)");
  printf("compile error message: %s\n", e ? e : "(null)");
  gpuc_context_clear_error(ctx);
}

static void *read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    return NULL;
  }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  void *p = malloc((size_t)n);
  if (p && fread(p, 1, (size_t)n, f) != (size_t)n) {
    free(p);
    p = NULL;
  }
  fclose(f);
  *size = (size_t)n;
  return p;
}

static void t_module_images(void) {
  void *cubin = NULL, *ptx = NULL, *cubin80 = NULL, *ptx80 = NULL;
  size_t ncubin = 0, nptx = 0, ncubin80 = 0, nptx80 = 0;
  CHECK_STATUS(gpuc_compile_cuda_to_image(kernels, arch_sm, NULL, 0, &cubin, &ncubin, NULL), GPUC_SUCCESS);
  CHECK_STATUS(gpuc_compile_cuda_to_image(kernels, arch_ptx, NULL, 0, &ptx, &nptx, NULL), GPUC_SUCCESS);
  CHECK_STATUS(gpuc_compile_cuda_to_image(kernels, "sm_80", NULL, 0, &cubin80, &ncubin80, NULL), GPUC_SUCCESS);
  CHECK_STATUS(gpuc_compile_cuda_to_image(kernels, "compute_80", NULL, 0, &ptx80, &nptx80, NULL), GPUC_SUCCESS);
  GpucModule *m = NULL;
  CHECK_STATUS(gpuc_module_load_image(ctx, cubin, ncubin, &m), GPUC_SUCCESS);
  CHECK(m && run_vadd(ctx, m, 5000, NULL), "vadd from a cubin image");
  gpuc_module_free(m);
  /* PTX given without its NUL: the runtime terminates it. */
  CHECK_STATUS(gpuc_module_load_image(ctx, ptx, strlen(ptx), &m), GPUC_SUCCESS);
  CHECK(m && run_vadd(ctx, m, 5000, NULL), "vadd from PTX (JIT)");
  gpuc_module_free(m);

  GpucImage all[] = {{"sm_80", cubin80, ncubin80}, {arch_sm, cubin, ncubin}, {"compute_80", ptx80, nptx80}};
  CHECK_STATUS(gpuc_module_load_images(ctx, all, 3, &m), GPUC_SUCCESS);
  CHECK(m && strcmp(gpuc_module_arch(m), arch_sm) == 0, "picks the exact cubin: %s", m ? gpuc_module_arch(m) : "");
  CHECK(m && run_vadd(ctx, m, 777, NULL), "vadd from picked cubin");
  gpuc_module_free(m);
  if (dev.cc_major != 8) {
    GpucImage older[] = {{"sm_80", cubin80, ncubin80}, {"compute_80", ptx80, nptx80}};
    CHECK_STATUS(gpuc_module_load_images(ctx, older, 2, &m), GPUC_SUCCESS);
    CHECK(m && strcmp(gpuc_module_arch(m), "compute_80") == 0, "falls back to PTX: %s", m ? gpuc_module_arch(m) : "");
    CHECK(m && run_vadd(ctx, m, 777, NULL), "vadd from PTX fallback");
    gpuc_module_free(m);
    GpucImage none[] = {{"sm_80", cubin80, ncubin80}};
    GpucStatus s = gpuc_module_load_images(ctx, none, 1, &m);
    CHECK(s == GPUC_ERROR_NOT_FOUND && strstr(gpuc_last_error(), "sm_80") && strstr(gpuc_last_error(), arch_sm),
          "no image fits: %s", gpuc_last_error());
    printf("no image fits: %s\n", gpuc_last_error());
  }
  /* A garbage image: a CUDA error naming the module, not a crash. */
  static unsigned char garbage[4096] = {0x7f, 'E', 'L', 'F', 2, 1, 1};
  GpucStatus s = gpuc_module_load_image(ctx, garbage, sizeof garbage, &m);
  CHECK(s != GPUC_SUCCESS && m == NULL, "garbage image: %s", gpuc_status_name(s));
  printf("garbage image: %s\n", gpuc_last_error());
  free(cubin);
  free(ptx);
  free(cubin80);
  free(ptx80);

  /* nvcc-built images, when the script made them. */
  const char *paths[2] = {getenv("GPUC_TEST_CUBIN"), getenv("GPUC_TEST_FATBIN")};
  for (int i = 0; i < 2; i++) {
    if (!paths[i]) {
      continue;
    }
    size_t n = 0;
    void *img = read_file(paths[i], &n);
    CHECK(img != NULL, "read %s", paths[i]);
    if (!img) {
      continue;
    }
    CHECK_STATUS(gpuc_module_load_image(ctx, img, n, &m), GPUC_SUCCESS);
    CHECK(m && run_vadd(ctx, m, 3333, NULL), "vadd from nvcc's %s", i ? "fatbin" : "cubin");
    gpuc_module_free(m);
    free(img);
  }
  gpuc_context_clear_error(ctx);
}

/* Embedded images need no NVRTC: the cache is neither read nor written. */
static void t_images_no_nvrtc(void) {
  void *cubin = NULL, *ptx = NULL;
  size_t ncubin = 0, nptx = 0;
  CHECK_STATUS(gpuc_compile_cuda_to_image(kernels, arch_sm, NULL, 0, &cubin, &ncubin, NULL), GPUC_SUCCESS);
  CHECK_STATUS(gpuc_compile_cuda_to_image(kernels, "compute_80", NULL, 0, &ptx, &nptx, NULL), GPUC_SUCCESS);
  char dir[1100], cmd[2400];
  snprintf(dir, sizeof dir, "%s/empty-cache", scratch);
  snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s'", dir, dir);
  CHECK(system(cmd) == 0, "make %s", dir);
  setenv("GPUC_CACHE_DIR", dir, 1);
  unsetenv("GPUC_CACHE");
  GpucCacheCounters c0, c1;
  gpuc_cache_counters(&c0);
  GpucImage images[] = {{"compute_80", ptx, nptx}, {arch_sm, cubin, ncubin}};
  GpucModule *m = NULL;
  CHECK_STATUS(gpuc_module_load_images(ctx, images, 2, &m), GPUC_SUCCESS);
  CHECK(m && run_vadd(ctx, m, 2049, NULL), "vadd from embedded images");
  gpuc_module_free(m);
  gpuc_cache_counters(&c1);
  CHECK(c1.hits == c0.hits && c1.misses == c0.misses && c1.writes == c0.writes, "no cache use for embedded images");
  snprintf(cmd, sizeof cmd, "test -z \"$(ls -A '%s')\"", dir);
  CHECK(system(cmd) == 0, "cache directory stays empty");
  setenv("GPUC_CACHE", "0", 1);
  unsetenv("GPUC_CACHE_DIR");
  free(cubin);
  free(ptx);
}

/* Over another library's current context, gpuc pushes its own and restores. */
static void t_other_current(void) {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW);
  typedef int (*PfnCreate)(void **, unsigned, int);
  typedef int (*PfnDestroy)(void *);
  typedef int (*PfnGetCurrent)(void **);
  PfnCreate create = lib ? (PfnCreate)dlsym(lib, "cuCtxCreate_v2") : NULL;
  PfnDestroy destroy = lib ? (PfnDestroy)dlsym(lib, "cuCtxDestroy_v2") : NULL;
  PfnGetCurrent get_current = lib ? (PfnGetCurrent)dlsym(lib, "cuCtxGetCurrent") : NULL;
  if (!create || !destroy || !get_current) {
    printf("other_current: no cuCtxCreate_v2, skipped\n");
    return;
  }
  int d = 0;
  void *other = NULL, *cur = NULL;
  CHECK(drv_device_get(&d, 0) == 0 && create(&other, 0, d) == 0, "create another context");
  CHECK(get_current(&cur) == 0 && cur == other, "it is current");
  CHECK(run_vadd(ctx, mod, 1500, NULL), "gpuc works over another current context");
  CHECK(get_current(&cur) == 0 && cur == other, "the other context is current again after gpuc calls");
  CHECK(other != gpuc_context_handle(ctx), "a different context");
  destroy(other);
}

static void flip_byte(const char *path, long from_end) {
  int fd = open(path, O_RDWR);
  struct stat st;
  unsigned char c;
  if (fd >= 0 && fstat(fd, &st) == 0 && pread(fd, &c, 1, st.st_size - from_end) == 1) {
    c ^= 0x77;
    CHECK(pwrite(fd, &c, 1, st.st_size - from_end) == 1, "pwrite");
  }
  if (fd >= 0) {
    close(fd);
  }
}

static void t_cache(void) {
  char dir[1100], src[2048], cmd[2600];
  unsetenv("GPUC_CACHE");
  snprintf(dir, sizeof dir, "%s/kcache", scratch);
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  CHECK(system(cmd) == 0, "clear cache dir");
  setenv("GPUC_CACHE_DIR", dir, 1);
  snprintf(src, sizeof src, "// cache test %ld\n%s", (long)time(NULL), kernels);
  GpucCacheCounters c0, c1, c2, c3;
  gpuc_cache_counters(&c0);
  GpucModule *m = NULL;
  CHECK_STATUS(gpuc_module_load_source(ctx, "cached.cu", src, NULL, 0, &m), GPUC_SUCCESS);
  gpuc_module_free(m);
  gpuc_cache_counters(&c1);
  CHECK(c1.misses == c0.misses + 1 && c1.writes == c0.writes + 1, "cold: miss and write");
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  CHECK_STATUS(gpuc_module_load_source(ctx, "cached.cu", src, NULL, 0, &m), GPUC_SUCCESS);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  gpuc_cache_counters(&c2);
  CHECK(c2.hits == c1.hits + 1 && c2.misses == c1.misses, "warm: hit");
  printf("cache hit: module loaded in %.2f ms\n", (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6);
  CHECK(m && run_vadd(ctx, m, 10000, NULL), "vadd from cached cubin");
  gpuc_module_free(m);
  /* Corrupt the one entry, then truncate it: rejected, rebuilt, right results. */
  snprintf(cmd, sizeof cmd, "ls '%s'/*.bin > '%s/entry.txt'", dir, scratch);
  CHECK(system(cmd) == 0, "find entry");
  char entry[1200] = "";
  snprintf(cmd, sizeof cmd, "%s/entry.txt", scratch);
  FILE *fp = fopen(cmd, "r");
  if (fp && fgets(entry, sizeof entry, fp)) {
    entry[strcspn(entry, "\n")] = 0;
  }
  if (fp) {
    fclose(fp);
  }
  flip_byte(entry, 100);
  CHECK_STATUS(gpuc_module_load_source(ctx, "cached.cu", src, NULL, 0, &m), GPUC_SUCCESS);
  gpuc_cache_counters(&c3);
  CHECK(c3.rejected == c2.rejected + 1 && c3.writes == c2.writes + 1, "corrupt entry rejected and rebuilt");
  CHECK(m && run_vadd(ctx, m, 10000, NULL), "vadd after corrupt-entry rebuild");
  gpuc_module_free(m);
  CHECK(truncate(entry, 200) == 0, "truncate");
  CHECK_STATUS(gpuc_module_load_source(ctx, "cached.cu", src, NULL, 0, &m), GPUC_SUCCESS);
  gpuc_cache_counters(&c1);
  CHECK(c1.rejected == c3.rejected + 1, "truncated entry rejected");
  CHECK(m && run_vadd(ctx, m, 10000, NULL), "vadd after truncated-entry rebuild");
  gpuc_module_free(m);
  unsetenv("GPUC_CACHE_DIR");
  setenv("GPUC_CACHE", "0", 1);
}

static void t_bad_launch(void) {
  GpucFunction *f = NULL, *vadd = NULL, *dyn = NULL;
  CHECK_STATUS(gpuc_module_get_function(mod, "big_block", &f), GPUC_SUCCESS);
  CHECK_STATUS(gpuc_module_get_function(mod, "vadd", &vadd), GPUC_SUCCESS);
  CHECK_STATUS(gpuc_module_get_function(mod, "dyn_shared", &dyn), GPUC_SUCCESS);
  GpucDevPtr out = 0;
  CHECK_STATUS(gpuc_mem_alloc(ctx, 4 * 33 * 33, &out), GPUC_SUCCESS);
  void *args[] = {&out};
  gpuc_context_clear_error(ctx);

  /* The seed notebook's mistake: a 33x33 block. */
  GpucLaunchConfig cfg = {{1, 1, 1}, {33, 33, 1}, 0, NULL, 0};
  GpucStatus s = gpuc_launch(f, &cfg, args);
  const char *e = gpuc_last_error();
  CHECK(s == GPUC_ERROR_LAUNCH_CONFIG, "33x33: %s", gpuc_status_name(s));
  CHECK(strstr(e, "'big_block'") && strstr(e, "1089") && strstr(e, "1024") && strstr(e, "block 33x33x1"),
        "33x33 message: %s", e);
  printf("33x33 block: %s\n", e);
  char first[2048];
  snprintf(first, sizeof first, "%s", e);

  GpucLaunchConfig z = {{1, 1, 1}, {1, 1, 65}, 0, NULL, 0};
  s = gpuc_launch(f, &z, args);
  CHECK(s == GPUC_ERROR_LAUNCH_CONFIG && strstr(gpuc_last_error(), "MAX_BLOCK_DIM_Z"), "block.z: %s",
        gpuc_last_error());
  printf("block z 65: %s\n", gpuc_last_error());
  GpucLaunchConfig gy = {{1, 70000, 1}, {32, 1, 1}, 0, NULL, 0};
  s = gpuc_launch(f, &gy, args);
  CHECK(s == GPUC_ERROR_LAUNCH_CONFIG && strstr(gpuc_last_error(), "MAX_GRID_DIM_Y"), "grid.y: %s",
        gpuc_last_error());
  GpucLaunchConfig sh = {{1, 1, 1}, {32, 1, 1}, 1 << 20, NULL, 0};
  int n = 10;
  void *dargs[] = {&out, &n};
  s = gpuc_launch(dyn, &sh, dargs);
  CHECK(s == GPUC_ERROR_LAUNCH_CONFIG && strstr(gpuc_last_error(), "'dyn_shared'") &&
            strstr(gpuc_last_error(), "SHARED_MEMORY_PER_BLOCK_OPTIN"),
        "shared: %s", gpuc_last_error());
  printf("1 MiB shared: %s\n", gpuc_last_error());
  GpucLaunchConfig empty = {{0, 1, 1}, {32, 1, 1}, 0, NULL, 0};
  CHECK_STATUS(gpuc_launch(f, &empty, args), GPUC_ERROR_LAUNCH_CONFIG);
  CHECK_STATUS(gpuc_launch(f, NULL, args), GPUC_ERROR_INVALID_VALUE);
  /* The first error is the one the context kept. */
  CHECK(gpuc_context_error(ctx) && strcmp(gpuc_context_error(ctx), first) == 0, "first error wins");
  gpuc_context_clear_error(ctx);
  CHECK(gpuc_context_error(ctx) == NULL, "cleared");
  /* Nothing was launched, and the context is fine: 32x32 works. */
  GpucLaunchConfig ok = {{1, 1, 1}, {32, 32, 1}, 0, NULL, 0};
  CHECK_STATUS(gpuc_launch(f, &ok, args), GPUC_SUCCESS);
  CHECK_STATUS(gpuc_context_synchronize(ctx), GPUC_SUCCESS);
  CHECK(run_vadd(ctx, mod, 100, NULL), "context usable after bad launches");

  /* Dynamic shared memory over 48 KiB: the runtime opts the kernel in. */
  int elems = 100 * 1024 / 4, sum = -1;
  void *bargs[] = {&out, &elems};
  GpucLaunchConfig big = {{1, 1, 1}, {256, 1, 1}, (unsigned)(elems * 4), NULL, 0};
  CHECK_STATUS(gpuc_launch(dyn, &big, bargs), GPUC_SUCCESS);
  CHECK_STATUS(gpuc_memcpy_dtoh(ctx, &sum, out, sizeof sum), GPUC_SUCCESS);
  CHECK(sum == elems * (elems - 1) / 2, "100 KiB dynamic shared sum %d", sum);
  CHECK_STATUS(gpuc_mem_free(ctx, out), GPUC_SUCCESS);
}

static void t_oom(void) {
  GpucDevPtr p = 0;
  GpucMemStats s0, s1;
  gpuc_mem_stats(ctx, &s0);
  size_t ask = dev.total_memory * 2;
  GpucStatus s = gpuc_mem_alloc(ctx, ask, &p);
  const char *e = gpuc_last_error();
  char want[64];
  snprintf(want, sizeof want, "asked for %zu bytes", ask);
  CHECK(s == GPUC_ERROR_OUT_OF_MEMORY && p == 0, "2x memory: %s", gpuc_status_name(s));
  CHECK(strstr(e, want) && strstr(e, "free of"), "OOM message: %s", e);
  printf("out of memory: %s\n", e);
  gpuc_mem_stats(ctx, &s1);
  CHECK(s1.pool_releases == s0.pool_releases + 1, "the pool was released before giving up");
  CHECK_STATUS(gpuc_mem_alloc(ctx, 1 << 20, &p), GPUC_SUCCESS);
  CHECK(run_vadd(ctx, mod, 1000, NULL), "context usable after OOM");
  CHECK_STATUS(gpuc_mem_free(ctx, p), GPUC_SUCCESS);
  gpuc_context_clear_error(ctx);
  if (getenv("GPUC_TEST_NO_BIG")) {
    return;
  }
  /* A pooled block that blocks a bigger request: released and retried. */
  size_t fr = 0, tot = 0;
  gpuc_mem_get_info(ctx, &fr, &tot);
  GpucDevPtr a = 0, b = 0;
  size_t na = fr / 100 * 55, nb = fr / 100 * 70;
  CHECK_STATUS(gpuc_mem_alloc(ctx, na, &a), GPUC_SUCCESS);
  CHECK_STATUS(gpuc_mem_free(ctx, a), GPUC_SUCCESS);
  gpuc_mem_stats(ctx, &s0);
  CHECK(s0.pooled_bytes >= na, "55%% of free memory pooled");
  CHECK_STATUS(gpuc_mem_alloc(ctx, nb, &b), GPUC_SUCCESS);
  gpuc_mem_stats(ctx, &s1);
  CHECK(s1.pool_releases == s0.pool_releases + 1, "pool released to make room for 70%% of free memory");
  CHECK_STATUS(gpuc_mem_free(ctx, b), GPUC_SUCCESS);
  CHECK_STATUS(gpuc_mem_trim(ctx), GPUC_SUCCESS);
}

static void t_events(void) {
  GpucEvent *e0 = NULL, *e1 = NULL, *e2 = NULL;
  GpucStream *s1 = NULL, *s2 = NULL;
  GpucFunction *spin = NULL;
  CHECK_STATUS(gpuc_module_get_function(mod, "spin", &spin), GPUC_SUCCESS);
  CHECK_STATUS(gpuc_event_new(ctx, &e0), GPUC_SUCCESS);
  CHECK_STATUS(gpuc_event_new(ctx, &e1), GPUC_SUCCESS);
  CHECK_STATUS(gpuc_event_new(ctx, &e2), GPUC_SUCCESS);
  CHECK_STATUS(gpuc_stream_new(ctx, &s1), GPUC_SUCCESS);
  CHECK_STATUS(gpuc_stream_new(ctx, &s2), GPUC_SUCCESS);
  long long cycles = 2000000;   /* about a millisecond */
  void *args[] = {&cycles};
  GpucLaunchConfig cfg = {{1, 1, 1}, {1, 1, 1}, 0, s1, 0};
  CHECK_STATUS(gpuc_event_record(e0, s1), GPUC_SUCCESS);
  CHECK_STATUS(gpuc_launch(spin, &cfg, args), GPUC_SUCCESS);
  CHECK_STATUS(gpuc_event_record(e1, s1), GPUC_SUCCESS);
  /* s2 waits for s1's work, then records e2: e2 is after e1. */
  CHECK_STATUS(gpuc_stream_wait_event(ctx, s2, e1), GPUC_SUCCESS);
  CHECK_STATUS(gpuc_event_record(e2, s2), GPUC_SUCCESS);
  CHECK_STATUS(gpuc_event_synchronize(e2), GPUC_SUCCESS);
  float ms = 0, ms2 = 0;
  CHECK_STATUS(gpuc_event_elapsed_ms(e0, e1, &ms), GPUC_SUCCESS);
  CHECK_STATUS(gpuc_event_elapsed_ms(e0, e2, &ms2), GPUC_SUCCESS);
  CHECK(ms > 0.1f && ms < 1000.0f, "spin took %.3f ms", ms);
  CHECK(ms2 >= ms, "e2 (%.3f ms) not before e1 (%.3f ms)", ms2, ms);
  printf("events: spin of %lld cycles took %.3f ms\n", cycles, ms);
  CHECK_STATUS(gpuc_event_free(e2), GPUC_SUCCESS);
  CHECK_STATUS(gpuc_stream_free(s2), GPUC_SUCCESS);
  /* e0, e1 and s1 are left for gpuc_context_free. */
}

static void t_profile(void) {
  FILE *tmp = tmpfile();
  GpucConfig cfg;
  gpuc_config_init(&cfg);
  cfg.profile = 1;
  cfg.profile_out = tmp;
  GpucContext *c = NULL;
  CHECK_STATUS(gpuc_context_new(&cfg, &c), GPUC_SUCCESS);
  GpucModule *m = NULL;
  CHECK_STATUS(gpuc_module_load_source(c, "kernels.cu", kernels, NULL, 0, &m), GPUC_SUCCESS);
  CHECK(gpuc_context_profiling(c), "profiling on");
  for (int i = 0; i < 10; i++) {
    CHECK(run_vadd(c, m, 1 << 20, NULL), "vadd %d", i);
  }
  CHECK_STATUS(gpuc_profile_report(c, stdout), GPUC_SUCCESS);
  CHECK_STATUS(gpuc_context_free(c), GPUC_SUCCESS);
  /* The table written at destruction. */
  char text[8192] = "";
  rewind(tmp);
  size_t n = fread(text, 1, sizeof text - 1, tmp);
  text[n] = 0;
  fclose(tmp);
  const char *row = strstr(text, "\nvadd ");
  CHECK(strstr(text, "gpuc profile:") && row, "table at destruction:\n%s", text);
  long launches = 0;
  double total = 0, mean = 0, gbs = 0;
  if (row && sscanf(row + 6, "%ld %lf %lf %lf", &launches, &total, &mean, &gbs) == 4) {
    CHECK(launches == 10 && total > 0 && gbs > 1, "vadd row: %ld launches, %.3f ms, %.1f GB/s", launches, total, gbs);
  } else {
    CHECK(0, "vadd row unreadable:\n%s", text);
  }
  CHECK(strstr(text, "[memcpy HtoD]") && strstr(text, "[memcpy DtoH]") && strstr(text, "[memset]"),
        "copies in the table");
}

static void t_debug_leaks(void) {
  /* Debug mode: launches synchronize, and what is left is reported. */
  char path[1100];
  snprintf(path, sizeof path, "%s/leaks.txt", scratch);
  fflush(stderr);
  int saved = dup(2);
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  dup2(fd, 2);
  close(fd);
  GpucConfig cfg;
  gpuc_config_init(&cfg);
  cfg.debug = 1;
  GpucContext *c = NULL;
  GpucStatus s = gpuc_context_new(&cfg, &c);
  GpucModule *m = NULL;
  GpucDevPtr p;
  void *h;
  if (s == GPUC_SUCCESS) {
    gpuc_module_load_source(c, "kernels.cu", kernels, NULL, 0, &m);
    run_vadd(c, m, 1000, NULL);
    gpuc_mem_alloc(c, 12345, &p);
    gpuc_host_alloc(c, 4096, &h);
    gpuc_context_free(c);
  }
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  size_t n = 0;
  char *text = read_file(path, &n);
  CHECK(s == GPUC_SUCCESS, "debug context");
  CHECK(text && n > 0, "leak report written");
  if (text) {
    text = realloc(text, n + 1);
    text[n] = 0;
    CHECK(strstr(text, "leak report") && strstr(text, "1 device buffer(s), 12345 bytes") &&
              strstr(text, "1 pinned host buffer(s), 4096 bytes") && strstr(text, "1 module(s)"),
          "leak report:\n%s", text);
    printf("%s", text);
  }
  free(text);
}

typedef struct ThreadArg {
  int id;
  int ok;
} ThreadArg;

static void *worker(void *p) {
  ThreadArg *a = p;
  a->ok = 1;
  for (int i = 0; i < 20; i++) {
    if (!run_vadd(ctx, mod, 1000 + 37 * a->id + i, NULL)) {
      a->ok = 0;
    }
  }
  return NULL;
}

static void t_threads(void) {
  pthread_t t[4];
  ThreadArg args[4];
  GpucMemStats s0, s1;
  gpuc_mem_stats(ctx, &s0);
  for (int i = 0; i < 4; i++) {
    args[i].id = i;
    pthread_create(&t[i], NULL, worker, &args[i]);
  }
  int ok = 0;
  for (int i = 0; i < 4; i++) {
    pthread_join(t[i], NULL);
    ok += args[i].ok;
  }
  CHECK(ok == 4, "%d of 4 threads (with no current context of their own) right", ok);
  gpuc_mem_stats(ctx, &s1);
  CHECK(s1.live_count == s0.live_count, "threads freed what they allocated");
}

static int handler_calls;
static char handler_msg[256];
static void on_error(void *user, GpucStatus s, const char *msg) {
  handler_calls += *(int *)user;
  snprintf(handler_msg, sizeof handler_msg, "%s: %s", gpuc_status_name(s), msg);
}

static void t_error_handler(void) {
  int one = 1;
  GpucConfig cfg;
  gpuc_config_init(&cfg);
  cfg.error_handler = on_error;
  cfg.error_user = &one;
  GpucContext *c = NULL;
  CHECK_STATUS(gpuc_context_new(&cfg, &c), GPUC_SUCCESS);
  GpucDevPtr p;
  gpuc_mem_alloc(c, 0, &p);
  gpuc_mem_free(c, 12345);
  CHECK(handler_calls == 2 && strstr(handler_msg, "GPUC_ERROR_INVALID_VALUE"), "handler: %d calls, %s",
        handler_calls, handler_msg);
  CHECK(strstr(gpuc_context_error(c), "0 bytes"), "context keeps the first: %s", gpuc_context_error(c));
  gpuc_context_free(c);
}

int main(void) {
  const char *sc = getenv("GPUC_TEST_SCRATCH");
  snprintf(scratch, sizeof scratch, "%s", sc ? sc : "/tmp");
  setenv("GPUC_CACHE", "0", 1);   /* t_cache turns it on in its own directory */
  unsetenv("GPUC_PROFILE");
  unsetenv("GPUC_DEBUG");
  t_device();
  GpucStatus s = gpuc_context_new(NULL, &ctx);
  CHECK(s == GPUC_SUCCESS, "context: %s", gpuc_last_error());
  if (s != GPUC_SUCCESS) {
    return rt_test_summary("test_gpu");
  }
  t_module_source();
  if (!mod) {
    gpuc_context_free(ctx);
    return rt_test_summary("test_gpu");
  }
  struct {
    const char *name;
    void (*fn)(void);
  } tests[] = {
    {"context_primary", t_context_primary}, {"memory", t_memory},       {"copies", t_copies},
    {"module_images", t_module_images},     {"cache", t_cache},         {"bad_launch", t_bad_launch},
    {"images_no_nvrtc", t_images_no_nvrtc}, {"other_current", t_other_current},
    {"oom", t_oom},                         {"events", t_events},       {"profile", t_profile},
    {"debug_leaks", t_debug_leaks},         {"threads", t_threads},     {"error_handler", t_error_handler},
    {"count_word", t_count_word},
  };
  for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++) {
    int before = rt_test_failed;
    tests[i].fn();
    printf("%s %s\n", rt_test_failed == before ? "ok  " : "FAIL", tests[i].name);
    fflush(stdout);
  }
  CHECK_STATUS(gpuc_context_free(ctx), GPUC_SUCCESS);
  return rt_test_summary("test_gpu");
}

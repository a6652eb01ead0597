/* test_nogpu.c: every runtime call on a machine without a usable GPU. Calls
 * that need the driver must fail with one clear, documented status (argv[1]:
 * "nodriver" expects GPUC_ERROR_NO_DRIVER, "stub" GPUC_ERROR_NO_DEVICE, as
 * with CUDA's stub libcuda); calls given NULL objects fail with
 * GPUC_ERROR_INVALID_VALUE; nothing crashes or leaks (run under valgrind by
 * tests/runtime/nogpu-valgrind.test). Prints the messages for FileCheck. */
#include <stdlib.h>

#include "gpuc.h"
#include "rt_test.h"

static void show(const char *what, GpucStatus s) {
  printf("%s: %s: %s\n", what, gpuc_status_name(s), gpuc_last_error());
}

int main(int argc, char **argv) {
  GpucStatus want = GPUC_ERROR_NO_DRIVER;
  if (argc > 1 && strcmp(argv[1], "stub") == 0) {
    want = GPUC_ERROR_NO_DEVICE;
  }
  const GpucStatus bad = GPUC_ERROR_INVALID_VALUE;

  /* Status names cover every code, and out-of-range ones don't crash. */
  for (int s = GPUC_SUCCESS; s <= GPUC_ERROR_IO; s++) {
    CHECK(strncmp(gpuc_status_name((GpucStatus)s), "GPUC_", 5) == 0, "status %d has no name", s);
    CHECK(*gpuc_status_string((GpucStatus)s) != '\0', "status %d has no text", s);
  }
  CHECK(strcmp(gpuc_status_name((GpucStatus)999), "GPUC_ERROR_UNKNOWN") == 0, "unknown status name");
  CHECK(strcmp(gpuc_last_error(), "") == 0, "last error starts empty");

  /* The driver-level calls: the same status and message every time. */
  GpucStatus s = gpuc_init();
  show("gpuc_init", s);
  CHECK(s == want, "gpuc_init: %s", gpuc_status_name(s));
  CHECK_STATUS(gpuc_init(), want);
  int n = 7, v = 7;
  CHECK_STATUS(gpuc_device_count(&n), want);
  CHECK(n == 0, "device count %d", n);
  CHECK_STATUS(gpuc_driver_version(&v), want);
  CHECK(v == 0, "driver version %d", v);
  GpucDeviceInfo info;
  CHECK_STATUS(gpuc_device_info(0, &info), want);
  CHECK_STATUS(gpuc_device_count(NULL), bad);
  CHECK_STATUS(gpuc_device_info(0, NULL), bad);

  GpucContext *ctx = (GpucContext *)&n;  /* must be overwritten with NULL */
  s = gpuc_context_new(NULL, &ctx);
  show("gpuc_context_new", s);
  CHECK(s == want && ctx == NULL, "context_new: %s", gpuc_status_name(s));
  GpucConfig cfg;
  gpuc_config_init(&cfg);
  CHECK(cfg.debug == -1 && cfg.profile == -1 && cfg.device == 0, "config defaults");
  cfg.device = 3;
  CHECK_STATUS(gpuc_context_new(&cfg, &ctx), want);
  CHECK_STATUS(gpuc_context_new(&cfg, NULL), bad);
  cfg.device = 0;
  cfg.cu_stream = &n;  /* a stream without its context is refused before the driver */
  CHECK_STATUS(gpuc_context_new(&cfg, &ctx), bad);

  /* Every call taking a NULL object: invalid value, no crash. */
  GpucDevPtr p = 1;
  void *h = &n;
  char buf[64];
  size_t fr = 1, tot = 1;
  GpucMemStats ms;
  CHECK_STATUS(gpuc_mem_alloc(NULL, 64, &p), bad);
  CHECK_STATUS(gpuc_mem_free(NULL, 0), bad);
  CHECK_STATUS(gpuc_mem_trim(NULL), bad);
  CHECK_STATUS(gpuc_mem_get_info(NULL, &fr, &tot), bad);
  CHECK_STATUS(gpuc_mem_stats(NULL, &ms), bad);
  CHECK_STATUS(gpuc_host_alloc(NULL, 64, &h), bad);
  CHECK_STATUS(gpuc_host_free(NULL, h), bad);
  CHECK_STATUS(gpuc_memset(NULL, 0, 0, 8), bad);
  CHECK_STATUS(gpuc_memcpy_htod(NULL, 0, buf, 8), bad);
  CHECK_STATUS(gpuc_memcpy_dtoh(NULL, buf, 0, 8), bad);
  CHECK_STATUS(gpuc_memcpy_dtod(NULL, 0, 0, 8), bad);
  CHECK_STATUS(gpuc_memset_async(NULL, 0, 0, 8, NULL), bad);
  CHECK_STATUS(gpuc_memcpy_htod_async(NULL, 0, buf, 8, NULL), bad);
  CHECK_STATUS(gpuc_memcpy_dtoh_async(NULL, buf, 0, 8, NULL), bad);
  CHECK_STATUS(gpuc_memcpy_dtod_async(NULL, 0, 0, 8, NULL), bad);
  GpucModule *m = (GpucModule *)&n;
  CHECK_STATUS(gpuc_module_load_image(NULL, buf, sizeof buf, &m), bad);
  GpucImage img = {"sm_90", buf, sizeof buf};
  CHECK_STATUS(gpuc_module_load_images(NULL, &img, 1, &m), bad);
  CHECK_STATUS(gpuc_module_load_source(NULL, "x.cu", "", NULL, 0, &m), bad);
  CHECK_STATUS(gpuc_module_free(NULL), GPUC_SUCCESS);
  CHECK(strcmp(gpuc_module_arch(NULL), "") == 0, "module_arch(NULL)");
  GpucFunction *f = NULL;
  CHECK_STATUS(gpuc_module_get_function(NULL, "k", &f), bad);
  CHECK_STATUS(gpuc_module_get_global(NULL, "g", &p, NULL), bad);
  volatile void *mapped = NULL;
  CHECK_STATUS(gpuc_module_map_host(NULL, "g", 8, &mapped), bad);
  GpucFunctionInfo fi;
  CHECK_STATUS(gpuc_function_info(NULL, &fi), bad);
  CHECK(strcmp(gpuc_function_name(NULL), "") == 0 && gpuc_function_handle(NULL) == NULL, "function accessors");
  GpucLaunchConfig lc = {{1, 1, 1}, {1, 1, 1}, 0, NULL, 0};
  CHECK_STATUS(gpuc_launch(NULL, &lc, NULL), bad);
  GpucStream *st = NULL;
  GpucEvent *ev = NULL;
  float msf = 1;
  CHECK_STATUS(gpuc_stream_new(NULL, &st), bad);
  CHECK_STATUS(gpuc_stream_free(NULL), GPUC_SUCCESS);
  CHECK_STATUS(gpuc_stream_synchronize(NULL, NULL), bad);
  CHECK_STATUS(gpuc_stream_wait_event(NULL, NULL, NULL), bad);
  CHECK(gpuc_stream_handle(NULL, NULL) == NULL, "stream handle");
  CHECK_STATUS(gpuc_event_new(NULL, &ev), bad);
  CHECK_STATUS(gpuc_event_free(NULL), GPUC_SUCCESS);
  CHECK_STATUS(gpuc_event_record(NULL, NULL), bad);
  CHECK_STATUS(gpuc_event_synchronize(NULL), bad);
  CHECK_STATUS(gpuc_event_elapsed_ms(NULL, NULL, &msf), bad);
  CHECK_STATUS(gpuc_profile_report(NULL, stdout), bad);
  CHECK_STATUS(gpuc_context_synchronize(NULL), bad);
  CHECK_STATUS(gpuc_context_device_info(NULL, &info), bad);
  CHECK_STATUS(gpuc_context_free(NULL), GPUC_SUCCESS);
  CHECK(gpuc_context_error(NULL) == NULL, "context_error(NULL)");
  gpuc_context_clear_error(NULL);
  CHECK(gpuc_context_handle(NULL) == NULL && !gpuc_context_debug(NULL) && !gpuc_context_profiling(NULL),
        "context accessors");

  /* The offline compiler checks its arguments before loading NVRTC. */
  void *image = NULL;
  size_t size = 0;
  char *log = NULL;
  s = gpuc_compile_cuda_to_image("", "sm90", NULL, 0, &image, &size, &log);
  show("gpuc_compile_cuda_to_image", s);
  CHECK(s == bad && image == NULL && log == NULL, "bad arch");
  CHECK_STATUS(gpuc_compile_cuda_to_image(NULL, "sm_90", NULL, 0, &image, &size, &log), bad);
  CHECK_STATUS(gpuc_compile_cuda_to_image("", "sm_90", NULL, 2, &image, &size, &log), bad);
  CHECK_STATUS(gpuc_nvrtc_version(NULL, NULL), bad);

  /* The cache can be disabled, and counters read without a GPU. */
  setenv("GPUC_CACHE", "0", 1);
  CHECK(gpuc_cache_dir(buf, sizeof buf) == NULL, "GPUC_CACHE=0 disables the cache");
  GpucCacheCounters cc;
  gpuc_cache_counters(&cc);
  CHECK(cc.hits == 0 && cc.misses == 0, "no cache use yet");
  gpuc_cache_counters(NULL);

  /* The first message is still the driver's. */
  CHECK_STATUS(gpuc_init(), want);
  show("again", gpuc_init());
  return rt_test_summary("test_nogpu");
}

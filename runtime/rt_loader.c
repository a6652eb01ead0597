/* rt_loader.c: loads libcuda.so.1 and libnvrtc with dlopen at first use and
 * fills the entry-point tables, so nothing links against them and a program
 * starts on a machine without a GPU; the first call that needs one gets one
 * clear error, and every later call the same one. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt_internal.h"

RtCuda rt_cu;
RtNvrtc rt_nvrtc;

typedef struct RtSym {
  const char *names[2];  /* exported symbol, then an older fallback (or NULL) */
  size_t offset;         /* of the pointer in its table */
} RtSym;

#define CU(field, name) {{name, NULL}, offsetof(RtCuda, field)}
#define CU2(field, name, old) {{name, old}, offsetof(RtCuda, field)}
/* grep "ORDER CU": one row per RtCuda field. The _v2 names are the ABI the
 * CUDA 12/13 headers call; cuEventElapsedTime_v2 is new in 12.8. */
static const RtSym cuda_syms[] = {
  CU(init, "cuInit"),
  CU(driver_get_version, "cuDriverGetVersion"),
  CU(get_error_name, "cuGetErrorName"),
  CU(get_error_string, "cuGetErrorString"),
  CU(device_get_count, "cuDeviceGetCount"),
  CU(device_get, "cuDeviceGet"),
  CU(device_get_name, "cuDeviceGetName"),
  CU(device_get_attribute, "cuDeviceGetAttribute"),
  CU(device_total_mem, "cuDeviceTotalMem_v2"),
  CU(primary_ctx_retain, "cuDevicePrimaryCtxRetain"),
  CU2(primary_ctx_release, "cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"),
  CU(ctx_get_current, "cuCtxGetCurrent"),
  CU(ctx_set_current, "cuCtxSetCurrent"),
  CU(ctx_push_current, "cuCtxPushCurrent_v2"),
  CU(ctx_pop_current, "cuCtxPopCurrent_v2"),
  CU(ctx_get_device, "cuCtxGetDevice"),
  CU(ctx_synchronize, "cuCtxSynchronize"),
  CU(mem_get_info, "cuMemGetInfo_v2"),
  CU(mem_alloc, "cuMemAlloc_v2"),
  CU(mem_free, "cuMemFree_v2"),
  CU(mem_alloc_host, "cuMemAllocHost_v2"),
  CU(mem_free_host, "cuMemFreeHost"),
  CU(mem_host_alloc, "cuMemHostAlloc"),
  CU2(mem_host_get_device_pointer, "cuMemHostGetDevicePointer_v2", "cuMemHostGetDevicePointer"),
  CU(memset_d8, "cuMemsetD8_v2"),
  CU(memset_d8_async, "cuMemsetD8Async"),
  CU(memcpy_htod, "cuMemcpyHtoD_v2"),
  CU(memcpy_dtoh, "cuMemcpyDtoH_v2"),
  CU(memcpy_dtod, "cuMemcpyDtoD_v2"),
  CU(memcpy_htod_async, "cuMemcpyHtoDAsync_v2"),
  CU(memcpy_dtoh_async, "cuMemcpyDtoHAsync_v2"),
  CU(memcpy_dtod_async, "cuMemcpyDtoDAsync_v2"),
  CU(module_load_data_ex, "cuModuleLoadDataEx"),
  CU(module_unload, "cuModuleUnload"),
  CU(module_get_function, "cuModuleGetFunction"),
  CU(module_get_global, "cuModuleGetGlobal_v2"),
  CU(func_get_attribute, "cuFuncGetAttribute"),
  CU(func_set_attribute, "cuFuncSetAttribute"),
  CU(occupancy_max_active_blocks, "cuOccupancyMaxActiveBlocksPerMultiprocessor"),
  CU(launch_kernel, "cuLaunchKernel"),
  CU(stream_create, "cuStreamCreate"),
  CU(stream_destroy, "cuStreamDestroy_v2"),
  CU(stream_synchronize, "cuStreamSynchronize"),
  CU(stream_wait_event, "cuStreamWaitEvent"),
  CU(event_create, "cuEventCreate"),
  CU(event_destroy, "cuEventDestroy_v2"),
  CU(event_record, "cuEventRecord"),
  CU(event_synchronize, "cuEventSynchronize"),
  CU2(event_elapsed_time, "cuEventElapsedTime_v2", "cuEventElapsedTime"),
};

#define NV(field, name) {{name, NULL}, offsetof(RtNvrtc, field)}
/* grep "ORDER NVRTC": one row per RtNvrtc field. */
static const RtSym nvrtc_syms[] = {
  NV(version, "nvrtcVersion"),
  NV(get_error_string, "nvrtcGetErrorString"),
  NV(create_program, "nvrtcCreateProgram"),
  NV(destroy_program, "nvrtcDestroyProgram"),
  NV(compile_program, "nvrtcCompileProgram"),
  NV(get_program_log_size, "nvrtcGetProgramLogSize"),
  NV(get_program_log, "nvrtcGetProgramLog"),
  NV(get_ptx_size, "nvrtcGetPTXSize"),
  NV(get_ptx, "nvrtcGetPTX"),
  NV(get_cubin_size, "nvrtcGetCUBINSize"),
  NV(get_cubin, "nvrtcGetCUBIN"),
  NV(get_num_supported_archs, "nvrtcGetNumSupportedArchs"),
  NV(get_supported_archs, "nvrtcGetSupportedArchs"),
};

/* Fill table from lib; on a missing symbol, name it in msg. */
static bool resolve(void *lib, const RtSym *syms, size_t n, void *table, const char *libname, char *msg) {
  for (size_t i = 0; i < n; i++) {
    void *p = NULL;
    for (int k = 0; k < 2 && !p && syms[i].names[k]; k++) {
      p = dlsym(lib, syms[i].names[k]);
    }
    if (!p) {
      snprintf(msg, RT_MSG_MAX, "%s has no entry point %s: the driver is too old (gpuc needs CUDA 12 or newer)",
               libname, syms[i].names[0]);
      return false;
    }
    memcpy((char *)table + syms[i].offset, &p, sizeof p);
  }
  return true;
}

static pthread_once_t cuda_once = PTHREAD_ONCE_INIT;
static GpucStatus cuda_status;
static char cuda_msg[RT_MSG_MAX];

static void load_cuda_once(void) {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *why = dlerror();
    snprintf(cuda_msg, sizeof cuda_msg, "no CUDA driver: cannot load libcuda.so.1 (%s)", why ? why : "unknown reason");
    cuda_status = GPUC_ERROR_NO_DRIVER;
    return;
  }
  if (!resolve(lib, cuda_syms, sizeof cuda_syms / sizeof cuda_syms[0], &rt_cu, "libcuda.so.1", cuda_msg)) {
    memset(&rt_cu, 0, sizeof rt_cu);
    cuda_status = GPUC_ERROR_NO_DRIVER;
    return;
  }
  /* optional entry points: a missing one stays NULL and its caller falls back */
  void *clusters = dlsym(lib, "cuOccupancyMaxActiveClusters");
  memcpy(&rt_cu.occupancy_max_active_clusters, &clusters, sizeof clusters);
  CUresult r = rt_cu.init(0);
  if (r != CUDA_SUCCESS) {
    char d[512];
    rt_cu_describe(r, d, sizeof d);
    snprintf(cuda_msg, sizeof cuda_msg, "no usable GPU: cuInit failed: %s", d);
    cuda_status = GPUC_ERROR_NO_DEVICE;
    return;
  }
  cuda_status = GPUC_SUCCESS;
}

GpucStatus rt_load_cuda(char *msg) {
  pthread_once(&cuda_once, load_cuda_once);
  if (cuda_status != GPUC_SUCCESS && msg) {
    snprintf(msg, RT_MSG_MAX, "%s", cuda_msg);
  }
  return cuda_status;
}

static pthread_once_t nvrtc_once = PTHREAD_ONCE_INIT;
static GpucStatus nvrtc_status;
static char nvrtc_msg[RT_MSG_MAX];

static void load_nvrtc_once(void) {
  char tried[2048] = "";
  const char *names[] = {"libnvrtc.so.13", "libnvrtc.so", "libnvrtc.so.12"};
  void *lib = NULL;
  for (size_t i = 0; i < 3 && !lib; i++) {
    lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
  }
  const char *cuda_home = getenv("CUDA_HOME");
  const char *dirs[] = {cuda_home && *cuda_home ? cuda_home : NULL, "/usr/local/cuda"};
  const char *subdirs[] = {"lib64", "targets/x86_64-linux/lib"};
  for (size_t d = 0; d < 2 && !lib; d++) {
    if (!dirs[d]) {
      continue;
    }
    for (size_t s = 0; s < 2 && !lib; s++) {
      for (size_t i = 0; i < 2 && !lib; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s/%s", dirs[d], subdirs[s], names[i]);
        lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
      }
    }
  }
  if (!lib) {
    snprintf(tried, sizeof tried, "libnvrtc.so.13, libnvrtc.so%s%s, /usr/local/cuda/{lib64,targets/x86_64-linux/lib}",
             cuda_home && *cuda_home ? ", $CUDA_HOME=" : "", cuda_home && *cuda_home ? cuda_home : "");
    snprintf(nvrtc_msg, sizeof nvrtc_msg, "NVRTC not found: cannot load libnvrtc (tried %s)", tried);
    nvrtc_status = GPUC_ERROR_NO_NVRTC;
    return;
  }
  if (!resolve(lib, nvrtc_syms, sizeof nvrtc_syms / sizeof nvrtc_syms[0], &rt_nvrtc, "libnvrtc", nvrtc_msg)) {
    memset(&rt_nvrtc, 0, sizeof rt_nvrtc);
    nvrtc_status = GPUC_ERROR_NO_NVRTC;
    return;
  }
  nvrtc_status = GPUC_SUCCESS;
}

GpucStatus rt_load_nvrtc(char *msg) {
  pthread_once(&nvrtc_once, load_nvrtc_once);
  if (nvrtc_status != GPUC_SUCCESS && msg) {
    snprintf(msg, RT_MSG_MAX, "%s", nvrtc_msg);
  }
  return nvrtc_status;
}

/* Names for the codes a driver that cannot start may return, where it cannot
 * name them itself (CUDA's stub libcuda answers every call with 34). */
static const struct {
  CUresult code;
  const char *name, *text;
} known[] = {
  {CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
  {CUDA_ERROR_STUB_LIBRARY, "CUDA_ERROR_STUB_LIBRARY",
   "libcuda.so.1 is CUDA's stub library, not a driver: no NVIDIA driver is installed"},
  {CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE, "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE",
   "forward compatibility is not supported on this device"},
  {CUDA_ERROR_DEVICE_UNAVAILABLE, "CUDA_ERROR_DEVICE_UNAVAILABLE", "the device is busy or unavailable"},
  {CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
  {CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", "driver and kernel module versions differ"},
  {CUDA_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN", "unknown error"},
};

const char *rt_cu_error_name(CUresult r) {
  const char *name = NULL;
  if (rt_cu.get_error_name && rt_cu.get_error_name(r, &name) == CUDA_SUCCESS && name) {
    return name;
  }
  for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
    if (known[i].code == r) {
      return known[i].name;
    }
  }
  return "CUDA_ERROR_UNRECOGNIZED";
}

void rt_cu_describe(CUresult r, char *buf, size_t size) {
  const char *text = NULL;
  if (!rt_cu.get_error_string || rt_cu.get_error_string(r, &text) != CUDA_SUCCESS || !text) {
    text = "unrecognized error code";
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
      if (known[i].code == r) {
        text = known[i].text;
      }
    }
  }
  snprintf(buf, size, "%s (%d): %s", rt_cu_error_name(r), (int)r, text);
}

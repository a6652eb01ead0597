/* rt_nvrtc.c: CUDA C to cubin or PTX with NVRTC, through the disk cache. Used
 * by gpuc_module_load_source (arch read from the device) and, with no device
 * at all, by gpuc_compile_cuda_to_image (the compiler's ahead-of-time path).
 * Cache key: SHA-256 of a format tag, NVRTC's version, the arch, the options
 * and the source. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt_internal.h"

GpucStatus gpuc_nvrtc_version(int *major, int *minor) {
  char msg[RT_MSG_MAX];
  if (!major || !minor) {
    rt_set_last_error("gpuc_nvrtc_version: NULL argument");
    return GPUC_ERROR_INVALID_VALUE;
  }
  GpucStatus s = rt_load_nvrtc(msg);
  if (s != GPUC_SUCCESS) {
    rt_set_last_error("gpuc_nvrtc_version: %s", msg);
    return s;
  }
  rt_nvrtc.version(major, minor);
  return GPUC_SUCCESS;
}

/* "sm_90", "sm_90a", "compute_90": *is_ptx says which kind. */
static bool parse_arch(const char *arch, bool *is_ptx) {
  const char *p;
  if (strncmp(arch, "sm_", 3) == 0) {
    *is_ptx = false;
    p = arch + 3;
  } else if (strncmp(arch, "compute_", 8) == 0) {
    *is_ptx = true;
    p = arch + 8;
  } else {
    return false;
  }
  if (*p < '1' || *p > '9') {
    return false;
  }
  while (*p >= '0' && *p <= '9') {
    p++;
  }
  if (*p >= 'a' && *p <= 'z') {
    p++;
  }
  return *p == '\0';
}

static void cache_key(const char *source, const char *arch, const char *const *options, int num_options,
                      unsigned char key[32]) {
  int major = 0, minor = 0;
  char ver[64];
  rt_nvrtc.version(&major, &minor);
  snprintf(ver, sizeof ver, "nvrtc %d.%d", major, minor);
  RtSha256 h;
  rt_sha256_init(&h);
  rt_sha256_update(&h, "gpuc-kernel-cache-v1", 21);   /* with its NUL */
  rt_sha256_update(&h, ver, strlen(ver) + 1);
  rt_sha256_update(&h, arch, strlen(arch) + 1);
  char n[32];
  snprintf(n, sizeof n, "%d options", num_options);
  rt_sha256_update(&h, n, strlen(n) + 1);
  for (int i = 0; i < num_options; i++) {
    rt_sha256_update(&h, options[i], strlen(options[i]) + 1);
  }
  rt_sha256_update(&h, source, strlen(source));
  rt_sha256_final(&h, key);
}

static char *program_log(nvrtcProgram prog) {
  size_t n = 0;
  if (rt_nvrtc.get_program_log_size(prog, &n) != NVRTC_SUCCESS || n <= 1) {
    return NULL;
  }
  char *log = malloc(n);
  if (log && rt_nvrtc.get_program_log(prog, log) != NVRTC_SUCCESS) {
    free(log);
    return NULL;
  }
  return log;
}

GpucStatus rt_compile(const char *name, const char *source, const char *arch, const char *const *options,
                      int num_options, void **image, size_t *size, char **log, char *msg) {
  bool is_ptx;
  if (log) {
    *log = NULL;
  }
  if (!source || !arch || !image || !size || num_options < 0 || (num_options > 0 && !options)) {
    snprintf(msg, RT_MSG_MAX, "NULL or negative argument");
    return GPUC_ERROR_INVALID_VALUE;
  }
  *image = NULL;
  *size = 0;
  if (!parse_arch(arch, &is_ptx)) {
    snprintf(msg, RT_MSG_MAX, "bad architecture '%s' (expected sm_XY for a cubin or compute_XY for PTX)", arch);
    return GPUC_ERROR_INVALID_VALUE;
  }
  for (int i = 0; i < num_options; i++) {
    if (!options[i]) {
      snprintf(msg, RT_MSG_MAX, "option %d is NULL", i);
      return GPUC_ERROR_INVALID_VALUE;
    }
  }
  GpucStatus s = rt_load_nvrtc(msg);
  if (s != GPUC_SUCCESS) {
    return s;
  }
  if (!name) {
    name = "gpuc_module.cu";
  }

  unsigned char key[32];
  cache_key(source, arch, options, num_options, key);
  if (rt_cache_get(key, image, size)) {
    return GPUC_SUCCESS;
  }

  const char **opts = malloc(sizeof(char *) * ((size_t)num_options + 1));
  char arch_opt[64];
  if (!opts) {
    snprintf(msg, RT_MSG_MAX, "out of host memory");
    return GPUC_ERROR_OUT_OF_MEMORY;
  }
  snprintf(arch_opt, sizeof arch_opt, "--gpu-architecture=%s", arch);
  for (int i = 0; i < num_options; i++) {
    opts[i] = options[i];
  }
  opts[num_options] = arch_opt;

  nvrtcProgram prog;
  nvrtcResult r = rt_nvrtc.create_program(&prog, source, name, 0, NULL, NULL);
  if (r != NVRTC_SUCCESS) {
    free(opts);
    snprintf(msg, RT_MSG_MAX, "nvrtcCreateProgram failed for %s: %s", name, rt_nvrtc.get_error_string(r));
    return r == NVRTC_ERROR_OUT_OF_MEMORY ? GPUC_ERROR_OUT_OF_MEMORY : GPUC_ERROR_COMPILE;
  }
  r = rt_nvrtc.compile_program(prog, num_options + 1, opts);
  free(opts);
  char *text = program_log(prog);
  if (r != NVRTC_SUCCESS) {
    snprintf(msg, RT_MSG_MAX, "NVRTC could not compile %s for %s: %s\n%s", name, arch, rt_nvrtc.get_error_string(r),
             text ? text : "(no log)");
    if (log) {
      *log = text;
    } else {
      free(text);
    }
    rt_nvrtc.destroy_program(&prog);
    return GPUC_ERROR_COMPILE;
  }
  size_t n = 0;
  r = is_ptx ? rt_nvrtc.get_ptx_size(prog, &n) : rt_nvrtc.get_cubin_size(prog, &n);
  char *out = (r == NVRTC_SUCCESS && n > 0) ? malloc(n + 1) : NULL;
  if (out) {
    r = is_ptx ? rt_nvrtc.get_ptx(prog, out) : rt_nvrtc.get_cubin(prog, out);
    out[n] = 0;
  }
  rt_nvrtc.destroy_program(&prog);
  if (!out || r != NVRTC_SUCCESS) {
    free(out);
    free(text);
    snprintf(msg, RT_MSG_MAX, "NVRTC produced no %s for %s: %s", is_ptx ? "PTX" : "cubin", name,
             r != NVRTC_SUCCESS ? rt_nvrtc.get_error_string(r) : "empty or out of memory");
    return GPUC_ERROR_COMPILE;
  }
  if (log) {
    *log = text;
  } else {
    free(text);
  }
  rt_cache_put(key, out, n);
  *image = out;
  *size = n;
  return GPUC_SUCCESS;
}

GpucStatus gpuc_compile_cuda_to_image(const char *source, const char *arch, const char *const *options,
                                      int num_options, void **image, size_t *size, char **log) {
  char msg[RT_MSG_MAX];
  GpucStatus s = rt_compile(NULL, source, arch, options, num_options, image, size, log, msg);
  if (s != GPUC_SUCCESS) {
    rt_set_last_error("gpuc_compile_cuda_to_image: %s", msg);
  }
  return s;
}

GpucStatus rt_pick_arch(int major, int minor, char *arch, size_t size, char *msg) {
  GpucStatus s = rt_load_nvrtc(msg);
  if (s != GPUC_SUCCESS) {
    return s;
  }
  int n = 0;
  if (rt_nvrtc.get_num_supported_archs(&n) != NVRTC_SUCCESS || n <= 0) {
    snprintf(msg, RT_MSG_MAX, "nvrtcGetNumSupportedArchs failed");
    return GPUC_ERROR_COMPILE;
  }
  int *archs = malloc(sizeof(int) * (size_t)n);
  if (!archs || rt_nvrtc.get_supported_archs(archs) != NVRTC_SUCCESS) {
    free(archs);
    snprintf(msg, RT_MSG_MAX, "nvrtcGetSupportedArchs failed");
    return GPUC_ERROR_COMPILE;
  }
  int want = major * 10 + minor, best = -1;
  bool exact = false;
  for (int i = 0; i < n; i++) {
    if (archs[i] == want) {
      exact = true;
    }
    if (archs[i] <= want && archs[i] > best) {
      best = archs[i];
    }
  }
  int oldest = archs[0];
  free(archs);
  if (exact) {
    snprintf(arch, size, "sm_%d", want);
  } else if (best > 0) {
    snprintf(arch, size, "compute_%d", best);  /* the driver JIT-compiles it for the device */
  } else {
    int vmaj = 0, vmin = 0;
    rt_nvrtc.version(&vmaj, &vmin);
    snprintf(msg, RT_MSG_MAX, "NVRTC %d.%d cannot compile for the device's sm_%d (the oldest it supports is sm_%d)",
             vmaj, vmin, want, oldest);
    return GPUC_ERROR_NOT_FOUND;
  }
  return GPUC_SUCCESS;
}

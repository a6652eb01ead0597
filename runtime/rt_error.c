/* rt_error.c: status names, the per-thread last error, and recording a
 * context's first error (Futhark's rule: the first error wins, later ones only
 * reach the thread's last error and the caller's handler). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt_internal.h"

/* grep "ORDER STATUS": one row per GpucStatus, in order. */
static const char *const status_names[][2] = {
  {"GPUC_SUCCESS", "success"},
  {"GPUC_ERROR_INVALID_VALUE", "invalid argument"},
  {"GPUC_ERROR_NO_DRIVER", "no CUDA driver (libcuda.so.1 not loadable)"},
  {"GPUC_ERROR_NO_DEVICE", "no usable CUDA device"},
  {"GPUC_ERROR_NO_NVRTC", "NVRTC not found"},
  {"GPUC_ERROR_CUDA", "a CUDA driver call failed"},
  {"GPUC_ERROR_OUT_OF_MEMORY", "out of memory"},
  {"GPUC_ERROR_COMPILE", "CUDA C compilation failed"},
  {"GPUC_ERROR_NOT_FOUND", "not found"},
  {"GPUC_ERROR_LAUNCH_CONFIG", "launch configuration exceeds a limit"},
  {"GPUC_ERROR_LAUNCH_FAILED", "a kernel faulted; the context is unusable"},
  {"GPUC_ERROR_IO", "file input/output failed"},
  {"GPUC_ERROR_NO_NCCL", "NCCL not found (libnccl.so.2 not loadable)"},
};

const char *gpuc_status_name(GpucStatus s) {
  if ((unsigned)s >= sizeof status_names / sizeof status_names[0]) {
    return "GPUC_ERROR_UNKNOWN";
  }
  return status_names[s][0];
}

const char *gpuc_status_string(GpucStatus s) {
  if ((unsigned)s >= sizeof status_names / sizeof status_names[0]) {
    return "unknown status";
  }
  return status_names[s][1];
}

static _Thread_local char last_error[RT_MSG_MAX];

const char *gpuc_last_error(void) {
  return last_error;
}

void rt_set_last_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(last_error, sizeof last_error, fmt, ap);
  va_end(ap);
}

bool rt_cu_is_sticky(CUresult r) {
  switch (r) {
  case CUDA_ERROR_ILLEGAL_ADDRESS:
  case CUDA_ERROR_LAUNCH_FAILED:
  case CUDA_ERROR_MISALIGNED_ADDRESS:
  case CUDA_ERROR_ILLEGAL_INSTRUCTION:
  case CUDA_ERROR_INVALID_ADDRESS_SPACE:
  case CUDA_ERROR_INVALID_PC:
  case CUDA_ERROR_HARDWARE_STACK_ERROR:
  case CUDA_ERROR_ASSERT:
  case CUDA_ERROR_LAUNCH_TIMEOUT:
  case CUDA_ERROR_ECC_UNCORRECTABLE:
    return true;
  default:
    return false;
  }
}

GpucStatus rt_status_of(CUresult r) {
  switch (r) {
  case CUDA_SUCCESS:
    return GPUC_SUCCESS;
  case CUDA_ERROR_OUT_OF_MEMORY:
    return GPUC_ERROR_OUT_OF_MEMORY;
  case CUDA_ERROR_NOT_FOUND:
    return GPUC_ERROR_NOT_FOUND;
  case CUDA_ERROR_NO_DEVICE:
  case CUDA_ERROR_INVALID_DEVICE:
    return GPUC_ERROR_NO_DEVICE;
  case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:
    return GPUC_ERROR_LAUNCH_CONFIG;
  default:
    return rt_cu_is_sticky(r) ? GPUC_ERROR_LAUNCH_FAILED : GPUC_ERROR_CUDA;
  }
}

bool rt_env_flag(const char *name) {
  const char *v = getenv(name);
  return v && *v && strcmp(v, "0") != 0;
}

GpucStatus rt_error(GpucContext *ctx, GpucStatus status, const char *fmt, ...) {
  char msg[RT_MSG_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  snprintf(last_error, sizeof last_error, "%s", msg);
  if (ctx) {
    GpucErrorHandler handler;
    void *user;
    pthread_mutex_lock(&ctx->lock);
    if (!ctx->error) {
      ctx->error = strdup(msg);
    }
    handler = ctx->error_handler;
    user = ctx->error_user;
    pthread_mutex_unlock(&ctx->lock);
    if (handler) {
      handler(user, status, msg);
    }
  }
  return status;
}

GpucStatus rt_cu_error(GpucContext *ctx, CUresult r, const char *what) {
  char d[512];
  rt_cu_describe(r, d, sizeof d);
  if (rt_cu_is_sticky(r)) {
    bool debug = false;
    if (ctx) {
      pthread_mutex_lock(&ctx->lock);
      ctx->failed = true;
      debug = ctx->debug;
      pthread_mutex_unlock(&ctx->lock);
    }
    return rt_error(ctx, rt_status_of(r), "%s failed: %s; the context is unusable%s", what, d,
                    debug ? "" : " (the fault may come from an earlier asynchronous launch: "
                                 "run with GPUC_DEBUG=1 to report it at the launch that caused it)");
  }
  return rt_error(ctx, rt_status_of(r), "%s failed: %s", what, d);
}

const char *gpuc_context_error(GpucContext *ctx) {
  if (!ctx) {
    return NULL;
  }
  pthread_mutex_lock(&ctx->lock);
  const char *e = ctx->error;
  pthread_mutex_unlock(&ctx->lock);
  return e;
}

void gpuc_context_clear_error(GpucContext *ctx) {
  if (!ctx) {
    return;
  }
  pthread_mutex_lock(&ctx->lock);
  free(ctx->error);
  ctx->error = NULL;
  pthread_mutex_unlock(&ctx->lock);
}

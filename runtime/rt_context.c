/* rt_context.c: the driver and devices, and contexts: creation (the device's
 * primary context retained, or a caller's CUcontext wrapped), making the
 * context current on whichever thread calls, the list of owned objects, and
 * teardown in reverse order of creation that stays quiet when the device is
 * already in an error state (Futhark's futhark_context_free). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt_internal.h"

GpucStatus gpuc_init(void) {
  char msg[RT_MSG_MAX];
  GpucStatus s = rt_load_cuda(msg);
  if (s != GPUC_SUCCESS) {
    rt_set_last_error("gpuc_init: %s", msg);
    return s;
  }
  int n = 0;
  CUresult r = rt_cu.device_get_count(&n);
  if (r != CUDA_SUCCESS || n <= 0) {
    char d[512] = "";
    if (r != CUDA_SUCCESS) {
      rt_cu_describe(r, d, sizeof d);
    }
    rt_set_last_error("gpuc_init: no usable GPU: %s", r != CUDA_SUCCESS ? d : "the driver reports no CUDA device");
    return GPUC_ERROR_NO_DEVICE;
  }
  return GPUC_SUCCESS;
}

GpucStatus gpuc_driver_version(int *version) {
  char msg[RT_MSG_MAX];
  if (!version) {
    rt_set_last_error("gpuc_driver_version: NULL argument");
    return GPUC_ERROR_INVALID_VALUE;
  }
  *version = 0;
  GpucStatus s = rt_load_cuda(msg);
  if (s != GPUC_SUCCESS) {
    rt_set_last_error("gpuc_driver_version: %s", msg);
    return s;
  }
  CUresult r = rt_cu.driver_get_version(version);
  return r == CUDA_SUCCESS ? GPUC_SUCCESS : rt_cu_error(NULL, r, "gpuc_driver_version: cuDriverGetVersion");
}

GpucStatus gpuc_device_count(int *count) {
  char msg[RT_MSG_MAX];
  if (!count) {
    rt_set_last_error("gpuc_device_count: NULL argument");
    return GPUC_ERROR_INVALID_VALUE;
  }
  *count = 0;
  GpucStatus s = rt_load_cuda(msg);
  if (s != GPUC_SUCCESS) {
    rt_set_last_error("gpuc_device_count: %s", msg);
    return s;
  }
  CUresult r = rt_cu.device_get_count(count);
  return r == CUDA_SUCCESS ? GPUC_SUCCESS : rt_cu_error(NULL, r, "gpuc_device_count: cuDeviceGetCount");
}

/* Read a device's properties; on failure msg says which call failed. */
static CUresult fill_info(CUdevice dev, int ordinal, GpucDeviceInfo *info, const char **failed) {
  static const struct {
    CUdevice_attribute attr;
    size_t offset;
  } attrs[] = {
    {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, offsetof(GpucDeviceInfo, cc_major)},
    {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, offsetof(GpucDeviceInfo, cc_minor)},
    {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, offsetof(GpucDeviceInfo, multiprocessors)},
    {CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, offsetof(GpucDeviceInfo, l2_bytes)},
    {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, offsetof(GpucDeviceInfo, max_threads_per_block)},
    {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, offsetof(GpucDeviceInfo, max_shared_per_block)},
    {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, offsetof(GpucDeviceInfo, max_shared_per_block_optin)},
    {CU_DEVICE_ATTRIBUTE_WARP_SIZE, offsetof(GpucDeviceInfo, warp_size)},
  };
  memset(info, 0, sizeof *info);
  info->ordinal = ordinal;
  CUresult r = rt_cu.device_get_name(info->name, (int)sizeof info->name, dev);
  if (r != CUDA_SUCCESS) {
    *failed = "cuDeviceGetName";
    return r;
  }
  for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++) {
    int v = 0;
    r = rt_cu.device_get_attribute(&v, attrs[i].attr, dev);
    if (r != CUDA_SUCCESS) {
      *failed = "cuDeviceGetAttribute";
      return r;
    }
    memcpy((char *)info + attrs[i].offset, &v, sizeof v);
  }
  /* MPS: asked apart, since a driver before CUDA 12 does not know the
   * attribute (then 0). gpuc's streaming kernels need their whole grid
   * resident, which MPS limits may prevent (docs/reliability.md). */
  int mps = 0;
  if (rt_cu.device_get_attribute(&mps, CU_DEVICE_ATTRIBUTE_MPS_ENABLED, dev) == CUDA_SUCCESS) {
    info->mps_enabled = mps != 0;
  }
  r = rt_cu.device_total_mem(&info->total_memory, dev);
  if (r != CUDA_SUCCESS) {
    *failed = "cuDeviceTotalMem";
  }
  return r;
}

/* Look up device `ordinal`, with a clear message when it does not exist. */
static GpucStatus get_device(int ordinal, CUdevice *dev, char *msg) {
  GpucStatus s = rt_load_cuda(msg);
  if (s != GPUC_SUCCESS) {
    return s;
  }
  int n = 0;
  CUresult r = rt_cu.device_get_count(&n);
  if (r != CUDA_SUCCESS) {
    char d[512];
    rt_cu_describe(r, d, sizeof d);
    snprintf(msg, RT_MSG_MAX, "cuDeviceGetCount failed: %s", d);
    return rt_status_of(r);
  }
  if (ordinal < 0 || ordinal >= n) {
    snprintf(msg, RT_MSG_MAX, "no CUDA device %d (this machine has %d)", ordinal, n);
    return GPUC_ERROR_NO_DEVICE;
  }
  r = rt_cu.device_get(dev, ordinal);
  if (r != CUDA_SUCCESS) {
    char d[512];
    rt_cu_describe(r, d, sizeof d);
    snprintf(msg, RT_MSG_MAX, "cuDeviceGet(%d) failed: %s", ordinal, d);
    return rt_status_of(r);
  }
  return GPUC_SUCCESS;
}

GpucStatus gpuc_device_info(int ordinal, GpucDeviceInfo *info) {
  char msg[RT_MSG_MAX];
  if (!info) {
    rt_set_last_error("gpuc_device_info: NULL argument");
    return GPUC_ERROR_INVALID_VALUE;
  }
  memset(info, 0, sizeof *info);
  CUdevice dev;
  GpucStatus s = get_device(ordinal, &dev, msg);
  if (s != GPUC_SUCCESS) {
    rt_set_last_error("gpuc_device_info: %s", msg);
    return s;
  }
  const char *failed = "";
  CUresult r = fill_info(dev, ordinal, info, &failed);
  if (r != CUDA_SUCCESS) {
    char what[128];
    snprintf(what, sizeof what, "gpuc_device_info: %s", failed);
    return rt_cu_error(NULL, r, what);
  }
  return GPUC_SUCCESS;
}

void gpuc_config_init(GpucConfig *c) {
  if (!c) {
    return;
  }
  memset(c, 0, sizeof *c);
  c->debug = -1;
  c->profile = -1;
}

/* The context rt_enter made current on this thread (so teardown can undo it). */
static _Thread_local CUcontext set_here;

GpucStatus rt_enter(GpucContext *ctx, bool *pushed) {
  CUcontext cur = NULL;
  *pushed = false;
  CUresult r = rt_cu.ctx_get_current(&cur);
  if (r == CUDA_SUCCESS && cur == ctx->cu_ctx) {
    return GPUC_SUCCESS;
  }
  if (r == CUDA_SUCCESS && cur == NULL) {
    r = rt_cu.ctx_set_current(ctx->cu_ctx);
    if (r != CUDA_SUCCESS) {
      return rt_cu_error(ctx, r, "making the context current (cuCtxSetCurrent)");
    }
    set_here = ctx->cu_ctx;
    return GPUC_SUCCESS;
  }
  if (r == CUDA_SUCCESS) {
    r = rt_cu.ctx_push_current(ctx->cu_ctx);
  }
  if (r != CUDA_SUCCESS) {
    return rt_cu_error(ctx, r, "making the context current (cuCtxPushCurrent)");
  }
  *pushed = true;
  return GPUC_SUCCESS;
}

void rt_leave(GpucContext *ctx, bool pushed) {
  (void)ctx;
  if (pushed) {
    CUcontext popped;
    rt_cu.ctx_pop_current(&popped);
  }
}

void rt_link(GpucContext *ctx, RtObject *obj, RtKind kind) {
  obj->kind = kind;
  obj->ctx = ctx;
  obj->next = NULL;
  obj->prev = ctx->tail;
  if (ctx->tail) {
    ctx->tail->next = obj;
  } else {
    ctx->head = obj;
  }
  ctx->tail = obj;
}

void rt_unlink(GpucContext *ctx, RtObject *obj) {
  if (obj->prev) {
    obj->prev->next = obj->next;
  } else {
    ctx->head = obj->next;
  }
  if (obj->next) {
    obj->next->prev = obj->prev;
  } else {
    ctx->tail = obj->prev;
  }
  obj->prev = obj->next = NULL;
}

GpucStatus gpuc_context_new(const GpucConfig *config, GpucContext **out) {
  char msg[RT_MSG_MAX];
  GpucConfig defaults;
  if (!out) {
    rt_set_last_error("gpuc_context_new: NULL output pointer");
    return GPUC_ERROR_INVALID_VALUE;
  }
  *out = NULL;
  if (!config) {
    gpuc_config_init(&defaults);
    config = &defaults;
  }
  if (config->cu_stream && !config->cu_context) {
    rt_set_last_error("gpuc_context_new: a CUstream can only be wrapped together with its CUcontext");
    return GPUC_ERROR_INVALID_VALUE;
  }
  GpucStatus s = rt_load_cuda(msg);
  if (s != GPUC_SUCCESS) {
    rt_set_last_error("gpuc_context_new: %s", msg);
    return s;
  }
  GpucContext *ctx = calloc(1, sizeof *ctx);
  if (!ctx) {
    rt_set_last_error("gpuc_context_new: out of host memory");
    return GPUC_ERROR_OUT_OF_MEMORY;
  }
  pthread_mutex_init(&ctx->lock, NULL);
  ctx->debug = config->debug < 0 ? rt_env_flag("GPUC_DEBUG") : config->debug != 0;
  ctx->profile = config->profile < 0 ? rt_env_flag("GPUC_PROFILE") : config->profile != 0;
  ctx->pool_limit = config->pool_limit ? config->pool_limit : SIZE_MAX;
  ctx->profile_out = config->profile_out;
  ctx->stream = (CUstream)config->cu_stream;

  CUresult r;
  const char *what = NULL;
  if (config->cu_context) {
    ctx->cu_ctx = (CUcontext)config->cu_context;
    r = rt_cu.ctx_push_current(ctx->cu_ctx);
    what = "cuCtxPushCurrent (of the caller's context)";
    if (r == CUDA_SUCCESS) {
      r = rt_cu.ctx_get_device(&ctx->cu_device);
      what = "cuCtxGetDevice";
      CUcontext popped;
      rt_cu.ctx_pop_current(&popped);
    }
    if (r == CUDA_SUCCESS) {
      /* The ordinal of a CUdevice is the CUdevice itself in the driver API. */
      ctx->device = (int)ctx->cu_device;
    }
  } else {
    ctx->device = config->device;
    s = get_device(config->device, &ctx->cu_device, msg);
    if (s != GPUC_SUCCESS) {
      rt_set_last_error("gpuc_context_new: %s", msg);
      pthread_mutex_destroy(&ctx->lock);
      free(ctx);
      return s;
    }
    r = rt_cu.primary_ctx_retain(&ctx->cu_ctx, ctx->cu_device);
    what = "cuDevicePrimaryCtxRetain";
    ctx->owns_primary = r == CUDA_SUCCESS;
  }
  if (r == CUDA_SUCCESS) {
    r = fill_info(ctx->cu_device, ctx->device, &ctx->info, &what);
  }
  static const CUdevice_attribute dims[6] = {
    CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z,
    CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X,  CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y,  CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z,
  };
  for (int i = 0; i < 6 && r == CUDA_SUCCESS; i++) {
    int v = 0;
    r = rt_cu.device_get_attribute(&v, dims[i], ctx->cu_device);
    what = "cuDeviceGetAttribute";
    if (i < 3) {
      ctx->max_block[i] = (unsigned)v;
    } else {
      ctx->max_grid[i - 3] = (unsigned)v;
    }
  }
  if (r != CUDA_SUCCESS) {
    char full[160];
    snprintf(full, sizeof full, "gpuc_context_new: %s", what);
    s = rt_cu_error(NULL, r, full);
    if (ctx->owns_primary) {
      rt_cu.primary_ctx_release(ctx->cu_device);
    }
    pthread_mutex_destroy(&ctx->lock);
    free(ctx);
    return s;
  }
  ctx->error_handler = config->error_handler;
  ctx->error_user = config->error_user;
  *out = ctx;
  return GPUC_SUCCESS;
}

static const char *kind_name(RtKind k) {
  switch (k) {
  case RT_ALLOC:
    return "device buffer";
  case RT_HOST:
    return "pinned host buffer";
  case RT_MODULE:
    return "module";
  case RT_STREAM:
    return "stream";
  case RT_EVENT:
    return "event";
  }
  return "object";
}

/* Debug mode: say what the program did not free. */
static void leak_report_locked(GpucContext *ctx) {
  size_t counts[5] = {0}, bytes = 0, hbytes = 0;
  for (RtObject *o = ctx->head; o; o = o->next) {
    counts[o->kind]++;
    if (o->kind == RT_ALLOC) {
      bytes += ((RtAlloc *)o)->bytes;
    } else if (o->kind == RT_HOST) {
      hbytes += ((RtHost *)o)->bytes;
    }
  }
  size_t total = counts[0] + counts[1] + counts[2] + counts[3] + counts[4];
  if (total == 0) {
    return;
  }
  fprintf(stderr, "gpuc: leak report: %zu object(s) not freed before gpuc_context_free (freed now):\n", total);
  if (counts[RT_ALLOC]) {
    fprintf(stderr, "gpuc:   %zu device buffer(s), %zu bytes\n", counts[RT_ALLOC], bytes);
  }
  if (counts[RT_HOST]) {
    fprintf(stderr, "gpuc:   %zu pinned host buffer(s), %zu bytes\n", counts[RT_HOST], hbytes);
  }
  for (int k = RT_MODULE; k <= RT_EVENT; k++) {
    if (counts[k]) {
      fprintf(stderr, "gpuc:   %zu %s(s)\n", counts[k], kind_name((RtKind)k));
    }
  }
  int shown = 0;
  for (RtObject *o = ctx->head; o && shown < 8; o = o->next) {
    if (o->kind == RT_ALLOC) {
      RtAlloc *a = (RtAlloc *)o;
      fprintf(stderr, "gpuc:   device buffer 0x%llx of %zu bytes\n", (unsigned long long)a->ptr, a->bytes);
      shown++;
    }
  }
}

GpucStatus gpuc_context_free(GpucContext *ctx) {
  if (!ctx) {
    return GPUC_SUCCESS;
  }
  GpucStatus result = GPUC_SUCCESS;
  bool pushed = false;
  CUcontext cur = NULL;
  /* Quietly make it current: no error recording, nothing printed. */
  if (rt_cu.ctx_get_current(&cur) == CUDA_SUCCESS && cur != ctx->cu_ctx) {
    pushed = rt_cu.ctx_push_current(ctx->cu_ctx) == CUDA_SUCCESS;
  }
  pthread_mutex_lock(&ctx->lock);
  if (!ctx->failed) {
    CUresult r = ctx->stream ? rt_cu.stream_synchronize(ctx->stream) : rt_cu.ctx_synchronize();
    if (r != CUDA_SUCCESS) {
      result = rt_status_of(r);
      if (rt_cu_is_sticky(r)) {
        ctx->failed = true;
      }
    }
  }
  if (ctx->profile) {
    if (!ctx->failed) {
      rt_prof_drain_locked(ctx);
    }
    pthread_mutex_unlock(&ctx->lock);
    gpuc_profile_report(ctx, ctx->profile_out ? ctx->profile_out : stderr);
    pthread_mutex_lock(&ctx->lock);
  }
  if (ctx->debug) {
    leak_report_locked(ctx);
  }
  /* Reverse order of creation. */
  while (ctx->tail) {
    RtObject *o = ctx->tail;
    switch (o->kind) {
    case RT_ALLOC:
      rt_free_alloc_locked(ctx, (RtAlloc *)o, false);
      break;
    case RT_HOST:
      rt_free_host_locked(ctx, (RtHost *)o);
      break;
    case RT_MODULE:
      rt_free_module_locked(ctx, (GpucModule *)o);
      break;
    case RT_STREAM:
      rt_free_stream_locked(ctx, (GpucStream *)o);
      break;
    case RT_EVENT:
      rt_free_event_locked(ctx, (GpucEvent *)o);
      break;
    }
  }
  rt_prof_free_locked(ctx);
  for (size_t i = 0; i < ctx->nzero_words; i++) {
    rt_cu.mem_free(ctx->zero_words[i].word);
  }
  free(ctx->zero_words);
  for (size_t i = 0; i < ctx->ncount_words; i++) {
    rt_cu.mem_free_host(ctx->count_words[i].host);
  }
  free(ctx->count_words);
  rt_pool_release_locked(ctx);
  pthread_mutex_unlock(&ctx->lock);
  if (pushed) {
    CUcontext popped;
    rt_cu.ctx_pop_current(&popped);
  } else if (set_here == ctx->cu_ctx && rt_cu.ctx_get_current(&cur) == CUDA_SUCCESS && cur == ctx->cu_ctx) {
    rt_cu.ctx_set_current(NULL);   /* undo what rt_enter set on this thread */
    set_here = NULL;
  }
  if (ctx->owns_primary) {
    rt_cu.primary_ctx_release(ctx->cu_device);
  }
  pthread_mutex_destroy(&ctx->lock);
  free(ctx->error);
  free(ctx);
  return result;
}

GpucStatus gpuc_context_synchronize(GpucContext *ctx) {
  if (!ctx) {
    rt_set_last_error("gpuc_context_synchronize: NULL context");
    return GPUC_ERROR_INVALID_VALUE;
  }
  bool pushed;
  GpucStatus s = rt_enter(ctx, &pushed);
  if (s != GPUC_SUCCESS) {
    return s;
  }
  CUresult r = ctx->stream ? rt_cu.stream_synchronize(ctx->stream) : rt_cu.ctx_synchronize();
  rt_leave(ctx, pushed);
  if (r != CUDA_SUCCESS) {
    return rt_cu_error(ctx, r, "gpuc_context_synchronize: cuCtxSynchronize");
  }
  if (ctx->profile) {
    pthread_mutex_lock(&ctx->lock);
    rt_prof_drain_locked(ctx);
    pthread_mutex_unlock(&ctx->lock);
  }
  return GPUC_SUCCESS;
}

GpucStatus gpuc_context_zero_word(GpucContext *ctx, GpucDevPtr *word) {
  if (!ctx || !word) {
    rt_set_last_error("gpuc_context_zero_word: %s", ctx ? "NULL output pointer" : "NULL context");
    return GPUC_ERROR_INVALID_VALUE;
  }
  *word = 0;
  pthread_mutex_lock(&ctx->lock);
  for (size_t i = 0; i < ctx->nzero_words; i++) {
    if (ctx->zero_words[i].stream == ctx->stream) {
      *word = ctx->zero_words[i].word;
      pthread_mutex_unlock(&ctx->lock);
      return GPUC_SUCCESS;
    }
  }
  struct RtZeroWord *grown = realloc(ctx->zero_words, sizeof *grown * (ctx->nzero_words + 1));
  pthread_mutex_unlock(&ctx->lock);
  if (!grown) {
    return rt_error(ctx, GPUC_ERROR_OUT_OF_MEMORY, "gpuc_context_zero_word: out of host memory");
  }
  bool pushed;
  GpucStatus s = rt_enter(ctx, &pushed);
  if (s != GPUC_SUCCESS) {
    pthread_mutex_lock(&ctx->lock);
    ctx->zero_words = grown;
    pthread_mutex_unlock(&ctx->lock);
    return s;
  }
  CUdeviceptr p = 0;
  CUresult r = rt_cu.mem_alloc(&p, 4);
  if (r == CUDA_SUCCESS) {
    r = rt_cu.memset_d8(p, 0, 4);   /* synchronous: zero before any kernel of any stream reads it */
    if (r != CUDA_SUCCESS) {
      rt_cu.mem_free(p);
    }
  }
  rt_leave(ctx, pushed);
  pthread_mutex_lock(&ctx->lock);
  ctx->zero_words = grown;
  if (r == CUDA_SUCCESS) {
    ctx->zero_words[ctx->nzero_words].stream = ctx->stream;
    ctx->zero_words[ctx->nzero_words].word = p;
    ctx->nzero_words++;
  }
  pthread_mutex_unlock(&ctx->lock);
  if (r != CUDA_SUCCESS) {
    return rt_cu_error(ctx, r, "gpuc_context_zero_word: cuMemAlloc/cuMemsetD8");
  }
  *word = p;
  return GPUC_SUCCESS;
}

/* The count word of ctx's current stream into *dev and *host, if it has one
 * (ctx->lock held). */
static bool count_word_find_locked(GpucContext *ctx, GpucDevPtr *dev, volatile int64_t **host) {
  for (size_t i = 0; i < ctx->ncount_words; i++) {
    if (ctx->count_words[i].stream == ctx->stream) {
      *dev = ctx->count_words[i].dev;
      *host = ctx->count_words[i].host;
      return true;
    }
  }
  return false;
}

GpucStatus gpuc_context_count_word(GpucContext *ctx, GpucDevPtr *dev, volatile int64_t **host) {
  if (!ctx || !dev || !host) {
    rt_set_last_error("gpuc_context_count_word: %s", ctx ? "NULL output pointer" : "NULL context");
    return GPUC_ERROR_INVALID_VALUE;
  }
  *dev = 0;
  *host = NULL;
  pthread_mutex_lock(&ctx->lock);
  bool found = count_word_find_locked(ctx, dev, host);
  pthread_mutex_unlock(&ctx->lock);
  if (found) {
    return GPUC_SUCCESS;
  }
  /* made outside the lock (driver calls); kept unless another thread made
   * this stream's word meanwhile */
  bool pushed;
  GpucStatus s = rt_enter(ctx, &pushed);
  if (s != GPUC_SUCCESS) {
    return s;
  }
  void *h = NULL;
  CUdeviceptr d = 0;
  CUresult r = rt_cu.mem_host_alloc(&h, sizeof(int64_t), CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP);
  if (r == CUDA_SUCCESS) {
    r = rt_cu.mem_host_get_device_pointer(&d, h, 0);
    if (r != CUDA_SUCCESS) {
      rt_cu.mem_free_host(h);
    }
  }
  bool kept = false, no_memory = false;
  if (r == CUDA_SUCCESS) {
    *(volatile int64_t *)h = 0;
    pthread_mutex_lock(&ctx->lock);
    found = count_word_find_locked(ctx, dev, host);
    if (!found) {
      struct RtCountWord *grown = realloc(ctx->count_words, sizeof *grown * (ctx->ncount_words + 1));
      if (grown) {
        ctx->count_words = grown;
        grown[ctx->ncount_words].stream = ctx->stream;
        grown[ctx->ncount_words].host = h;
        grown[ctx->ncount_words].dev = d;
        ctx->ncount_words++;
        *dev = d;
        *host = h;
        kept = true;
      } else {
        no_memory = true;
      }
    }
    pthread_mutex_unlock(&ctx->lock);
    if (!kept) {
      rt_cu.mem_free_host(h);
    }
  }
  rt_leave(ctx, pushed);
  if (r != CUDA_SUCCESS) {
    return rt_cu_error(ctx, r, "gpuc_context_count_word: cuMemHostAlloc/cuMemHostGetDevicePointer");
  }
  if (no_memory) {
    return rt_error(ctx, GPUC_ERROR_OUT_OF_MEMORY, "gpuc_context_count_word: out of host memory");
  }
  return GPUC_SUCCESS;
}

GpucStatus gpuc_context_device_info(GpucContext *ctx, GpucDeviceInfo *info) {
  if (!ctx || !info) {
    rt_set_last_error("gpuc_context_device_info: NULL argument");
    return GPUC_ERROR_INVALID_VALUE;
  }
  *info = ctx->info;
  return GPUC_SUCCESS;
}

void *gpuc_context_handle(GpucContext *ctx) {
  return ctx ? (void *)ctx->cu_ctx : NULL;
}

void *gpuc_context_swap_stream(GpucContext *ctx, void *cu_stream) {
  if (!ctx) {
    return NULL;
  }
  void *previous = (void *)ctx->stream;
  ctx->stream = (CUstream)cu_stream;
  return previous;
}

int gpuc_context_debug(GpucContext *ctx) {
  return ctx ? ctx->debug : 0;
}

int gpuc_context_profiling(GpucContext *ctx) {
  return ctx ? ctx->profile : 0;
}

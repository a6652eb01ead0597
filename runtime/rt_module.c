/* rt_module.c: modules. Load a cubin, fatbin or PTX image; pick the best of
 * several ahead-of-time images for the device (what gpuc-built executables
 * embed); or compile CUDA C with NVRTC for the architecture read from the
 * device, through the disk cache. Then look up kernels (with their limits,
 * read once here so launches can check them cheaply) and globals. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt_internal.h"

static char *dup_str(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d) {
    memcpy(d, s, n);
  }
  return d;
}

/* Load one image into a new module named `name` for messages. */
static GpucStatus load(GpucContext *ctx, const char *api, const char *name, const char *arch, const void *image,
                       size_t size, GpucModule **out) {
  *out = NULL;
  const unsigned char *b = image;
  bool is_elf = size >= 4 && b[0] == 0x7f && b[1] == 'E' && b[2] == 'L' && b[3] == 'F';
  bool is_fatbin = size >= 4 && ((b[0] == 0x50 && b[1] == 0xed && b[2] == 0x55 && b[3] == 0xba) ||
                                 (b[0] == 0xb1 && b[1] == 0x43 && b[2] == 0x62 && b[3] == 0x46));
  char *text = NULL;
  if (!is_elf && !is_fatbin && b[size - 1] != '\0') {
    /* PTX must reach the driver NUL-terminated. */
    text = malloc(size + 1);
    if (!text) {
      return rt_error(ctx, GPUC_ERROR_OUT_OF_MEMORY, "%s: out of host memory", api);
    }
    memcpy(text, image, size);
    text[size] = '\0';
    image = text;
  }
  GpucModule *m = calloc(1, sizeof *m);
  char *mname = dup_str(name);
  if (!m || !mname) {
    free(text);
    free(m);
    free(mname);
    return rt_error(ctx, GPUC_ERROR_OUT_OF_MEMORY, "%s: out of host memory", api);
  }
  m->name = mname;
  snprintf(m->arch, sizeof m->arch, "%s", arch ? arch : "");
  bool pushed;
  GpucStatus s = rt_enter(ctx, &pushed);
  if (s != GPUC_SUCCESS) {
    free(text);
    free(m->name);
    free(m);
    return s;
  }
  char jit_log[4096] = "";
  CUjit_option opts[2] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *vals[2] = {jit_log, (void *)(uintptr_t)sizeof jit_log};
  CUresult r = rt_cu.module_load_data_ex(&m->mod, image, 2, opts, vals);
  rt_leave(ctx, pushed);
  free(text);
  if (r != CUDA_SUCCESS) {
    char d[512];
    rt_cu_describe(r, d, sizeof d);
    free(m->name);
    free(m);
    if (rt_cu_is_sticky(r)) {
      return rt_cu_error(ctx, r, api);
    }
    return rt_error(ctx, rt_status_of(r), "%s: cuModuleLoadDataEx failed for %s on device %d (%s, sm_%d%d): %s%s%s",
                    api, name, ctx->device, ctx->info.name, ctx->info.cc_major, ctx->info.cc_minor, d,
                    *jit_log ? "\n" : "", jit_log);
  }
  pthread_mutex_lock(&ctx->lock);
  rt_link(ctx, &m->obj, RT_MODULE);
  pthread_mutex_unlock(&ctx->lock);
  *out = m;
  return GPUC_SUCCESS;
}

GpucStatus gpuc_module_load_image(GpucContext *ctx, const void *image, size_t size, GpucModule **module) {
  if (!ctx) {
    rt_set_last_error("gpuc_module_load_image: NULL context");
    return GPUC_ERROR_INVALID_VALUE;
  }
  if (!module || !image || size == 0) {
    if (module) {
      *module = NULL;
    }
    return rt_error(ctx, GPUC_ERROR_INVALID_VALUE, "gpuc_module_load_image: NULL or empty image or NULL output");
  }
  return load(ctx, "gpuc_module_load_image", "image", NULL, image, size, module);
}

/* "sm_90" -> kind 's', number 90, suffix 0; false when malformed. */
static bool parse_arch(const char *arch, char *kind, int *num, char *suffix) {
  const char *p;
  if (strncmp(arch, "sm_", 3) == 0) {
    *kind = 's';
    p = arch + 3;
  } else if (strncmp(arch, "compute_", 8) == 0) {
    *kind = 'c';
    p = arch + 8;
  } else {
    return false;
  }
  *num = 0;
  if (*p < '0' || *p > '9') {
    return false;
  }
  while (*p >= '0' && *p <= '9') {
    *num = *num * 10 + (*p++ - '0');
  }
  *suffix = *p >= 'a' && *p <= 'z' ? *p++ : 0;
  return *p == '\0';
}

GpucStatus gpuc_module_load_images(GpucContext *ctx, const GpucImage *images, int count, GpucModule **module) {
  const char *api = "gpuc_module_load_images";
  if (!ctx) {
    rt_set_last_error("%s: NULL context", api);
    return GPUC_ERROR_INVALID_VALUE;
  }
  if (!module || !images || count <= 0) {
    if (module) {
      *module = NULL;
    }
    return rt_error(ctx, GPUC_ERROR_INVALID_VALUE, "%s: no images or NULL output", api);
  }
  *module = NULL;
  int dev = ctx->info.cc_major * 10 + ctx->info.cc_minor;
  int best = -1, best_rank = 0, best_num = 0;
  for (int i = 0; i < count; i++) {
    char kind, suffix;
    int num;
    if (!images[i].arch || !images[i].data || images[i].size == 0 ||
        !parse_arch(images[i].arch, &kind, &num, &suffix)) {
      return rt_error(ctx, GPUC_ERROR_INVALID_VALUE, "%s: image %d has a bad arch ('%s') or no data", api, i,
                      images[i].arch ? images[i].arch : "(null)");
    }
    /* rank 3: cubin for this exact sm; 2: cubin of the same major, older
     * minor; 1: PTX not newer than the device. Higher number breaks ties. */
    int rank = 0;
    if (kind == 's' && num == dev) {
      rank = 3;
    } else if (kind == 's' && !suffix && num / 10 == dev / 10 && num < dev) {
      rank = 2;
    } else if (kind == 'c' && !suffix && num <= dev) {
      rank = 1;
    }
    if (rank > best_rank || (rank == best_rank && rank > 0 && num > best_num)) {
      best = i;
      best_rank = rank;
      best_num = num;
    }
  }
  if (best < 0) {
    char have[1024] = "";
    size_t used = 0;
    for (int i = 0; i < count && used < sizeof have - 40; i++) {
      used += (size_t)snprintf(have + used, sizeof have - used, "%s%s", i ? ", " : "", images[i].arch);
    }
    return rt_error(ctx, GPUC_ERROR_NOT_FOUND,
                    "%s: no embedded image runs on device %d (%s, sm_%d): the program has %s; rebuild it with "
                    "--arch=sm_%d or with PTX (compute_XY) for an older architecture",
                    api, ctx->device, ctx->info.name, dev, have, dev);
  }
  return load(ctx, api, images[best].arch, images[best].arch, images[best].data, images[best].size, module);
}

GpucStatus gpuc_module_load_source(GpucContext *ctx, const char *name, const char *source,
                                   const char *const *options, int num_options, GpucModule **module) {
  const char *api = "gpuc_module_load_source";
  char msg[RT_MSG_MAX], arch[32];
  if (!ctx) {
    rt_set_last_error("%s: NULL context", api);
    return GPUC_ERROR_INVALID_VALUE;
  }
  if (!module || !source) {
    if (module) {
      *module = NULL;
    }
    return rt_error(ctx, GPUC_ERROR_INVALID_VALUE, "%s: NULL source or output", api);
  }
  *module = NULL;
  if (!name) {
    name = "source.cu";
  }
  GpucStatus s = rt_pick_arch(ctx->info.cc_major, ctx->info.cc_minor, arch, sizeof arch, msg);
  if (s != GPUC_SUCCESS) {
    return rt_error(ctx, s, "%s: %s", api, msg);
  }
  void *image = NULL;
  size_t size = 0;
  s = rt_compile(name, source, arch, options, num_options, &image, &size, NULL, msg);
  if (s != GPUC_SUCCESS) {
    return rt_error(ctx, s, "%s: %s", api, msg);
  }
  s = load(ctx, api, name, arch, image, size, module);
  free(image);
  return s;
}

void rt_free_module_locked(GpucContext *ctx, GpucModule *m) {
  rt_unlink(ctx, &m->obj);
  GpucFunction *f = m->functions;
  while (f) {
    GpucFunction *next = f->next;
    free(f->name);
    free(f);
    f = next;
  }
  struct RtMapped *w = m->mapped;
  while (w) {
    struct RtMapped *next = w->next;
    rt_cu.mem_free_host(w->host);
    free(w->name);
    free(w);
    w = next;
  }
  rt_cu.module_unload(m->mod);
  free(m->name);
  free(m);
}

GpucStatus gpuc_module_free(GpucModule *m) {
  if (!m) {
    return GPUC_SUCCESS;
  }
  GpucContext *ctx = m->obj.ctx;
  bool pushed;
  GpucStatus s = rt_enter(ctx, &pushed);
  pthread_mutex_lock(&ctx->lock);
  rt_free_module_locked(ctx, m);
  pthread_mutex_unlock(&ctx->lock);
  if (s == GPUC_SUCCESS) {
    rt_leave(ctx, pushed);
  }
  return s;
}

const char *gpuc_module_arch(GpucModule *m) {
  return m ? m->arch : "";
}

GpucStatus gpuc_module_get_function(GpucModule *m, const char *name, GpucFunction **out) {
  const char *api = "gpuc_module_get_function";
  if (!m) {
    rt_set_last_error("%s: NULL module", api);
    return GPUC_ERROR_INVALID_VALUE;
  }
  GpucContext *ctx = m->obj.ctx;
  if (!name || !out) {
    return rt_error(ctx, GPUC_ERROR_INVALID_VALUE, "%s: NULL name or output", api);
  }
  *out = NULL;
  pthread_mutex_lock(&ctx->lock);
  for (GpucFunction *f = m->functions; f; f = f->next) {
    if (strcmp(f->name, name) == 0) {
      *out = f;
      break;
    }
  }
  pthread_mutex_unlock(&ctx->lock);
  if (*out) {
    return GPUC_SUCCESS;
  }
  GpucFunction *f = calloc(1, sizeof *f);
  if (!f || !(f->name = dup_str(name))) {
    free(f);
    return rt_error(ctx, GPUC_ERROR_OUT_OF_MEMORY, "%s: out of host memory", api);
  }
  f->module = m;
  bool pushed;
  GpucStatus s = rt_enter(ctx, &pushed);
  if (s != GPUC_SUCCESS) {
    free(f->name);
    free(f);
    return s;
  }
  CUresult r = rt_cu.module_get_function(&f->fn, m->mod, name);
  const char *what = "cuModuleGetFunction";
  struct {
    CUfunction_attribute attr;
    int *dst;
  } attrs[] = {
    {CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &f->max_threads},
    {CU_FUNC_ATTRIBUTE_NUM_REGS, &f->num_regs},
    {CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, &f->static_shared},
    {CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, &f->local_bytes},
    {CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, &f->dyn_shared_set},
  };
  for (size_t i = 0; r == CUDA_SUCCESS && i < sizeof attrs / sizeof attrs[0]; i++) {
    r = rt_cu.func_get_attribute(attrs[i].dst, attrs[i].attr, f->fn);
    what = "cuFuncGetAttribute";
  }
  rt_leave(ctx, pushed);
  if (r != CUDA_SUCCESS) {
    free(f->name);
    free(f);
    if (r == CUDA_ERROR_NOT_FOUND) {
      return rt_error(ctx, GPUC_ERROR_NOT_FOUND,
                      "%s: no kernel '%s' in module %s (kernels must be declared extern \"C\" to be found by "
                      "their plain names)", api, name, m->name);
    }
    char full[160];
    snprintf(full, sizeof full, "%s: %s('%s')", api, what, name);
    return rt_cu_error(ctx, r, full);
  }
  pthread_mutex_lock(&ctx->lock);
  /* Another thread may have added it meanwhile: keep one. */
  GpucFunction *existing = NULL;
  for (GpucFunction *g = m->functions; g; g = g->next) {
    if (strcmp(g->name, name) == 0) {
      existing = g;
    }
  }
  if (existing) {
    free(f->name);
    free(f);
    f = existing;
  } else {
    f->next = m->functions;
    m->functions = f;
  }
  pthread_mutex_unlock(&ctx->lock);
  *out = f;
  return GPUC_SUCCESS;
}

GpucStatus gpuc_module_get_global(GpucModule *m, const char *name, GpucDevPtr *ptr, size_t *bytes) {
  const char *api = "gpuc_module_get_global";
  if (!m) {
    rt_set_last_error("%s: NULL module", api);
    return GPUC_ERROR_INVALID_VALUE;
  }
  GpucContext *ctx = m->obj.ctx;
  if (!name || !ptr) {
    return rt_error(ctx, GPUC_ERROR_INVALID_VALUE, "%s: NULL name or output", api);
  }
  *ptr = 0;
  if (bytes) {
    *bytes = 0;
  }
  bool pushed;
  GpucStatus s = rt_enter(ctx, &pushed);
  if (s != GPUC_SUCCESS) {
    return s;
  }
  CUdeviceptr p = 0;
  size_t n = 0;
  CUresult r = rt_cu.module_get_global(&p, &n, m->mod, name);
  rt_leave(ctx, pushed);
  if (r == CUDA_ERROR_NOT_FOUND) {
    return rt_error(ctx, GPUC_ERROR_NOT_FOUND, "%s: no global '%s' in module %s", api, name, m->name);
  }
  if (r != CUDA_SUCCESS) {
    return rt_cu_error(ctx, r, "gpuc_module_get_global: cuModuleGetGlobal");
  }
  *ptr = p;
  if (bytes) {
    *bytes = n;
  }
  return GPUC_SUCCESS;
}

const char *gpuc_function_name(GpucFunction *f) {
  return f ? f->name : "";
}

void *gpuc_function_handle(GpucFunction *f) {
  return f ? (void *)f->fn : NULL;
}

GpucStatus gpuc_function_info(GpucFunction *f, GpucFunctionInfo *info) {
  if (!f || !info) {
    rt_set_last_error("gpuc_function_info: NULL argument");
    return GPUC_ERROR_INVALID_VALUE;
  }
  GpucContext *ctx = f->module->obj.ctx;
  info->max_threads_per_block = f->max_threads;
  info->num_regs = f->num_regs;
  info->static_shared_bytes = f->static_shared;
  info->local_bytes = f->local_bytes;
  info->max_dynamic_shared_bytes = ctx->info.max_shared_per_block_optin - f->static_shared;
  return GPUC_SUCCESS;
}

GpucStatus gpuc_function_occupancy(GpucFunction *f, unsigned block_threads, size_t dynamic_shared_bytes,
                                   int *blocks_per_sm) {
  if (!f || !blocks_per_sm || block_threads == 0) {
    rt_set_last_error("gpuc_function_occupancy: %s", !f || !blocks_per_sm ? "NULL argument" : "0 threads per block");
    return GPUC_ERROR_INVALID_VALUE;
  }
  GpucContext *ctx = f->module->obj.ctx;
  bool pushed = false;
  GpucStatus s = rt_enter(ctx, &pushed);
  if (s != GPUC_SUCCESS) {
    return s;
  }
  int n = 0;
  CUresult r = rt_cu.occupancy_max_active_blocks(&n, f->fn, (int)block_threads, dynamic_shared_bytes);
  rt_leave(ctx, pushed);
  if (r != CUDA_SUCCESS) {
    char what[160];
    snprintf(what, sizeof what, "gpuc_function_occupancy: cuOccupancyMaxActiveBlocksPerMultiprocessor('%s', %u threads)",
             f->name, block_threads);
    return rt_cu_error(ctx, r, what);
  }
  *blocks_per_sm = n;
  return GPUC_SUCCESS;
}

CUresult rt_function_opt_in_shared(GpucFunction *f, size_t shared) {
  CUresult r = CUDA_SUCCESS;
  if ((int)shared > f->dyn_shared_set) {  /* checked again under the lock */
    GpucContext *ctx = f->module->obj.ctx;
    pthread_mutex_lock(&ctx->lock);
    if ((int)shared > f->dyn_shared_set) {
      r = rt_cu.func_set_attribute(f->fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)shared);
      if (r == CUDA_SUCCESS) {
        f->dyn_shared_set = (int)shared;
      }
    }
    pthread_mutex_unlock(&ctx->lock);
  }
  return r;
}

GpucStatus gpuc_function_cluster_occupancy(GpucFunction *f, unsigned cluster_blocks, unsigned block_threads,
                                           size_t dynamic_shared_bytes, int *clusters) {
  if (!f || !clusters || block_threads == 0 || cluster_blocks == 0) {
    rt_set_last_error("gpuc_function_cluster_occupancy: %s",
                      !f || !clusters ? "NULL argument" : "0 threads per block or blocks per cluster");
    return GPUC_ERROR_INVALID_VALUE;
  }
  *clusters = 0;
  if (!rt_cu.occupancy_max_active_clusters) {
    rt_set_last_error("gpuc_function_cluster_occupancy: the driver has no cuOccupancyMaxActiveClusters");
    return GPUC_SUCCESS;
  }
  GpucContext *ctx = f->module->obj.ctx;
  bool pushed = false;
  GpucStatus s = rt_enter(ctx, &pushed);
  if (s != GPUC_SUCCESS) {
    return s;
  }
  /* past 48 KiB the kernel must have opted in, as gpuc_launch does, or the query fails */
  CUresult r = rt_function_opt_in_shared(f, dynamic_shared_bytes);
  int n = 0;
  if (r == CUDA_SUCCESS) {
    CUlaunchConfig cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.gridDimX = cluster_blocks;  /* the cluster's size is the kernel's own (__cluster_dims__) */
    cfg.gridDimY = cfg.gridDimZ = 1;
    cfg.blockDimX = block_threads;
    cfg.blockDimY = cfg.blockDimZ = 1;
    cfg.sharedMemBytes = (unsigned)dynamic_shared_bytes;
    r = rt_cu.occupancy_max_active_clusters(&n, f->fn, &cfg);
  }
  rt_leave(ctx, pushed);
  if (r != CUDA_SUCCESS) {
    char d[512];
    rt_cu_describe(r, d, sizeof d);
    rt_set_last_error("gpuc_function_cluster_occupancy: '%s' (%u blocks of %u threads, %zu bytes): %s", f->name,
                      cluster_blocks, block_threads, dynamic_shared_bytes, d);
    return GPUC_SUCCESS;
  }
  *clusters = n > 0 ? n : 0;
  return GPUC_SUCCESS;
}

/* The mapping of global `name` in m, if made (ctx->lock held). */
static struct RtMapped *mapped_find_locked(GpucModule *m, const char *name) {
  for (struct RtMapped *w = m->mapped; w; w = w->next) {
    if (strcmp(w->name, name) == 0) {
      return w;
    }
  }
  return NULL;
}

GpucStatus gpuc_module_map_host(GpucModule *m, const char *name, size_t bytes, volatile void **host) {
  const char *api = "gpuc_module_map_host";
  if (!m) {
    rt_set_last_error("%s: NULL module", api);
    return GPUC_ERROR_INVALID_VALUE;
  }
  GpucContext *ctx = m->obj.ctx;
  if (!name || !host) {
    return rt_error(ctx, GPUC_ERROR_INVALID_VALUE, "%s: NULL name or output", api);
  }
  *host = NULL;
  if (bytes == 0) {
    return rt_error(ctx, GPUC_ERROR_INVALID_VALUE, "%s: asked for 0 bytes for '%s'", api, name);
  }
  pthread_mutex_lock(&ctx->lock);
  struct RtMapped *w = mapped_find_locked(m, name);
  size_t had = w ? w->bytes : 0;
  if (w && bytes <= had) {
    *host = w->host;
  }
  pthread_mutex_unlock(&ctx->lock);
  if (*host) {
    return GPUC_SUCCESS;
  }
  if (w) {
    return rt_error(ctx, GPUC_ERROR_INVALID_VALUE, "%s: '%s' was mapped with %zu bytes, asked for %zu", api, name, had, bytes);
  }
  struct RtMapped *made = calloc(1, sizeof *made);
  char *copy = dup_str(name);
  if (!made || !copy) {
    free(made);
    free(copy);
    return rt_error(ctx, GPUC_ERROR_OUT_OF_MEMORY, "%s: out of host memory", api);
  }
  made->name = copy;
  made->bytes = bytes;
  /* made outside the lock (driver calls); kept unless another thread mapped
   * the same global meanwhile */
  bool pushed;
  GpucStatus s = rt_enter(ctx, &pushed);
  if (s != GPUC_SUCCESS) {
    free(copy);
    free(made);
    return s;
  }
  CUdeviceptr global = 0, dev = 0;
  size_t global_bytes = 0;
  CUresult r = rt_cu.module_get_global(&global, &global_bytes, m->mod, name);
  const char *step = "gpuc_module_map_host: cuModuleGetGlobal";
  bool not_pointer = r == CUDA_SUCCESS && global_bytes != sizeof(CUdeviceptr);
  if (r == CUDA_SUCCESS && !not_pointer) {
    step = "gpuc_module_map_host: cuMemHostAlloc";
    r = rt_cu.mem_host_alloc(&made->host, bytes, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP);
    if (r == CUDA_SUCCESS) {
      memset(made->host, 0, bytes);
      step = "gpuc_module_map_host: cuMemHostGetDevicePointer";
      r = rt_cu.mem_host_get_device_pointer(&dev, made->host, 0);
    }
  }
  bool kept = false;
  if (r == CUDA_SUCCESS && !not_pointer) {
    pthread_mutex_lock(&ctx->lock);
    w = mapped_find_locked(m, name);
    if (!w) {
      /* the global's new value, under the lock, before the mapping is seen */
      step = "gpuc_module_map_host: cuMemcpyHtoD";
      r = rt_cu.memcpy_htod(global, &dev, sizeof dev);
      if (r == CUDA_SUCCESS) {
        made->next = m->mapped;
        m->mapped = made;
        *host = made->host;
        kept = true;
      }
    } else if (bytes <= w->bytes) {
      *host = w->host;
    }
    pthread_mutex_unlock(&ctx->lock);
  }
  if (!kept) {
    if (made->host) {
      rt_cu.mem_free_host(made->host);
    }
    free(copy);
    free(made);
  }
  rt_leave(ctx, pushed);
  if (r == CUDA_ERROR_NOT_FOUND) {
    return rt_error(ctx, GPUC_ERROR_NOT_FOUND, "%s: no global '%s' in module %s", api, name, m->name);
  }
  if (not_pointer) {
    return rt_error(ctx, GPUC_ERROR_INVALID_VALUE, "%s: global '%s' of module %s is %zu bytes, not a pointer", api, name,
                    m->name, global_bytes);
  }
  if (r != CUDA_SUCCESS) {
    return rt_cu_error(ctx, r, step);
  }
  if (!*host) {
    return rt_error(ctx, GPUC_ERROR_INVALID_VALUE, "%s: '%s' was mapped with fewer bytes than %zu", api, name, bytes);
  }
  return GPUC_SUCCESS;
}

/* rt_memory.c: device memory from a caching pool, pinned host memory,
 * memset and copies. Sizes under 64 MiB are rounded up to size classes (four
 * per power of two from 512 bytes, so at most 25% is wasted); larger ones to
 * 2 MiB and reused when a cached block is at most 1/8 larger. Freed blocks stay
 * in the pool until the context goes, gpuc_mem_trim, or an out-of-memory, which
 * releases the pool and retries once before reporting the bytes asked and free.
 * A buffer freed while a kernel on another stream still uses it may be handed
 * out again: with several streams, synchronize before freeing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt_internal.h"

#define LARGE_MIN ((size_t)64 << 20)
#define LARGE_GRAIN ((size_t)2 << 20)
#define LARGE_CLASS (RT_NUM_CLASSES - 1)

/* The class of a request and its rounded size; LARGE_CLASS for big ones. */
static int size_class(size_t bytes, size_t *cap) {
  if (bytes <= 512) {
    *cap = 512;
    return 0;
  }
  if (bytes >= LARGE_MIN) {
    *cap = (bytes + LARGE_GRAIN - 1) / LARGE_GRAIN * LARGE_GRAIN;
    if (*cap < bytes) {   /* overflow */
      *cap = bytes;
    }
    return LARGE_CLASS;
  }
  size_t p = 512;
  int lg = 9;
  while (p * 2 < bytes) {
    p *= 2;
    lg++;
  }
  size_t q = p / 4;
  size_t k = (bytes - p + q - 1) / q;   /* 1..4 */
  *cap = p + k * q;
  return 4 * (lg - 9) + (int)k;
}

static size_t hash_ptr(uintptr_t p) {
  return (size_t)((p >> 9) ^ (p >> 21) ^ (p >> 33)) & (RT_HASH_SIZE - 1);
}

void rt_pool_release_locked(GpucContext *ctx) {
  for (int c = 0; c < RT_NUM_CLASSES; c++) {
    RtPoolBlock *b = ctx->pool[c];
    while (b) {
      RtPoolBlock *next = b->next;
      rt_cu.mem_free(b->ptr);
      free(b);
      b = next;
    }
    ctx->pool[c] = NULL;
  }
  ctx->stats.pooled_bytes = 0;
  ctx->stats.pooled_count = 0;
}

/* Take a cached block for (class, cap), or 0. */
static CUdeviceptr pool_take_locked(GpucContext *ctx, int c, size_t cap, size_t *got_cap) {
  RtPoolBlock **pp = &ctx->pool[c];
  for (; *pp; pp = &(*pp)->next) {
    RtPoolBlock *b = *pp;
    if (c != LARGE_CLASS || (b->cap >= cap && b->cap - cap <= cap / 8)) {
      *pp = b->next;
      CUdeviceptr p = b->ptr;
      *got_cap = b->cap;
      ctx->stats.pooled_bytes -= b->cap;
      ctx->stats.pooled_count--;
      free(b);
      return p;
    }
  }
  return 0;
}

static GpucStatus check_ctx(GpucContext *ctx, const char *api) {
  if (!ctx) {
    rt_set_last_error("%s: NULL context", api);
    return GPUC_ERROR_INVALID_VALUE;
  }
  return GPUC_SUCCESS;
}

GpucStatus gpuc_mem_alloc(GpucContext *ctx, size_t bytes, GpucDevPtr *ptr) {
  GpucStatus s = check_ctx(ctx, "gpuc_mem_alloc");
  if (s != GPUC_SUCCESS) {
    return s;
  }
  if (!ptr) {
    return rt_error(ctx, GPUC_ERROR_INVALID_VALUE, "gpuc_mem_alloc: NULL output pointer");
  }
  *ptr = 0;
  if (bytes == 0) {
    return rt_error(ctx, GPUC_ERROR_INVALID_VALUE, "gpuc_mem_alloc: asked for 0 bytes");
  }
  RtAlloc *a = calloc(1, sizeof *a);
  if (!a) {
    return rt_error(ctx, GPUC_ERROR_OUT_OF_MEMORY, "gpuc_mem_alloc: out of host memory");
  }
  bool pushed;
  s = rt_enter(ctx, &pushed);
  if (s != GPUC_SUCCESS) {
    free(a);
    return s;
  }
  size_t cap;
  int c = size_class(bytes, &cap);
  pthread_mutex_lock(&ctx->lock);
  CUdeviceptr p = pool_take_locked(ctx, c, cap, &a->cap);
  CUresult r = CUDA_SUCCESS;
  if (p) {
    ctx->stats.pool_hits++;
  } else {
    ctx->stats.pool_misses++;
    a->cap = cap;
    r = rt_cu.mem_alloc(&p, cap);
    if (r == CUDA_ERROR_OUT_OF_MEMORY) {
      /* Give back what the pool holds and try once more, at the exact size
       * if the rounded one is what does not fit. */
      rt_pool_release_locked(ctx);
      ctx->stats.pool_releases++;
      r = rt_cu.mem_alloc(&p, cap);
      if (r == CUDA_ERROR_OUT_OF_MEMORY && cap > bytes) {
        a->cap = bytes;
        r = rt_cu.mem_alloc(&p, bytes);
      }
    }
  }
  if (r == CUDA_SUCCESS) {
    a->ptr = p;
    a->bytes = bytes;
    size_t h = hash_ptr((uintptr_t)p);
    a->hnext = ctx->allocs[h];
    ctx->allocs[h] = a;
    rt_link(ctx, &a->obj, RT_ALLOC);
    ctx->stats.live_bytes += bytes;
    ctx->stats.live_count++;
  }
  pthread_mutex_unlock(&ctx->lock);
  if (r == CUDA_ERROR_OUT_OF_MEMORY) {
    size_t free_b = 0, total_b = 0;
    rt_cu.mem_get_info(&free_b, &total_b);
    rt_leave(ctx, pushed);
    free(a);
    return rt_error(ctx, GPUC_ERROR_OUT_OF_MEMORY,
                    "gpuc_mem_alloc: out of device memory: asked for %zu bytes (%.1f MiB), %zu bytes (%.1f MiB) "
                    "free of %zu (%.1f MiB) on device %d (%s), after releasing the pool and retrying",
                    bytes, bytes / 1048576.0, free_b, free_b / 1048576.0, total_b, total_b / 1048576.0, ctx->device,
                    ctx->info.name);
  }
  rt_leave(ctx, pushed);
  if (r != CUDA_SUCCESS) {
    free(a);
    char what[128];
    snprintf(what, sizeof what, "gpuc_mem_alloc: cuMemAlloc(%zu bytes)", bytes);
    return rt_cu_error(ctx, r, what);
  }
  *ptr = p;
  return GPUC_SUCCESS;
}

void rt_free_alloc_locked(GpucContext *ctx, RtAlloc *a, bool to_pool) {
  RtAlloc **pp = &ctx->allocs[hash_ptr((uintptr_t)a->ptr)];
  while (*pp && *pp != a) {
    pp = &(*pp)->hnext;
  }
  if (*pp) {
    *pp = a->hnext;
  }
  rt_unlink(ctx, &a->obj);
  ctx->stats.live_bytes -= a->bytes;
  ctx->stats.live_count--;
  size_t cap;
  int c = size_class(a->cap, &cap);
  RtPoolBlock *b = NULL;
  if (to_pool && !ctx->failed && cap == a->cap && ctx->stats.pooled_bytes + cap <= ctx->pool_limit &&
      (b = malloc(sizeof *b))) {
    b->ptr = a->ptr;
    b->cap = a->cap;
    b->next = ctx->pool[c];
    ctx->pool[c] = b;
    ctx->stats.pooled_bytes += cap;
    ctx->stats.pooled_count++;
  } else {
    rt_cu.mem_free(a->ptr);
  }
  free(a);
}

GpucStatus gpuc_mem_free(GpucContext *ctx, GpucDevPtr ptr) {
  GpucStatus s = check_ctx(ctx, "gpuc_mem_free");
  if (s != GPUC_SUCCESS || ptr == 0) {
    return s;
  }
  bool pushed;
  s = rt_enter(ctx, &pushed);
  if (s != GPUC_SUCCESS) {
    return s;
  }
  pthread_mutex_lock(&ctx->lock);
  RtAlloc *a = ctx->allocs[hash_ptr((uintptr_t)ptr)];
  while (a && a->ptr != ptr) {
    a = a->hnext;
  }
  if (a) {
    rt_free_alloc_locked(ctx, a, true);
  }
  pthread_mutex_unlock(&ctx->lock);
  rt_leave(ctx, pushed);
  if (!a) {
    return rt_error(ctx, GPUC_ERROR_INVALID_VALUE,
                    "gpuc_mem_free: 0x%llx was not allocated by this context, or was freed already",
                    (unsigned long long)ptr);
  }
  return GPUC_SUCCESS;
}

GpucStatus gpuc_mem_trim(GpucContext *ctx) {
  GpucStatus s = check_ctx(ctx, "gpuc_mem_trim");
  if (s != GPUC_SUCCESS) {
    return s;
  }
  bool pushed;
  s = rt_enter(ctx, &pushed);
  if (s != GPUC_SUCCESS) {
    return s;
  }
  pthread_mutex_lock(&ctx->lock);
  rt_pool_release_locked(ctx);
  ctx->stats.pool_releases++;
  pthread_mutex_unlock(&ctx->lock);
  rt_leave(ctx, pushed);
  return GPUC_SUCCESS;
}

GpucStatus gpuc_mem_get_info(GpucContext *ctx, size_t *free_bytes, size_t *total_bytes) {
  GpucStatus s = check_ctx(ctx, "gpuc_mem_get_info");
  if (s != GPUC_SUCCESS) {
    return s;
  }
  if (!free_bytes || !total_bytes) {
    return rt_error(ctx, GPUC_ERROR_INVALID_VALUE, "gpuc_mem_get_info: NULL output pointer");
  }
  bool pushed;
  s = rt_enter(ctx, &pushed);
  if (s != GPUC_SUCCESS) {
    return s;
  }
  CUresult r = rt_cu.mem_get_info(free_bytes, total_bytes);
  rt_leave(ctx, pushed);
  return r == CUDA_SUCCESS ? GPUC_SUCCESS : rt_cu_error(ctx, r, "gpuc_mem_get_info: cuMemGetInfo");
}

GpucStatus gpuc_mem_stats(GpucContext *ctx, GpucMemStats *stats) {
  GpucStatus s = check_ctx(ctx, "gpuc_mem_stats");
  if (s != GPUC_SUCCESS) {
    return s;
  }
  if (!stats) {
    return rt_error(ctx, GPUC_ERROR_INVALID_VALUE, "gpuc_mem_stats: NULL output pointer");
  }
  pthread_mutex_lock(&ctx->lock);
  *stats = ctx->stats;
  pthread_mutex_unlock(&ctx->lock);
  return GPUC_SUCCESS;
}

GpucStatus gpuc_host_alloc(GpucContext *ctx, size_t bytes, void **ptr) {
  GpucStatus s = check_ctx(ctx, "gpuc_host_alloc");
  if (s != GPUC_SUCCESS) {
    return s;
  }
  if (!ptr) {
    return rt_error(ctx, GPUC_ERROR_INVALID_VALUE, "gpuc_host_alloc: NULL output pointer");
  }
  *ptr = NULL;
  if (bytes == 0) {
    return rt_error(ctx, GPUC_ERROR_INVALID_VALUE, "gpuc_host_alloc: asked for 0 bytes");
  }
  RtHost *h = calloc(1, sizeof *h);
  if (!h) {
    return rt_error(ctx, GPUC_ERROR_OUT_OF_MEMORY, "gpuc_host_alloc: out of host memory");
  }
  bool pushed;
  s = rt_enter(ctx, &pushed);
  if (s != GPUC_SUCCESS) {
    free(h);
    return s;
  }
  CUresult r = rt_cu.mem_alloc_host(&h->ptr, bytes);
  rt_leave(ctx, pushed);
  if (r != CUDA_SUCCESS) {
    free(h);
    if (r == CUDA_ERROR_OUT_OF_MEMORY) {
      return rt_error(ctx, GPUC_ERROR_OUT_OF_MEMORY, "gpuc_host_alloc: cannot pin %zu bytes (%.1f MiB) of host memory",
                      bytes, bytes / 1048576.0);
    }
    return rt_cu_error(ctx, r, "gpuc_host_alloc: cuMemAllocHost");
  }
  h->bytes = bytes;
  pthread_mutex_lock(&ctx->lock);
  size_t k = hash_ptr((uintptr_t)h->ptr);
  h->hnext = ctx->hosts[k];
  ctx->hosts[k] = h;
  rt_link(ctx, &h->obj, RT_HOST);
  pthread_mutex_unlock(&ctx->lock);
  *ptr = h->ptr;
  return GPUC_SUCCESS;
}

void rt_free_host_locked(GpucContext *ctx, RtHost *h) {
  RtHost **pp = &ctx->hosts[hash_ptr((uintptr_t)h->ptr)];
  while (*pp && *pp != h) {
    pp = &(*pp)->hnext;
  }
  if (*pp) {
    *pp = h->hnext;
  }
  rt_unlink(ctx, &h->obj);
  rt_cu.mem_free_host(h->ptr);
  free(h);
}

GpucStatus gpuc_host_free(GpucContext *ctx, void *ptr) {
  GpucStatus s = check_ctx(ctx, "gpuc_host_free");
  if (s != GPUC_SUCCESS || !ptr) {
    return s;
  }
  bool pushed;
  s = rt_enter(ctx, &pushed);
  if (s != GPUC_SUCCESS) {
    return s;
  }
  pthread_mutex_lock(&ctx->lock);
  RtHost *h = ctx->hosts[hash_ptr((uintptr_t)ptr)];
  while (h && h->ptr != ptr) {
    h = h->hnext;
  }
  if (h) {
    rt_free_host_locked(ctx, h);
  }
  pthread_mutex_unlock(&ctx->lock);
  rt_leave(ctx, pushed);
  if (!h) {
    return rt_error(ctx, GPUC_ERROR_INVALID_VALUE,
                    "gpuc_host_free: %p was not allocated by gpuc_host_alloc in this context, or was freed already", ptr);
  }
  return GPUC_SUCCESS;
}

/* grep "ORDER COPY" if you change these: op_names below. */
typedef enum RtCopyOp {
  OP_MEMSET,  /* dst_d = value */
  OP_HTOD,    /* dst_d = src_h */
  OP_DTOH,    /* dst_h = src_d */
  OP_DTOD     /* dst_d = src_d */
} RtCopyOp;

static const char *const op_names[] = {"[memset]", "[memcpy HtoD]", "[memcpy DtoH]", "[memcpy DtoD]"};

static GpucStatus copy_op(GpucContext *ctx, const char *api, RtCopyOp op, bool async, GpucStream *stream,
                          CUdeviceptr dst_d, void *dst_h, CUdeviceptr src_d, const void *src_h, unsigned char value,
                          size_t bytes) {
  GpucStatus s = check_ctx(ctx, api);
  if (s != GPUC_SUCCESS) {
    return s;
  }
  if (bytes == 0) {
    return GPUC_SUCCESS;
  }
  bool null_arg = false;
  switch (op) {
  case OP_MEMSET:
    null_arg = !dst_d;
    break;
  case OP_HTOD:
    null_arg = !dst_d || !src_h;
    break;
  case OP_DTOH:
    null_arg = !dst_h || !src_d;
    break;
  case OP_DTOD:
    null_arg = !dst_d || !src_d;
    break;
  }
  if (null_arg) {
    return rt_error(ctx, GPUC_ERROR_INVALID_VALUE, "%s: NULL pointer for a copy of %zu bytes", api, bytes);
  }
  bool pushed;
  s = rt_enter(ctx, &pushed);
  if (s != GPUC_SUCCESS) {
    return s;
  }
  CUstream st = rt_stream_of(ctx, stream);
  CUevent ev0 = NULL, ev1 = NULL;
  bool prof = ctx->profile && rt_prof_begin(ctx, st, &ev0, &ev1);
  CUresult r = CUDA_SUCCESS;
  switch (op) {
  case OP_MEMSET:
    r = async || st ? rt_cu.memset_d8_async(dst_d, value, bytes, st) : rt_cu.memset_d8(dst_d, value, bytes);
    break;
  case OP_HTOD:
    r = async || st ? rt_cu.memcpy_htod_async(dst_d, src_h, bytes, st) : rt_cu.memcpy_htod(dst_d, src_h, bytes);
    break;
  case OP_DTOH:
    r = async || st ? rt_cu.memcpy_dtoh_async(dst_h, src_d, bytes, st) : rt_cu.memcpy_dtoh(dst_h, src_d, bytes);
    break;
  case OP_DTOD:
    r = async || st ? rt_cu.memcpy_dtod_async(dst_d, src_d, bytes, st) : rt_cu.memcpy_dtod(dst_d, src_d, bytes);
    break;
  }
  /* A synchronous call on a caller's stream is made synchronous here. */
  if (r == CUDA_SUCCESS && !async && st) {
    r = rt_cu.stream_synchronize(st);
  }
  if (prof) {
    pthread_mutex_lock(&ctx->lock);
    RtProfEntry *e = rt_prof_entry_locked(ctx, op_names[op]);
    pthread_mutex_unlock(&ctx->lock);
    rt_prof_end(ctx, e, st, ev0, ev1, op == OP_DTOD ? 2 * bytes : bytes);
  }
  rt_leave(ctx, pushed);
  if (r != CUDA_SUCCESS) {
    char what[160];
    snprintf(what, sizeof what, "%s (%zu bytes)", api, bytes);
    return rt_cu_error(ctx, r, what);
  }
  return GPUC_SUCCESS;
}

GpucStatus gpuc_memset(GpucContext *ctx, GpucDevPtr dst, unsigned char value, size_t bytes) {
  return copy_op(ctx, "gpuc_memset", OP_MEMSET, false, NULL, dst, NULL, 0, NULL, value, bytes);
}
GpucStatus gpuc_memcpy_htod(GpucContext *ctx, GpucDevPtr dst, const void *src, size_t bytes) {
  return copy_op(ctx, "gpuc_memcpy_htod", OP_HTOD, false, NULL, dst, NULL, 0, src, 0, bytes);
}
GpucStatus gpuc_memcpy_dtoh(GpucContext *ctx, void *dst, GpucDevPtr src, size_t bytes) {
  return copy_op(ctx, "gpuc_memcpy_dtoh", OP_DTOH, false, NULL, 0, dst, src, NULL, 0, bytes);
}
GpucStatus gpuc_memcpy_dtod(GpucContext *ctx, GpucDevPtr dst, GpucDevPtr src, size_t bytes) {
  return copy_op(ctx, "gpuc_memcpy_dtod", OP_DTOD, false, NULL, dst, NULL, src, NULL, 0, bytes);
}
GpucStatus gpuc_memset_async(GpucContext *ctx, GpucDevPtr dst, unsigned char value, size_t bytes, GpucStream *stream) {
  return copy_op(ctx, "gpuc_memset_async", OP_MEMSET, true, stream, dst, NULL, 0, NULL, value, bytes);
}
GpucStatus gpuc_memcpy_htod_async(GpucContext *ctx, GpucDevPtr dst, const void *src, size_t bytes, GpucStream *stream) {
  return copy_op(ctx, "gpuc_memcpy_htod_async", OP_HTOD, true, stream, dst, NULL, 0, src, 0, bytes);
}
GpucStatus gpuc_memcpy_dtoh_async(GpucContext *ctx, void *dst, GpucDevPtr src, size_t bytes, GpucStream *stream) {
  return copy_op(ctx, "gpuc_memcpy_dtoh_async", OP_DTOH, true, stream, 0, dst, src, NULL, 0, bytes);
}
GpucStatus gpuc_memcpy_dtod_async(GpucContext *ctx, GpucDevPtr dst, GpucDevPtr src, size_t bytes, GpucStream *stream) {
  return copy_op(ctx, "gpuc_memcpy_dtod_async", OP_DTOD, true, stream, dst, NULL, src, NULL, 0, bytes);
}

/* rt_launch.c: kernel launches (configuration checked against the kernel's
 * and the device's limits before cuLaunchKernel, a synchronization after each
 * launch in debug mode), streams, events, and the profiling mode: events
 * around every launch and copy, read lazily and summed per kernel. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt_internal.h"

/* "kernel 'mm' (grid 32x32x1, block 33x33x1, 0 bytes dynamic shared memory)" */
static void describe_launch(char *buf, size_t size, const GpucFunction *f, const unsigned g[3], const unsigned b[3],
                            unsigned shared) {
  snprintf(buf, size, "kernel '%s' (grid %ux%ux%u, block %ux%ux%u, %u bytes dynamic shared memory)", f->name, g[0],
           g[1], g[2], b[0], b[1], b[2], shared);
}

GpucStatus gpuc_launch(GpucFunction *f, const GpucLaunchConfig *cfg, void **args) {
  if (!f) {
    rt_set_last_error("gpuc_launch: NULL function");
    return GPUC_ERROR_INVALID_VALUE;
  }
  GpucContext *ctx = f->module->obj.ctx;
  if (!cfg) {
    return rt_error(ctx, GPUC_ERROR_INVALID_VALUE, "gpuc_launch: NULL configuration for kernel '%s'", f->name);
  }
  unsigned g[3] = {cfg->grid[0], cfg->grid[1] ? cfg->grid[1] : 1, cfg->grid[2] ? cfg->grid[2] : 1};
  unsigned b[3] = {cfg->block[0], cfg->block[1] ? cfg->block[1] : 1, cfg->block[2] ? cfg->block[2] : 1};
  unsigned shared = cfg->shared_bytes;
  unsigned long long threads = (unsigned long long)b[0] * b[1] * b[2];
  char what[320];

  /* The checks, cheapest and most common first; the message names the limit. */
  if (g[0] == 0 || b[0] == 0) {
    describe_launch(what, sizeof what, f, g, b, shared);
    return rt_error(ctx, GPUC_ERROR_LAUNCH_CONFIG, "gpuc_launch: %s: the grid and the block must not be empty", what);
  }
  if (threads > (unsigned long long)f->max_threads) {
    describe_launch(what, sizeof what, f, g, b, shared);
    if (f->max_threads < ctx->info.max_threads_per_block) {
      return rt_error(ctx, GPUC_ERROR_LAUNCH_CONFIG,
                      "gpuc_launch: %s: %llu threads per block exceed this kernel's limit of %d "
                      "(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: it uses %d registers per thread; the device allows %d)",
                      what, threads, f->max_threads, f->num_regs, ctx->info.max_threads_per_block);
    }
    return rt_error(ctx, GPUC_ERROR_LAUNCH_CONFIG,
                    "gpuc_launch: %s: %llu threads per block exceed the limit of %d threads per block "
                    "(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)",
                    what, threads, f->max_threads);
  }
  static const char axis[3] = {'x', 'y', 'z'};
  for (int i = 0; i < 3; i++) {
    if (b[i] > ctx->max_block[i]) {
      describe_launch(what, sizeof what, f, g, b, shared);
      return rt_error(ctx, GPUC_ERROR_LAUNCH_CONFIG,
                      "gpuc_launch: %s: block.%c = %u exceeds the device's limit of %u (CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_%c)",
                      what, axis[i], b[i], ctx->max_block[i], axis[i] - 32);
    }
    if (g[i] > ctx->max_grid[i]) {
      describe_launch(what, sizeof what, f, g, b, shared);
      return rt_error(ctx, GPUC_ERROR_LAUNCH_CONFIG,
                      "gpuc_launch: %s: grid.%c = %u exceeds the device's limit of %u (CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_%c)",
                      what, axis[i], g[i], ctx->max_grid[i], axis[i] - 32);
    }
  }
  unsigned long long total_shared = (unsigned long long)f->static_shared + shared;
  if (total_shared > (unsigned long long)ctx->info.max_shared_per_block_optin) {
    describe_launch(what, sizeof what, f, g, b, shared);
    return rt_error(ctx, GPUC_ERROR_LAUNCH_CONFIG,
                    "gpuc_launch: %s: needs %llu bytes of shared memory per block (%d static + %u dynamic), more than "
                    "the device's limit of %d (CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)",
                    what, total_shared, f->static_shared, shared, ctx->info.max_shared_per_block_optin);
  }

  bool pushed;
  GpucStatus s = rt_enter(ctx, &pushed);
  if (s != GPUC_SUCCESS) {
    return s;
  }
  CUresult r = rt_function_opt_in_shared(f, shared);
  if (r != CUDA_SUCCESS) {
    rt_leave(ctx, pushed);
    describe_launch(what, sizeof what, f, g, b, shared);
    char full[400];
    snprintf(full, sizeof full, "gpuc_launch: %s: cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)", what);
    return rt_cu_error(ctx, r, full);
  }
  CUstream st = rt_stream_of(ctx, cfg->stream);
  CUevent ev0 = NULL, ev1 = NULL;
  bool prof = ctx->profile && rt_prof_begin(ctx, st, &ev0, &ev1);
  r = rt_cu.launch_kernel(f->fn, g[0], g[1], g[2], b[0], b[1], b[2], shared, st, args, NULL);
  if (prof) {
    if (!f->prof) {
      pthread_mutex_lock(&ctx->lock);
      f->prof = rt_prof_entry_locked(ctx, f->name);
      pthread_mutex_unlock(&ctx->lock);
    }
    rt_prof_end(ctx, f->prof, st, ev0, ev1, cfg->bytes_moved);
  }
  if (r == CUDA_SUCCESS && ctx->debug) {
    r = st ? rt_cu.stream_synchronize(st) : rt_cu.ctx_synchronize();
  }
  rt_leave(ctx, pushed);
  if (r != CUDA_SUCCESS) {
    describe_launch(what, sizeof what, f, g, b, shared);
    char full[400];
    snprintf(full, sizeof full, "gpuc_launch: %s", what);
    return rt_cu_error(ctx, r, full);
  }
  return GPUC_SUCCESS;
}

/* ---- Streams ---- */

GpucStatus gpuc_stream_new(GpucContext *ctx, GpucStream **out) {
  if (!ctx) {
    rt_set_last_error("gpuc_stream_new: NULL context");
    return GPUC_ERROR_INVALID_VALUE;
  }
  if (!out) {
    return rt_error(ctx, GPUC_ERROR_INVALID_VALUE, "gpuc_stream_new: NULL output");
  }
  *out = NULL;
  GpucStream *s = calloc(1, sizeof *s);
  if (!s) {
    return rt_error(ctx, GPUC_ERROR_OUT_OF_MEMORY, "gpuc_stream_new: out of host memory");
  }
  bool pushed;
  GpucStatus st = rt_enter(ctx, &pushed);
  if (st != GPUC_SUCCESS) {
    free(s);
    return st;
  }
  CUresult r = rt_cu.stream_create(&s->stream, CU_STREAM_DEFAULT);
  rt_leave(ctx, pushed);
  if (r != CUDA_SUCCESS) {
    free(s);
    return rt_cu_error(ctx, r, "gpuc_stream_new: cuStreamCreate");
  }
  pthread_mutex_lock(&ctx->lock);
  rt_link(ctx, &s->obj, RT_STREAM);
  pthread_mutex_unlock(&ctx->lock);
  *out = s;
  return GPUC_SUCCESS;
}

void rt_free_stream_locked(GpucContext *ctx, GpucStream *s) {
  rt_unlink(ctx, &s->obj);
  rt_cu.stream_destroy(s->stream);
  free(s);
}

GpucStatus gpuc_stream_free(GpucStream *s) {
  if (!s) {
    return GPUC_SUCCESS;
  }
  GpucContext *ctx = s->obj.ctx;
  bool pushed;
  GpucStatus st = rt_enter(ctx, &pushed);
  pthread_mutex_lock(&ctx->lock);
  rt_free_stream_locked(ctx, s);
  pthread_mutex_unlock(&ctx->lock);
  if (st == GPUC_SUCCESS) {
    rt_leave(ctx, pushed);
  }
  return st;
}

GpucStatus gpuc_stream_synchronize(GpucContext *ctx, GpucStream *stream) {
  if (!ctx) {
    rt_set_last_error("gpuc_stream_synchronize: NULL context");
    return GPUC_ERROR_INVALID_VALUE;
  }
  bool pushed;
  GpucStatus st = rt_enter(ctx, &pushed);
  if (st != GPUC_SUCCESS) {
    return st;
  }
  CUresult r = rt_cu.stream_synchronize(rt_stream_of(ctx, stream));
  rt_leave(ctx, pushed);
  return r == CUDA_SUCCESS ? GPUC_SUCCESS : rt_cu_error(ctx, r, "gpuc_stream_synchronize: cuStreamSynchronize");
}

GpucStatus gpuc_stream_wait_event(GpucContext *ctx, GpucStream *stream, GpucEvent *event) {
  if (!ctx) {
    rt_set_last_error("gpuc_stream_wait_event: NULL context");
    return GPUC_ERROR_INVALID_VALUE;
  }
  if (!event) {
    return rt_error(ctx, GPUC_ERROR_INVALID_VALUE, "gpuc_stream_wait_event: NULL event");
  }
  bool pushed;
  GpucStatus st = rt_enter(ctx, &pushed);
  if (st != GPUC_SUCCESS) {
    return st;
  }
  CUresult r = rt_cu.stream_wait_event(rt_stream_of(ctx, stream), event->event, 0);
  rt_leave(ctx, pushed);
  return r == CUDA_SUCCESS ? GPUC_SUCCESS : rt_cu_error(ctx, r, "gpuc_stream_wait_event: cuStreamWaitEvent");
}

void *gpuc_stream_handle(GpucContext *ctx, GpucStream *stream) {
  if (stream) {
    return (void *)stream->stream;
  }
  return ctx ? (void *)ctx->stream : NULL;
}

/* ---- Events ---- */

GpucStatus gpuc_event_new(GpucContext *ctx, GpucEvent **out) {
  if (!ctx) {
    rt_set_last_error("gpuc_event_new: NULL context");
    return GPUC_ERROR_INVALID_VALUE;
  }
  if (!out) {
    return rt_error(ctx, GPUC_ERROR_INVALID_VALUE, "gpuc_event_new: NULL output");
  }
  *out = NULL;
  GpucEvent *e = calloc(1, sizeof *e);
  if (!e) {
    return rt_error(ctx, GPUC_ERROR_OUT_OF_MEMORY, "gpuc_event_new: out of host memory");
  }
  bool pushed;
  GpucStatus st = rt_enter(ctx, &pushed);
  if (st != GPUC_SUCCESS) {
    free(e);
    return st;
  }
  CUresult r = rt_cu.event_create(&e->event, CU_EVENT_DEFAULT);
  rt_leave(ctx, pushed);
  if (r != CUDA_SUCCESS) {
    free(e);
    return rt_cu_error(ctx, r, "gpuc_event_new: cuEventCreate");
  }
  pthread_mutex_lock(&ctx->lock);
  rt_link(ctx, &e->obj, RT_EVENT);
  pthread_mutex_unlock(&ctx->lock);
  *out = e;
  return GPUC_SUCCESS;
}

void rt_free_event_locked(GpucContext *ctx, GpucEvent *e) {
  rt_unlink(ctx, &e->obj);
  rt_cu.event_destroy(e->event);
  free(e);
}

GpucStatus gpuc_event_free(GpucEvent *e) {
  if (!e) {
    return GPUC_SUCCESS;
  }
  GpucContext *ctx = e->obj.ctx;
  bool pushed;
  GpucStatus st = rt_enter(ctx, &pushed);
  pthread_mutex_lock(&ctx->lock);
  rt_free_event_locked(ctx, e);
  pthread_mutex_unlock(&ctx->lock);
  if (st == GPUC_SUCCESS) {
    rt_leave(ctx, pushed);
  }
  return st;
}

GpucStatus gpuc_event_record(GpucEvent *e, GpucStream *stream) {
  if (!e) {
    rt_set_last_error("gpuc_event_record: NULL event");
    return GPUC_ERROR_INVALID_VALUE;
  }
  GpucContext *ctx = e->obj.ctx;
  bool pushed;
  GpucStatus st = rt_enter(ctx, &pushed);
  if (st != GPUC_SUCCESS) {
    return st;
  }
  CUresult r = rt_cu.event_record(e->event, rt_stream_of(ctx, stream));
  rt_leave(ctx, pushed);
  return r == CUDA_SUCCESS ? GPUC_SUCCESS : rt_cu_error(ctx, r, "gpuc_event_record: cuEventRecord");
}

GpucStatus gpuc_event_synchronize(GpucEvent *e) {
  if (!e) {
    rt_set_last_error("gpuc_event_synchronize: NULL event");
    return GPUC_ERROR_INVALID_VALUE;
  }
  GpucContext *ctx = e->obj.ctx;
  bool pushed;
  GpucStatus st = rt_enter(ctx, &pushed);
  if (st != GPUC_SUCCESS) {
    return st;
  }
  CUresult r = rt_cu.event_synchronize(e->event);
  rt_leave(ctx, pushed);
  return r == CUDA_SUCCESS ? GPUC_SUCCESS : rt_cu_error(ctx, r, "gpuc_event_synchronize: cuEventSynchronize");
}

GpucStatus gpuc_event_elapsed_ms(GpucEvent *start, GpucEvent *end, float *ms) {
  if (!start || !end || !ms) {
    rt_set_last_error("gpuc_event_elapsed_ms: NULL argument");
    if (start && start->obj.ctx) {
      return rt_error(start->obj.ctx, GPUC_ERROR_INVALID_VALUE, "gpuc_event_elapsed_ms: NULL argument");
    }
    return GPUC_ERROR_INVALID_VALUE;
  }
  GpucContext *ctx = start->obj.ctx;
  *ms = 0;
  bool pushed;
  GpucStatus st = rt_enter(ctx, &pushed);
  if (st != GPUC_SUCCESS) {
    return st;
  }
  CUresult r = rt_cu.event_synchronize(end->event);
  if (r == CUDA_SUCCESS) {
    r = rt_cu.event_elapsed_time(ms, start->event, end->event);
  }
  rt_leave(ctx, pushed);
  return r == CUDA_SUCCESS ? GPUC_SUCCESS : rt_cu_error(ctx, r, "gpuc_event_elapsed_ms: cuEventElapsedTime");
}

/* ---- Profiling ---- */

RtProfEntry *rt_prof_entry_locked(GpucContext *ctx, const char *name) {
  for (RtProfEntry *e = ctx->prof_entries; e; e = e->next) {
    if (strcmp(e->name, name) == 0) {
      return e;
    }
  }
  RtProfEntry *e = calloc(1, sizeof *e);
  if (!e || !(e->name = malloc(strlen(name) + 1))) {
    free(e);
    return NULL;
  }
  strcpy(e->name, name);
  e->next = ctx->prof_entries;
  ctx->prof_entries = e;
  return e;
}

static bool take_event_locked(GpucContext *ctx, CUevent *ev) {
  if (ctx->nspare > 0) {
    *ev = ctx->spare_events[--ctx->nspare];
    return true;
  }
  return rt_cu.event_create(ev, CU_EVENT_DEFAULT) == CUDA_SUCCESS;
}

static void give_event_locked(GpucContext *ctx, CUevent ev) {
  if (ctx->nspare == ctx->cap_spare) {
    size_t cap = ctx->cap_spare ? 2 * ctx->cap_spare : 64;
    CUevent *p = realloc(ctx->spare_events, cap * sizeof *p);
    if (!p) {
      rt_cu.event_destroy(ev);
      return;
    }
    ctx->spare_events = p;
    ctx->cap_spare = cap;
  }
  ctx->spare_events[ctx->nspare++] = ev;
}

bool rt_prof_begin(GpucContext *ctx, CUstream s, CUevent *start, CUevent *end) {
  pthread_mutex_lock(&ctx->lock);
  bool ok = take_event_locked(ctx, start);
  if (ok && !take_event_locked(ctx, end)) {
    give_event_locked(ctx, *start);
    ok = false;
  }
  pthread_mutex_unlock(&ctx->lock);
  if (ok && rt_cu.event_record(*start, s) != CUDA_SUCCESS) {
    pthread_mutex_lock(&ctx->lock);
    give_event_locked(ctx, *start);
    give_event_locked(ctx, *end);
    pthread_mutex_unlock(&ctx->lock);
    ok = false;
  }
  return ok;
}

void rt_prof_end(GpucContext *ctx, RtProfEntry *entry, CUstream s, CUevent start, CUevent end, size_t bytes) {
  CUresult r = rt_cu.event_record(end, s);
  pthread_mutex_lock(&ctx->lock);
  if (r != CUDA_SUCCESS || !entry) {
    give_event_locked(ctx, start);
    give_event_locked(ctx, end);
    pthread_mutex_unlock(&ctx->lock);
    return;
  }
  if (ctx->npending == ctx->cap_pending) {
    size_t cap = ctx->cap_pending ? 2 * ctx->cap_pending : 256;
    RtProfPending *p = realloc(ctx->pending, cap * sizeof *p);
    if (!p) {
      give_event_locked(ctx, start);
      give_event_locked(ctx, end);
      pthread_mutex_unlock(&ctx->lock);
      return;
    }
    ctx->pending = p;
    ctx->cap_pending = cap;
  }
  ctx->pending[ctx->npending++] = (RtProfPending){entry, start, end, bytes};
  /* Bound the events in flight: read them back every few thousand. */
  if (ctx->npending >= 4096) {
    rt_prof_drain_locked(ctx);
  }
  pthread_mutex_unlock(&ctx->lock);
}

void rt_prof_drain_locked(GpucContext *ctx) {
  for (size_t i = 0; i < ctx->npending; i++) {
    RtProfPending *p = &ctx->pending[i];
    float ms = 0;
    if (!ctx->failed && rt_cu.event_synchronize(p->end) == CUDA_SUCCESS &&
        rt_cu.event_elapsed_time(&ms, p->start, p->end) == CUDA_SUCCESS) {
      p->entry->launches++;
      p->entry->total_ms += ms;
      if (p->bytes) {
        p->entry->bytes += (double)p->bytes;
        p->entry->bytes_ms += ms;
      }
    }
    give_event_locked(ctx, p->start);
    give_event_locked(ctx, p->end);
  }
  ctx->npending = 0;
}

void rt_prof_free_locked(GpucContext *ctx) {
  ctx->npending = 0;   /* their events are among the spares or lost with a failed context */
  for (size_t i = 0; i < ctx->nspare; i++) {
    rt_cu.event_destroy(ctx->spare_events[i]);
  }
  free(ctx->spare_events);
  ctx->spare_events = NULL;
  ctx->nspare = ctx->cap_spare = 0;
  free(ctx->pending);
  ctx->pending = NULL;
  ctx->cap_pending = 0;
  RtProfEntry *e = ctx->prof_entries;
  while (e) {
    RtProfEntry *next = e->next;
    free(e->name);
    free(e);
    e = next;
  }
  ctx->prof_entries = NULL;
}

static int by_total_desc(const void *a, const void *b) {
  const RtProfEntry *x = *(RtProfEntry *const *)a, *y = *(RtProfEntry *const *)b;
  return (x->total_ms < y->total_ms) - (x->total_ms > y->total_ms);
}

GpucStatus gpuc_profile_report(GpucContext *ctx, FILE *out) {
  if (!ctx || !out) {
    rt_set_last_error("gpuc_profile_report: NULL argument");
    return GPUC_ERROR_INVALID_VALUE;
  }
  bool pushed;
  GpucStatus st = rt_enter(ctx, &pushed);
  pthread_mutex_lock(&ctx->lock);
  if (st == GPUC_SUCCESS) {
    rt_prof_drain_locked(ctx);
  }
  size_t n = 0;
  for (RtProfEntry *e = ctx->prof_entries; e; e = e->next) {
    n++;
  }
  RtProfEntry **rows = n ? malloc(n * sizeof *rows) : NULL;
  size_t k = 0;
  for (RtProfEntry *e = ctx->prof_entries; e && rows; e = e->next) {
    rows[k++] = e;
  }
  if (rows) {
    qsort(rows, k, sizeof *rows, by_total_desc);
  }
  fprintf(out, "gpuc profile: device %d (%s)%s\n", ctx->device, ctx->info.name,
          ctx->profile ? "" : " [profiling is off: set GPUC_PROFILE=1]");
  fprintf(out, "%-32s %10s %12s %12s %10s\n", "kernel", "launches", "total ms", "mean us", "GB/s");
  for (size_t i = 0; i < k; i++) {
    RtProfEntry *e = rows[i];
    char gbs[32] = "-";
    if (e->bytes > 0 && e->bytes_ms > 0) {
      snprintf(gbs, sizeof gbs, "%.1f", e->bytes / (e->bytes_ms * 1e-3) / 1e9);
    }
    fprintf(out, "%-32s %10zu %12.3f %12.3f %10s\n", e->name, e->launches, e->total_ms,
            e->launches ? e->total_ms * 1e3 / (double)e->launches : 0.0, gbs);
  }
  pthread_mutex_unlock(&ctx->lock);
  free(rows);
  if (st == GPUC_SUCCESS) {
    rt_leave(ctx, pushed);
  }
  fflush(out);
  return GPUC_SUCCESS;
}

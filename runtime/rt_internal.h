/* rt_internal.h: the runtime's internal header: the driver and NVRTC entry
 * points loaded with dlopen, the context and object layouts, and the functions
 * the rt_*.c files share. Nothing here is part of the public API (gpuc.h). */
#ifndef RT_INTERNAL_H
#define RT_INTERNAL_H

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* CUDA headers for types and enum values only; every call goes through the
 * function pointers below, so the macros in cuda.h that rename API calls
 * (cuMemAlloc -> cuMemAlloc_v2) never matter here. */
#include <cuda.h>
#include <nvrtc.h>

#include "gpuc.h"

#define RT_MSG_MAX 8192

/* ---- rt_loader.c: libcuda and libnvrtc ---- */

/* The driver entry points the runtime uses; each is looked up by its exported
 * (versioned) symbol. grep "ORDER CU" if you change this: rt_loader.c's table. */
typedef struct RtCuda {
  CUresult (*init)(unsigned int);
  CUresult (*driver_get_version)(int *);
  CUresult (*get_error_name)(CUresult, const char **);
  CUresult (*get_error_string)(CUresult, const char **);
  CUresult (*device_get_count)(int *);
  CUresult (*device_get)(CUdevice *, int);
  CUresult (*device_get_name)(char *, int, CUdevice);
  CUresult (*device_get_attribute)(int *, CUdevice_attribute, CUdevice);
  CUresult (*device_total_mem)(size_t *, CUdevice);
  CUresult (*primary_ctx_retain)(CUcontext *, CUdevice);
  CUresult (*primary_ctx_release)(CUdevice);
  CUresult (*ctx_get_current)(CUcontext *);
  CUresult (*ctx_set_current)(CUcontext);
  CUresult (*ctx_push_current)(CUcontext);
  CUresult (*ctx_pop_current)(CUcontext *);
  CUresult (*ctx_get_device)(CUdevice *);
  CUresult (*ctx_synchronize)(void);
  CUresult (*mem_get_info)(size_t *, size_t *);
  CUresult (*mem_alloc)(CUdeviceptr *, size_t);
  CUresult (*mem_free)(CUdeviceptr);
  CUresult (*mem_alloc_host)(void **, size_t);
  CUresult (*mem_free_host)(void *);
  CUresult (*mem_host_alloc)(void **, size_t, unsigned int);
  CUresult (*mem_host_get_device_pointer)(CUdeviceptr *, void *, unsigned int);
  CUresult (*memset_d8)(CUdeviceptr, unsigned char, size_t);
  CUresult (*memset_d8_async)(CUdeviceptr, unsigned char, size_t, CUstream);
  CUresult (*memcpy_htod)(CUdeviceptr, const void *, size_t);
  CUresult (*memcpy_dtoh)(void *, CUdeviceptr, size_t);
  CUresult (*memcpy_dtod)(CUdeviceptr, CUdeviceptr, size_t);
  CUresult (*memcpy_htod_async)(CUdeviceptr, const void *, size_t, CUstream);
  CUresult (*memcpy_dtoh_async)(void *, CUdeviceptr, size_t, CUstream);
  CUresult (*memcpy_dtod_async)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
  CUresult (*module_load_data_ex)(CUmodule *, const void *, unsigned int, CUjit_option *, void **);
  CUresult (*module_unload)(CUmodule);
  CUresult (*module_get_function)(CUfunction *, CUmodule, const char *);
  CUresult (*module_get_global)(CUdeviceptr *, size_t *, CUmodule, const char *);
  CUresult (*func_get_attribute)(int *, CUfunction_attribute, CUfunction);
  CUresult (*func_set_attribute)(CUfunction, CUfunction_attribute, int);
  CUresult (*occupancy_max_active_blocks)(int *, CUfunction, int, size_t);
  CUresult (*launch_kernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                            unsigned, CUstream, void **, void **);
  CUresult (*stream_create)(CUstream *, unsigned int);
  CUresult (*stream_destroy)(CUstream);
  CUresult (*stream_synchronize)(CUstream);
  CUresult (*stream_wait_event)(CUstream, CUevent, unsigned int);
  CUresult (*event_create)(CUevent *, unsigned int);
  CUresult (*event_destroy)(CUevent);
  CUresult (*event_record)(CUevent, CUstream);
  CUresult (*event_synchronize)(CUevent);
  CUresult (*event_elapsed_time)(float *, CUevent, CUevent);
  /* optional, not in the table: NULL where the driver lacks it (CUDA 12.0 on) */
  CUresult (*occupancy_max_active_clusters)(int *, CUfunction, const CUlaunchConfig *);
} RtCuda;

/* The NVRTC entry points. grep "ORDER NVRTC" if you change this. */
typedef struct RtNvrtc {
  nvrtcResult (*version)(int *, int *);
  const char *(*get_error_string)(nvrtcResult);
  nvrtcResult (*create_program)(nvrtcProgram *, const char *, const char *, int, const char *const *,
                                const char *const *);
  nvrtcResult (*destroy_program)(nvrtcProgram *);
  nvrtcResult (*compile_program)(nvrtcProgram, int, const char *const *);
  nvrtcResult (*get_program_log_size)(nvrtcProgram, size_t *);
  nvrtcResult (*get_program_log)(nvrtcProgram, char *);
  nvrtcResult (*get_ptx_size)(nvrtcProgram, size_t *);
  nvrtcResult (*get_ptx)(nvrtcProgram, char *);
  nvrtcResult (*get_cubin_size)(nvrtcProgram, size_t *);
  nvrtcResult (*get_cubin)(nvrtcProgram, char *);
  nvrtcResult (*get_num_supported_archs)(int *);
  nvrtcResult (*get_supported_archs)(int *);
} RtNvrtc;

extern RtCuda rt_cu;
extern RtNvrtc rt_nvrtc;

/* Load libcuda and run cuInit once. On failure, msg (RT_MSG_MAX) gets why. */
GpucStatus rt_load_cuda(char *msg);
/* Load libnvrtc once. On failure, msg gets why. */
GpucStatus rt_load_nvrtc(char *msg);
/* "CUDA_ERROR_OUT_OF_MEMORY: out of memory" for a CUresult. */
void rt_cu_describe(CUresult r, char *buf, size_t size);
const char *rt_cu_error_name(CUresult r);

/* ---- rt_error.c ---- */

void rt_set_last_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A driver call failed: map its CUresult to a status. */
GpucStatus rt_status_of(CUresult r);
/* Errors after which the context cannot be used (sticky faults). */
bool rt_cu_is_sticky(CUresult r);
/* Read a 0/1 environment switch. */
bool rt_env_flag(const char *name);

/* ---- rt_sha256.c ---- */

typedef struct RtSha256 {
  uint32_t state[8];
  uint64_t bytes;
  unsigned char buf[64];
  size_t used;
} RtSha256;
void rt_sha256_init(RtSha256 *h);
void rt_sha256_update(RtSha256 *h, const void *data, size_t size);
void rt_sha256_final(RtSha256 *h, unsigned char out[32]);
void rt_sha256(const void *data, size_t size, unsigned char out[32]);
void rt_hex(const unsigned char *bytes, size_t n, char *out);  /* 2n+1 chars */

/* ---- rt_cache.c: the on-disk kernel cache ---- */

/* The cache directory (created if needed) into buf, or NULL when disabled. */
const char *rt_cache_dir(char *buf, size_t size);
/* Look key up; on a verified hit *data (malloc'd) and *size get the payload. */
bool rt_cache_get(const unsigned char key[32], void **data, size_t *size);
/* Store atomically; failures only count (the cache is an optimization). */
void rt_cache_put(const unsigned char key[32], const void *data, size_t size);

/* ---- rt_nvrtc.c ---- */

/* Compile source for arch ("sm_90" or "compute_90") through the cache. On
 * failure msg (RT_MSG_MAX) gets a message (with NVRTC's log) and *log too. */
GpucStatus rt_compile(const char *name, const char *source, const char *arch, const char *const *options,
                      int num_options, void **image, size_t *size, char **log, char *msg);
/* The arch to compile for on a device of compute capability major.minor:
 * "sm_XY" when NVRTC supports it, else "compute_XY" of the newest it supports. */
GpucStatus rt_pick_arch(int major, int minor, char *arch, size_t size, char *msg);

/* ---- Contexts and objects (rt_context.c) ---- */

typedef enum RtKind {
  RT_ALLOC,     /* a live device allocation (RtAlloc) */
  RT_HOST,      /* a pinned host buffer (RtHost) */
  RT_MODULE,    /* GpucModule */
  RT_STREAM,    /* GpucStream */
  RT_EVENT      /* GpucEvent */
} RtKind;

/* Every object a context owns starts with this; the context links them in
 * creation order so teardown can walk them backwards. */
typedef struct RtObject {
  RtKind kind;
  struct RtObject *prev, *next;
  GpucContext *ctx;
} RtObject;

typedef struct RtAlloc {
  RtObject obj;
  CUdeviceptr ptr;
  size_t bytes;        /* asked for */
  size_t cap;          /* size-class bytes actually allocated */
  struct RtAlloc *hnext;  /* hash chain */
} RtAlloc;

typedef struct RtHost {
  RtObject obj;
  void *ptr;
  size_t bytes;
  struct RtHost *hnext;
} RtHost;

/* A freed block kept for reuse. */
typedef struct RtPoolBlock {
  CUdeviceptr ptr;
  size_t cap;
  struct RtPoolBlock *next;
} RtPoolBlock;

#define RT_NUM_CLASSES 160
#define RT_HASH_SIZE 1024

/* Per-kernel (or per-copy-kind) profile totals. */
typedef struct RtProfEntry {
  char *name;
  size_t launches;
  double total_ms;
  double bytes;        /* sum of known byte counts */
  double bytes_ms;     /* time of the launches whose bytes are known */
  struct RtProfEntry *next;
} RtProfEntry;

/* A launch or copy whose events are not read yet. */
typedef struct RtProfPending {
  RtProfEntry *entry;
  CUevent start, end;
  size_t bytes;
} RtProfPending;

struct GpucModule {
  RtObject obj;
  CUmodule mod;
  char arch[32];
  char *name;
  struct GpucFunction *functions;   /* looked up so far */
  struct RtMapped *mapped;          /* gpuc_module_map_host's memory */
};

/* Pinned host memory mapped for the device, whose device address the
 * module's pointer global `name` holds (gpuc_module_map_host). */
struct RtMapped {
  struct RtMapped *next;
  char *name;
  void *host;
  size_t bytes;
};

struct GpucFunction {
  GpucModule *module;
  CUfunction fn;
  char *name;
  int max_threads;        /* CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK */
  int num_regs;
  int static_shared;
  int local_bytes;
  int dyn_shared_set;     /* current CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES */
  RtProfEntry *prof;      /* profile totals (profiling mode) */
  struct GpucFunction *next;
};

struct GpucStream {
  RtObject obj;
  CUstream stream;
};

struct GpucEvent {
  RtObject obj;
  CUevent event;
};

struct GpucContext {
  pthread_mutex_t lock;        /* guards everything below that changes after creation */
  int device;
  CUdevice cu_device;
  CUcontext cu_ctx;
  CUstream stream;             /* the context's stream (caller's or 0) */
  bool owns_primary;           /* we retained the primary context */
  bool debug, profile;
  bool failed;                 /* a sticky fault was seen: teardown stays quiet */
  GpucDeviceInfo info;
  unsigned max_block[3];       /* CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X/Y/Z */
  unsigned max_grid[3];        /* CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X/Y/Z */
  GpucErrorHandler error_handler;
  void *error_user;
  FILE *profile_out;
  char *error;                 /* first error's message, or NULL */
  RtObject *head, *tail;       /* owned objects in creation order */
  RtAlloc *allocs[RT_HASH_SIZE];
  RtHost *hosts[RT_HASH_SIZE];
  RtPoolBlock *pool[RT_NUM_CLASSES];
  size_t pool_limit;
  GpucMemStats stats;
  RtProfEntry *prof_entries;   /* kernels and copy kinds seen */
  RtProfPending *pending;      /* launches whose events are not read yet */
  size_t npending, cap_pending;
  CUevent *spare_events;       /* events for profiling, for reuse */
  size_t nspare, cap_spare;
  struct RtZeroWord { CUstream stream; CUdeviceptr word; } *zero_words;  /* gpuc_context_zero_word */
  size_t nzero_words;
  struct RtCountWord { CUstream stream; int64_t *host; CUdeviceptr dev; } *count_words;  /* gpuc_context_count_word */
  size_t ncount_words;
};

/* Record an error on ctx (first one kept; also the thread's last error and the
 * handler). Returns status so callers can `return rt_error(...)`. */
GpucStatus rt_error(GpucContext *ctx, GpucStatus status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A driver call `what` returned r: record "what failed: NAME: text". */
GpucStatus rt_cu_error(GpucContext *ctx, CUresult r, const char *what);

/* Make ctx's CUDA context current on this thread: nothing to do when it is
 * already (the fast path); set it, and leave it set, on a thread with no
 * current context; push it (*pushed: rt_leave pops) over another library's. */
GpucStatus rt_enter(GpucContext *ctx, bool *pushed);
void rt_leave(GpucContext *ctx, bool pushed);
/* Opt f in to `shared` bytes of dynamic shared memory, as a kernel must
 * past 48 KiB before a launch or an occupancy query; once per larger size.
 * The caller has entered f's context (rt_enter). */
CUresult rt_function_opt_in_shared(GpucFunction *f, size_t shared);

void rt_link(GpucContext *ctx, RtObject *obj, RtKind kind);
void rt_unlink(GpucContext *ctx, RtObject *obj);

/* Tear down one object without locking (teardown and the _free calls). */
void rt_free_alloc_locked(GpucContext *ctx, RtAlloc *a, bool to_pool);
void rt_free_host_locked(GpucContext *ctx, RtHost *h);
void rt_free_module_locked(GpucContext *ctx, GpucModule *m);
void rt_free_stream_locked(GpucContext *ctx, GpucStream *s);
void rt_free_event_locked(GpucContext *ctx, GpucEvent *e);

/* rt_memory.c */
void rt_pool_release_locked(GpucContext *ctx);

/* rt_launch.c: profiling */
RtProfEntry *rt_prof_entry_locked(GpucContext *ctx, const char *name);
/* Take a pair of events and record the start; returns false if profiling
 * could not start (then it is skipped quietly). */
bool rt_prof_begin(GpucContext *ctx, CUstream s, CUevent *start, CUevent *end);
void rt_prof_end(GpucContext *ctx, RtProfEntry *entry, CUstream s, CUevent start, CUevent end, size_t bytes);
void rt_prof_drain_locked(GpucContext *ctx);   /* read finished events into the totals */
void rt_prof_free_locked(GpucContext *ctx);

static inline CUstream rt_stream_of(GpucContext *ctx, GpucStream *s) {
  return s ? s->stream : ctx->stream;
}

#endif /* RT_INTERNAL_H */

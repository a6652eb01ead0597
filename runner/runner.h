/* runner.h: internals of the program runner (libgpuc_runner.a), shared by
 * its files and by the fuzz target fuzz/fuzz_inputs.c. Generated code uses
 * gpuc_program.h only. Sections follow the files:
 *   rn_util.c  errors, growable buffers
 *   rn_type.c  gdsl type strings -> type trees, flattening into components
 *   rn_text.c  the text value reader and writer (docs/testing.md syntax)
 *   rn_npy.c   the .npy reader and writer
 *   rn_args.c  size-variable checking, random inputs
 *   rn_ranks.c `--ranks N`: threads (or GPUs of one process) as ranks
 *   rn_procs.c `--rank R --ranks N`, mpirun, srun: processes as ranks
 *   rn_main.c  gpuc_program_main: the command line, backends, timing, output */
#ifndef GPUC_RUNNER_H
#define GPUC_RUNNER_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "gpuc_program.h"

/* ---- rn_util.c ---- */

/* The first error wins; later rn_err calls are ignored until cleared. */
typedef struct RnError {
  bool set;
  char msg[1024];
} RnError;

void rn_err(RnError *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Put "PREFIX: " in front of the message already set. */
void rn_err_prefix(RnError *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Microseconds of CLOCK_MONOTONIC (the C backend's -t). */
double rn_now_us(void);
/* Elements of one row of v: its columns for rank 2, else 1. */
int64_t rn_row_len(const GpucValue *v);
/* Give `to` (kind and rank set) storage of rows x cols, keeping a buffer of
 * that shape already there; 0, or -1 when out of memory. */
int rn_value_shaped(GpucValue *to, int64_t rows, int64_t cols);

/* Largest input accepted: text on stdin or in a file, and .npy files. */
#define RN_MAX_INPUT_BYTES ((size_t)1 << 34)
/* Largest nonzero size of empty(ROWS, COLS) in text: no one means a billion empty rows. */
#define RN_MAX_EMPTY_DIM ((int64_t)1 << 31)
/* Deepest nesting of brackets, tuples and structs in text and type strings. */
#define RN_MAX_DEPTH 64

/* A growable array of fixed-size elements. */
typedef struct RnBuf {
  unsigned char *data;
  size_t len;   /* elements */
  size_t cap;   /* elements */
  size_t size;  /* bytes per element */
} RnBuf;
/* Pointer to a new zeroed element at the end, or NULL when out of memory. */
void *rn_buf_push(RnBuf *b);

const char *rn_kind_name(GpucKind kind);   /* "f32" */
/* Read a whole file (or stdin when path is NULL) up to RN_MAX_INPUT_BYTES;
 * the result is NUL-terminated, *len excludes the NUL. */
char *rn_read_all(const char *path, size_t *len, RnError *e);

/* ---- rn_type.c ---- */

typedef enum RnTag {
  RN_SCALAR, /* kind */
  RN_TUPLE,  /* count members */
  RN_STRUCT, /* name, count members with field names */
  RN_ARRAY   /* rank dims of elem (a scalar, tuple or struct) */
} RnTag;

typedef enum RnDimKind {
  RN_DIM_VAR,   /* a size variable: name */
  RN_DIM_CONST, /* an integer constant: value */
  RN_DIM_ANY    /* `_`: known at run time only */
} RnDimKind;

typedef struct RnDim {
  RnDimKind kind;
  char name[64];   /* RN_DIM_VAR */
  int64_t value;   /* RN_DIM_CONST */
} RnDim;

typedef struct RnType RnType;
struct RnType {
  RnTag tag;
  GpucKind kind;      /* RN_SCALAR */
  char *name;         /* RN_STRUCT: the struct's name */
  int count;          /* RN_TUPLE, RN_STRUCT: members */
  RnType **members;   /* RN_TUPLE, RN_STRUCT */
  char **fields;      /* RN_STRUCT: field names, parallel to members */
  int rank;           /* RN_ARRAY: 1 or 2 */
  RnDim dims[2];      /* RN_ARRAY */
  RnType *elem;       /* RN_ARRAY */
  int first;          /* index of this node's first component in its top-level value */
  int ncomp;          /* components (leaves) under this node */
};

/* Parse a gdsl type string; NULL with a message on error. */
RnType *rn_type_parse(const char *text, RnError *e);
void rn_type_free(RnType *t);
/* The type as gdsl writes it, structs by name ("Point[n]"), into buf. */
void rn_type_show(const RnType *t, char *buf, size_t size);

/* One flattened component of a value. */
typedef struct RnComp {
  char name[256];        /* "x", "p.0", "ps.x" */
  GpucKind kind;
  int rank;              /* 0, 1, 2 */
  const RnType *array;   /* the enclosing array node (dims), or NULL for rank 0 */
  int value;             /* which parameter (or 0 for the result) it belongs to */
} RnComp;

/* An entry's signature: its parameter and result types and their components. */
typedef struct RnSig {
  const GpucEntry *entry;
  int nparams;
  RnType **params;      /* parsed parameter types */
  char (*shown)[128];   /* parameter types as shown in messages */
  int *first;           /* first component of each parameter */
  int nargs;            /* components of all parameters */
  RnComp *args;
  RnType *result;
  char result_shown[128];
  int nres;
  RnComp *res;
} RnSig;

int rn_sig_init(RnSig *sig, const GpucEntry *entry, RnError *e);
void rn_sig_free(RnSig *sig);
/* Fill comps[] (t->ncomp of them, starting at base) with the names, kinds and
 * ranks of t's leaves under the name prefix. */
void rn_type_components(const RnType *t, const char *prefix, int value, RnComp *comps);

/* ---- rn_main.c ---- */

/* One timed call on one context (gpuc_program.h's opaque GpucRun). */
struct GpucRun {
  GpucEvent *start, *end;
  bool started, ended;   /* marked by the entry during this call */
  GpucContext *ctx;
  bool keep_inputs;      /* a series of runs on the same arguments: upload them once */
  int ninputs;
  GpucDevPtr *inputs;    /* [index]: the device copy of argument index (0: none yet) */
  bool skip_results;     /* a run before the last of a series: array results stay on the device */
};

/* ---- rn_ranks.c ---- */

/* `--ranks N`: the entry's sharded form on N threads as ranks, arguments
 * split by rows, results gathered into `results` as an unsharded run fills
 * them. 0 on success, else nonzero with a message in err. */
int rn_run_ranks(const GpucShardInfo *info, int ranks, int nargs, const GpucValue *args, int nres, GpucValue *results,
                 char *err, size_t errlen);

/* `--ranks N` on GPUs: rank r on device r with its own context, the
 * program's module loaded there, timing events, and an NCCL communicator
 * over the N devices (gpuc_comm_nccl_init_all). NULL with a message in err:
 * more ranks than visible GPUs (naming both), no libnccl (what was tried). */
typedef struct RnGpuRanks RnGpuRanks;
RnGpuRanks *rn_gpu_ranks_new(int ranks, const GpucProgram *prog, bool profile, char *err, size_t errlen);
void rn_gpu_ranks_free(RnGpuRanks *g);
int rn_gpu_ranks_count(const RnGpuRanks *g);
/* One call of info->run_cuda on every rank (a thread each); *us gets the
 * slowest rank's timed span (gpuc_run_mark_start .. mark_end). */
int rn_run_ranks_cuda(RnGpuRanks *g, const GpucShardInfo *info, int nargs, const GpucValue *args, int nres,
                      GpucValue *results, double *us, char *err, size_t errlen);

/* ---- rn_procs.c ---- */

/* Processes as ranks (`--rank R --ranks N`, mpirun, srun). From the
 * launchers' variables (OMPI_COMM_WORLD_*, PMI_*, SLURM_*): 1 with *rank,
 * *size and the rank's variable name set, 0 when none applies (without
 * `required`, only Open MPI's and PMI's with a size above 1, and not with
 * GPUC_RANKS_FROM_ENV=0), -1 with a message. */
int rn_procs_from_env(bool required, int *rank, int *size, const char **var, char *err, size_t errlen);
/* The launcher's rank on this host (the GPU to use), -1 when unknown, -2 on a bad value (message in err). */
int rn_procs_local_rank(char *err, size_t errlen);
/* Meet the other ranks (gpuc_comm_tcp_new at $GPUC_MASTER_ADDR:$GPUC_MASTER_PORT or
 * MASTER_ADDR:MASTER_PORT, GPUC_BOOTSTRAP_TIMEOUT seconds, default 60); NULL with a message. */
struct GpucComm *rn_procs_connect(int rank, int size, char *err, size_t errlen);

typedef struct RnProcRun {
  const struct GpucComm *tcp;    /* the runner's communicator: the entry's on the C backend, results, times */
  const struct GpucComm *nccl;   /* the CUDA backend's, over the ranks' GPUs */
  GpucContext *ctx;              /* this rank's GPU; NULL: the C backend */
  GpucModule *module;
  GpucEvent *start, *end;
} RnProcRun;
/* One call of the sharded entry on this rank's args (its rows); results on
 * rank 0 as an unsharded run fills them, elsewhere this rank's own; *us the
 * slowest rank's time. */
int rn_run_procs(const RnProcRun *p, const GpucShardInfo *info, int nargs, const GpucValue *args, int nres,
                 GpucValue *results, double *us, char *err, size_t errlen);

/* ---- rn_text.c ---- */

typedef struct RnReader {
  const char *src;      /* NUL-terminated */
  size_t len, pos;
  int line, col;        /* of pos, from 1 */
  const char *file;     /* "<stdin>" or a path, for messages */
} RnReader;

void rn_reader_init(RnReader *r, const char *src, size_t len, const char *file);
/* Skip white space and # comments; true when only those remain. */
bool rn_reader_at_end(RnReader *r);
/* Read one value of type t into comps[0 .. t->ncomp-1] (data malloc'd; on
 * error every comps[i].data is freed and NULL). Messages start "FILE:L:C: ". */
int rn_text_read(RnReader *r, const RnType *t, GpucValue *comps, RnError *e);
/* Write one value of type t from its components, no newline. */
void rn_text_write(FILE *out, const RnType *t, const GpucValue *comps);
/* Shortest text that reads back to x: "1.5", "1e+20", "-0.0", "nan". */
void rn_format_f32(float x, char *buf, size_t size);
void rn_format_f64(double x, char *buf, size_t size);

/* ---- rn_npy.c ---- */

/* Read a .npy image from memory into v (any supported dtype, rank 0-2). */
int rn_npy_read_mem(const unsigned char *buf, size_t len, GpucValue *v, RnError *e);
/* Read a .npy file; messages do not name the file (callers do). */
int rn_npy_read_file(const char *path, GpucValue *v, RnError *e);
/* Part `part` of `parts` of a .npy file: rows [rows * part / parts,
 * rows * (part + 1) / parts) of a rank 1 or 2 array (a scalar whole), with
 * the header and length checked as for the whole file and only those rows
 * read; *rows gets the file's rows (-1 for a scalar). */
int rn_npy_read_part(const char *path, int part, int parts, GpucValue *v, int64_t *rows, RnError *e);
/* Write v as a version 1.0 .npy image. */
int rn_npy_write(FILE *out, const GpucValue *v, RnError *e);
const char *rn_npy_descr(GpucKind kind);   /* "<f4" */

/* ---- rn_args.c ---- */

/* Size variables bound so far, with the argument that bound each. */
typedef struct RnSizes {
  int count;
  struct {
    char name[64];
    int64_t value;
    char from[64];   /* argument name */
  } v[64];
} RnSizes;

int64_t rn_sizes_get(const RnSizes *s, const char *name);   /* -1 when unbound */
int rn_sizes_bind(RnSizes *s, const char *name, int64_t value, const char *from);
/* Check parameter p's components (already read) against its type: shapes of
 * the components of one array agree, constants match, size variables agree
 * with those bound before (binding new ones). Messages name the argument. */
int rn_check_param(const RnSig *sig, int p, const GpucValue *comps, RnSizes *sizes, RnError *e);
/* Set kind, rank, shape (-1 where unknown) of the result components and
 * allocate those whose shape is known. */
int rn_prepare_results(const RnSig *sig, const RnSizes *sizes, GpucValue *res, RnError *e);
/* Generate parameter p's components: sizes from `sizes`, values from a
 * splitmix64 stream of seed (floats in [0, 1), integers in [0, 100), bools). */
int rn_random_param(const RnSig *sig, int p, RnSizes *sizes, uint64_t seed, GpucValue *comps, RnError *e);

void rn_values_free(GpucValue *v, int n);

#endif /* GPUC_RUNNER_H */

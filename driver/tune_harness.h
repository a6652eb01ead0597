/* tune_harness.h: the measuring program of `gpuc tune` (tune_harness.c).
 * One race of tune_cmd.c is one harness: the race's variants as exports of
 * a copy of the program (`export ENTRY<...> as ENTRY__tuneI;`), compiled by
 * `gpuc --emit=cuda` (or `--emit=c` for the C backend) and included by a
 * generated main that uploads the bench inputs once, checks every variant's
 * result against variant 0's, then answers "time variant I" requests on a
 * pipe: one sample, CUDA events (a monotonic clock on the C backend) around
 * a fixed number of back-to-back calls per bench case, the geometric mean
 * over the cases. Prefix th_. */
#ifndef GPUC_TUNE_HARNESS_H
#define GPUC_TUNE_HARNESS_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

/* A named argument of the entry's launcher in one bench case: a size or a
 * parameter, from a .npy file (an array) or a C literal (a scalar). */
typedef struct ThValue {
    char *name;
    char *npy;     /* NULL: a scalar, see literal */
    char *literal; /* "2.0f", "1024" */
} ThValue;

typedef struct ThCase {
    ThValue *v;
    int n;
} ThCase;

/* How to build a harness: the program, the entry, the variants'
 * template arguments ("128, 39, 39"), the bench cases. */
typedef struct ThSpec {
    const char *self;  /* this gpuc */
    const char *file;  /* the program */
    const char *dir;   /* scratch directory */
    const char *entry;
    bool cuda;         /* CUDA backend (nvcc), else the C backend (cc) */
    const char *arch;  /* nvcc -arch (sm_90), NULL: native */
    double sample_us;  /* the least time of one sample per case (back-to-back calls) */
    int min_calls;     /* the least number of calls of one sample per case */
    char **targs;      /* per variant */
    int nvariants;
    const ThCase *cases;
    int ncases;
} ThSpec;

/* A running harness. */
typedef struct ThHarness {
    pid_t pid;
    FILE *to, *from; /* its stdin and stdout */
} ThHarness;

/* Write, build and start the harness of spec. why[i] gets a message (malloc'd)
 * for a variant that failed to run or whose result differs from variant
 * 0's, NULL for one that is fine. Returns NULL, or a message (malloc'd) when
 * no variant can be measured (the build failed, the program could not start). */
char *th_start(const ThSpec *spec, ThHarness *h, char **why);
/* One sample of variant i: *us per call, the geometric mean over the cases. */
char *th_sample(ThHarness *h, int i, double *us);
/* End the harness (closes its input, waits for it). */
void th_stop(ThHarness *h);

#endif

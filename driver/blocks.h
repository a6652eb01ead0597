/* blocks.h: what `gpuc test` (test_cmd.c) and `gpuc bench` (bench_cmd.c)
 * share (blocks.c, and tb_values.c for types, values, .npy files and
 * generated inputs): the `//!` blocks of .gdsl files, gdsl type strings and
 * values as components, .npy files, Philox-generated inputs, and building a
 * file's executable and running one of its entries (or fns, through a
 * generated wrapper entry). Formats: docs/testing.md, docs/bench.md.
 * Prefix tb_. */
#ifndef GPUC_BLOCKS_H
#define GPUC_BLOCKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ---- memory and strings (exit(1) when out of memory) ---- */
void *tb_malloc(size_t n);
void *tb_realloc(void *p, size_t n);
char *tb_strndup(const char *s, size_t n);
char *tb_strdup(const char *s);
char *tb_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *tb_trim(char *s);                 /* in place: leading and trailing blanks */
char *tb_first_line(const char *s);     /* malloc'd */
/* A size of a bench block's `size NAME = ...` line: N, 2^K, 2^K+N or 2^K-N,
 * blanks around it allowed; false if s is not one. */
bool tb_read_size(const char *s, long long *v);

/* A growable list of malloc'd strings (command-line arguments). */
typedef struct TbArgs {
    char **v;
    int n;
} TbArgs;
void tb_args_add(TbArgs *a, char *owned);
void tb_args_free(TbArgs *a);

/* ---- types: gdsl type strings as the executables spell them ---- */
/* Scalar kinds, numbered like GpucKind (runner/gpuc_program.h). grep "ORDER KIND" */
enum { TB_BOOL, TB_I32, TB_I64, TB_U32, TB_U64, TB_F32, TB_F64, TB_NONE };
extern const char *const tb_kind_names[];
extern const size_t tb_kind_size[];

typedef enum { TB_SCALAR, TB_TUPLE, TB_STRUCT, TB_ARRAY } TbTypeKind;

typedef struct TbType {
    TbTypeKind k;
    int scalar;            /* TB_SCALAR: TB_* kind */
    int n;                 /* TB_TUPLE, TB_STRUCT: element count (0 for a bare struct name) */
    struct TbType **elems; /* ... their types */
    char **fields;         /* TB_STRUCT: field names */
    char *name;            /* TB_STRUCT: its name */
    int rank;              /* TB_ARRAY: 1 or 2 */
    long long dims[2];     /* TB_ARRAY: integer sizes, -1 for names and _ */
    char *dimnames[2];     /* TB_ARRAY: the size names (or "_"), NULL for integers */
    struct TbType *elem;   /* TB_ARRAY: element type */
    int leaf0, nleaves;    /* components: leaf0 .. leaf0+nleaves-1 of the top type */
} TbType;

/* Parse a type string; NULL if malformed. With bare_structs, a struct may be
 * given by name alone (`Point[64]`, as generated inputs write it). */
TbType *tb_parse_type(const char *s, bool bare_structs);
void tb_type_free(TbType *t);
int tb_leaf_kind(const TbType *t, int leaf);

/* ---- values: one component per leaf of a type ---- */
typedef struct TbComp {
    int kind;
    int rank;
    long long shape[2];
    size_t count, cap;
    unsigned char *data;
} TbComp;

void tb_comps_free(TbComp *c, int n);
/* Text in the value syntax read against t; NULL and a message on error. */
TbComp *tb_parse_value(const char *text, const TbType *t, char *err, size_t errlen);
/* Bytes of the data of n components. */
uint64_t tb_comps_bytes(const TbComp *c, int n);

bool tb_npy_write(const char *path, int kind, int rank, const long long *shape, const void *data, size_t count);
bool tb_npy_read(const char *path, TbComp *c, char *err, size_t errlen);

/* ---- //! blocks ---- */
typedef struct TbItem {
    char *text;     /* the line after `//!`, continuation lines joined with spaces */
    int line, col;  /* where it starts in the file (col from 1) */
} TbItem;

typedef struct TbBlock {
    bool bench;     /* a `bench` block, else a `test` block */
    int line, col;  /* of the word test / bench */
    char *entry, *desc;
    TbItem *items;
    int nitems;
} TbBlock;

/* Every block of a file's text (src is modified). A block starts at a
 * `//! test` or `//! bench` line and ends at the next such line or at the
 * first line that is not a `//!` line. */
TbBlock *tb_read_blocks(char *src, int *nblocks);
void tb_blocks_free(TbBlock *b, int n);
/* The item `NAME = VALUE` of the block for name: VALUE (in the item's text),
 * or NULL. */
const char *tb_block_input(const TbBlock *bl, const char *name, const TbItem **item);

/* ---- generated inputs ---- */
/* Size variables bound by a bench block (`size n = ...`). */
typedef struct TbSize {
    const char *name;
    long long value;
} TbSize;

/* `random TYPE seed S [in LO .. HI]` (spec: the text after `random `) for
 * parameter pname of type ptype (the executable's spelling): writes one .npy
 * file per component (base.LEAF.npy) and adds the matching `--in` arguments
 * to args. Sizes in TYPE and LO/HI may be names from sizes. Adds the bytes
 * generated to *bytes. Returns NULL, or a malloc'd message. */
char *tb_gen_random(const char *spec, const char *pname, const char *ptype, const TbSize *sizes, int nsizes,
                    const char *base, TbArgs *args, char ***files, int *nfiles, uint64_t *bytes);

typedef struct TbSig TbSig;
/* The inputs of bench block bl for the entry sig at sizes (gpuc bench and
 * gpuc tune): a parameter that is a size gets its value and an inline value
 * (checked against the parameter's type) goes as it is, both on a line of
 * the standard input file in; a generated one (`random ...`) becomes .npy
 * files base.P.LEAF.npy (tb_gen_random). Adds the bytes of every input to
 * *bytes. Returns NULL, or a malloc'd message with its place in *line and
 * *col (the block's, or the input's item). */
char *tb_write_inputs(const TbBlock *bl, const TbSig *sig, const TbSize *sizes, int nsizes, const char *base,
                      FILE *in, TbArgs *args, char ***files, int *nfiles, uint64_t *bytes, int *line, int *col);

/* ---- files ---- */
/* Call file(ctx, F) for path if it is a file, else for every .gdsl file
 * under the directory path (sorted, hidden names skipped, 16 levels deep);
 * error(ctx, P, MESSAGE) for a path that cannot be read. */
void tb_each_gdsl(const char *path, void (*file)(void *ctx, const char *path),
                  void (*error)(void *ctx, const char *path, const char *msg), void *ctx);

/* ---- executables ---- */
struct TbSig {
    char *name;              /* the entry of the executable */
    int nparams;
    char **pnames, **ptypes;
    char *result;
};

typedef struct TbBuild TbBuild;

/* State of one `gpuc test` or `gpuc bench` run. */
typedef struct TbSession {
    const char *self;    /* this gpuc */
    char *tmp;           /* scratch directory */
    int counter;         /* unique names in tmp */
    unsigned timeout;    /* seconds a run of a program may take (0: none) */
    TbBuild **builds;    /* of the current file */
    int nbuilds;
    char *ast;           /* `gpuc --emit=ast` of the current file, when needed */
    TbArgs wrap;         /* a command that runs each program (gpuc test: $GPUC_TEST_WRAP) */
    char *defines;       /* "ENTRY.P=V\n" lines added to every build before the block's (gpuc bench -D); NULL: none */
} TbSession;

/* Start (self: /proc/self/exe, a scratch directory); 0 or -1 after a message. */
int tb_session_init(TbSession *s);
/* Remove the builds of the current file (call when moving to the next file). */
void tb_session_next_file(TbSession *s);
void tb_session_free(TbSession *s);

/* What running block bl of file needs: the program built with the block's
 * `define`s, and the signature of bl->entry in it. An entry or export runs
 * as itself; a fn of the file runs through a wrapper entry generated for it.
 * Returns 0 with *exe and *sig (owned by the session); 1 when building failed
 * (*msg: gpuc's messages, malloc'd); 2 when the block's entry cannot be run
 * (*msg says why, malloc'd; *skip when the reason is a limit, not an error). */
int tb_prepare(TbSession *s, const char *file, const TbBlock *bl, const char **exe, const TbSig **sig,
               const char **run_name, char **msg, bool *skip);
/* The same with more gpuc options for the builds (opts: space-separated, e.g.
 * "--arch=none"); builds with other options are other builds. */
int tb_prepare_opts(TbSession *s, const char *file, const TbBlock *bl, const char *opts, const char **exe,
                    const TbSig **sig, const char **run_name, char **msg, bool *skip);

/* Run entry run_name of exe on backend with the extra arguments, standard
 * input from stdin_path (NULL: /dev/null), the result as nresults .npy
 * components. Returns the exit status (-1 when a result could not be read;
 * 128+14 after the timeout); results in *out (NULL unless status 0), the
 * program's stderr (trimmed) in *errtext. */
int tb_run(TbSession *s, const char *exe, const char *run_name, const char *backend, const TbArgs *extra,
           const char *stdin_path, int nresults, TbComp **out, char **errtext);

/* One run of an entry for tb_run_all: what tb_run takes, and what it gives. */
typedef struct TbRun {
    const char *exe, *run_name, *backend;
    const TbArgs *extra;    /* more arguments (--in), or NULL */
    const char *stdin_path; /* NULL: no standard input */
    int nresults;
    int status;             /* filled in: as tb_run returns */
    TbComp *out;            /* filled in: the results (NULL unless status 0) */
    char *errtext;          /* filled in: the program's stderr, trimmed (malloc'd) */
} TbRun;

/* Run them all, each exactly as tb_run would, but the runs of one executable
 * in one process (`EXE --batch`, docs/executables.md), started again for the
 * runs left when a run fails inside the CUDA backend or the process dies.
 * With s->wrap (a sanitizer), or paths holding tabs or newlines, one process
 * per run through tb_run. */
void tb_run_all(TbSession *s, TbRun *runs, int n);

#endif

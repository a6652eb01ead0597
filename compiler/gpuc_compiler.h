/* gpuc_compiler.h: the gpuc compiler as a library. A host program (the gpuc
 * command, the Python package, any C program) compiles .gdsl source in its
 * own process and gets the emitted text and the diagnostics back: the
 * library never prints and never exits.
 *
 *     GpucCompileOptions o;
 *     gpuc_compiler_options_init(&o);
 *     o.path = "dot.gdsl";
 *     GpucCompileResult *r = NULL;
 *     int status = gpuc_compiler_compile(&o, GPUC_EMIT_CUDA, &r);
 *     if (status != GPUC_COMPILE_OK) {
 *         fputs(gpuc_compiler_result_rendered(r), stderr);   // as gpuc prints them
 *     } else {
 *         size_t n;
 *         const char *cuda = gpuc_compiler_result_output(r, "source", &n);
 *         ...
 *     }
 *     gpuc_compiler_result_free(r);
 *
 * Threads: every call is serialised by one global lock inside the library
 * (the frontend and backend keep some per-compilation state in globals,
 * reset at the start and end of each compilation), so any thread may call
 * any function at any time; compilations just do not run in parallel. A
 * result belongs to its caller and may be read from any thread.
 *
 * Link: libgpuc_compiler.a (with -lm) or libgpuc_compiler.so. Prefix:
 * gpuc_compiler_ for functions, GPUC_ for constants. Defined in
 * compiler/compile.c, where the pipeline is (docs/compiler_api.md). */
#ifndef GPUC_COMPILER_H
#define GPUC_COMPILER_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What to produce. The named outputs of each kind are listed on the right
 * (gpuc_compiler_result_output); every kind parses and checks first. */
typedef enum GpucEmit {
    GPUC_EMIT_CHECK,       /* nothing: parse and check only (gpuc FILE) */
    GPUC_EMIT_TOKENS,      /* "source": the main file's tokens, one a line (--emit=tokens) */
    GPUC_EMIT_AST,         /* "source": the checked program (--emit=ast) */
    GPUC_EMIT_PARAMS,      /* "source": the tunable template parameters (--list-params) */
    GPUC_EMIT_IR,          /* "source": the IR after fusion and its kernels (--emit=ir) */
    GPUC_EMIT_IR_UNFUSED,  /* "source": the IR before fusion (--emit=ir-unfused) */
    GPUC_EMIT_C,           /* "source": reference C (--emit=c) */
    GPUC_EMIT_CUDA,        /* "source": CUDA C, also an nvcc include (--emit=cuda) */
    GPUC_EMIT_PROGRAM,     /* "source": the C backend with the runner's program table
                              and main, what `gpuc -o PROG` compiles (--emit=program) */
    GPUC_EMIT_LIB,         /* "source", "header", "manifest": NAME.c, NAME.h and NAME.json
                              of --emit=lib (docs/library.md), not compiled: the
                              caller compiles NAME.c (see gpuc_compiler_build_lib) */
    GPUC_EMIT_MANIFEST,    /* "manifest": NAME.json alone: the entries with their
                              parameters, types, source lines and template parameters,
                              for a host that wants the signatures without emitting */
    GPUC_EMIT_C_SHARD,     /* "source": reference C, then the sharded entries over
                              runtime/gpuc_comm.h and their call table (--emit=c-shard,
                              docs/sharding.md) */
    GPUC_EMIT_CUDA_SHARD,  /* "source": CUDA C, then the sharded entries' kernels and
                              their launchers over gpuc_comm.h (NCCL) and the call
                              table (--emit=cuda-shard, docs/sharding.md) */
    GPUC_EMIT_CUDA_KERNELS, /* "source": CUDA C with the kernels of the plain entries and
                              of the sharded entries ir_shard accepts (the others left
                              out quietly): what `gpuc -o PROG` compiles into images */
} GpucEmit;

/* What gpuc_compiler_compile returns (and gpuc_compiler_result_status). */
enum {
    GPUC_COMPILE_OK = 0,              /* outputs are complete */
    GPUC_COMPILE_ERRORS = 1,          /* errors in the program (diagnostics say which) */
    GPUC_COMPILE_BAD_OPTIONS = 2,     /* the options themselves are wrong (a diagnostic says how) */
    GPUC_COMPILE_INTERNAL_ERROR = 70, /* a gpuc bug, reported as an "internal error" diagnostic */
};

typedef struct GpucCompileOptions {
    /* The program: either `path` (a .gdsl file), or `source` (its text,
     * source_len bytes; 0 = strlen) shown in messages as `source_name`
     * (NULL: "<string>"). Imports resolve relative to the file, for text
     * relative to source_name's directory (the current one for "<string>"). */
    const char *path;
    const char *source;
    size_t source_len;
    const char *source_name;
    /* Where `import "std/..."` looks; NULL = this gpuc's standard library
     * (the source tree's, or PREFIX/share/gpuc/stdlib when installed). */
    const char *stdlib_dir;
    /* Template parameters, "NAME=VALUE" (every entry and fn that has NAME) or
     * "ENTRY.NAME=VALUE" (that one only), as gpuc's -D. */
    const char *const *defines;
    int ndefines;
    /* 1 (gpuc's default, what gpuc_compiler_options_init sets): all passes;
     * 0 (gpuc -O0): no rewrites and no fusion, each operation its own kernel.
     * A zeroed struct means 0: start from gpuc_compiler_options_init. */
    int opt_level;
    /* GPUC_EMIT_LIB / GPUC_EMIT_MANIFEST: the C prefix and file stem of the
     * library (NAME_new, NAME.h; NULL: the file's stem), and the GPU images the
     * caller will embed ("sm_80,sm_90,compute_90"; NULL or "": none, then
     * NAME_new says the library has no kernels). */
    const char *lib_name;
    const char *archs;
    /* -e NAME: if set, it must name an entry, export or fn of the main file
     * (what an executable can run), else an error. */
    const char *entry;
    /* Debugging, as gpuc's options (they write into the "source" output):
     * dump_after: the IR after pass PASS ("all": after each);
     * explain_fusion: why operations were or were not fused. */
    const char *dump_after;
    int explain_fusion;
} GpucCompileOptions;

/* Zero every field, then opt_level = 1 (all passes). */
void gpuc_compiler_options_init(GpucCompileOptions *o);

/* A diagnostic. `file` is NULL (and line, col 0) for one without a location,
 * which gpuc renders as "gpuc: error: message". */
typedef struct GpucDiagnostic {
    const char *file;
    int line, col;        /* 1-based */
    const char *severity; /* "error", "note" or "internal error" */
    const char *message;  /* the text after "severity: ", without a newline */
    const char *rendered; /* "file:line:col: error: message\n" + source line + caret line */
} GpucDiagnostic;

typedef struct GpucCompileResult GpucCompileResult;

/* Compile as `o` says and produce `emit`. *result is always set (free it
 * with gpuc_compiler_result_free), except when o or result is NULL (then
 * GPUC_COMPILE_BAD_OPTIONS). Returns the status, one of GPUC_COMPILE_*. */
int gpuc_compiler_compile(const GpucCompileOptions *o, GpucEmit emit, GpucCompileResult **result);

/* The emit kind for a name of gpuc's --emit ("ir", "cuda", "lib", "manifest",
 * "params", "check", ...); -1 for an unknown name. */
int gpuc_compiler_emit_kind(const char *name);

int gpuc_compiler_result_status(const GpucCompileResult *r);
/* An output by name ("source", "header", "manifest"), NUL-terminated, its
 * length in *len (may be NULL); NULL if this emit kind has no such output.
 * After errors, what was produced before them (possibly nothing). */
const char *gpuc_compiler_result_output(const GpucCompileResult *r, const char *name, size_t *len);
/* Errors (and internal errors) reported; notes are not counted. */
int gpuc_compiler_result_error_count(const GpucCompileResult *r);
int gpuc_compiler_result_diagnostic_count(const GpucCompileResult *r);
/* Diagnostic i (0-based, in the order reported), or NULL out of range. */
const GpucDiagnostic *gpuc_compiler_result_diagnostic(const GpucCompileResult *r, int i);
/* Every diagnostic's rendered text, concatenated: exactly what gpuc prints
 * on standard error. "" when there are none. */
const char *gpuc_compiler_result_rendered(const GpucCompileResult *r);
/* The files read (the main file, then its imports), for dependencies and
 * caches; for source text, source_name first. */
int gpuc_compiler_result_file_count(const GpucCompileResult *r);
const char *gpuc_compiler_result_file(const GpucCompileResult *r, int i);
void gpuc_compiler_result_free(GpucCompileResult *r);

/* Where `import "std/..."` looks when stdlib_dir is NULL: $GPUC_STDLIB if
 * set, else the source tree's stdlib/ of a build tree, else
 * PREFIX/share/gpuc/stdlib beside the installed library or program. The
 * string is static (not to be freed). */
const char *gpuc_compiler_default_stdlib_dir(void);

/* gpuc's version ("0.1.0"). */
const char *gpuc_compiler_version(void);

/* One kernel image for images.h: an architecture ("sm_90", or "compute_90"
 * for PTX) and its bytes (from the runtime's gpuc_compile_cuda_to_image). */
typedef struct GpucImageData {
    const char *name;   /* the architecture */
    const void *data;   /* the image */
    size_t size;        /* its bytes */
} GpucImageData;

/* Write images as images.h at path: `static const char gpuc_image_I[]` per
 * image and `static const GpucImage gpuc_images[]` in the given order, what
 * the C of an executable or an --emit=lib library includes with
 * -DGPUC_IMAGES="images.h" (compiler/images.c). 0, or -1 when the file could
 * not be written (errno says why). */
int gpuc_compiler_write_images(const char *path, const GpucImageData *images, int count);

#ifdef __cplusplus
}
#endif

#endif

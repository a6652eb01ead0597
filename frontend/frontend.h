/* frontend.h: the public interface of gpuc's frontend (parse + check).
 *
 * Pipeline (compiler/compile.c):
 *     FeArena *A = fe_arena_new();
 *     FeProgram *p = fe_parse(A, path, &opts);     // all files, imports included
 *     if (!p || fe_error_count()) exit(1);
 *     fe_check(A, p, &opts);                       // names, types, instances
 *     if (fe_error_count()) exit(1);
 *     ... ir lowers from p->instances ...
 *     fe_arena_free(A);
 *
 * Errors go through fe_error() (diag.c) in clang's format and are counted;
 * each phase reports all it finds, the driver stops between phases.
 */
#ifndef GPUC_FRONTEND_H
#define GPUC_FRONTEND_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>

#include "ast.h"

/* ---- arena.c: one arena per compilation, freed once at the end ---- */
FeArena *fe_arena_new(void);
void *fe_alloc(FeArena *a, size_t size);             /* zeroed, aligned; never NULL (aborts) */
char *fe_strdup(FeArena *a, const char *s);
char *fe_strndup(FeArena *a, const char *s, size_t n);
char *fe_printf(FeArena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void fe_arena_free(FeArena *a);
/* Growable arrays in the arena: FE_PUSH(arena, items, n, cap, x). */
void *fe_grow(FeArena *a, void *items, int n, int *cap, size_t elem_size);
#define FE_PUSH(arena, items, n, cap, x)                                             \
    do {                                                                             \
        if ((n) >= (cap)) (items) = fe_grow((arena), (items), (n), &(cap), sizeof *(items)); \
        (items)[(n)++] = (x);                                                        \
    } while (0)

/* ---- diag.c: diagnostics ---- */
/* Report `file:line:col: error: message`, the source line and a caret. */
void fe_error(SrcLoc loc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void fe_note(SrcLoc loc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void fe_verror(const char *kind, SrcLoc loc, const char *fmt, va_list ap);
/* `file:line:col: KIND: message`; KIND "error" and "internal error" (a gpuc
 * bug found without crashing: compilation stops) count as errors. */
void fe_report(const char *kind, SrcLoc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* An error without a location: `gpuc: error: message`. */
void fe_error_noloc(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int fe_error_count(void);
/* Remember a file's text so diagnostics can print its lines (the parser does this). */
void fe_diag_add_source(const char *file, const char *text, size_t len);
void fe_diag_reset(void);  /* forget sources and counts (frees them) */
/* A diagnostic as reported: kind "error", "note" or "internal error";
 * file NULL (line, col 0) without a location; rendered is the whole text
 * gpuc prints, newline-terminated, with the source line and caret. */
typedef struct FeDiagnostic {
    const char *file;
    int line, col;
    const char *kind;
    const char *message;
    const char *rendered;
} FeDiagnostic;
typedef void FeDiagHandler(void *ctx, const FeDiagnostic *d);
/* Hand every diagnostic to `h` instead of printing it on stderr (h NULL:
 * print, the default), and end a compilation at a fatal error with
 * longjmp(*stop, status) instead of exit(status) (stop NULL: exit). The
 * pointers are valid only during the call. compiler/compile.c uses this. */
void fe_diag_redirect(FeDiagHandler *h, void *ctx, jmp_buf *stop);
/* A fatal error: report `msg` (no source line, counted as an error), then
 * stop as fe_diag_redirect says, with `status` (70 internal error, 1 out of
 * memory). */
_Noreturn void fe_fatal(const char *kind, SrcLoc loc, int status, const char *msg);
/* A compiler bug, not a user error: reports `file:line:col: internal error: ...`
 * and stops with status 70 (EX_SOFTWARE), through fe_fatal. */
_Noreturn void fe_internal_error(const char *cfile, int cline, SrcLoc loc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
#define FE_INTERNAL_ERROR(loc, ...) fe_internal_error(__FILE__, __LINE__, (loc), __VA_ARGS__)
#define FE_UNREACHABLE(loc) fe_internal_error(__FILE__, __LINE__, (loc), "unreachable")

/* ---- options shared by parse and check ---- */
typedef struct FeDefine {
    const char *entry;  /* NULL: every entry with a parameter of this name; else `entry.NAME` */
    const char *name;
    const char *value;  /* integer or type spelling */
} FeDefine;

typedef struct FeOptions {
    const char *stdlib_dir;  /* where `import "std/x"` looks (x.gdsl) */
    FeDefine *defines;       /* -D overrides */
    int ndefines;
} FeOptions;

/* ---- parse (lexer.l, parser.y): the main file and, transitively, its imports.
 * Returns NULL only if the main file cannot be read; errors are counted. ---- */
FeProgram *fe_parse(FeArena *a, const char *path, const FeOptions *opts);
/* The same with the main file's text given (len bytes); `name` is its file
 * name in messages, and imports resolve relative to name's directory. */
FeProgram *fe_parse_text(FeArena *a, const char *name, const char *text, size_t len, const FeOptions *opts);
/* Print the tokens of one file, one per line (`--emit=tokens`). Returns 0 on success. */
int fe_dump_tokens(FeArena *a, const char *path, FILE *out);

/* ---- check.c: resolve names, type-check, instantiate templates, check launch
 * attributes, fill p->instances. Reports all errors; returns the error count. ---- */
int fe_check(FeArena *a, FeProgram *p, const FeOptions *opts);

/* Instantiate template entry `generic` with the given arguments (positional;
 * missing trailing ones take their defaults) and check it. Returns the checked
 * instance (already in p->instances if it was created before), or NULL after
 * reporting errors at `loc`. Used for exports; the IR may use it for tuning. */
FeFunc *fe_instantiate(FeArena *a, FeProgram *p, FeFunc *generic, const FeTArg *targs,
                       int ntargs, const char *inst_name, SrcLoc loc);

/* ---- print.c ---- */
/* The checked AST as indented text (`--emit=ast`). */
void fe_print_program(FILE *out, FeArena *a, const FeProgram *p);
void fe_print_expr(FILE *out, FeArena *a, const FeExpr *e, int indent);
/* Every tunable template parameter of every entry of the main file, one per
 * line: `dot.BLOCK: int = 256` (after -D overrides; `dot.T: float` if no default). */
void fe_list_params(FILE *out, FeArena *a, const FeProgram *p);

#endif

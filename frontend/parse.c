/* parse.c: reads source files and runs the scanner + parser on them, following
 * `import`s (relative to the importing file; "std/..." under the stdlib
 * directory). Each file is parsed once, so import cycles are harmless. Also
 * the node constructors the grammar actions share, and --emit=tokens. */
#define _XOPEN_SOURCE 700 /* strdup, realpath, mkstemp, fdopen */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "parse.h"
#include "parser.h"
#include "lexer.h"

FeExpr *fe_mk_expr(FeParser *p, FeExprKind k, SrcLoc loc)
{
    FeExpr *e = fe_alloc(p->arena, sizeof *e);
    e->kind = k;
    e->loc = loc;
    e->axis = -1;
    e->suffix = FE_TY_ERROR;
    e->depth = 1;
    return e;
}

void fe_set_depth(FeParser *p, FeExpr *e, int child_depth)
{
    e->depth = child_depth + 1;
    if (e->depth > FE_MAX_DEPTH && !p->deep_reported) {
        fe_error(e->loc, "expression nested too deeply (the limit is %d levels)", FE_MAX_DEPTH);
        p->deep_reported = true;
    }
}

FeType *fe_mk_type(FeParser *p, FeTypeKind k, SrcLoc loc)
{
    FeType *t = fe_alloc(p->arena, sizeof *t);
    t->kind = k;
    t->loc = loc;
    return t;
}

/* Read a whole file into the arena. Reports why it cannot (at `at`, or
 * without a location for the main file). */
static char *read_file(FeArena *a, const char *path, size_t *len, SrcLoc at, const char *what)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        if (at.file) {
            fe_error(at, "cannot open %s '%s': %s", what, path, strerror(errno));
        } else {
            fe_error_noloc("cannot open %s '%s': %s", what, path, strerror(errno));
        }
        return NULL;
    }
    if (S_ISDIR(st.st_mode)) {
        if (at.file) {
            fe_error(at, "cannot read %s '%s': it is a directory", what, path);
        } else {
            fe_error_noloc("cannot read %s '%s': it is a directory", what, path);
        }
        return NULL;
    }
    FILE *f = fopen(path, "rb");
    if (!f) {
        if (at.file) {
            fe_error(at, "cannot open %s '%s': %s", what, path, strerror(errno));
        } else {
            fe_error_noloc("cannot open %s '%s': %s", what, path, strerror(errno));
        }
        return NULL;
    }
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    if (!buf) {
        fclose(f);
        fe_error_noloc("out of memory");
        return NULL;
    }
    for (;;) {
        if (n == cap) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                fclose(f);
                fe_error_noloc("out of memory");
                return NULL;
            }
            buf = nb;
            cap *= 2;
        }
        size_t r = fread(buf + n, 1, cap - n, f);
        n += r;
        if (r == 0) {
            break;
        }
    }
    bool failed = ferror(f);
    fclose(f);
    if (failed) {
        free(buf);
        fe_error_noloc("cannot read %s '%s'", what, path);
        return NULL;
    }
    char *text = fe_strndup(a, buf, n);
    free(buf);
    *len = n;
    return text;
}

int fe_parse_buffer(FeParser *p, const char *text, size_t len)
{
    yyscan_t scanner;
    if (fe_yylex_init_extra(p, &scanner) != 0) {
        fe_error_noloc("cannot initialise the scanner");
        return 1;
    }
    p->line = 1;
    p->col = 1;
    YY_BUFFER_STATE b = fe_yy_scan_bytes(text, (int)len, scanner);
    int r = fe_yyparse(scanner, p);
    fe_yy_delete_buffer(b, scanner);
    fe_yylex_destroy(scanner);
    return r;
}

/* Directory part of path ("." if none), in the arena. */
static const char *dir_of(FeArena *a, const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash) {
        return ".";
    }
    if (slash == path) {
        return "/";
    }
    return fe_strndup(a, path, (size_t)(slash - path));
}

static const char *resolve_import(FeArena *a, const char *from, const char *spec, const FeOptions *opts)
{
    size_t n = strlen(spec);
    const char *ext = n > 5 && strcmp(spec + n - 5, ".gdsl") == 0 ? "" : ".gdsl";
    if (strncmp(spec, "std/", 4) == 0) {
        const char *dir = opts && opts->stdlib_dir ? opts->stdlib_dir : "stdlib";
        return fe_printf(a, "%s/%s%s", dir, spec, ext); /* <stdlib>/std/NAME.gdsl */
    }
    if (spec[0] == '/') {
        return fe_printf(a, "%s%s", spec, ext);
    }
    return fe_printf(a, "%s/%s%s", dir_of(a, from), spec, ext);
}

static FeModule *parse_text(FeArena *a, const char *path, const char *text, size_t len)
{
    fe_diag_add_source(path, text, len);
    FeModule *m = fe_alloc(a, sizeof *m);
    m->path = path;
    FeParser p = {0};
    p.arena = a;
    p.file = path;
    p.mod = m;
    fe_parse_buffer(&p, text, len);
    return m;
}

static FeModule *parse_file(FeArena *a, const char *path, SrcLoc at)
{
    size_t len = 0;
    char *text = read_file(a, path, &len, at, at.file ? "imported file" : "file");
    return text ? parse_text(a, path, text, len) : NULL;
}

static FeProgram *parse_imports(FeArena *a, const char *path, FeModule *main_mod, const FeOptions *opts);

FeProgram *fe_parse(FeArena *a, const char *path, const FeOptions *opts)
{
    SrcLoc none = {0};
    FeModule *main_mod = parse_file(a, path, none);
    return main_mod ? parse_imports(a, path, main_mod, opts) : NULL;
}

FeProgram *fe_parse_text(FeArena *a, const char *name, const char *text, size_t len, const FeOptions *opts)
{
    name = fe_strdup(a, name);
    FeModule *main_mod = parse_text(a, name, fe_strndup(a, text, len), len);
    return parse_imports(a, name, main_mod, opts);
}

/* The program of main_mod (read from `path`) and, transitively, its imports. */
static FeProgram *parse_imports(FeArena *a, const char *path, FeModule *main_mod, const FeOptions *opts)
{
    FeProgram *prog = fe_alloc(a, sizeof *prog);
    int cap = 0;
    const char **real = NULL; /* realpath of each module, to parse each file once */
    int nreal = 0, cap_real = 0;
    FE_PUSH(a, prog->modules, prog->nmodules, cap, main_mod);
    char rp[PATH_MAX];
    FE_PUSH(a, real, nreal, cap_real, fe_strdup(a, realpath(path, rp) ? rp : path));
    for (int i = 0; i < prog->nmodules; i++) {
        FeModule *m = prog->modules[i];
        for (int j = 0; j < m->nimports; j++) {
            FeImport *im = &m->imports[j];
            im->resolved = resolve_import(a, m->path, im->path, opts);
            const char *key = realpath(im->resolved, rp) ? fe_strdup(a, rp) : im->resolved;
            bool seen = false;
            for (int k = 0; k < nreal; k++) {
                if (strcmp(real[k], key) == 0) {
                    seen = true;
                }
            }
            if (seen) {
                continue;
            }
            FE_PUSH(a, real, nreal, cap_real, key);
            FeModule *im_mod = parse_file(a, im->resolved, im->loc);
            if (im_mod) {
                FE_PUSH(a, prog->modules, prog->nmodules, cap, im_mod);
            }
        }
    }
    return prog;
}

int fe_dump_tokens(FeArena *a, const char *path, FILE *out)
{
    SrcLoc none = {0};
    size_t len = 0;
    char *text = read_file(a, path, &len, none, "file");
    if (!text) {
        return 1;
    }
    fe_diag_add_source(path, text, len);
    FeModule m = {0};
    FeParser p = {0};
    p.arena = a;
    p.file = path;
    p.mod = &m;
    p.line = p.col = 1;
    yyscan_t scanner;
    if (fe_yylex_init_extra(&p, &scanner) != 0) {
        return 1;
    }
    YY_BUFFER_STATE b = fe_yy_scan_bytes(text, (int)len, scanner);
    FE_YYSTYPE v;
    FE_YYLTYPE l;
    for (;;) {
        int t = fe_yylex(&v, &l, scanner);
        if (t == 0) {
            break;
        }
        fprintf(out, "%d:%d ", l.first_line, l.first_column);
        if (t < 256) {
            fprintf(out, "'%c'\n", t);
        } else {
            fprintf(out, "%s", fe_token_name(t));
            if (t == NAME || t == STRING) {
                fprintf(out, " %s", t == NAME ? v.NAME : v.STRING);
            } else if (t == INT || t == FLOAT) {
                fprintf(out, " %s", v.INT->text);
            } else if (t == SCALAR) {
                fprintf(out, " %s", fe_scalar_name((FeTypeKind)v.SCALAR));
            }
            fputc('\n', out);
        }
    }
    fe_yy_delete_buffer(b, scanner);
    fe_yylex_destroy(scanner);
    return fe_error_count() ? 1 : 0;
}

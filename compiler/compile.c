/* compile.c: the gpuc compiler as a library (gpuc_compiler.h), with the
 * whole pipeline in one function, compile_program():
 *
 *     parse -> check -> lower -> passes -> emit
 *     frontend/        ir/lower.c, ir/pipeline.c    backend/
 *
 * Everything is written into memory (open_memstream), diagnostics included:
 * frontend/diag.c hands each one to this file (fe_diag_redirect) instead of
 * printing it, and a fatal error (an internal error, out of memory) jumps
 * back here instead of exiting. The gpuc command (driver/main.c) is one
 * client of this file; the Python package is another. */
#define _GNU_SOURCE /* open_memstream, dladdr, realpath, strdup */
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend.h"
#include "frontend.h"
#include "gpuc_compiler.h"
#include "ir.h"

#ifndef GPUC_STDLIB_DIR
#define GPUC_STDLIB_DIR "stdlib"
#endif
#ifndef GPUC_VERSION
#define GPUC_VERSION "0.0.0"
#endif

enum { MAX_OUTPUTS = 3 };

/* One named output text, written through a memory stream while compiling. */
typedef struct Output {
    const char *name;  /* "source", "header", "manifest" */
    FILE *f;           /* open while compiling */
    char *text;
    size_t len;
} Output;

struct GpucCompileResult {
    int status;
    int error_count;
    GpucDiagnostic *diags;
    int ndiags, capdiags;
    char *rendered;    /* every diagnostic's text, concatenated */
    size_t rendered_len;
    Output outputs[MAX_OUTPUTS];
    int noutputs;
    char **files;
    int nfiles;
};

/* One compilation: its inputs, its arena and where it writes. */
typedef struct Compilation {
    const GpucCompileOptions *o;
    GpucEmit emit;
    GpucCompileResult *r;
    FeArena *arena;
    FeOptions fe;
} Compilation;

static pthread_mutex_t compile_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---- small helpers ---- */

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

/* The stream of output `name`, opened on first use. */
static FILE *output(GpucCompileResult *r, const char *name)
{
    for (int i = 0; i < r->noutputs; i++) {
        if (strcmp(r->outputs[i].name, name) == 0) {
            return r->outputs[i].f;
        }
    }
    Output *out = &r->outputs[r->noutputs];
    out->name = name;
    out->f = open_memstream(&out->text, &out->len);
    if (!out->f) {
        SrcLoc none = { 0 };
        fe_fatal("error", none, 1, "out of memory");
    }
    r->noutputs++;
    return out->f;
}

static void close_outputs(GpucCompileResult *r)
{
    for (int i = 0; i < r->noutputs; i++) {
        Output *out = &r->outputs[i];
        if (out->f) {
            fclose(out->f);
            out->f = NULL;
        }
        if (!out->text) { /* never written and no memory: an empty text */
            out->text = calloc(1, 1);
            out->len = 0;
        }
    }
}

/* The diagnostic handler (fe_diag_redirect): keep a copy in the result. */
static void keep_diagnostic(void *ctx, const FeDiagnostic *d)
{
    GpucCompileResult *r = ctx;
    if (r->ndiags == r->capdiags) {
        int cap = r->capdiags ? 2 * r->capdiags : 16;
        GpucDiagnostic *nd = realloc(r->diags, (size_t)cap * sizeof *nd);
        if (!nd) {
            return;
        }
        r->diags = nd;
        r->capdiags = cap;
    }
    size_t n = strlen(d->rendered);
    char *all = realloc(r->rendered, r->rendered_len + n + 1);
    if (!all) {
        return;
    }
    memcpy(all + r->rendered_len, d->rendered, n + 1);
    r->rendered = all;
    r->rendered_len += n;
    GpucDiagnostic *g = &r->diags[r->ndiags++];
    g->file = dup_or_null(d->file);
    g->line = d->line;
    g->col = d->col;
    g->severity = strdup(d->kind);
    g->message = strdup(d->message);
    g->rendered = strdup(d->rendered);
    if (strcmp(d->kind, "note") != 0) {
        r->error_count++;
    }
}

/* "NAME=VALUE" or "ENTRY.NAME=VALUE" into d; false if malformed. */
static bool parse_define(FeArena *a, const char *s, FeDefine *d)
{
    memset(d, 0, sizeof *d);
    const char *eq = strchr(s, '=');
    if (!eq || eq == s || !eq[1]) {
        return false;
    }
    const char *dot = memchr(s, '.', (size_t)(eq - s));
    if (dot) {
        d->entry = fe_strndup(a, s, (size_t)(dot - s));
        d->name = fe_strndup(a, dot + 1, (size_t)(eq - dot - 1));
    } else {
        d->name = fe_strndup(a, s, (size_t)(eq - s));
    }
    d->value = fe_strdup(a, eq + 1);
    return !(d->entry && !*d->entry) && *d->name;
}

static bool is_identifier(const char *s)
{
    bool ok = (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_';
    for (const char *p = s; ok && *p; p++) {
        ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_';
    }
    return ok;
}

/* The library's default name: the file's stem, letters, digits and '_' only. */
static const char *default_lib_name(FeArena *a, const char *file)
{
    const char *base = strrchr(file, '/');
    base = base ? base + 1 : file;
    size_t n = strlen(base);
    if (n > 5 && strcmp(base + n - 5, ".gdsl") == 0) {
        n -= 5;
    }
    char *name = fe_alloc(a, n + 2);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        char ch = base[i];
        if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_') {
            name[k++] = ch;
        }
    }
    if (k == 0 || (name[0] >= '0' && name[0] <= '9')) {
        memmove(name + 1, name, k + 1);
        name[0] = '_';
    }
    return name;
}

/* -e NAME must name an entry, an export or a fn of the main file (what an
 * executable's table can hold). Returns true, or false after the error. */
static bool check_entry_option(FeArena *a, const FeProgram *prog, const char *name)
{
    if (!name) {
        return true;
    }
    const char *main_file = prog->nmodules ? prog->modules[0]->path : NULL;
    for (int i = 0; i < prog->ninstances; i++) {
        const FeFunc *f = prog->instances[i];
        bool ours = !main_file || !f->loc.file || strcmp(f->loc.file, main_file) == 0;
        if (ours && strcmp(f->inst_name ? f->inst_name : f->name, name) == 0) {
            return true;
        }
    }
    char *list = "";
    int listed = 0;
    for (int i = 0; i < prog->ninstances; i++) {
        const FeFunc *f = prog->instances[i];
        if (f->is_entry && (!main_file || !f->loc.file || strcmp(f->loc.file, main_file) == 0)) {
            list = fe_printf(a, "%s%s %s", list, listed++ ? "," : "", f->inst_name ? f->inst_name : f->name);
        }
    }
    fe_error_noloc("-e %s: there is no entry named '%s' (entries:%s%s)", name, name, list, listed ? "" : " none");
    return false;
}

/* --dump-after=PASS must name a pass (or "all"). */
static bool check_dump_after(FeArena *a, const char *dump_after)
{
    if (!dump_after) {
        return true;
    }
    bool known = strcmp(dump_after, "all") == 0;
    char *list = "";
    for (int i = 0; ir_pass_names[i]; i++) {
        known = known || strcmp(ir_pass_names[i], dump_after) == 0;
        list = fe_printf(a, "%s %s", list, ir_pass_names[i]);
    }
    if (!known) {
        fe_error_noloc("unknown pass '%s' for --dump-after (passes:%s, all)", dump_after, list);
    }
    return known;
}

/* ---- the pipeline ---- */

/* Parse, check, lower, run the passes and emit c->emit into c->r's outputs.
 * Returns a GPUC_COMPILE_* status; stops after the first phase with errors. */
static int compile_program(Compilation *c)
{
    const GpucCompileOptions *o = c->o;
    GpucCompileResult *r = c->r;
    FeArena *a = c->arena;

    if (c->emit == GPUC_EMIT_TOKENS) {
        if (!o->path) {
            fe_error_noloc("emit kind 'tokens' needs a file path, not source text");
            return GPUC_COMPILE_BAD_OPTIONS;
        }
        return fe_dump_tokens(a, o->path, output(r, "source")) ? GPUC_COMPILE_ERRORS : GPUC_COMPILE_OK;
    }

    /* parse: the main file and its imports */
    FeProgram *prog;
    if (o->path) {
        prog = fe_parse(a, o->path, &c->fe);
    } else {
        const char *name = o->source_name ? o->source_name : "<string>";
        prog = fe_parse_text(a, name, o->source, o->source_len ? o->source_len : strlen(o->source), &c->fe);
    }
    if (prog) {
        r->files = calloc((size_t)prog->nmodules + 1, sizeof *r->files);
        for (int i = 0; r->files && i < prog->nmodules; i++) {
            r->files[r->nfiles++] = strdup(prog->modules[i]->path);
        }
    }
    if (!prog || fe_error_count()) {
        return GPUC_COMPILE_ERRORS;
    }
    /* check: names, types, template instances */
    fe_check(a, prog, &c->fe);
    if (fe_error_count() || !check_entry_option(a, prog, o->entry)) {
        return GPUC_COMPILE_ERRORS;
    }
    switch (c->emit) {
    case GPUC_EMIT_CHECK:
        return GPUC_COMPILE_OK;
    case GPUC_EMIT_AST:
        fe_print_program(output(r, "source"), a, prog);
        return GPUC_COMPILE_OK;
    case GPUC_EMIT_PARAMS:
        fe_list_params(output(r, "source"), a, prog);
        return GPUC_COMPILE_OK;
    default:
        break;
    }

    /* lower to the array IR; a program's test blocks may call helper fns */
    bool lib = c->emit == GPUC_EMIT_LIB || c->emit == GPUC_EMIT_MANIFEST;
    FILE *out = output(r, lib ? (c->emit == GPUC_EMIT_LIB ? "source" : "manifest") : "source");
    if (!check_dump_after(a, o->dump_after)) {
        return GPUC_COMPILE_ERRORS;
    }
    IrLowerOptions lo = { 0 };
    lo.fns_as_entries = c->emit == GPUC_EMIT_PROGRAM;
    IrModule *m = ir_lower(prog, &lo);
    if (!m || fe_error_count()) {
        ir_module_free(m);
        return GPUC_COMPILE_ERRORS;
    }
    /* the passes: simplify, fusion, kernels (ir/pipeline.c) */
    m->explain = o->explain_fusion != 0;
    IrPipelineOptions po = { o->dump_after, out, c->emit == GPUC_EMIT_IR_UNFUSED || o->opt_level <= 0, o->opt_level <= 0 };
    ir_run_pipeline(m, &po);
    if (o->explain_fusion) {
        ir_print_explain(out, m);
    }
    /* emit */
    int rc = 0;
    BeLibOptions lib_options = { 0 };
    if (lib) {
        const char *main_file = prog->nmodules ? prog->modules[0]->path : m->file;
        lib_options.name = o->lib_name ? o->lib_name : default_lib_name(a, main_file);
        lib_options.archs = o->archs;
        lib_options.source = main_file;
        lib_options.version = GPUC_VERSION;
    }
    switch (c->emit) {
    case GPUC_EMIT_IR:
    case GPUC_EMIT_IR_UNFUSED:
        if (!o->dump_after) {
            ir_print_module(out, m);
            ir_print_kernels(out, m);
        }
        break;
    case GPUC_EMIT_C:
        rc = be_emit_c(out, m);
        break;
    case GPUC_EMIT_C_SHARD:
        /* the plain entries, then the pass rewrites the module into sharded ones */
        rc = be_emit_c(out, m);
        if (!rc && ir_shard(m, true)) {
            rc = be_emit_c_shard(out, m, true);
        }
        break;
    case GPUC_EMIT_PROGRAM:
        rc = be_emit_program(out, m);
        break;
    case GPUC_EMIT_CUDA:
        rc = be_emit_cuda(out, m);
        break;
    case GPUC_EMIT_CUDA_SHARD:
        /* as c-shard: the plain entries (and their host-array wrappers), then the sharded ones */
        rc = be_emit_cuda(out, m) || be_emit_cuda_shard_plain(out, m);
        if (!rc && ir_shard(m, true)) {
            rc = be_emit_cuda_shard(out, m);
        }
        break;
    case GPUC_EMIT_CUDA_KERNELS:
        /* the executables' images: plain and sharded kernels (--ranks on GPUs) */
        rc = be_emit_cuda(out, m);
        if (!rc) {
            ir_shard(m, false);
            rc = be_emit_cuda_shard(out, m);
        }
        break;
    case GPUC_EMIT_LIB:
        rc = be_emit_lib_source(out, m, &lib_options) || be_emit_lib_header(output(r, "header"), m, &lib_options) ||
             be_emit_lib_manifest(output(r, "manifest"), m, &lib_options);
        break;
    case GPUC_EMIT_MANIFEST:
        rc = be_emit_lib_manifest(out, m, &lib_options);
        break;
    default:
        break;
    }
    ir_module_free(m);
    return rc || fe_error_count() ? GPUC_COMPILE_ERRORS : GPUC_COMPILE_OK;
}

/* Check the options that do not need the program. Returns true if good. */
static bool check_options(Compilation *c)
{
    const GpucCompileOptions *o = c->o;
    if (!o->path == !o->source) {
        fe_error_noloc("give the program as a path or as source text (exactly one of them)");
        return false;
    }
    if ((int)c->emit < GPUC_EMIT_CHECK || (int)c->emit > GPUC_EMIT_CUDA_KERNELS) {
        fe_error_noloc("unknown emit kind %d", (int)c->emit);
        return false;
    }
    if (o->ndefines < 0 || (o->ndefines > 0 && !o->defines)) {
        fe_error_noloc("ndefines is %d but defines is %s", o->ndefines, o->defines ? "set" : "NULL");
        return false;
    }
    c->fe.stdlib_dir = o->stdlib_dir ? o->stdlib_dir : gpuc_compiler_default_stdlib_dir();
    c->fe.ndefines = o->ndefines;
    c->fe.defines = o->ndefines ? fe_alloc(c->arena, (size_t)o->ndefines * sizeof *c->fe.defines) : NULL;
    for (int i = 0; i < o->ndefines; i++) {
        if (!o->defines[i] || !parse_define(c->arena, o->defines[i], &c->fe.defines[i])) {
            fe_error_noloc("define '%s': expected NAME=VALUE or ENTRY.NAME=VALUE",
                           o->defines[i] ? o->defines[i] : "(null)");
            return false;
        }
    }
    if (o->lib_name && !is_identifier(o->lib_name)) {
        fe_error_noloc("the library's name '%s' must be a C identifier (it prefixes every function)", o->lib_name);
        return false;
    }
    return true;
}

/* ---- the API ---- */

void gpuc_compiler_options_init(GpucCompileOptions *o)
{
    memset(o, 0, sizeof *o);
    o->opt_level = 1;
}

int gpuc_compiler_compile(const GpucCompileOptions *o, GpucEmit emit, GpucCompileResult **result)
{
    if (!result) {
        return GPUC_COMPILE_BAD_OPTIONS;
    }
    GpucCompileResult *r = calloc(1, sizeof *r);
    *result = r;
    if (!r) {
        return GPUC_COMPILE_INTERNAL_ERROR;
    }
    pthread_mutex_lock(&compile_lock);
    fe_diag_reset();
    jmp_buf stop;
    fe_diag_redirect(keep_diagnostic, r, &stop);
    Compilation c = { o, emit, r, NULL, { 0 } };
    int status = setjmp(stop);
    if (status == 0) {
        c.arena = fe_arena_new();
        if (!o) {
            fe_error_noloc("no options given");
            status = GPUC_COMPILE_BAD_OPTIONS;
        } else if (!check_options(&c)) {
            status = GPUC_COMPILE_BAD_OPTIONS;
        } else {
            status = compile_program(&c);
        }
    } /* else: a fatal error jumped here; what it had allocated is lost */
    r->status = status;
    close_outputs(r);
    fe_arena_free(c.arena);
    fe_diag_redirect(NULL, NULL, NULL);
    fe_diag_reset();
    pthread_mutex_unlock(&compile_lock);
    return status;
}

int gpuc_compiler_emit_kind(const char *name)
{
    static const char *const names[] = {
        [GPUC_EMIT_CHECK] = "check", [GPUC_EMIT_TOKENS] = "tokens",       [GPUC_EMIT_AST] = "ast",
        [GPUC_EMIT_PARAMS] = "params", [GPUC_EMIT_IR] = "ir",             [GPUC_EMIT_IR_UNFUSED] = "ir-unfused",
        [GPUC_EMIT_C] = "c",           [GPUC_EMIT_CUDA] = "cuda",         [GPUC_EMIT_PROGRAM] = "program",
        [GPUC_EMIT_LIB] = "lib",       [GPUC_EMIT_MANIFEST] = "manifest", [GPUC_EMIT_C_SHARD] = "c-shard",
        [GPUC_EMIT_CUDA_SHARD] = "cuda-shard", [GPUC_EMIT_CUDA_KERNELS] = "cuda-kernels",
    };
    for (int i = 0; name && i < (int)(sizeof names / sizeof *names); i++) {
        if (strcmp(names[i], name) == 0) {
            return i;
        }
    }
    return -1;
}

int gpuc_compiler_result_status(const GpucCompileResult *r)
{
    return r ? r->status : GPUC_COMPILE_INTERNAL_ERROR;
}

const char *gpuc_compiler_result_output(const GpucCompileResult *r, const char *name, size_t *len)
{
    for (int i = 0; r && name && i < r->noutputs; i++) {
        if (strcmp(r->outputs[i].name, name) == 0) {
            if (len) {
                *len = r->outputs[i].len;
            }
            return r->outputs[i].text;
        }
    }
    if (len) {
        *len = 0;
    }
    return NULL;
}

int gpuc_compiler_result_error_count(const GpucCompileResult *r)
{
    return r ? r->error_count : 0;
}

int gpuc_compiler_result_diagnostic_count(const GpucCompileResult *r)
{
    return r ? r->ndiags : 0;
}

const GpucDiagnostic *gpuc_compiler_result_diagnostic(const GpucCompileResult *r, int i)
{
    return r && i >= 0 && i < r->ndiags ? &r->diags[i] : NULL;
}

const char *gpuc_compiler_result_rendered(const GpucCompileResult *r)
{
    return r && r->rendered ? r->rendered : "";
}

int gpuc_compiler_result_file_count(const GpucCompileResult *r)
{
    return r ? r->nfiles : 0;
}

const char *gpuc_compiler_result_file(const GpucCompileResult *r, int i)
{
    return r && i >= 0 && i < r->nfiles ? r->files[i] : NULL;
}

void gpuc_compiler_result_free(GpucCompileResult *r)
{
    if (!r) {
        return;
    }
    for (int i = 0; i < r->ndiags; i++) {
        GpucDiagnostic *d = &r->diags[i];
        free((char *)d->file);
        free((char *)d->severity);
        free((char *)d->message);
        free((char *)d->rendered);
    }
    free(r->diags);
    free(r->rendered);
    for (int i = 0; i < r->noutputs; i++) {
        free(r->outputs[i].text);
    }
    for (int i = 0; i < r->nfiles; i++) {
        free(r->files[i]);
    }
    free(r->files);
    free(r);
}

const char *gpuc_compiler_version(void)
{
    return GPUC_VERSION;
}

/* PREFIX/share/gpuc/stdlib for a file PREFIX/DIR/FILE (bin/gpuc,
 * lib/libgpuc_compiler.so), if that directory exists. */
static bool stdlib_beside(const char *file, char *dir, size_t size)
{
    char path[PATH_MAX];
    if (!realpath(file, path)) {
        return false;
    }
    for (int up = 0; up < 2; up++) {
        char *slash = strrchr(path, '/');
        if (!slash) {
            return false;
        }
        *slash = 0;
    }
    struct stat st;
    return snprintf(dir, size, "%s/share/gpuc/stdlib", path) < (int)size && stat(dir, &st) == 0 &&
           S_ISDIR(st.st_mode);
}

const char *gpuc_compiler_default_stdlib_dir(void)
{
    static char installed[PATH_MAX];
    const char *env = getenv("GPUC_STDLIB");
    if (env && *env) {
        return env;
    }
    struct stat st;
    if (stat(GPUC_STDLIB_DIR, &st) == 0 && S_ISDIR(st.st_mode)) {
        return GPUC_STDLIB_DIR; /* a build tree: the source tree's */
    }
    Dl_info info;
    if (dladdr((void *)gpuc_compiler_default_stdlib_dir, &info) && info.dli_fname &&
        stdlib_beside(info.dli_fname, installed, sizeof installed)) {
        return installed; /* beside the shared library */
    }
    if (stdlib_beside("/proc/self/exe", installed, sizeof installed)) {
        return installed; /* beside the program the static library is in */
    }
    return GPUC_STDLIB_DIR;
}

/* main.c: the gpuc command. Parses the command line, then has the compiler
 * library run the pipeline (gpuc_compiler_compile, compiler/compile.c:
 * parse -> check -> IR -> passes -> emit) and prints what it returns: the
 * emitted text on stdout or -o FILE, the diagnostics on stderr. Executables
 * and libraries (-o without --emit, --emit=lib, gpuc run) are built by
 * build_exe.c from the library's output.
 * Exit status: 0 success, 1 compile errors, 2 bad command line, 70 an
 * internal error (a gpuc bug, reported with its location). */
#define _XOPEN_SOURCE 700 /* strdup, realpath, mkstemp, fdopen */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "driver.h"
#include "frontend.h" /* the arena and FeDefine, for the command line */
#include "gpuc_compiler.h"

#ifndef GPUC_STDLIB_DIR
#define GPUC_STDLIB_DIR "stdlib"
#endif
#ifndef GPUC_VERSION
#define GPUC_VERSION "0.0.0"
#endif

typedef struct Options {
    const char *input;
    const char *output;       /* -o FILE; NULL = stdout */
    const char *emit;         /* --emit=KIND; NULL = check only */
    const char *entry;        /* -e NAME: the entry an executable runs (backend owner) */
    const char *dump_after;   /* --dump-after=PASS (IR owner) */
    bool explain_fusion;      /* --explain-fusion (IR owner) */
    bool list_params;
    const char *arch;         /* --arch=sm_80,sm_90: cubins embedded by -o */
    const char *gpuc_home;    /* --gpuc-home PREFIX: runtime libraries for -o */
    const char *tuning;       /* --tuning FILE: defines from gpuc tune */
    bool no_opt;              /* -O0: no IR rewrites and no fusion, on every output */
    FeOptions fe;
} Options;

static void usage(FILE *out)
{
    fprintf(out,
            "usage: gpuc [options] file.gdsl                  check, or emit with --emit\n"
            "       gpuc [options] file.gdsl -o PROG          build the executable PROG\n"
            "       gpuc run [-v] [options] file.gdsl [ARGS]  build (cached) and run it with ARGS\n"
            "       gpuc test [--backend=c|cuda] [-k ENTRY] FILES-OR-DIRS...\n"
            "                                                 run the //! test blocks\n"
            "       gpuc bench [--backend=c|cuda] [--json FILE] FILES-OR-DIRS...\n"
            "                                                 run the //! bench blocks\n"
            "       gpuc tune [--backend=cuda|c] [-o FILE] file.gdsl\n"
            "                                                 measure launch parameters on the\n"
            "                                                 bench blocks, write a tuning file\n"
            "options:\n"
            "  --emit=KIND        print KIND: ast (the checked program), tokens, ir (after\n"
            "                     fusion), ir-unfused, c (reference C), cuda (CUDA C, also\n"
            "                     an nvcc include: docs/cuda_include.md), c-shard (reference\n"
            "                     C plus sharded entries: docs/sharding.md), cuda-shard\n"
            "                     (CUDA C plus sharded entries over NCCL)\n"
            "  --emit=lib -o DIR/libNAME  build a library: libNAME.a, libNAME.so, NAME.h,\n"
            "                     NAME.json (docs/library.md)\n"
            "  --dump-after=PASS  print the IR after pass PASS\n"
            "  --explain-fusion   say why operations were or were not fused\n"
            "  -O0                no IR rewrites and no fusion (one kernel per operation):\n"
            "                     the reference of the differential tests (difftest/)\n"
            "  --list-params      print every tunable template parameter with its default\n"
            "  -D NAME=VALUE      set template parameter NAME (an integer or a scalar type)\n"
            "                     in every entry and fn that has one\n"
            "  -D ENTRY.NAME=VALUE  set it in one entry or fn only\n"
            "  --tuning FILE      the ENTRY.NAME=VALUE lines of a tuning file (gpuc tune)\n"
            "                     as -D, except where -D sets the same parameter\n"
            "  --stdlib DIR       where import \"std/...\" looks (default: $GPUC_STDLIB or\n"
            "                     %s)\n"
            "  -o FILE            write output to FILE instead of standard output; without\n"
            "                     --emit, build the executable FILE (docs/executables.md)\n"
            "  -e NAME            the entry point an executable runs when not given -e\n"
            "  --arch=LIST        GPU architectures for the executable (default sm_80,sm_90)\n"
            "  --gpuc-home DIR    where the runtime libraries are (DIR/lib, DIR/include;\n"
            "                     default: $GPUC_HOME, else this build tree)\n"
            "  --help             show this help\n"
            "  --version          show the version\n",
            GPUC_STDLIB_DIR);
}

static _Noreturn void bad_usage(const char *fmt, const char *arg)
{
    fprintf(stderr, "gpuc: error: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n(run 'gpuc --help' for usage)\n");
    exit(2);
}

/* -D NAME=VALUE or -D entry.NAME=VALUE */
static FeDefine parse_define(FeArena *a, const char *s)
{
    FeDefine d = {0};
    const char *eq = strchr(s, '=');
    if (!eq || eq == s || !eq[1]) {
        bad_usage("-D expects NAME=VALUE or ENTRY.NAME=VALUE, not '%s'", s);
    }
    const char *dot = memchr(s, '.', (size_t)(eq - s));
    if (dot) {
        d.entry = fe_strndup(a, s, (size_t)(dot - s));
        d.name = fe_strndup(a, dot + 1, (size_t)(eq - dot - 1));
    } else {
        d.name = fe_strndup(a, s, (size_t)(eq - s));
    }
    d.value = fe_strdup(a, eq + 1);
    if ((d.entry && !*d.entry) || !*d.name) {
        bad_usage("-D expects NAME=VALUE or ENTRY.NAME=VALUE, not '%s'", s);
    }
    return d;
}


/* --tuning FILE: each `ENTRY.NAME=VALUE` or `NAME=VALUE` line (blank lines
 * and # comments aside) is a -D, unless a -D on the command line sets the
 * same parameter. A malformed line is an error at FILE:LINE. */
static void read_tuning(FeArena *a, Options *o, int *cap)
{
    FILE *f = fopen(o->tuning, "r");
    if (!f) {
        fprintf(stderr, "gpuc: error: --tuning: cannot read '%s': %s\n", o->tuning, strerror(errno));
        exit(2);
    }
    int given = o->fe.ndefines;
    char line[1024];
    for (int lineno = 1; fgets(line, sizeof line, f); lineno++) {
        size_t n = strcspn(line, "\r\n");
        if (line[n] == 0 && !feof(f)) {
            fprintf(stderr, "%s:%d: error: line too long\n", o->tuning, lineno);
            exit(2);
        }
        line[n] = 0;
        char *p = line + strspn(line, " \t");
        if (!*p || *p == '#') {
            continue;
        }
        char *end = p + strlen(p);
        while (end > p && (end[-1] == ' ' || end[-1] == '\t')) {
            *--end = 0;
        }
        const char *eq = strchr(p, '=');
        if (!eq || eq == p || !eq[1] || strpbrk(p, " \t")) {
            fprintf(stderr, "%s:%d:%d: error: expected ENTRY.PARAM=VALUE, found '%s'\n", o->tuning, lineno,
                    (int)(p - line) + 1, p);
            exit(2);
        }
        FeDefine d = parse_define(a, p);
        bool overridden = false;
        for (int i = 0; i < given && !overridden; i++) {
            const FeDefine *g = &o->fe.defines[i];
            overridden = strcmp(g->name, d.name) == 0 && (!g->entry || (d.entry && strcmp(g->entry, d.entry) == 0));
        }
        if (!overridden) {
            FE_PUSH(a, o->fe.defines, o->fe.ndefines, *cap, d);
        }
    }
    fclose(f);
}

static void parse_args(FeArena *a, int argc, char **argv, Options *o)
{
    int cap = 0;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            usage(stdout);
            exit(0);
        } else if (strcmp(arg, "--version") == 0) {
            printf("gpuc %s\n", GPUC_VERSION);
            exit(0);
        } else if (strncmp(arg, "--emit=", 7) == 0) {
            o->emit = arg + 7;
            if (!*o->emit) {
                bad_usage("%s: missing emit kind", arg);
            }
        } else if (strcmp(arg, "--emit") == 0) {
            if (++i >= argc) {
                bad_usage("%s needs a kind", arg);
            }
            o->emit = argv[i];
        } else if (strncmp(arg, "--dump-after=", 13) == 0) {
            o->dump_after = arg + 13;
        } else if (strcmp(arg, "--explain-fusion") == 0) {
            o->explain_fusion = true;
        } else if (strcmp(arg, "-O0") == 0) {
            o->no_opt = true;
        } else if (strcmp(arg, "--list-params") == 0) {
            o->list_params = true;
        } else if (strcmp(arg, "-D") == 0) {
            if (++i >= argc) {
                bad_usage("%s needs NAME=VALUE", arg);
            }
            FE_PUSH(a, o->fe.defines, o->fe.ndefines, cap, parse_define(a, argv[i]));
        } else if (strncmp(arg, "-D", 2) == 0) {
            FE_PUSH(a, o->fe.defines, o->fe.ndefines, cap, parse_define(a, arg + 2));
        } else if (strcmp(arg, "--tuning") == 0 || strncmp(arg, "--tuning=", 9) == 0) {
            if (!arg[8] && ++i >= argc) {
                bad_usage("%s needs a file", arg);
            }
            o->tuning = arg[8] ? arg + 9 : argv[i];
        } else if (strcmp(arg, "--stdlib") == 0) {
            if (++i >= argc) {
                bad_usage("%s needs a directory", arg);
            }
            o->fe.stdlib_dir = argv[i];
        } else if (strncmp(arg, "--stdlib=", 9) == 0) {
            o->fe.stdlib_dir = arg + 9;
        } else if (strcmp(arg, "-e") == 0) {
            if (++i >= argc) {
                bad_usage("%s needs an entry name", arg);
            }
            o->entry = argv[i];
        } else if (strncmp(arg, "--arch=", 7) == 0 || strcmp(arg, "--arch") == 0) {
            if (!arg[6] && ++i >= argc) {
                bad_usage("%s needs a list like sm_80,sm_90", arg);
            }
            o->arch = arg[6] ? arg + 7 : argv[i];
            if (drv_check_arch(o->arch) != 0) {
                exit(2);
            }
        } else if (strncmp(arg, "--gpuc-home=", 12) == 0 || strcmp(arg, "--gpuc-home") == 0) {
            if (!arg[11] && ++i >= argc) {
                bad_usage("%s needs a directory", arg);
            }
            o->gpuc_home = arg[11] ? arg + 12 : argv[i];
        } else if (strcmp(arg, "-o") == 0) {
            if (++i >= argc) {
                bad_usage("%s needs a file name", arg);
            }
            o->output = argv[i];
        } else if (arg[0] == '-' && arg[1] != 0) {
            bad_usage("unknown option '%s'", arg);
        } else if (o->input) {
            bad_usage("more than one input file ('%s')", arg);
        } else {
            o->input = arg;
        }
    }
    if (!o->input) {
        bad_usage("%sno input file", "");
    }
    if (!o->fe.stdlib_dir) {
        o->fe.stdlib_dir = gpuc_compiler_default_stdlib_dir(); /* $GPUC_STDLIB, else this gpuc's */
    }
    if (o->tuning) {
        read_tuning(a, o, &cap);
    }
    if (drv_output_same_file(o->output, o->input)) {
        bad_usage("-o '%s' is the input file; writing it would destroy the program", o->output);
    }
}

/* Write a text output (--emit, --list-params) as `cc -o` writes
 * (driver/output.c): a temporary put in place at the end, so a failed write
 * leaves no partial file; devices, FIFOs and links written in place; no -o or
 * `-o -` is standard output. Returns true if written. */
static bool write_output(const char *path, const char *text, size_t len)
{
    DrvOutput out;
    if (drv_output_open(&out, path, DRV_OUTPUT_TEXT) != 0) {
        return false;
    }
    bool ok = fwrite(text, 1, len, out.f) == len;
    return drv_output_close(&out, ok) && ok;
}

/* The compiler library's options for the command line's. */
static void compile_options(FeArena *a, const Options *o, GpucCompileOptions *co)
{
    gpuc_compiler_options_init(co);
    co->path = o->input;
    co->stdlib_dir = o->fe.stdlib_dir;
    const char **defines = fe_alloc(a, (size_t)(o->fe.ndefines + 1) * sizeof *defines);
    for (int i = 0; i < o->fe.ndefines; i++) {
        const FeDefine *d = &o->fe.defines[i];
        defines[i] = d->entry ? fe_printf(a, "%s.%s=%s", d->entry, d->name, d->value)
                              : fe_printf(a, "%s=%s", d->name, d->value);
    }
    co->defines = defines;
    co->ndefines = o->fe.ndefines;
    co->entry = o->entry;
    co->dump_after = o->dump_after;
    co->explain_fusion = o->explain_fusion;
    co->opt_level = o->no_opt ? 0 : 1;
}

/* Compile, print the diagnostics on stderr, and return the exit status (the
 * library's status is gpuc's: 0, 1, 2 or 70). *result (if not NULL) keeps
 * the result for the caller to free. */
static int compile_and_report(const GpucCompileOptions *co, GpucEmit emit, GpucCompileResult **result)
{
    GpucCompileResult *r = NULL;
    int status = gpuc_compiler_compile(co, emit, &r);
    fputs(gpuc_compiler_result_rendered(r), stderr);
    if (result) {
        *result = r;
    } else {
        gpuc_compiler_result_free(r);
    }
    return status;
}

/* Compile to text (its "source" output) and write it to -o or stdout. After
 * errors stdout still gets what was produced; a file is not written. */
static int emit_text(FeArena *a, const Options *o, const GpucCompileOptions *co, GpucEmit emit)
{
    GpucCompileResult *r = NULL;
    int status = compile_and_report(co, emit, &r);
    size_t len = 0;
    const char *text = gpuc_compiler_result_output(r, "source", &len);
    if (text && (status == 0 || !o->output) && !write_output(o->output, text, len) && status == 0) {
        status = 1;
    }
    gpuc_compiler_result_free(r);
    return status;
}

/* The command: what to compile (the pipeline is gpuc_compiler_compile's)
 * and where the result goes. Returns the exit status. */
static int compile(FeArena *a, const Options *o)
{
    GpucCompileOptions co;
    compile_options(a, o, &co);
    if (o->emit && strcmp(o->emit, "tokens") == 0) {
        return emit_text(a, o, &co, GPUC_EMIT_TOKENS);
    }
    if (o->list_params) {
        return emit_text(a, o, &co, GPUC_EMIT_PARAMS);
    }
    if (!o->emit) {
        int status = compile_and_report(&co, GPUC_EMIT_CHECK, NULL);
        if (status != 0 || !o->output) {
            return status; /* check only */
        }
        DrvBuildOptions bo = { o->entry, o->arch, o->gpuc_home, false };
        return drv_build_exe(&co, &bo, o->output); /* -o without --emit: an executable */
    }
    static const char *const text_kinds[] = { "ast", "ir", "ir-unfused", "c", "c-shard", "cuda", "cuda-shard", "program", NULL };
    for (int i = 0; text_kinds[i]; i++) {
        if (strcmp(o->emit, text_kinds[i]) == 0) {
            return emit_text(a, o, &co, (GpucEmit)gpuc_compiler_emit_kind(o->emit));
        }
    }
    int status = compile_and_report(&co, GPUC_EMIT_CHECK, NULL);
    if (status != 0) {
        return status;
    }
    if (strcmp(o->emit, "lib") == 0) {
        /* an ahead-of-time library: -o DIR/libNAME writes libNAME.a,
         * libNAME.so, NAME.h, NAME.json and NAME.d (driver/build_exe.c) */
        DrvBuildOptions bo = { NULL, o->arch, o->gpuc_home, false };
        return drv_build_lib(&co, &bo, o->output);
    }
    fprintf(stderr, "gpuc: error: unknown emit kind '%s' (expected ast, tokens, ir, ir-unfused, c, c-shard, cuda, cuda-shard or lib)\n", o->emit);
    return 2;
}

/* Does option `arg` of gpuc take the next argument as its value? */
static bool takes_value(const char *arg)
{
    static const char *const with_value[] = { "-D", "-e", "-o", "--emit", "--stdlib", "--dump-after",
                                              "--arch", "--gpuc-home", "--tuning", NULL };
    for (int i = 0; with_value[i]; i++) {
        if (strcmp(arg, with_value[i]) == 0) {
            return true;
        }
    }
    return false;
}

/* gpuc run [-v] [options] file.gdsl [program arguments]: gpuc's options up
 * to the file, the program's after it. */
static int run_command(FeArena *a, int argc, char **argv)
{
    bool verbose = false;
    int file = 1;
    char *sub[256];
    int nsub = 0;
    sub[nsub++] = "gpuc";
    for (; file < argc; file++) {
        const char *arg = argv[file];
        if (strcmp(arg, "-v") == 0) {
            verbose = true;
            continue;
        }
        if (arg[0] != '-' || !arg[1]) {
            break;
        }
        if (strcmp(arg, "-o") == 0 || strncmp(arg, "--emit", 6) == 0) {
            bad_usage("gpuc run does not take %s", arg);
        }
        if (nsub + 2 >= 255) {
            bad_usage("%s: too many options for gpuc run", arg);
        }
        sub[nsub++] = argv[file];
        if (takes_value(arg) && file + 1 < argc) {
            sub[nsub++] = argv[++file];
        }
    }
    if (file >= argc) {
        bad_usage("%sgpuc run needs a .gdsl file", "");
    }
    sub[nsub++] = argv[file];
    Options o = {0};
    parse_args(a, nsub, sub, &o);
    GpucCompileOptions co;
    compile_options(a, &o, &co);
    GpucCompileResult *checked = NULL;
    int status = compile_and_report(&co, GPUC_EMIT_CHECK, &checked);
    if (status != 0) {
        gpuc_compiler_result_free(checked);
        return status;
    }
    /* the cache key: every option given to gpuc (the sources are added by drv_run_cached) */
    size_t klen = 1;
    for (int i = 1; i < nsub; i++) {
        klen += strlen(sub[i]) + 1;
    }
    klen += strlen(o.fe.stdlib_dir) + 1;
    for (int i = 0; i < o.fe.ndefines; i++) { /* a tuning file's content counts, not its name */
        const FeDefine *d = &o.fe.defines[i];
        klen += (d->entry ? strlen(d->entry) : 0) + strlen(d->name) + strlen(d->value) + 4;
    }
    char *key = calloc(klen, 1);
    if (!key) {
        gpuc_compiler_result_free(checked);
        return 1;
    }
    for (int i = 1; i < nsub; i++) {
        strcat(key, sub[i]);
        strcat(key, "\n");
    }
    strcat(key, o.fe.stdlib_dir);
    for (int i = 0; i < o.fe.ndefines; i++) {
        const FeDefine *d = &o.fe.defines[i];
        strcat(key, "\n");
        strcat(key, d->entry ? d->entry : "");
        strcat(key, ".");
        strcat(key, d->name);
        strcat(key, "=");
        strcat(key, d->value);
    }
    /* the program's argv: its name (the file's, without .gdsl) and the rest */
    const char *base = strrchr(o.input, '/');
    base = base ? base + 1 : o.input;
    size_t blen = strlen(base);
    if (blen > 5 && strcmp(base + blen - 5, ".gdsl") == 0) {
        blen -= 5;
    }
    char **args = malloc((size_t)(argc - file + 1) * sizeof(char *));
    if (!args) {
        free(key);
        gpuc_compiler_result_free(checked);
        return 1;
    }
    args[0] = fe_strndup(a, base, blen);
    for (int i = file + 1; i < argc; i++) {
        args[i - file] = argv[i];
    }
    args[argc - file] = NULL;
    DrvBuildOptions bo = { o.entry, o.arch, o.gpuc_home, verbose };
    status = drv_run_cached(&co, checked, &bo, key, args);
    free(args);
    free(key);
    gpuc_compiler_result_free(checked);
    return status;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "test") == 0) {
        return drv_test_main(argc - 1, argv + 1);
    }
    if (argc > 1 && strcmp(argv[1], "bench") == 0) {
        return drv_bench_main(argc - 1, argv + 1);
    }
    if (argc > 1 && strcmp(argv[1], "tune") == 0) {
        return drv_tune_main(argc - 1, argv + 1);
    }
    FeArena *a = fe_arena_new();
    int status;
    if (argc > 1 && strcmp(argv[1], "run") == 0) {
        status = run_command(a, argc - 1, argv + 1);
        fe_arena_free(a);
        return status;
    }
    Options o = {0};
    parse_args(a, argc, argv, &o);
    status = compile(a, &o);
    fe_arena_free(a);
    return status;
}

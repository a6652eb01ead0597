/* main.c: the gpuc command. Parses the command line, then runs the whole
 * pipeline in compile(): parse -> check -> (IR -> backend) -> emit. Errors
 * are reported by each phase; the pipeline stops after a phase with errors.
 * Exit status: 0 success, 1 compile errors, 2 bad command line, 70 an
 * internal error (a gpuc bug, reported with its location). */
#define _XOPEN_SOURCE 700 /* strdup, realpath, mkstemp, fdopen */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "driver.h"
#include "frontend.h"

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
            "                     an nvcc include: docs/cuda_include.md)\n"
            "  --emit=lib -o DIR/libNAME  build a library: libNAME.a, libNAME.so, NAME.h,\n"
            "                     NAME.json (docs/library.md)\n"
            "  --dump-after=PASS  print the IR after pass PASS\n"
            "  --explain-fusion   say why operations were or were not fused\n"
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


/* The standard library of this gpuc: the source tree's when it is there (a
 * build tree), else PREFIX/share/gpuc/stdlib of an installed PREFIX/bin/gpuc. */
static const char *default_stdlib_dir(FeArena *a)
{
    struct stat st;
    if (stat(GPUC_STDLIB_DIR, &st) == 0 && S_ISDIR(st.st_mode)) {
        return GPUC_STDLIB_DIR;
    }
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        self[n] = 0;
        char *slash = strrchr(self, '/');
        if (slash && slash - self >= 4 && strncmp(slash - 4, "/bin", 4) == 0) {
            slash[-4] = 0;
            char *dir = fe_printf(a, "%s/share/gpuc/stdlib", self);
            if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode)) {
                return dir;
            }
        }
    }
    return GPUC_STDLIB_DIR;
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
        const char *env = getenv("GPUC_STDLIB");
        o->fe.stdlib_dir = env && *env ? env : default_stdlib_dir(a);
    }
    if (o->tuning) {
        read_tuning(a, o, &cap);
    }
    if (drv_output_same_file(o->output, o->input)) {
        bad_usage("-o '%s' is the input file; writing it would destroy the program", o->output);
    }
}

/* The text outputs (--emit, --list-params): written as `cc -o` writes, by
 * driver/output.c (a temporary put in place at the end, so a failed compile
 * leaves no partial file; devices and FIFOs written in place; `-o -` or no
 * -o is standard output). */
typedef DrvOutput Output;

static bool output_open(FeArena *a, Output *out, const char *path)
{
    (void)a;
    return drv_output_open(out, path, DRV_OUTPUT_TEXT) == 0;
}

/* Finish: put in place if ok, else remove the temporary. */
static bool output_close(Output *out, bool ok)
{
    return drv_output_close(out, ok);
}

/* -e NAME must name an entry, an export or a fn of the main file (what the
 * executable's table can hold): checked here, when the program is built,
 * rather than when it runs. Returns 0, or 1 after reporting the error. */
static int check_entry_option(const FeProgram *prog, const char *name)
{
    if (!name) {
        return 0;
    }
    const char *main_file = prog->nmodules ? prog->modules[0]->path : NULL;
    for (int i = 0; i < prog->ninstances; i++) {
        const FeFunc *f = prog->instances[i];
        bool ours = !main_file || !f->loc.file || strcmp(f->loc.file, main_file) == 0;
        if (ours && strcmp(f->inst_name ? f->inst_name : f->name, name) == 0) {
            return 0;
        }
    }
    fprintf(stderr, "gpuc: error: -e %s: there is no entry named '%s' (entries:", name, name);
    int listed = 0;
    for (int i = 0; i < prog->ninstances; i++) {
        const FeFunc *f = prog->instances[i];
        if (f->is_entry && (!main_file || !f->loc.file || strcmp(f->loc.file, main_file) == 0)) {
            fprintf(stderr, "%s %s", listed++ ? "," : "", f->inst_name ? f->inst_name : f->name);
        }
    }
    fprintf(stderr, "%s)\n", listed ? "" : " none");
    return 1;
}

/* The whole pipeline. Returns the exit status. */
static int compile(FeArena *a, const Options *o)
{
    if (o->emit && strcmp(o->emit, "tokens") == 0) {
        Output out = {0};
        if (!output_open(a, &out, o->output)) {
            return 1;
        }
        int r = fe_dump_tokens(a, o->input, out.f);
        return output_close(&out, r == 0) ? 0 : 1;
    }

    FeProgram *prog = fe_parse(a, o->input, &o->fe);   /* parse: main file + imports */
    if (!prog || fe_error_count()) {
        return 1;
    }
    fe_check(a, prog, &o->fe);                          /* names, types, instances */
    if (fe_error_count() || check_entry_option(prog, o->entry)) {
        return 1;
    }

    Output out = {0};
    if (o->list_params) {
        if (!output_open(a, &out, o->output)) {
            return 1;
        }
        fe_list_params(out.f, a, prog);
        return output_close(&out, true) ? 0 : 1;
    }
    if (!o->emit) {
        if (o->output) {   /* -o without --emit: an executable */
            DrvBuildOptions bo = { o->entry, o->arch, o->gpuc_home, false };
            return drv_build_exe(prog, &bo, o->output);
        }
        return 0; /* check only */
    }
    if (strcmp(o->emit, "ast") == 0) {
        if (!output_open(a, &out, o->output)) {
            return 1;
        }
        fe_print_program(out.f, a, prog);
        return output_close(&out, true) ? 0 : 1;
    }

    /* ---- emit dispatch (IR + backend owner) ---- */
    /* Lower prog->instances to the IR, run the passes (honouring
     * o->dump_after and o->explain_fusion) and emit ir / c / cuda
     * (backend/driver_glue.c). ir-unfused stops before fusion; program is the
     * C backend with the runner's program table and main. */
    if (strcmp(o->emit, "ir") == 0 || strcmp(o->emit, "ir-unfused") == 0 ||
        strcmp(o->emit, "c") == 0 || strcmp(o->emit, "cuda") == 0 || strcmp(o->emit, "program") == 0) {
        extern int be_driver_emit(FeProgram *prog, const char *emit, const char *dump_after,
                                  bool explain, FILE *out);
        if (!output_open(a, &out, o->output)) {
            return 1;
        }
        int rc = be_driver_emit(prog, o->emit, o->dump_after, o->explain_fusion, out.f);
        return output_close(&out, rc == 0) ? 0 : 1;
    }
    if (strcmp(o->emit, "lib") == 0) {
        /* an ahead-of-time library: -o DIR/libNAME writes libNAME.a,
         * libNAME.so, NAME.h, NAME.json and NAME.d (driver/build_exe.c) */
        extern int drv_build_lib(FeProgram *prog, const DrvBuildOptions *bo, const char *out_path);
        DrvBuildOptions bo = { NULL, o->arch, o->gpuc_home, false };
        return drv_build_lib(prog, &bo, o->output);
    }
    /* ---- end of emit dispatch ---- */

    fprintf(stderr, "gpuc: error: unknown emit kind '%s' (expected ast, tokens, ir, ir-unfused, c, cuda or lib)\n", o->emit);
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
    FeProgram *prog = fe_parse(a, o.input, &o.fe);
    if (!prog || fe_error_count()) {
        return 1;
    }
    fe_check(a, prog, &o.fe);
    if (fe_error_count() || check_entry_option(prog, o.entry)) {
        return 1;
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
        return 1;
    }
    args[0] = fe_strndup(a, base, blen);
    for (int i = file + 1; i < argc; i++) {
        args[i - file] = argv[i];
    }
    args[argc - file] = NULL;
    DrvBuildOptions bo = { o.entry, o.arch, o.gpuc_home, verbose };
    int status = drv_run_cached(prog, &bo, key, args);
    free(args);
    free(key);
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
        fe_diag_reset();
        return status;
    }
    Options o = {0};
    parse_args(a, argc, argv, &o);
    status = compile(a, &o);
    fe_arena_free(a);
    fe_diag_reset();
    return status;
}

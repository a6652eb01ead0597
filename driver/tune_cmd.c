/* tune_cmd.c: `gpuc tune [options] FILE.gdsl`, which chooses the launch
 * parameters of a program's kernels by measuring them (docs/bench.md#tuning).
 *
 * The tunable parameters are the entries' integer template parameters that
 * set a launch attribute (@block, @items, @unroll, @tile), as
 * `gpuc --list-params` prints them. The measurements are the file's own
 * `//! bench` blocks, run by `gpuc bench` (a child process, with
 * `-D ENTRY.P=V` for the variant tried). For each entry with tunables and a
 * bench block, a coordinate descent starts at the defaults and, parameter by
 * parameter, keeps the candidate with the lowest score (the geometric mean of
 * the medians of the entry's bench cases), for --rounds passes. The chosen
 * values go to a tuning file of `ENTRY.PARAM=VALUE` lines with comments
 * naming the device, the date and every measurement, which `gpuc --tuning
 * FILE` reads at build time. */
#define _XOPEN_SOURCE 700 /* strdup, mkdtemp */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "blocks.h"
#include "driver.h"

/* Candidate values of each launch attribute (the default is always tried). */
static const int block_values[] = { 64, 128, 256, 512, 1024 };
static const int items_values[] = { 1, 2, 4, 8, 16 };
static const int unroll_values[] = { 1, 2, 4, 8 };
static const int tile_values[] = { 8, 16, 32 };

typedef struct Tunable {
    char *entry, *name, *attr; /* "axpy", "BLOCK", "block" */
    long long def, chosen;
} Tunable;

typedef struct Tune {
    const char *self, *file, *backend, *only_entry, *out_path;
    int runs, rounds;
    char *tmp;
    Tunable *t;
    int nt;
    FILE *log;        /* the measurements, copied into the tuning file */
    char *logtext;
    size_t loglen;
} Tune;

/* The tunables of the file: `gpuc --list-params` lines with an attribute. */
static int read_tunables(Tune *tu)
{
    char *out = tb_printf("%s/params.txt", tu->tmp), *err = tb_printf("%s/params.err", tu->tmp);
    char *argv[] = { (char *)tu->self, "--list-params", (char *)tu->file, NULL };
    int st = drv_spawn(argv, "/dev/null", out, err, 60);
    char *text = drv_read_file(st == 0 ? out : err, NULL);
    if (st != 0) {
        fprintf(stderr, "%s", text ? text : "gpuc: error: --list-params failed\n");
        free(text);
        free(out);
        free(err);
        return -1;
    }
    for (char *line = strtok(text ? text : (char[]){ 0 }, "\n"); line; line = strtok(NULL, "\n")) {
        char entry[256], name[256], attr[32];
        long long def;
        /* ENTRY.NAME: int = DEF @attr */
        if (sscanf(line, "%255[^.].%255[^:]: int = %lld @%31s", entry, name, &def, attr) != 4) {
            continue;
        }
        if (tu->only_entry && strcmp(tu->only_entry, entry) != 0) {
            continue;
        }
        tu->t = tb_realloc(tu->t, sizeof *tu->t * (size_t)(tu->nt + 1));
        tu->t[tu->nt++] = (Tunable){ tb_strdup(entry), tb_strdup(name), tb_strdup(attr), def, def };
    }
    free(text);
    free(out);
    free(err);
    return 0;
}

static void candidates(const char *attr, const int **v, int *n)
{
    if (strcmp(attr, "block") == 0) {
        *v = block_values, *n = (int)(sizeof block_values / sizeof *block_values);
    } else if (strcmp(attr, "items") == 0) {
        *v = items_values, *n = (int)(sizeof items_values / sizeof *items_values);
    } else if (strcmp(attr, "unroll") == 0) {
        *v = unroll_values, *n = (int)(sizeof unroll_values / sizeof *unroll_values);
    } else {
        *v = tile_values, *n = (int)(sizeof tile_values / sizeof *tile_values);
    }
}

/* Every "median_us": value of a bench JSON file; -1 when a case failed or
 * there is none. Returns the count, or -1. */
static int read_medians(const char *path, double *med, int max)
{
    char *text = drv_read_file(path, NULL);
    if (!text) {
        return -1;
    }
    int n = 0;
    for (char *p = strstr(text, "\"median_us\":"); p && n < max; p = strstr(p + 1, "\"median_us\":")) {
        p += strlen("\"median_us\":");
        while (*p == ' ') {
            p++;
        }
        med[n++] = strncmp(p, "null", 4) == 0 ? -1 : strtod(p, NULL);
    }
    free(text);
    return n;
}

/* The score of the entry's current values (geometric mean of its bench
 * medians, microseconds), or INFINITY when the variant does not build or
 * run. The line of measurements goes to the log. */
static double score(Tune *tu, const char *entry)
{
    char *json = tb_printf("%s/bench.json", tu->tmp), *out = tb_printf("%s/bench.out", tu->tmp);
    char *runs = tb_printf("%d", tu->runs), *backend = tb_printf("--backend=%s", tu->backend);
    TbArgs a = { 0 };
    tb_args_add(&a, tb_strdup(tu->self));
    tb_args_add(&a, tb_strdup("bench"));
    tb_args_add(&a, backend);
    tb_args_add(&a, tb_strdup("-k"));
    tb_args_add(&a, tb_strdup(entry));
    tb_args_add(&a, tb_strdup("--runs"));
    tb_args_add(&a, runs);
    tb_args_add(&a, tb_strdup("--json"));
    tb_args_add(&a, tb_strdup(json));
    char desc[512] = "";
    size_t dl = 0;
    for (int i = 0; i < tu->nt; i++) {
        if (strcmp(tu->t[i].entry, entry) == 0) {
            tb_args_add(&a, tb_strdup("-D"));
            tb_args_add(&a, tb_printf("%s.%s=%lld", entry, tu->t[i].name, tu->t[i].chosen));
            dl += (size_t)snprintf(desc + dl, dl < sizeof desc ? sizeof desc - dl : 0, "%s%s=%lld", dl ? " " : "",
                                   tu->t[i].name, tu->t[i].chosen);
        }
    }
    tb_args_add(&a, tb_strdup(tu->file));
    a.v = tb_realloc(a.v, sizeof *a.v * (size_t)(a.n + 1));
    a.v[a.n] = NULL;
    unlink(json);
    int st = drv_spawn(a.v, "/dev/null", out, out, 0);
    double med[256];
    int n = st == 0 ? read_medians(json, med, 256) : -1;
    double logsum = 0;
    bool ok = n > 0;
    for (int i = 0; ok && i < n; i++) {
        ok = med[i] >= 0;
        logsum += log(med[i] > 0.5 ? med[i] : 0.5); /* times are whole microseconds: 0 means under 1 */
    }
    double s = ok ? exp(logsum / n) : INFINITY;
    if (ok) {
        fprintf(tu->log, "#   %s %s: %.1f us over %d case%s\n", entry, desc, s, n, n == 1 ? "" : "s");
    } else {
        char *why = drv_read_file(out, NULL);
        char *first = why ? tb_first_line(why) : tb_strdup("no output");
        fprintf(tu->log, "#   %s %s: failed (%s)\n", entry, desc, first);
        free(first);
        free(why);
    }
    fflush(tu->log);
    tb_args_free(&a);
    free(json);
    free(out);
    return s;
}

static int tune_entry(Tune *tu, const char *entry)
{
    fprintf(stderr, "gpuc tune: %s\n", entry);
    double best = score(tu, entry);
    if (isinf(best)) {
        fprintf(stderr, "gpuc: error: %s: the default variant does not run (is there a `//! bench %s` block?)\n", entry,
                entry);
        return -1;
    }
    long long *start = tb_realloc(NULL, sizeof *start * (size_t)(tu->nt + 1));
    for (int i = 0; i < tu->nt; i++) { start[i] = tu->t[i].chosen; }
    for (int round = 0; round < tu->rounds; round++) {
        bool changed = false;
        for (int i = 0; i < tu->nt; i++) {
            Tunable *t = &tu->t[i];
            if (strcmp(t->entry, entry) != 0) {
                continue;
            }
            const int *v;
            int nv;
            candidates(t->attr, &v, &nv);
            long long keep = t->chosen;
            for (int k = 0; k < nv; k++) {
                if (v[k] == keep) {
                    continue;
                }
                t->chosen = v[k];
                double s = score(tu, entry);
                if (s < best) {
                    best = s;
                    keep = v[k];
                    changed = true;
                }
            }
            t->chosen = keep;
        }
        if (!changed) {
            break;
        }
    }
    /* The first measurements of a run are often slow (clocks ramping up, cold
     * caches), which favours whatever is measured later: measure the default
     * again, right after the choice, and keep it unless the choice beats it. */
    best = score(tu, entry);
    long long *chosen = tb_realloc(NULL, sizeof *chosen * (size_t)(tu->nt + 1));
    for (int i = 0; i < tu->nt; i++) { chosen[i] = tu->t[i].chosen; tu->t[i].chosen = start[i]; }
    double def = score(tu, entry);
    if (best < def) {
        for (int i = 0; i < tu->nt; i++) { tu->t[i].chosen = chosen[i]; }
    }
    fprintf(tu->log, "# %s: measured again: default %.1f us, chosen %.1f us (%.2fx)%s\n", entry, def, best, def / best,
            best < def ? "" : "; the default is kept");
    free(start);
    free(chosen);
    return 0;
}

static int usage(const char *msg, const char *arg)
{
    fprintf(stderr, "gpuc tune: error: ");
    fprintf(stderr, msg, arg);
    fprintf(stderr, "\nusage: gpuc tune [--backend=cuda|c] [-k ENTRY] [--runs N] [--rounds N] [-o FILE] FILE.gdsl\n");
    return 2;
}

int drv_tune_main(int argc, char **argv)
{
    Tune tu = { 0 };
    tu.backend = "cuda";
    tu.runs = 10;
    tu.rounds = 2;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strncmp(a, "--backend=", 10) == 0) {
            tu.backend = a + 10;
            if (strcmp(tu.backend, "c") != 0 && strcmp(tu.backend, "cuda") != 0) {
                return usage("--backend must be c or cuda, not '%s'", tu.backend);
            }
        } else if (strcmp(a, "-k") == 0 || strcmp(a, "-o") == 0 || strcmp(a, "--runs") == 0 ||
                   strcmp(a, "--rounds") == 0) {
            if (i + 1 >= argc) {
                return usage("%s needs a value", a);
            }
            const char *v = argv[++i];
            if (a[1] == 'k') {
                tu.only_entry = v;
            } else if (a[1] == 'o') {
                tu.out_path = v;
            } else {
                char *end;
                long n = strtol(v, &end, 10);
                if (*end || n < 1 || n > 1000) {
                    return usage("expected a count from 1 to 1000, not '%s'", v);
                }
                *(strcmp(a, "--runs") == 0 ? &tu.runs : &tu.rounds) = (int)n;
            }
        } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            printf("usage: gpuc tune [--backend=cuda|c] [-k ENTRY] [--runs N] [--rounds N] [-o FILE] FILE.gdsl\n"
                   "Times the launch parameters of each entry's kernels (template parameters setting\n"
                   "@block, @items, @unroll, @tile) on the file's //! bench blocks and writes a tuning\n"
                   "file (default FILE.tuning) for `gpuc --tuning`. See docs/bench.md.\n");
            return 0;
        } else if (a[0] == '-') {
            return usage("unknown option '%s'", a);
        } else if (tu.file) {
            return usage("one .gdsl file at a time, not also '%s'", a);
        } else {
            tu.file = a;
        }
    }
    if (!tu.file) {
        return usage("%sneeds a .gdsl file", "");
    }
    if (access(tu.file, R_OK) != 0) {
        fprintf(stderr, "gpuc: error: cannot read '%s': %s\n", tu.file, strerror(errno));
        return 1;
    }
    TbSession s;
    if (tb_session_init(&s) != 0) {
        return 1;
    }
    tu.self = s.self;
    tu.tmp = s.tmp;
    int rc = 1;
    char *out_path = tu.out_path ? tb_strdup(tu.out_path) : tb_printf("%.*s.tuning",
        (int)(strlen(tu.file) > 5 && strcmp(tu.file + strlen(tu.file) - 5, ".gdsl") == 0 ? strlen(tu.file) - 5
                                                                                         : strlen(tu.file)), tu.file);
    if (drv_output_same_file(out_path, tu.file)) {
        fprintf(stderr, "gpuc: error: -o '%s' is the input file; writing it would destroy the program\n", out_path);
        goto done;
    }
    if (drv_output_check(out_path, DRV_OUTPUT_TEXT) != 0) {
        goto done;
    }
    tu.log = open_memstream(&tu.logtext, &tu.loglen);
    if (!tu.log || read_tunables(&tu) != 0) {
        goto done;
    }
    if (tu.nt == 0) {
        fprintf(stderr, "gpuc: error: %s: no entry%s%s has a template parameter that sets @block, @items, @unroll or @tile\n",
                tu.file, tu.only_entry ? " named " : "", tu.only_entry ? tu.only_entry : "");
        goto done;
    }
    rc = 0;
    for (int i = 0; i < tu.nt && rc == 0; i++) {
        bool first = true;
        for (int j = 0; j < i; j++) {
            first = first && strcmp(tu.t[j].entry, tu.t[i].entry) != 0;
        }
        if (first) {
            rc = tune_entry(&tu, tu.t[i].entry) != 0;
        }
    }
    fclose(tu.log);
    tu.log = NULL;
    if (rc == 0) {
        /* written whole to a temporary, then put in place (output.c) */
        DrvOutput out;
        FILE *f = drv_output_open(&out, out_path, DRV_OUTPUT_TEXT) == 0 ? out.f : NULL;
        time_t now = time(NULL);
        char date[32];
        strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
        if (f) {
            fprintf(f, "# gpuc tuning file for %s: written by `gpuc tune` on %s, backend %s, %d runs per case\n",
                    tu.file, date, tu.backend, tu.runs);
            fprintf(f, "# read by `gpuc --tuning FILE` (lines ENTRY.PARAM=VALUE; -D on the command line wins)\n");
            fprintf(f, "# measurements (geometric mean of the medians of each entry's bench cases):\n%s", tu.logtext);
            for (int i = 0; i < tu.nt; i++) {
                fprintf(f, "%s.%s=%lld\n", tu.t[i].entry, tu.t[i].name, tu.t[i].chosen);
            }
        }
        if (!f || !drv_output_close(&out, true)) {
            rc = 1;
        } else {
            fprintf(stderr, "gpuc tune: wrote %s\n", out_path);
        }
    }
done:
    if (tu.log) {
        fclose(tu.log);
    }
    free(tu.logtext);
    for (int i = 0; i < tu.nt; i++) {
        free(tu.t[i].entry);
        free(tu.t[i].name);
        free(tu.t[i].attr);
    }
    free(tu.t);
    free(out_path);
    tb_session_free(&s);
    return rc;
}

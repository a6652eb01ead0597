/* tune_harness.c: the measuring program of `gpuc tune` (tune_harness.h says
 * what it does; docs/bench.md#tuning why). Measuring every variant of a
 * race in one process, on the same device copies of the inputs, interleaved
 * call by call, removes what made separate processes differ (where the
 * inputs were placed, the clocks a new context starts at) and the seconds
 * each process spent reading and uploading its inputs. */
#define _XOPEN_SOURCE 700 /* fdopen, kill */
#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "blocks.h"
#include "driver.h"
#include "tune_harness.h"

/* The first lines of a file (a compiler's log), or what. */
static char *log_head(const char *path, const char *what)
{
    char *text = drv_read_file(path, NULL);
    if (!text || !*tb_trim(text)) {
        free(text);
        return tb_strdup(what);
    }
    char *p = text;
    for (int i = 0; i < 4 && p && *p; i++) {
        p = strchr(p, '\n');
        p = p ? p + 1 : NULL;
    }
    if (p && *p) {
        p[-1] = 0;
    }
    return text;
}

/* One argument of the launcher's prototype. */
typedef struct ThArg {
    char *type;   /* "const float *", "int64_t", "float **" */
    char *name;   /* "v_x", "out0" */
} ThArg;

/* The arguments of the prototype of fn in text (the first "fn(" after
 * head). Returns how many, or -1. */
static int read_prototype(const char *text, const char *head, ThArg *args, int max)
{
    const char *p = strstr(text, head);
    if (!p) {
        return -1;
    }
    p += strlen(head);
    const char *end = strchr(p, ')');
    int n = 0;
    while (end && p < end && n < max) {
        size_t len = strcspn(p, ",)");
        char *whole = tb_strndup(p, len), *a = tb_trim(whole);
        size_t k = strlen(a);
        while (k > 0 && (isalnum((unsigned char)a[k - 1]) || a[k - 1] == '_')) {
            k--;
        }
        args[n].name = tb_strdup(a + k);
        a[k] = 0;
        args[n].type = tb_strdup(tb_trim(a));
        free(whole);
        n++;
        p += len + (p[len] == ',');
    }
    return end ? n : -1;
}

/* The type without its last n stars ("float **" -> "float"). */
static char *strip_stars(const char *type, int n)
{
    char *t = tb_strdup(type);
    for (int i = 0; i < n; i++) {
        char *star = strrchr(t, '*');
        if (star) {
            *star = 0;
        }
    }
    char *trimmed = tb_strdup(tb_trim(t));
    free(t);
    return trimmed;
}

static const ThValue *find_value(const ThCase *c, const char *name)
{
    for (int i = 0; i < c->n; i++) {
        if (strcmp(c->v[i].name, name) == 0) {
            return &c->v[i];
        }
    }
    return NULL;
}

/* The part of the harness that does not depend on the program. */
static const char harness_prelude[] =
    "#include <math.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n#include <time.h>\n"
    "#ifdef __CUDACC__\n#define TH_CUDA 1\n#else\n#define TH_CUDA 0\n#endif\n"
    "static char *th_why[TH_NV]; /* a variant's failure, or NULL */\n"
    "static void *th_ref[TH_NC][8]; static long long th_ref_n[TH_NC][8]; /* variant 0's results, on the host */\n"
    "static void th_fatal(const char *what, const char *path) { printf(\"error %s '%s'\\n\", what, path); exit(1); }\n"
    "/* the data of a .npy file (after its header), on the device with CUDA */\n"
    "static void *th_load(const char *path) {\n"
    "    FILE *f = fopen(path, \"rb\");\n"
    "    if (!f) { th_fatal(\"cannot read\", path); }\n"
    "    fseek(f, 0, SEEK_END); long size = ftell(f); fseek(f, 0, SEEK_SET);\n"
    "    unsigned char *buf = (unsigned char *)malloc((size_t)size + 1);\n"
    "    if (!buf || fread(buf, 1, (size_t)size, f) != (size_t)size || size < 12) { th_fatal(\"cannot read\", path); }\n"
    "    fclose(f);\n"
    "    long head = buf[6] == 1 ? 10 + (buf[8] | buf[9] << 8)\n"
    "                            : 12 + (long)(buf[8] | buf[9] << 8 | buf[10] << 16 | (unsigned long)buf[11] << 24);\n"
    "    if (head > size) { th_fatal(\"not a .npy file:\", path); }\n"
    "#if TH_CUDA\n"
    "    void *d = NULL;\n"
    "    if (cudaMalloc(&d, (size_t)(size - head) + 1) != cudaSuccess ||\n"
    "        cudaMemcpy(d, buf + head, (size_t)(size - head), cudaMemcpyHostToDevice) != cudaSuccess) {\n"
    "        th_fatal(\"cannot upload\", path);\n"
    "    }\n"
    "    free(buf);\n"
    "    return d;\n"
    "#else\n"
    "    memmove(buf, buf + head, (size_t)(size - head));\n"
    "    return buf;\n"
    "#endif\n"
    "}\n"
    "/* result k of case c of variant v (count elements of elem bytes; on the device\n"
    " * when dev): variant 0's is kept, the others' compared with it (floats within\n"
    " * 1e-3 relative plus 1e-4 of the largest magnitude, the rest bit for bit) */\n"
    "static void th_result(int v, int c, int k, const void *p, long long count, int elem, int isfloat, int dev) {\n"
    "    size_t bytes = (size_t)count * (size_t)elem;\n"
    "    unsigned char *h = (unsigned char *)malloc(bytes + 1);\n"
    "#if TH_CUDA\n"
    "    if (dev) { cudaMemcpy(h, p, bytes, cudaMemcpyDeviceToHost); } else\n"
    "#endif\n"
    "    { (void)dev; memcpy(h, p, bytes); }\n"
    "    if (v == 0) { th_ref[c][k] = h; th_ref_n[c][k] = count; return; }\n"
    "    char msg[200] = \"\";\n"
    "    if (count != th_ref_n[c][k]) {\n"
    "        snprintf(msg, sizeof msg, \"case %d result %d: %lld elements, the default's %lld\", c + 1, k, count, th_ref_n[c][k]);\n"
    "    } else if (!isfloat) {\n"
    "        for (long long i = 0; i < count && !*msg; i++) {\n"
    "            if (memcmp(h + i * elem, (unsigned char *)th_ref[c][k] + i * elem, (size_t)elem) != 0) {\n"
    "                snprintf(msg, sizeof msg, \"case %d result %d element %lld differs from the default's\", c + 1, k, i);\n"
    "            }\n"
    "        }\n"
    "    } else {\n"
    "        double big = 0;\n"
    "        for (long long i = 0; i < count; i++) {\n"
    "            double r = elem == 4 ? ((float *)th_ref[c][k])[i] : ((double *)th_ref[c][k])[i];\n"
    "            big = fabs(r) > big ? fabs(r) : big;\n"
    "        }\n"
    "        for (long long i = 0; i < count && !*msg; i++) {\n"
    "            double r = elem == 4 ? ((float *)th_ref[c][k])[i] : ((double *)th_ref[c][k])[i];\n"
    "            double x = elem == 4 ? ((float *)h)[i] : ((double *)h)[i];\n"
    "            if (!(fabs(x - r) <= 1e-3 * fabs(r) + 1e-4 * big) && !(isnan(x) && isnan(r))) {\n"
    "                snprintf(msg, sizeof msg, \"case %d result %d element %lld: %.9g, the default's %.9g\", c + 1, k, i, x, r);\n"
    "            }\n"
    "        }\n"
    "    }\n"
    "    free(h);\n"
    "    if (*msg && !th_why[v]) { th_why[v] = strdup(msg); }\n"
    "}\n"
    "static double th_now_us(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return 1e6 * (double)t.tv_sec + 1e-3 * (double)t.tv_nsec; }\n";

/* The rest: the calls table, the timing and the request loop. */
static const char harness_main[] =
    "static int th_reps[TH_NC];\n"
    "/* case c of variant v: reps back-to-back calls, microseconds per call */\n"
    "static double th_time(int v, int c, int reps) {\n"
    "#if TH_CUDA\n"
    "    static cudaEvent_t e0, e1;\n"
    "    if (!e0) { cudaEventCreate(&e0); cudaEventCreate(&e1); }\n"
    "    cudaEventRecord(e0, 0);\n"
    "    for (int r = 0; r < reps; r++) { th_calls[v][c](v, 0); }\n"
    "    cudaEventRecord(e1, 0);\n"
    "    cudaEventSynchronize(e1);\n"
    "    float ms = 0;\n"
    "    cudaEventElapsedTime(&ms, e0, e1);\n"
    "    return 1000.0 * ms / reps;\n"
    "#else\n"
    "    double t0 = th_now_us();\n"
    "    for (int r = 0; r < reps; r++) { th_calls[v][c](v, 0); }\n"
    "    return (th_now_us() - t0) / reps;\n"
    "#endif\n"
    "}\n"
    "int main(int argc, char **argv) {\n"
    "    double sample_us = argc > 1 ? atof(argv[1]) : 0;\n"
    "    int min_calls = argc > 2 ? atoi(argv[2]) : 1;\n"
    "    th_load_inputs();\n"
    "    for (int v = 0; v < TH_NV; v++) {\n"
    "        for (int c = 0; c < TH_NC && !th_why[v]; c++) {\n"
    "            int rc = th_calls[v][c](v, 0);\n"
    "            rc = rc ? rc : th_calls[v][c](v, 1);\n"
    "#if TH_CUDA\n"
    "            cudaError_t e = cudaDeviceSynchronize();\n"
    "            if (!rc && e != cudaSuccess) { rc = (int)e; }\n"
    "            if (rc > 0) { char m[200]; snprintf(m, sizeof m, \"case %d: error %d (%s)\", c + 1, rc, cudaGetErrorString((cudaError_t)rc)); th_why[v] = strdup(m); }\n"
    "#endif\n"
    "            if (rc && !th_why[v]) { char m[100]; snprintf(m, sizeof m, \"case %d: the entry returned %d\", c + 1, rc); th_why[v] = strdup(m); }\n"
    "        }\n"
    "        printf(\"variant %d %s\\n\", v, th_why[v] ? th_why[v] : \"ok\");\n"
    "        if (v == 0 && th_why[0]) { return 1; }\n"
    "    }\n"
    "    /* as many back-to-back calls as fill sample_us, the same for every variant */\n"
    "    for (int c = 0; c < TH_NC; c++) {\n"
    "        double t = th_time(0, c, 1);\n"
    "        th_reps[c] = t > 0 && sample_us > t ? (int)(sample_us / t + 1) : 1;\n"
    "        th_reps[c] = th_reps[c] > 10000 ? 10000 : th_reps[c] < min_calls ? min_calls : th_reps[c];\n"
    "    }\n"
    "    printf(\"ready\\n\");\n"
    "    fflush(stdout);\n"
    "    char line[64];\n"
    "    while (fgets(line, sizeof line, stdin)) {\n"
    "        int v = atoi(line);\n"
    "        if (v < 0 || v >= TH_NV || th_why[v]) { printf(\"error no variant %d to time\\n\", v); fflush(stdout); continue; }\n"
    "        double logsum = 0;\n"
    "        for (int c = 0; c < TH_NC; c++) {\n"
    "            double us = th_time(v, c, th_reps[c]);\n"
    "            logsum += log(us > 1e-3 ? us : 1e-3);\n"
    "        }\n"
    "        printf(\"%.6f\\n\", exp(logsum / TH_NC));\n"
    "        fflush(stdout);\n"
    "    }\n"
    "    return 0;\n"
    "}\n";

/* Write the harness source for the launcher arguments args[0..nargs) into f.
 * Returns NULL or a message. */
static char *write_harness(FILE *f, const ThSpec *sp, const char *inc, const ThArg *args, int nargs)
{
    fprintf(f, "/* generated by gpuc tune (driver/tune_harness.c): the variants of %s in %s */\n", sp->entry,
            sp->file);
    fprintf(f, "#include \"%s\"\n#define TH_NV %d\n#define TH_NC %d\n%s", inc, sp->nvariants, sp->ncases,
            harness_prelude);
    /* the inputs: one global per array of each case */
    for (int c = 0; c < sp->ncases; c++) {
        for (int i = 0; i < sp->cases[c].n; i++) {
            if (sp->cases[c].v[i].npy) {
                fprintf(f, "static void *th_c%d_%s;\n", c, sp->cases[c].v[i].name);
            }
        }
    }
    fprintf(f, "static void th_load_inputs(void) {\n");
    for (int c = 0; c < sp->ncases; c++) {
        for (int i = 0; i < sp->cases[c].n; i++) {
            if (sp->cases[c].v[i].npy) {
                fprintf(f, "    th_c%d_%s = th_load(\"%s\");\n", c, sp->cases[c].v[i].name, sp->cases[c].v[i].npy);
            }
        }
    }
    fprintf(f, "}\n");
    /* one function per variant and case: a call, its results checked when keep */
    for (int v = 0; v < sp->nvariants; v++) {
        for (int c = 0; c < sp->ncases; c++) {
            char *decl = tb_strdup(""), *call = tb_strdup(""), *after = tb_strdup("");
            int nres = 0;
            char *err = NULL;
            for (int a = 0; a < nargs && !err; a++) {
                const char *name = args[a].name;
                char *piece = NULL;
                if (strncmp(name, "out", 3) == 0 && isdigit((unsigned char)name[3])) {
                    if (strstr(name, "_shape")) {
                        piece = tb_printf("s%d", nres - 1);
                    } else {
                        bool array = strstr(args[a].type, "**") != NULL;
                        char *t = strip_stars(args[a].type, 1 + array);
                        bool isfloat = strcmp(t, "float") == 0 || strcmp(t, "double") == 0;
                        char *d = array ? tb_printf("%s    %s *r%d = NULL; int64_t s%d[2] = { 0, 1 };\n", decl, t,
                                                    nres, nres)
                                        : tb_printf("%s    %s r%d;\n", decl, t, nres);
                        free(decl);
                        decl = d;
                        char *x = array ? tb_printf("%s    if (keep) { th_result(v, %d, %d, r%d, s%d[0] * s%d[1], "
                                                    "(int)sizeof *r%d, %d, TH_CUDA); }\n"
                                                    "    if (r%d) { %s(%sr%d); }\n",
                                                    after, c, nres, nres, nres, nres, nres, isfloat, nres,
                                                    sp->cuda ? "gpuc_h_free" : "free", sp->cuda ? "0, " : "", nres)
                                        : tb_printf("%s    if (keep) { th_result(v, %d, %d, &r%d, 1, (int)sizeof r%d, "
                                                    "%d, 0); }\n",
                                                    after, c, nres, nres, nres, isfloat);
                        free(after);
                        after = x;
                        piece = tb_printf("&r%d", nres);
                        nres++;
                        free(t);
                    }
                } else {
                    const ThValue *val = strncmp(name, "v_", 2) == 0 ? find_value(&sp->cases[c], name + 2) : NULL;
                    bool pointer = strchr(args[a].type, '*') != NULL;
                    if (!val) {
                        err = tb_printf("the launcher's argument '%s %s' has no value in the bench block", args[a].type,
                                        name);
                    } else if (pointer != (val->npy != NULL)) {
                        err = tb_printf("the launcher's argument '%s %s' is %s, the bench block gives %s",
                                        args[a].type, name, pointer ? "an array" : "a scalar",
                                        pointer ? "a scalar" : "an array");
                    } else {
                        piece = pointer ? tb_printf("(%s)th_c%d_%s", args[a].type, c, name + 2)
                                        : tb_printf("(%s)(%s)", args[a].type, val->literal);
                    }
                }
                if (piece) {
                    char *j = tb_printf("%s, %s", call, piece);
                    free(call);
                    call = j;
                    free(piece);
                }
            }
            if (!err && nres > 8) {
                err = tb_strdup("more than 8 results");
            }
            if (!err) {
                fprintf(f, "static int th_call_%d_%d(int v, int keep) {\n%s", v, c, decl);
                fprintf(f, "    int rc = %s%s__tune%d(%s%s);\n", sp->cuda ? "gpuc_dev_" : "gpuc_entry_", sp->entry, v,
                        sp->cuda ? "0" : "", sp->cuda ? call : call + (*call ? 2 : 0));
                fprintf(f, "    if (rc) { return rc; }\n%s    (void)v;\n    return 0;\n}\n", after);
            }
            free(decl);
            free(call);
            free(after);
            if (err) {
                return err;
            }
        }
    }
    fprintf(f, "static int (*const th_calls[TH_NV][TH_NC])(int, int) = {\n");
    for (int v = 0; v < sp->nvariants; v++) {
        fprintf(f, "    {");
        for (int c = 0; c < sp->ncases; c++) {
            fprintf(f, "%s th_call_%d_%d", c ? "," : "", v, c);
        }
        fprintf(f, " },\n");
    }
    fprintf(f, "};\n%s", harness_main);
    return NULL;
}

/* Spawn argv with its output to log; the first lines of the log on failure. */
static char *build_step(char **argv, const char *log, const char *what)
{
    int st = drv_spawn(argv, "/dev/null", log, log, 600);
    if (st == 0) {
        return NULL;
    }
    char *head = log_head(log, "no messages");
    char *e = tb_printf("%s failed (exit status %d): %s", what, st, head);
    free(head);
    return e;
}

char *th_start(const ThSpec *sp, ThHarness *h, char **why)
{
    memset(h, 0, sizeof *h);
    h->pid = -1;
    for (int i = 0; i < sp->nvariants; i++) {
        why[i] = NULL;
    }
    /* the program and the variants as exports */
    char *src = drv_read_file(sp->file, NULL);
    if (!src) {
        return tb_printf("cannot read '%s'", sp->file);
    }
    char *race = tb_printf("%s/race.gdsl", sp->dir), *inc = tb_printf("%s/race.%s", sp->dir, sp->cuda ? "cuh" : "h");
    char *hsrc = tb_printf("%s/harness.%s", sp->dir, sp->cuda ? "cu" : "c");
    char *exe = tb_printf("%s/harness", sp->dir), *log = tb_printf("%s/harness.log", sp->dir);
    char *err = NULL;
    FILE *f = fopen(race, "w");
    if (!f) {
        err = tb_printf("cannot write '%s'", race);
    } else {
        fprintf(f, "%s\n// gpuc tune: the variants raced\n", src);
        for (int i = 0; i < sp->nvariants; i++) {
            fprintf(f, "export %s<%s> as %s__tune%d;\n", sp->entry, sp->targs[i], sp->entry, i);
        }
        if (fclose(f) != 0) {
            err = tb_printf("cannot write '%s'", race);
        }
    }
    free(src);
    if (!err) {
        char *argv[] = { (char *)sp->self, sp->cuda ? "--emit=cuda" : "--emit=c", race, "-o", inc, NULL };
        err = build_step(argv, log, "gpuc --emit of the variants");
    }
    /* the launcher's arguments */
    ThArg args[64];
    int nargs = -1;
    if (!err) {
        char *text = drv_read_file(inc, NULL);
        char *head = tb_printf("%s%s__tune0(", sp->cuda ? "GPUC_HOST_FN int gpuc_dev_" : "int gpuc_entry_", sp->entry);
        nargs = text ? read_prototype(text, head, args, 64) : -1;
        free(head);
        free(text);
        if (nargs < 0) {
            err = tb_printf("no launcher of '%s' in the generated %s", sp->entry, sp->cuda ? "CUDA" : "C");
        }
    }
    if (!err) {
        f = fopen(hsrc, "w");
        if (!f) {
            err = tb_printf("cannot write '%s'", hsrc);
        } else {
            /* CUDA: the first argument is the stream */
            err = write_harness(f, sp, inc, args + sp->cuda, nargs - sp->cuda);
            if (fclose(f) != 0 && !err) {
                err = tb_printf("cannot write '%s'", hsrc);
            }
        }
    }
    for (int i = 0; i < nargs; i++) {
        free(args[i].type);
        free(args[i].name);
    }
    if (!err && sp->cuda) {
        const char *nvcc = getenv("NVCC");
        if (!nvcc || !*nvcc) {
            nvcc = access("/usr/local/cuda/bin/nvcc", X_OK) == 0 ? "/usr/local/cuda/bin/nvcc" : "nvcc";
        }
        char *arch = sp->arch ? tb_printf("-arch=%s", sp->arch) : tb_strdup("-arch=native");
        char *argv[] = { (char *)nvcc, "-O3", "-std=c++17", arch, hsrc, "-o", exe, NULL };
        err = build_step(argv, log, "nvcc of the harness");
        free(arch);
    } else if (!err) {
        const char *cc = getenv("CC");
        char *argv[] = { (char *)(cc && *cc ? cc : "cc"), "-O2", "-std=c11", "-D_POSIX_C_SOURCE=200809L", "-w", hsrc,
                         "-o", exe, "-lm", NULL };
        err = build_step(argv, log, "cc of the harness");
    }
    /* start it: requests on its stdin, answers on its stdout */
    int to[2] = { -1, -1 }, from[2] = { -1, -1 };
    if (!err && (pipe(to) != 0 || pipe(from) != 0)) {
        err = tb_printf("pipe: %s", strerror(errno));
    }
    if (!err) {
        char *sample = tb_printf("%g", sp->sample_us), *calls = tb_printf("%d", sp->min_calls);
        char *errlog = tb_printf("%s/harness.err", sp->dir);
        fflush(NULL);
        h->pid = fork();
        if (h->pid == 0) {
            FILE *e = fopen(errlog, "w");
            dup2(to[0], 0);
            dup2(from[1], 1);
            if (e) {
                dup2(fileno(e), 2);
            }
            close(to[1]);
            close(from[0]);
            execl(exe, exe, sample, calls, (char *)NULL);
            _exit(127);
        }
        free(sample);
        free(calls);
        free(errlog);
        close(to[0]);
        close(from[1]);
        to[0] = from[1] = -1;
        if (h->pid < 0) {
            err = tb_printf("fork: %s", strerror(errno));
        } else {
            signal(SIGPIPE, SIG_IGN);
            h->to = fdopen(to[1], "w");
            h->from = fdopen(from[0], "r");
            to[1] = from[0] = -1;
        }
    }
    for (int i = 0; i < 2; i++) {
        if (to[i] >= 0) {
            close(to[i]);
        }
        if (from[i] >= 0) {
            close(from[i]);
        }
    }
    /* its report: a line per variant, then "ready" */
    char line[512];
    while (!err && h->from) {
        if (!fgets(line, sizeof line, h->from)) {
            char *errlog = tb_printf("%s/harness.err", sp->dir);
            char *head = log_head(errlog, "no messages");
            err = tb_printf("the harness stopped before it was ready: %s", head);
            free(head);
            free(errlog);
            break;
        }
        line[strcspn(line, "\n")] = 0;
        int v, at = 0;
        if (strcmp(line, "ready") == 0) {
            break;
        } else if (sscanf(line, "variant %d %n", &v, &at) == 1 && at > 0 && v >= 0 && v < sp->nvariants) {
            if (strcmp(line + at, "ok") != 0) {
                why[v] = tb_strdup(line + at);
            }
        } else {
            err = tb_printf("the harness said: %s", line);
        }
    }
    if (err && why[0] == NULL && h->pid > 0) {
        /* nothing to measure */
    }
    if (!err && why[0]) {
        err = tb_printf("the default variant failed: %s", why[0]);
    }
    if (err) {
        th_stop(h);
    }
    free(race);
    free(inc);
    free(hsrc);
    free(exe);
    free(log);
    return err;
}

char *th_sample(ThHarness *h, int i, double *us)
{
    char line[256];
    if (!h->to || fprintf(h->to, "%d\n", i) < 0 || fflush(h->to) != 0 || !fgets(line, sizeof line, h->from)) {
        return tb_strdup("the harness stopped");
    }
    char *end;
    *us = strtod(line, &end);
    if (end == line) {
        line[strcspn(line, "\n")] = 0;
        return tb_printf("the harness said: %s", line);
    }
    return NULL;
}

void th_stop(ThHarness *h)
{
    if (h->to) {
        fclose(h->to);
    }
    if (h->from) {
        fclose(h->from);
    }
    if (h->pid > 0) {
        int st;
        while (waitpid(h->pid, &st, 0) < 0 && errno == EINTR) {
        }
    }
    memset(h, 0, sizeof *h);
    h->pid = -1;
}

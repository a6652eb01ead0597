/* blocks.c: the parts of `gpuc test` and `gpuc bench` that are the same for
 * both (declared and described in blocks.h), but for the values and inputs
 * of the blocks (tb_values.c): strings, the `//!` block reader, finding a
 * directory's .gdsl files, and building and running a .gdsl file's
 * executable, with wrapper entries for the fns of a file (docs/testing.md). */
#define _XOPEN_SOURCE 700 /* strdup, realpath */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "blocks.h"
#include "driver.h"

/* ---------------------------------------------------------------- utils */

void *tb_malloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "gpuc: error: out of memory\n");
        exit(1);
    }
    return p;
}

void *tb_realloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (!p) {
        fprintf(stderr, "gpuc: error: out of memory\n");
        exit(1);
    }
    return p;
}

char *tb_strndup(const char *s, size_t n)
{
    char *r = tb_malloc(n + 1);
    memcpy(r, s, n);
    r[n] = 0;
    return r;
}

char *tb_strdup(const char *s)
{
    return tb_strndup(s, strlen(s));
}

char *tb_printf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *s = tb_malloc((size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

char *tb_trim(char *s)
{
    while (*s == ' ' || *s == '\t') {
        s++;
    }
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r' || s[n - 1] == '\n')) {
        s[--n] = 0;
    }
    return s;
}

bool tb_read_size(const char *s, long long *v)
{
    char *end;
    s += strspn(s, " \t");
    errno = 0;
    long long x = strtoll(s, &end, 10);
    if (end == s || errno || x < 0) {
        return false;
    }
    if (x == 2 && *end == '^') {
        long long k = strtoll(end + 1, &end, 10);
        if (k < 0 || k > 40) {
            return false;
        }
        x = 1ll << k;
        if (*end == '+' || *end == '-') {
            char sign = *end;
            const char *num = end + 1;
            long long c = strtoll(num, &end, 10);
            if (end == num || c < 0) {
                return false;
            }
            x = sign == '+' ? x + c : x - c;
        }
    }
    end += strspn(end, " \t");
    *v = x;
    return !*end && x >= 0;
}

char *tb_first_line(const char *s)
{
    const char *nl = strchr(s, '\n');
    return nl ? tb_strndup(s, (size_t)(nl - s)) : tb_strdup(s);
}

void tb_args_add(TbArgs *a, char *owned)
{
    a->v = tb_realloc(a->v, (size_t)(a->n + 2) * sizeof *a->v);
    a->v[a->n++] = owned;
    a->v[a->n] = NULL;
}

void tb_args_free(TbArgs *a)
{
    for (int i = 0; i < a->n; i++) {
        free(a->v[i]);
    }
    free(a->v);
    a->v = NULL;
    a->n = 0;
}

/* ---------------------------------------------------------------- blocks */

void tb_blocks_free(TbBlock *b, int n)
{
    for (int i = 0; i < n; i++) {
        free(b[i].entry);
        free(b[i].desc);
        for (int j = 0; j < b[i].nitems; j++) {
            free(b[i].items[j].text);
        }
        free(b[i].items);
    }
    free(b);
}

/* bracket depth change of s, outside "strings" */
static int depth_of(const char *s)
{
    int d = 0;
    bool str = false;
    for (; *s; s++) {
        if (*s == '"') {
            str = !str;
        } else if (!str && strchr("[({", *s)) {
            d++;
        } else if (!str && strchr("])}", *s)) {
            d--;
        }
    }
    return d;
}

static void add_item(TbBlock *b, TbItem it)
{
    b->items = tb_realloc(b->items, (size_t)(b->nitems + 1) * sizeof *b->items);
    b->items[b->nitems++] = it;
}

/* "test" or "bench" followed by a blank or the end */
static bool starts_block(const char *body, const char *word)
{
    size_t n = strlen(word);
    return strncmp(body, word, n) == 0 && (body[n] == ' ' || body[n] == '\t' || !body[n]);
}

TbBlock *tb_read_blocks(char *src, int *nblocks)
{
    TbBlock *bs = NULL;
    int n = 0, cur = -1;
    TbItem pending = { NULL, 0, 0 };
    int line = 0;
    for (char *ln = src; ln && *ln;) {
        char *nl = strchr(ln, '\n');
        if (nl) {
            *nl = 0;
        }
        line++;
        char *p = ln;
        while (*p == ' ' || *p == '\t') {
            p++;
        }
        if (strncmp(p, "//!", 3) != 0) {
            if (cur >= 0 && pending.text) {
                add_item(&bs[cur], pending);
                pending.text = NULL;
            }
            cur = -1;
        } else {
            char *body = p + 3;
            while (*body == ' ' || *body == '\t') {
                body++;
            }
            int col = (int)(body - ln) + 1;
            body = tb_trim(body);
            bool test = starts_block(body, "test"), bench = starts_block(body, "bench");
            if ((test || bench) && !pending.text) {
                bs = tb_realloc(bs, (size_t)(n + 1) * sizeof *bs);
                cur = n++;
                TbBlock *b = &bs[cur];
                memset(b, 0, sizeof *b);
                b->bench = bench;
                b->line = line;
                b->col = col;
                char *e = tb_trim(body + (bench ? 5 : 4));
                char *colon = strchr(e, ':');
                if (colon) {
                    *colon = 0;
                    b->desc = tb_strdup(tb_trim(colon + 1));
                }
                b->entry = tb_strdup(tb_trim(e));
            } else if (cur >= 0 && *body) {
                if (pending.text) {
                    char *j = tb_printf("%s %s", pending.text, body);
                    free(pending.text);
                    pending.text = j;
                } else {
                    pending = (TbItem){ tb_strdup(body), line, col };
                }
                if (depth_of(pending.text) <= 0) {
                    add_item(&bs[cur], pending);
                    pending.text = NULL;
                }
            }
        }
        ln = nl ? nl + 1 : NULL;
    }
    if (cur >= 0 && pending.text) {
        add_item(&bs[cur], pending);
        pending.text = NULL;
    }
    free(pending.text);
    *nblocks = n;
    return bs;
}

const char *tb_block_input(const TbBlock *bl, const char *name, const TbItem **item)
{
    size_t nl = strlen(name);
    for (int i = 0; i < bl->nitems; i++) {
        const char *it = bl->items[i].text;
        if (strncmp(it, name, nl) == 0) {
            const char *q = it + nl;
            while (*q == ' ' || *q == '\t') {
                q++;
            }
            if (*q == '=') {
                q++;
                while (*q == ' ' || *q == '\t') {
                    q++;
                }
                if (item) {
                    *item = &bl->items[i];
                }
                return q;
            }
        }
    }
    return NULL;
}

/* ---------------------------------------------------------------- executables */

struct TbBuild {
    char *key;     /* what was built: the wrapped fn (or "") and the -D arguments */
    char *exe;
    bool ok;
    char *log;     /* gpuc's messages when the build failed */
    TbSig *sigs;
    int nsigs;
};

static void build_free(TbBuild *b)
{
    free(b->key);
    free(b->exe);
    free(b->log);
    for (int i = 0; i < b->nsigs; i++) {
        free(b->sigs[i].name);
        for (int j = 0; j < b->sigs[i].nparams; j++) {
            free(b->sigs[i].pnames[j]);
            free(b->sigs[i].ptypes[j]);
        }
        free(b->sigs[i].pnames);
        free(b->sigs[i].ptypes);
        free(b->sigs[i].result);
    }
    free(b->sigs);
    free(b);
}

/* `NAME \t RESULT [\t PARAM \t TYPE]...` lines of the program's --signatures */
static void read_sigs(TbBuild *b, char *text)
{
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        char *f[512];
        int nf = 0;
        for (char *q = line; nf < 512;) {
            f[nf++] = q;
            char *tab = strchr(q, '\t');
            if (!tab) {
                break;
            }
            *tab = 0;
            q = tab + 1;
        }
        if (nf < 2 || nf % 2) {
            continue;
        }
        b->sigs = tb_realloc(b->sigs, (size_t)(b->nsigs + 1) * sizeof *b->sigs);
        TbSig *s = &b->sigs[b->nsigs++];
        memset(s, 0, sizeof *s);
        s->name = tb_strdup(f[0]);
        s->result = tb_strdup(f[1]);
        s->nparams = (nf - 2) / 2;
        s->pnames = tb_malloc((size_t)s->nparams * sizeof *s->pnames);
        s->ptypes = tb_malloc((size_t)s->nparams * sizeof *s->ptypes);
        for (int i = 0; i < s->nparams; i++) {
            s->pnames[i] = tb_strdup(f[2 + 2 * i]);
            s->ptypes[i] = tb_strdup(f[3 + 2 * i]);
        }
    }
}

int tb_session_init(TbSession *s)
{
    memset(s, 0, sizeof *s);
    s->timeout = 600;
    char self[4096];
    ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
    if (sl <= 0) {
        fprintf(stderr, "gpuc: error: cannot find the gpuc executable (/proc/self/exe)\n");
        return -1;
    }
    self[sl] = 0;
    s->self = tb_strdup(self);
    s->tmp = drv_temp_dir();
    return s->tmp ? 0 : -1;
}

void tb_session_next_file(TbSession *s)
{
    for (int i = 0; i < s->nbuilds; i++) {
        unlink(s->builds[i]->exe);
        build_free(s->builds[i]);
    }
    free(s->builds);
    s->builds = NULL;
    s->nbuilds = 0;
    free(s->ast);
    s->ast = NULL;
}

void tb_session_free(TbSession *s)
{
    tb_session_next_file(s);
    if (s->tmp) {
        drv_remove_dir(s->tmp);
    }
    free(s->tmp);
    free((char *)s->self);
    tb_args_free(&s->wrap);
}

/* Build source (with the gpuc options opts, space-separated, and the -D
 * arguments in defs, "\n"-separated) once per key. */
static TbBuild *get_build(TbSession *s, const char *source, const char *key, const char *opts, const char *defs)
{
    for (int i = 0; i < s->nbuilds; i++) {
        if (strcmp(s->builds[i]->key, key) == 0) {
            return s->builds[i];
        }
    }
    s->builds = tb_realloc(s->builds, (size_t)(s->nbuilds + 1) * sizeof *s->builds);
    TbBuild *b = calloc(1, sizeof *b);
    if (!b) {
        exit(1);
    }
    s->builds[s->nbuilds++] = b;
    b->key = tb_strdup(key);
    b->exe = tb_printf("%s/prog%d", s->tmp, s->counter++);
    char *log = tb_printf("%s/build%d.log", s->tmp, s->counter++);
    TbArgs argv = { 0 };
    tb_args_add(&argv, tb_strdup(s->self));
    tb_args_add(&argv, tb_strdup(source));
    tb_args_add(&argv, tb_strdup("-o"));
    tb_args_add(&argv, tb_strdup(b->exe));
    char *o = tb_strdup(opts);
    for (char *t = strtok(o, " "); t; t = strtok(NULL, " ")) {
        tb_args_add(&argv, tb_strdup(t));
    }
    free(o);
    char *d = tb_strdup(defs);
    for (char *t = strtok(d, "\n"); t; t = strtok(NULL, "\n")) {
        tb_args_add(&argv, tb_strdup("-D"));
        tb_args_add(&argv, tb_strdup(t));
    }
    free(d);
    b->ok = drv_spawn(argv.v, "/dev/null", log, log, 0) == 0;
    tb_args_free(&argv);
    if (!b->ok) {
        b->log = drv_read_file(log, NULL);
        if (!b->log) {
            b->log = tb_strdup("");
        }
        char *t = tb_trim(b->log);
        memmove(b->log, t, strlen(t) + 1);
    } else {
        char *out = tb_printf("%s/sigs%d.txt", s->tmp, s->counter++);
        char *sargv[] = { b->exe, "--signatures", NULL };
        char *text = NULL;
        if (drv_spawn(sargv, "/dev/null", out, "/dev/null", 60) == 0 && (text = drv_read_file(out, NULL))) {
            read_sigs(b, text);
        }
        free(text);
        unlink(out);
        free(out);
    }
    unlink(log);
    free(log);
    return b;
}

static const TbSig *find_sig(const TbBuild *b, const char *name)
{
    for (int i = 0; i < b->nsigs; i++) {
        if (strcmp(b->sigs[i].name, name) == 0) {
            return &b->sigs[i];
        }
    }
    return NULL;
}

/* The fn declarations of the main file in `gpuc --emit=ast FILE`: calls
 * each(name, signature) for every line `fn NAME<...>(...) -> R` (signature:
 * the text after NAME), stopping when it returns true. */
static void each_fn(TbSession *s, const char *file, bool (*each)(void *, const char *, const char *), void *ctx)
{
    if (!s->ast) {
        char *out = tb_printf("%s/ast%d.txt", s->tmp, s->counter++);
        char *argv[] = { (char *)s->self, "--emit=ast", (char *)file, NULL };
        if (drv_spawn(argv, "/dev/null", out, "/dev/null", 60) == 0) {
            s->ast = drv_read_file(out, NULL);
        }
        if (!s->ast) {
            s->ast = tb_strdup("");
        }
        unlink(out);
        free(out);
    }
    for (const char *l = s->ast; *l;) {
        const char *e = strchr(l, '\n');
        size_t len = e ? (size_t)(e - l) : strlen(l);
        if (l != s->ast && strncmp(l, "module ", 7) == 0) {
            break; /* imported modules follow the main file */
        }
        size_t nl = strspn(l + 3, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
        if (strncmp(l, "fn ", 3) == 0 && nl && (l[3 + nl] == '<' || l[3 + nl] == '(')) {
            char *name = tb_strndup(l + 3, nl), *sig = tb_strndup(l + 3 + nl, len - 3 - nl);
            bool stop = each(ctx, name, sig);
            free(name);
            free(sig);
            if (stop) {
                return;
            }
        }
        l = e ? e + 1 : l + len;
    }
}

typedef struct FindFn {
    const char *name;
    char *sig;
} FindFn;

static bool find_fn(void *ctx, const char *name, const char *sig)
{
    FindFn *f = ctx;
    if (strcmp(f->name, name) == 0) {
        f->sig = tb_strdup(sig);
        return true;
    }
    return false;
}

/* The parameter names of a signature `<...>(a: T, b: U) -> R`, joined with
 * ", "; NULL when it takes or returns functions. */
static char *param_names(const char *sig)
{
    const char *p = strchr(sig, '(');
    if (!p) {
        return NULL;
    }
    char *names = tb_strdup("");
    int depth = 0;
    bool at_name = true;
    for (p++; *p && !(depth == 0 && *p == ')'); p++) {
        if (at_name && *p != ' ') {
            size_t n = strcspn(p, ":");
            char *j = tb_printf("%s%s%.*s", names, *names ? ", " : "", (int)n, p);
            free(names);
            names = j;
            p += n;
            at_name = false;
        }
        if (strchr("([{", *p)) {
            depth++;
        } else if (strchr(")]}", *p)) {
            depth--;
        } else if (*p == '-' && p[1] == '>') {
            free(names);
            return NULL; /* a function type */
        } else if (*p == ',' && depth == 0) {
            at_name = true;
        }
    }
    return names;
}

/* The wrapper entry of fn name (signature sig) in text; false when the fn
 * takes or returns functions. */
static bool wrapper_entry(char **text, const char *name, const char *sig)
{
    char *names = param_names(sig);
    if (!names) {
        return false;
    }
    char *t = tb_printf("%sentry gpuc_test__%s%s = %s(%s);\n", *text, name, sig, name, names);
    free(*text);
    free(names);
    *text = t;
    return true;
}

static bool all_fns(void *ctx, const char *name, const char *sig)
{
    wrapper_entry(ctx, name, sig);
    return false;
}

/* Build a wrapper file importing file (key: its build key in the session). */
static TbBuild *build_wrapper(TbSession *s, const char *file, const char *entries, const char *key,
                              const char *opts, const char *defs, char **msg)
{
    for (int i = 0; i < s->nbuilds; i++) {
        if (strcmp(s->builds[i]->key, key) == 0) {
            return s->builds[i];
        }
    }
    char abs[PATH_MAX];
    char *src = tb_printf("%s/wrap%d.gdsl", s->tmp, s->counter++);
    TbBuild *w = NULL;
    FILE *f = fopen(src, "w");
    if (f && realpath(file, abs)) {
        fprintf(f, "// gpuc test: fns of %s as entries\nimport \"%s\";\n%s", file, abs, entries);
    }
    if (!f || fclose(f) != 0) {
        *msg = tb_printf("cannot write '%s'", src);
    } else {
        w = get_build(s, src, key, opts, defs);
    }
    unlink(src);
    free(src);
    return w;
}

int tb_prepare(TbSession *s, const char *file, const TbBlock *bl, const char **exe, const TbSig **sig,
               const char **run_name, char **msg, bool *skip)
{
    return tb_prepare_opts(s, file, bl, "", exe, sig, run_name, msg, skip);
}

int tb_prepare_opts(TbSession *s, const char *file, const TbBlock *bl, const char *opts, const char **exe,
                    const TbSig **sig, const char **run_name, char **msg, bool *skip)
{
    *msg = NULL;
    *skip = false;
    /* the defines choose the build: -D ENTRY.P=V */
    char *defs = tb_strdup(s->defines ? s->defines : ""), *wdefs = tb_strdup("");
    char *wname = tb_printf("gpuc_test__%s", bl->entry);
    for (int i = 0; i < bl->nitems; i++) {
        const TbItem *it = &bl->items[i];
        if (strncmp(it->text, "define", 6) != 0 || (it->text[6] != ' ' && it->text[6] != '\t')) {
            continue;
        }
        const char *eq = strchr(it->text, '=');
        char *ncopy = eq ? tb_strndup(it->text + 7, (size_t)(eq - it->text - 7)) : NULL;
        char *vcopy = eq ? tb_strdup(eq + 1) : NULL;
        char *name = ncopy ? tb_trim(ncopy) : NULL, *val = vcopy ? tb_trim(vcopy) : NULL;
        if (!name || !*name || !*val || strpbrk(name, " \t=.") || strpbrk(val, " \t")) {
            if (!*msg) {
                *msg = tb_printf("%s:%d:%d: expected 'define PARAM = VALUE', found '%s'", file, it->line, it->col,
                                 it->text);
            }
        } else {
            char *d = tb_printf("%s%s.%s=%s\n", defs, bl->entry, name, val);
            char *w = tb_printf("%s%s.%s=%s\n%s.%s=%s\n", wdefs, wname, name, val, bl->entry, name, val);
            free(defs);
            free(wdefs);
            defs = d;
            wdefs = w;
        }
        free(ncopy);
        free(vcopy);
    }
    int rc = 0;
    if (*msg) {
        rc = 2;
        goto out;
    }
    char *key = tb_printf("%s\n%s", opts, defs);
    TbBuild *b = get_build(s, file, key, opts, defs);
    free(key);
    if (!b->ok) {
        *msg = tb_strdup(b->log);
        rc = 1;
        goto out;
    }
    if ((*sig = find_sig(b, bl->entry))) {
        *exe = b->exe;
        *run_name = (*sig)->name;
        goto out;
    }
    /* a fn of the file: through a wrapper entry that imports the file;
     * without defines, one wrapper for all fns of the file is tried first */
    FindFn ff = { bl->entry, NULL };
    each_fn(s, file, find_fn, &ff);
    char *entry = tb_strdup("");
    if (!ff.sig) {
        *msg = tb_printf("'%s' is not an entry, export or fn of %s", bl->entry, file);
        rc = 2;
    } else if (!wrapper_entry(&entry, bl->entry, ff.sig)) {
        *msg = tb_printf("fn '%s' takes or returns functions, so it cannot be run as an entry", bl->entry);
        *skip = true;
        rc = 2;
    } else {
        TbBuild *w = NULL;
        if (!*wdefs) {
            char *all = tb_strdup("");
            each_fn(s, file, all_fns, &all);
            char *akey = tb_printf("%s\nall fns", opts);
            w = build_wrapper(s, file, all, akey, opts, "", msg);
            free(akey);
            free(all);
        }
        if (!w || !w->ok) {
            char *wkey = tb_printf("%s %s\n%s", opts, bl->entry, wdefs);
            free(*msg);
            *msg = NULL;
            w = build_wrapper(s, file, entry, wkey, opts, wdefs, msg);
            free(wkey);
        }
        if (!w) {
            rc = 2;
        } else if (!w->ok) {
            char *l = tb_first_line(w->log);
            *msg = tb_printf("cannot run fn '%s' as an entry: %s", bl->entry, l);
            free(l);
            rc = 2;
        } else if (!(*sig = find_sig(w, wname))) {
            *msg = tb_printf("fn '%s' has no instance to run (give template parameters without defaults with "
                             "'define')", bl->entry);
            rc = 2;
        } else {
            *exe = w->exe;
            *run_name = (*sig)->name;
        }
    }
    free(ff.sig);
    free(entry);
out:
    free(defs);
    free(wdefs);
    free(wname);
    return rc;
}

/* The result of a run that ended with status st: the program's stderr (file
 * se, trimmed) in *errtext and, when st is 0, the nresults .npy files in
 * *out. Returns st, or -1 when a result could not be read. Removes the files. */
static int collect_run(int st, char **files, int nresults, const char *se, TbComp **out, char **errtext)
{
    *errtext = drv_read_file(se, NULL);
    if (!*errtext) {
        *errtext = tb_strdup("");
    }
    char *t = tb_trim(*errtext);
    memmove(*errtext, t, strlen(t) + 1);
    *out = NULL;
    if (st == 0) {
        TbComp *c = calloc((size_t)nresults + 1, sizeof *c);
        if (!c) {
            exit(1);
        }
        char err[512];
        bool ok = true;
        for (int i = 0; i < nresults && ok; i++) {
            ok = tb_npy_read(files[i], &c[i], err, sizeof err);
        }
        if (ok) {
            *out = c;
        } else {
            tb_comps_free(c, nresults);
            free(*errtext);
            *errtext = tb_strdup(err);
            st = -1;
        }
    }
    for (int i = 0; i < nresults; i++) {
        unlink(files[i]);
    }
    unlink(se);
    return st;
}

/* The files of one run: its results, stdout and stderr, named by a fresh id. */
typedef struct RunFiles {
    char **results;
    char *outarg;   /* the results joined with commas, for --out */
    char *so, *se;
} RunFiles;

static void run_files_init(TbSession *s, RunFiles *f, int nresults)
{
    int id = s->counter++;
    f->results = tb_malloc((size_t)nresults * sizeof *f->results);
    f->outarg = tb_strdup("");
    for (int i = 0; i < nresults; i++) {
        f->results[i] = tb_printf("%s/out%d.%d.npy", s->tmp, id, i);
        char *j = tb_printf("%s%s%s", f->outarg, i ? "," : "", f->results[i]);
        free(f->outarg);
        f->outarg = j;
    }
    f->so = tb_printf("%s/stdout%d", s->tmp, id);
    f->se = tb_printf("%s/stderr%d", s->tmp, id);
}

static void run_files_free(RunFiles *f, int nresults)
{
    for (int i = 0; i < nresults; i++) {
        free(f->results[i]);
    }
    free(f->results);
    free(f->outarg);
    unlink(f->so);
    free(f->so);
    free(f->se);
}

int tb_run(TbSession *s, const char *exe, const char *run_name, const char *backend, const TbArgs *extra,
           const char *stdin_path, int nresults, TbComp **out, char **errtext)
{
    TbArgs argv = { 0 };
    for (int i = 0; i < s->wrap.n; i++) {
        tb_args_add(&argv, tb_strdup(s->wrap.v[i]));
    }
    tb_args_add(&argv, tb_strdup(exe));
    tb_args_add(&argv, tb_strdup("-e"));
    tb_args_add(&argv, tb_strdup(run_name));
    tb_args_add(&argv, tb_printf("--backend=%s", backend));
    for (int i = 0; extra && i < extra->n; i++) {
        tb_args_add(&argv, tb_strdup(extra->v[i]));
    }
    RunFiles f;
    run_files_init(s, &f, nresults);
    tb_args_add(&argv, tb_strdup("--out"));
    tb_args_add(&argv, tb_strdup(f.outarg));
    int st = drv_spawn(argv.v, stdin_path ? stdin_path : "/dev/null", f.so, f.se, s->timeout);
    st = collect_run(st, f.results, nresults, f.se, out, errtext);
    run_files_free(&f, nresults);
    tb_args_free(&argv);
    return st;
}

/* Exit status of `EXE --batch` when it stopped after a run that failed inside
 * the CUDA backend (runner/rn_main.c run_batch): the rest are run again. */
#define BATCH_STOPPED 3

/* The runs idx[0..n-1] (all of one executable, none done) in `EXE --batch`
 * processes until each has a status: a process that stops after a CUDA
 * failure, or dies, is followed by a new one for the runs it left; a run
 * that was first in its process when the process died gets that ending as
 * its status (so a run is only blamed for a crash or timeout in a process of
 * its own making, as when it runs alone). */
static void run_batches(TbSession *s, TbRun *runs, int *idx, int n)
{
    RunFiles *files = tb_malloc((size_t)n * sizeof *files);
    bool *done = calloc((size_t)n + 1, sizeof *done);
    if (!done) {
        exit(1);
    }
    int left = n;
    while (left > 0) {
        int id = s->counter++;
        char *list = tb_printf("%s/batch%d.txt", s->tmp, id), *status = tb_printf("%s/batch%d.status", s->tmp, id);
        char *errs = tb_printf("%s/batch%d.err", s->tmp, id);
        FILE *f = fopen(list, "w");
        if (!f) {
            fprintf(stderr, "gpuc: error: cannot write '%s': %s\n", list, strerror(errno));
            exit(1);
        }
        int first = -1;
        for (int k = 0; k < n; k++) {
            if (done[k]) {
                continue;
            }
            const TbRun *r = &runs[idx[k]];
            first = first < 0 ? k : first;
            run_files_init(s, &files[k], r->nresults);
            fprintf(f, "%d\t%s\t%s\t%s\t-e\t%s\t--backend=%s", k, r->stdin_path ? r->stdin_path : "-", files[k].so,
                    files[k].se, r->run_name, r->backend);
            for (int i = 0; r->extra && i < r->extra->n; i++) {
                fprintf(f, "\t%s", r->extra->v[i]);
            }
            fprintf(f, "\t--out\t%s\n", files[k].outarg);
        }
        if (fclose(f) != 0) {
            fprintf(stderr, "gpuc: error: cannot write '%s'\n", list);
            exit(1);
        }
        char *timeout = tb_printf("%u", s->timeout);
        char *argv[] = { (char *)runs[idx[first]].exe, "--batch", list, "--timeout", timeout, NULL };
        int st = drv_spawn(argv, "/dev/null", status, errs, 0);
        free(timeout);
        /* the statuses written, in the order of the runs */
        char *text = drv_read_file(status, NULL);
        for (char *line = text ? strtok(text, "\n") : NULL; line; line = strtok(NULL, "\n")) {
            char *tab = strchr(line, '\t');
            int k = atoi(line);
            if (!tab || k < 0 || k >= n || done[k]) {
                continue;
            }
            TbRun *r = &runs[idx[k]];
            r->status = collect_run(atoi(tab + 1), files[k].results, r->nresults, files[k].se, &r->out, &r->errtext);
            run_files_free(&files[k], r->nresults);
            done[k] = true;
            left--;
        }
        free(text);
        if (left > 0 && !done[first] && st != BATCH_STOPPED) {
            /* the process died in its first run: that run's own ending */
            TbRun *r = &runs[idx[first]];
            r->status = collect_run(st == 0 ? 1 : st, files[first].results, 0, files[first].se, &r->out, &r->errtext);
            if (!*r->errtext) {
                free(r->errtext);
                char *e = drv_read_file(errs, NULL);
                r->errtext = e ? e : tb_strdup("");
                char *t = tb_trim(r->errtext);
                memmove(r->errtext, t, strlen(t) + 1);
            }
            for (int i = 0; i < r->nresults; i++) {
                unlink(files[first].results[i]);
            }
            run_files_free(&files[first], r->nresults);
            done[first] = true;
            left--;
        }
        for (int k = 0; k < n; k++) {
            if (!done[k] && files[k].results) {
                for (int i = 0; i < runs[idx[k]].nresults; i++) {
                    unlink(files[k].results[i]);
                }
                unlink(files[k].se);
                run_files_free(&files[k], runs[idx[k]].nresults);
                files[k].results = NULL;
            }
        }
        unlink(list);
        unlink(status);
        unlink(errs);
        free(list);
        free(status);
        free(errs);
    }
    free(files);
    free(done);
}

/* Whether a run can be a line of a batch list: no tab or newline in what
 * goes on the line (a path can hold them). */
static bool fits_batch_line(const TbRun *r)
{
    bool ok = !strpbrk(r->exe, "\t\n") && !strpbrk(r->run_name, "\t\n") &&
              !(r->stdin_path && strpbrk(r->stdin_path, "\t\n"));
    for (int i = 0; ok && r->extra && i < r->extra->n; i++) {
        ok = !strpbrk(r->extra->v[i], "\t\n");
    }
    return ok;
}

void tb_run_all(TbSession *s, TbRun *runs, int n)
{
    bool *taken = calloc((size_t)n + 1, sizeof *taken);
    int *idx = tb_malloc((size_t)n * sizeof *idx);
    if (!taken) {
        exit(1);
    }
    for (int i = 0; i < n; i++) {
        /* a wrapping command (a sanitizer) sees one run per process, as it expects */
        if (s->wrap.n > 0 || !fits_batch_line(&runs[i])) {
            taken[i] = true;
            runs[i].status = tb_run(s, runs[i].exe, runs[i].run_name, runs[i].backend, runs[i].extra,
                                    runs[i].stdin_path, runs[i].nresults, &runs[i].out, &runs[i].errtext);
        }
    }
    for (int i = 0; i < n; i++) {
        if (taken[i]) {
            continue;
        }
        int m = 0;
        for (int j = i; j < n; j++) {
            if (!taken[j] && strcmp(runs[j].exe, runs[i].exe) == 0) {
                taken[j] = true;
                idx[m++] = j;
            }
        }
        run_batches(s, runs, idx, m);
    }
    free(idx);
    free(taken);
}

/* ---- files ---- */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void each_gdsl(const char *path, int depth, void (*file)(void *, const char *),
                      void (*error)(void *, const char *, const char *), void *ctx)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        error(ctx, path, strerror(errno));
        return;
    }
    if (!S_ISDIR(st.st_mode)) {
        file(ctx, path);
        return;
    }
    if (depth > 16) {
        return;
    }
    DIR *d = opendir(path);
    if (!d) {
        error(ctx, path, strerror(errno));
        return;
    }
    char **names = NULL;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (e->d_name[0] == '.') {
            continue;
        }
        char *full = tb_printf("%s/%s", path, e->d_name);
        struct stat es;
        if (stat(full, &es) == 0 && (S_ISDIR(es.st_mode) || (len > 5 && strcmp(e->d_name + len - 5, ".gdsl") == 0))) {
            names = tb_realloc(names, (size_t)(n + 1) * sizeof *names);
            names[n++] = full;
        } else {
            free(full);
        }
    }
    closedir(d);
    if (n > 1) {
        qsort(names, (size_t)n, sizeof *names, cmp_str);
    }
    for (int i = 0; i < n; i++) {
        each_gdsl(names[i], depth + 1, file, error, ctx);
        free(names[i]);
    }
    free(names);
}

void tb_each_gdsl(const char *path, void (*file)(void *ctx, const char *path),
                  void (*error)(void *ctx, const char *path, const char *msg), void *ctx)
{
    each_gdsl(path, 0, file, error, ctx);
}

/* test_cmd.c: `gpuc test [--backend=c|cuda] [-k ENTRY] FILES-OR-DIRS...`,
 * the runner of the `//!` test blocks inside .gdsl files (docs/testing.md).
 *
 * Each file is built once per distinct set of `define` lines (gpuc itself,
 * run as a child: `gpuc FILE -o EXE -D ENTRY.P=V`); the entry signatures are
 * read from the executable's --help. Each block runs the executable once:
 * inline values go to standard input as text (the executable reads the same
 * syntax), `file "PATH"` inputs and generated inputs (Philox, written here as
 * .npy files) with --in, and the result comes back as .npy files (--out), one
 * per component, compared with the expected value read against the result
 * type: exact for integers and bools, with the block's tolerance for floats.
 * `expect reference` runs the same executable on --backend=c and compares.
 * Prints a line per failing or skipped block and `N passed, N failed, N
 * skipped`; exit status 1 on any failure (2 for a bad command line). */
#define _XOPEN_SOURCE 700 /* strdup */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "driver.h"

/* ---------------------------------------------------------------- utils */

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "gpuc: error: out of memory\n");
        exit(1);
    }
    return p;
}

static void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (!p) {
        fprintf(stderr, "gpuc: error: out of memory\n");
        exit(1);
    }
    return p;
}

static char *xstrndup(const char *s, size_t n)
{
    char *r = xmalloc(n + 1);
    memcpy(r, s, n);
    r[n] = 0;
    return r;
}

static char *xstrdup(const char *s)
{
    return xstrndup(s, strlen(s));
}

static char *strf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *strf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *s = xmalloc((size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

static char *trim(char *s)
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

/* ---------------------------------------------------------------- types */

/* Scalar kinds, numbered like GpucKind (runner/gpuc_program.h). grep "ORDER KIND" */
enum { K_BOOL, K_I32, K_I64, K_U32, K_U64, K_F32, K_F64, K_NONE };
static const char *const kind_names[] = { "bool", "i32", "i64", "u32", "u64", "f32", "f64" };
static const char *const kind_descr[] = { "|b1", "<i4", "<i8", "<u4", "<u8", "<f4", "<f8" };
static const size_t kind_size[] = { 1, 4, 8, 4, 8, 4, 8 };

typedef enum { T_SCALAR, T_TUPLE, T_STRUCT, T_ARRAY } TypeKind;

typedef struct Type {
    TypeKind k;
    int scalar;            /* T_SCALAR: K_* */
    int n;                 /* T_TUPLE, T_STRUCT: element count */
    struct Type **elems;   /* ... their types */
    char **fields;         /* T_STRUCT: field names */
    char *name;            /* T_STRUCT: its name */
    int rank;              /* T_ARRAY: 1 or 2 */
    long long dims[2];     /* T_ARRAY: integer sizes, -1 for names and _ */
    struct Type *elem;     /* T_ARRAY: element type */
    int leaf0, nleaves;    /* components: leaf0 .. leaf0+nleaves-1 of the top type */
} Type;

static void type_free(Type *t)
{
    if (!t) {
        return;
    }
    for (int i = 0; i < t->n; i++) {
        type_free(t->elems[i]);
        if (t->fields) {
            free(t->fields[i]);
        }
    }
    free(t->elems);
    free(t->fields);
    free(t->name);
    type_free(t->elem);
    free(t);
}

typedef struct TypeParser {
    const char *s;
    bool bad;
} TypeParser;

static void tp_space(TypeParser *p)
{
    while (*p->s == ' ' || *p->s == '\t') {
        p->s++;
    }
}

static char *tp_word(TypeParser *p)
{
    tp_space(p);
    const char *b = p->s;
    while ((*p->s >= 'a' && *p->s <= 'z') || (*p->s >= 'A' && *p->s <= 'Z') || (*p->s >= '0' && *p->s <= '9') ||
           *p->s == '_') {
        p->s++;
    }
    if (p->s == b) {
        p->bad = true;
        return NULL;
    }
    return xstrndup(b, (size_t)(p->s - b));
}

static bool tp_eat(TypeParser *p, char c)
{
    tp_space(p);
    if (*p->s == c) {
        p->s++;
        return true;
    }
    return false;
}

/* type = base ('[' size ']')*; base = scalar | '(' type, ... ')' | NAME '{' field: type, ... '}' */
static Type *tp_type(TypeParser *p, int depth)
{
    if (depth > 64) {
        p->bad = true;
        return NULL;
    }
    Type *t = calloc(1, sizeof *t);
    if (!t) {
        exit(1);
    }
    if (tp_eat(p, '(')) {
        t->k = T_TUPLE;
        do {
            t->elems = xrealloc(t->elems, (size_t)(t->n + 1) * sizeof *t->elems);
            t->elems[t->n++] = tp_type(p, depth + 1);
        } while (!p->bad && tp_eat(p, ','));
        if (!tp_eat(p, ')')) {
            p->bad = true;
        }
    } else {
        char *w = tp_word(p);
        if (!w) {
            free(t);
            return NULL;
        }
        t->k = T_SCALAR;
        t->scalar = K_NONE;
        for (int i = 0; i < 7; i++) {
            if (strcmp(w, kind_names[i]) == 0) {
                t->scalar = i;
            }
        }
        if (t->scalar == K_NONE) {
            t->k = T_STRUCT;
            t->name = w;
            w = NULL;
            if (!tp_eat(p, '{')) {
                p->bad = true;
            }
            while (!p->bad && !tp_eat(p, '}')) {
                char *f = tp_word(p);
                if (!f || !tp_eat(p, ':')) {
                    free(f);
                    p->bad = true;
                    break;
                }
                t->elems = xrealloc(t->elems, (size_t)(t->n + 1) * sizeof *t->elems);
                t->fields = xrealloc(t->fields, (size_t)(t->n + 1) * sizeof *t->fields);
                t->fields[t->n] = f;
                t->elems[t->n++] = tp_type(p, depth + 1);
                tp_eat(p, ',');
            }
        }
        free(w);
    }
    while (!p->bad && tp_eat(p, '[')) {
        tp_space(p);
        long long d = -1;
        if (*p->s >= '0' && *p->s <= '9') {
            d = strtoll(p->s, (char **)&p->s, 10);
        } else {
            free(tp_word(p));
        }
        if (!tp_eat(p, ']')) {
            p->bad = true;
        }
        if (t->k == T_ARRAY && t->rank == 1) {
            t->rank = 2;
            t->dims[1] = d;
        } else if (t->k == T_ARRAY) {
            p->bad = true;
        } else {
            Type *a = calloc(1, sizeof *a);
            if (!a) {
                exit(1);
            }
            a->k = T_ARRAY;
            a->rank = 1;
            a->dims[0] = d;
            a->elem = t;
            t = a;
        }
    }
    return t;
}

static int number_leaves(Type *t, int first)
{
    t->leaf0 = first;
    if (t->k == T_SCALAR) {
        t->nleaves = 1;
    } else if (t->k == T_ARRAY) {
        t->nleaves = number_leaves(t->elem, first);
    } else {
        t->nleaves = 0;
        for (int i = 0; i < t->n; i++) {
            t->nleaves += number_leaves(t->elems[i], first + t->nleaves);
        }
    }
    return t->nleaves;
}

/* The scalar kind of leaf i, and whether it is under an array. */
static int leaf_kind(const Type *t, int i)
{
    if (t->k == T_SCALAR) {
        return t->scalar;
    }
    if (t->k == T_ARRAY) {
        return leaf_kind(t->elem, i);
    }
    for (int j = 0; j < t->n; j++) {
        const Type *e = t->elems[j];
        if (i >= e->leaf0 && i < e->leaf0 + e->nleaves) {
            return leaf_kind(e, i);
        }
    }
    return K_NONE;
}

static Type *parse_type(const char *s)
{
    TypeParser p = { s, false };
    Type *t = tp_type(&p, 0);
    tp_space(&p);
    if (p.bad || !t || *p.s) {
        type_free(t);
        return NULL;
    }
    number_leaves(t, 0);
    return t;
}

/* ---------------------------------------------------------------- values */

/* One component: a scalar or a row-major array of one kind. */
typedef struct Comp {
    int kind;
    int rank;
    long long shape[2];
    size_t count, cap;
    unsigned char *data;
} Comp;

static void comps_free(Comp *c, int n)
{
    for (int i = 0; c && i < n; i++) {
        free(c[i].data);
    }
    free(c);
}

static void comp_push(Comp *c, const void *elem)
{
    size_t es = kind_size[c->kind];
    if (c->count == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 16;
        c->data = xrealloc(c->data, c->cap * es);
    }
    memcpy(c->data + c->count * es, elem, es);
    c->count++;
}

typedef struct ValueParser {
    const char *s;
    char err[256];
} ValueParser;

static void vp_space(ValueParser *p)
{
    for (;;) {
        while (*p->s == ' ' || *p->s == '\t' || *p->s == '\n' || *p->s == '\r') {
            p->s++;
        }
        if (p->s[0] == '/' && p->s[1] == '/') {
            while (*p->s && *p->s != '\n') {
                p->s++;
            }
            continue;
        }
        return;
    }
}

static bool vp_eat(ValueParser *p, char c)
{
    vp_space(p);
    if (*p->s == c) {
        p->s++;
        return true;
    }
    return false;
}

static bool vp_fail(ValueParser *p, const char *what)
{
    if (!p->err[0]) {
        vp_space(p);
        snprintf(p->err, sizeof p->err, "expected %s at '%.20s'", what, *p->s ? p->s : "end of text");
    }
    return false;
}

/* A word: a number, true/false, a name. */
static size_t vp_word(ValueParser *p, const char **start)
{
    vp_space(p);
    *start = p->s;
    while (*p->s && !strchr(" \t\r\n[](){},:", *p->s)) {
        p->s++;
    }
    return (size_t)(p->s - *start);
}

/* Convert word w (n bytes) to a scalar of kind k. */
static bool convert_scalar(const char *w, size_t n, int k, void *out, char *err, size_t errlen)
{
    char buf[512];
    if (n == 0 || n >= sizeof buf) {
        snprintf(err, errlen, "expected a %s value", kind_names[k]);
        return false;
    }
    memcpy(buf, w, n);
    buf[n] = 0;
    if (k == K_BOOL) {
        if (strcmp(buf, "true") && strcmp(buf, "false")) {
            snprintf(err, errlen, "expected true or false, found '%.40s'", buf);
            return false;
        }
        *(unsigned char *)out = buf[0] == 't';
        return true;
    }
    /* a suffix naming the type */
    size_t len = n;
    for (int i = 1; i < 7; i++) {
        size_t sl = strlen(kind_names[i]);
        if (len > sl && strcmp(buf + len - sl, kind_names[i]) == 0 && buf[len - sl - 1] != 'x') {
            buf[len - sl] = 0;
            len -= sl;
            break;
        }
    }
    if (k == K_F32 || k == K_F64) {
        char *end;
        errno = 0;
        if (k == K_F32) {
            float f = strtof(buf, &end);
            memcpy(out, &f, 4);
        } else {
            double d = strtod(buf, &end);
            memcpy(out, &d, 8);
        }
        if (*end || end == buf) {
            snprintf(err, errlen, "expected a number (%s), found '%.40s'", kind_names[k], buf);
            return false;
        }
        return true;
    }
    const char *q = buf;
    bool neg = *q == '-';
    q += neg;
    unsigned __int128 v = 0;
    int base = 10;
    if (q[0] == '0' && (q[1] == 'x' || q[1] == 'X')) {
        base = 16;
        q += 2;
    }
    if (!*q) {
        snprintf(err, errlen, "expected an integer (%s), found '%.40s'", kind_names[k], buf);
        return false;
    }
    for (; *q; q++) {
        int d = *q >= '0' && *q <= '9' ? *q - '0'
                : base == 16 && *q >= 'a' && *q <= 'f' ? *q - 'a' + 10
                : base == 16 && *q >= 'A' && *q <= 'F' ? *q - 'A' + 10 : -1;
        if (d < 0 || d >= base) {
            snprintf(err, errlen, "expected an integer (%s), found '%.40s'", kind_names[k], buf);
            return false;
        }
        v = v * (unsigned)base + (unsigned)d;
        if (v >> 65) {
            break;
        }
    }
    __int128 s = neg ? -(__int128)v : (__int128)v;
    __int128 lo = k == K_I32 ? INT32_MIN : k == K_I64 ? INT64_MIN : 0;
    __int128 hi = k == K_I32 ? INT32_MAX : k == K_I64 ? INT64_MAX : k == K_U32 ? (__int128)UINT32_MAX
                                                                                : (__int128)UINT64_MAX;
    if ((v >> 65) || s < lo || s > hi) {
        snprintf(err, errlen, "%.40s is out of range for %s", buf, kind_names[k]);
        return false;
    }
    if (k == K_I32 || k == K_U32) {
        uint32_t x = (uint32_t)s;
        memcpy(out, &x, 4);
    } else {
        uint64_t x = (uint64_t)s;
        memcpy(out, &x, 8);
    }
    return true;
}

static bool vp_value(ValueParser *p, const Type *t, Comp *c, int depth);

static void set_shape(const Type *t, Comp *c, int rank, long long r, long long cols)
{
    for (int i = t->leaf0; i < t->leaf0 + t->nleaves; i++) {
        c[i].rank = rank;
        c[i].shape[0] = r;
        c[i].shape[1] = rank == 2 ? cols : 0;
    }
}

/* elements of a 1-D array (or one row): '[' v, v, ... ']' */
static bool vp_row(ValueParser *p, const Type *elem, Comp *c, long long *count, int depth)
{
    if (!vp_eat(p, '[')) {
        return vp_fail(p, "'['");
    }
    *count = 0;
    while (!vp_eat(p, ']')) {
        if (!vp_value(p, elem, c, depth + 1)) {
            return false;
        }
        ++*count;
        if (!vp_eat(p, ',')) {
            if (!vp_eat(p, ']')) {
                return vp_fail(p, "',' or ']'");
            }
            break;
        }
    }
    return true;
}

static bool vp_value(ValueParser *p, const Type *t, Comp *c, int depth)
{
    if (depth > 16) {
        return vp_fail(p, "a shallower value");
    }
    if (t->k == T_SCALAR) {
        const char *w;
        size_t n = vp_word(p, &w);
        unsigned char buf[8];
        if (!convert_scalar(w, n, t->scalar, buf, p->err, sizeof p->err)) {
            return false;
        }
        comp_push(&c[t->leaf0], buf);
        return true;
    }
    if (t->k == T_TUPLE) {
        if (!vp_eat(p, '(')) {
            return vp_fail(p, "'(' starting a tuple");
        }
        for (int i = 0; i < t->n; i++) {
            if (i && !vp_eat(p, ',')) {
                return vp_fail(p, "',' in a tuple");
            }
            if (!vp_value(p, t->elems[i], c, depth + 1)) {
                return false;
            }
        }
        return vp_eat(p, ')') || vp_fail(p, "')' closing a tuple");
    }
    if (t->k == T_STRUCT) {
        vp_space(p);
        if (*p->s != '{') {
            const char *w;
            vp_word(p, &w);
        }
        if (!vp_eat(p, '{')) {
            return vp_fail(p, "'{' starting a struct");
        }
        /* fields in any order: parse each into its own leaves */
        int seen = 0;
        while (!vp_eat(p, '}')) {
            const char *w;
            size_t n = vp_word(p, &w);
            int f = -1;
            for (int i = 0; i < t->n; i++) {
                if (strlen(t->fields[i]) == n && strncmp(t->fields[i], w, n) == 0) {
                    f = i;
                }
            }
            if (f < 0 || !vp_eat(p, ':')) {
                return vp_fail(p, "a field name and ':'");
            }
            if (!vp_value(p, t->elems[f], c, depth + 1)) {
                return false;
            }
            seen++;
            if (!vp_eat(p, ',')) {
                if (!vp_eat(p, '}')) {
                    return vp_fail(p, "',' or '}'");
                }
                break;
            }
        }
        if (seen != t->n) {
            snprintf(p->err, sizeof p->err, "struct %s needs its %d fields once each", t->name, t->n);
            return false;
        }
        return true;
    }
    /* array */
    if (t->rank == 1) {
        long long n;
        if (!vp_row(p, t->elem, c, &n, depth)) {
            return false;
        }
        set_shape(t, c, 1, n, 0);
        return true;
    }
    vp_space(p);
    if (strncmp(p->s, "empty", 5) == 0) {
        p->s += 5;
        long long r = 0, cols = 0;
        const char *w;
        if (!vp_eat(p, '(')) {
            return vp_fail(p, "'(' after empty");
        }
        size_t n = vp_word(p, &w);
        r = strtoll(w, NULL, 10);
        (void)n;
        if (!vp_eat(p, ',')) {
            return vp_fail(p, "','");
        }
        vp_word(p, &w);
        cols = strtoll(w, NULL, 10);
        if (!vp_eat(p, ')')) {
            return vp_fail(p, "')'");
        }
        set_shape(t, c, 2, r, cols);
        return true;
    }
    if (!vp_eat(p, '[')) {
        return vp_fail(p, "'[' starting a 2-D array");
    }
    long long rows = 0, cols = 0;
    while (!vp_eat(p, ']')) {
        long long n;
        if (!vp_row(p, t->elem, c, &n, depth)) {
            return false;
        }
        if (rows && n != cols) {
            snprintf(p->err, sizeof p->err, "row %lld has length %lld but row 1 has %lld", rows + 1, n, cols);
            return false;
        }
        cols = n;
        rows++;
        if (!vp_eat(p, ',')) {
            if (!vp_eat(p, ']')) {
                return vp_fail(p, "',' or ']'");
            }
            break;
        }
    }
    set_shape(t, c, 2, rows, cols);
    return true;
}

/* Read text against type t into t->nleaves components; NULL + err on error. */
static Comp *parse_value(const char *text, const Type *t, char *err, size_t errlen)
{
    Comp *c = calloc((size_t)t->nleaves, sizeof *c);
    if (!c) {
        exit(1);
    }
    for (int i = 0; i < t->nleaves; i++) {
        c[i].kind = leaf_kind(t, i);
    }
    ValueParser p = { text, { 0 } };
    bool ok = vp_value(&p, t, c, 0);
    vp_space(&p);
    if (ok && *p.s) {
        ok = false;
        snprintf(p.err, sizeof p.err, "extra text '%.20s'", p.s);
    }
    if (!ok) {
        snprintf(err, errlen, "%s", p.err);
        comps_free(c, t->nleaves);
        return NULL;
    }
    return c;
}

/* ---------------------------------------------------------------- .npy */

static bool npy_write(const char *path, int kind, int rank, const long long *shape, const void *data, size_t count)
{
    char shp[64];
    if (rank == 0) {
        snprintf(shp, sizeof shp, "()");
    } else if (rank == 1) {
        snprintf(shp, sizeof shp, "(%lld,)", shape[0]);
    } else {
        snprintf(shp, sizeof shp, "(%lld, %lld)", shape[0], shape[1]);
    }
    char hdr[256];
    int n = snprintf(hdr, sizeof hdr, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }", kind_descr[kind], shp);
    int total = 10 + n + 1;
    int pad = (64 - total % 64) % 64;
    FILE *f = fopen(path, "wb");
    if (!f) {
        return false;
    }
    unsigned hl = (unsigned)(n + pad + 1);
    unsigned char pre[10] = { 0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(hl & 0xff), (unsigned char)(hl >> 8) };
    fwrite(pre, 1, 10, f);
    fwrite(hdr, 1, (size_t)n, f);
    for (int i = 0; i < pad; i++) {
        fputc(' ', f);
    }
    fputc('\n', f);
    if (count) {
        fwrite(data, kind_size[kind], count, f);
    }
    return fclose(f) == 0;
}

/* Read a .npy file the runner wrote (version 1-3, C order). */
static bool npy_read(const char *path, Comp *c, char *err, size_t errlen)
{
    size_t len = 0;
    char *buf = drv_read_file(path, &len);
    if (!buf) {
        snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno));
        return false;
    }
    bool ok = false;
    size_t hl = 0, off = 0;
    if (len >= 10 && memcmp(buf, "\x93NUMPY", 6) == 0) {
        if (buf[6] == 1) {
            hl = (unsigned char)buf[8] | (size_t)(unsigned char)buf[9] << 8;
            off = 10;
        } else if (len >= 12) {
            hl = (unsigned char)buf[8] | (size_t)(unsigned char)buf[9] << 8 | (size_t)(unsigned char)buf[10] << 16 |
                 (size_t)(unsigned char)buf[11] << 24;
            off = 12;
        }
    }
    if (off && off + hl <= len) {
        char *hdr = xstrndup(buf + off, hl);
        char *d = strstr(hdr, "'descr'");
        char *s = strstr(hdr, "'shape'");
        int kind = K_NONE;
        if (d && (d = strchr(d + 7, '\''))) {
            for (int k = 0; k < 7; k++) {
                if (strncmp(d + 1, kind_descr[k], 3) == 0 ||
                    (k == K_BOOL && (strncmp(d + 1, "<b1", 3) == 0 || strncmp(d + 1, "=b1", 3) == 0))) {
                    kind = k;
                }
            }
        }
        if (s && (s = strchr(s, '(')) && kind != K_NONE) {
            c->kind = kind;
            c->rank = 0;
            c->shape[0] = c->shape[1] = 0;
            s++;
            while (*s && *s != ')') {
                while (*s == ' ' || *s == ',') {
                    s++;
                }
                if (*s >= '0' && *s <= '9' && c->rank < 2) {
                    c->shape[c->rank++] = strtoll(s, &s, 10);
                } else if (*s != ')') {
                    break;
                }
            }
            size_t count = 1;
            for (int i = 0; i < c->rank; i++) {
                count *= (size_t)c->shape[i];
            }
            if (*s == ')' && len - off - hl == count * kind_size[kind]) {
                c->count = c->cap = count;
                c->data = xmalloc(count * kind_size[kind]);
                memcpy(c->data, buf + off + hl, count * kind_size[kind]);
                ok = true;
            }
        }
        free(hdr);
    }
    if (!ok) {
        snprintf(err, errlen, "%s: not a .npy file gpuc test can read", path);
    }
    free(buf);
    return ok;
}

/* ---------------------------------------------------------------- Philox */

static void philox_block(uint64_t seed, uint64_t ctr, uint32_t out[4])
{
    uint32_t c[4] = { (uint32_t)ctr, (uint32_t)(ctr >> 32), 0, 0 };
    uint32_t k[2] = { (uint32_t)seed, (uint32_t)(seed >> 32) };
    for (int r = 0; r < 10; r++) {
        if (r > 0) {
            k[0] += 0x9E3779B9u;
            k[1] += 0xBB67AE85u;
        }
        uint64_t p0 = (uint64_t)0xD2511F53u * c[0];
        uint64_t p1 = (uint64_t)0xCD9E8D57u * c[2];
        uint32_t n0 = (uint32_t)(p1 >> 32) ^ c[1] ^ k[0];
        uint32_t n2 = (uint32_t)(p0 >> 32) ^ c[3] ^ k[1];
        c[0] = n0;
        c[1] = (uint32_t)p1;
        c[2] = n2;
        c[3] = (uint32_t)p0;
    }
    memcpy(out, c, sizeof c);
}

/* `random TYPE seed S [in LO .. HI]` into a .npy file; NULL or an error. */
static char *gen_random(const char *spec, const char *path, bool *unsupported)
{
    *unsupported = false;
    char *s = xstrdup(spec);
    char *seedp = strstr(s, " seed ");
    if (!seedp) {
        free(s);
        return xstrdup("random input without 'seed S'");
    }
    *seedp = 0;
    char *rest = seedp + 6;
    char *inp = strstr(rest, " in ");
    char *lo_s = NULL, *hi_s = NULL;
    if (inp) {
        *inp = 0;
        lo_s = inp + 4;
        char *dots = strstr(lo_s, "..");
        if (!dots) {
            free(s);
            return xstrdup("random input: expected 'in LO .. HI'");
        }
        *dots = 0;
        hi_s = trim(dots + 2);
        lo_s = trim(lo_s);
    }
    char *end;
    uint64_t seed = strtoull(trim(rest), &end, 0);
    if (*end) {
        free(s);
        return xstrdup("random input: bad seed");
    }
    Type *t = parse_type(trim(s));
    if (!t) {
        free(s);
        return xstrdup("random input: cannot read its type");
    }
    Type *e = t->k == T_ARRAY ? t->elem : t;
    if (e->k != T_SCALAR || (t->k == T_ARRAY && (t->dims[0] < 0 || (t->rank == 2 && t->dims[1] < 0)))) {
        type_free(t);
        free(s);
        *unsupported = true;
        return xstrdup("generated inputs of tuples or structs are not supported by gpuc test yet");
    }
    int k = e->scalar;
    long long shape[2] = { t->k == T_ARRAY ? t->dims[0] : 0, t->k == T_ARRAY && t->rank == 2 ? t->dims[1] : 0 };
    int rank = t->k == T_ARRAY ? t->rank : 0;
    type_free(t);
    size_t count = rank == 0 ? 1 : rank == 1 ? (size_t)shape[0] : (size_t)shape[0] * (size_t)shape[1];
    double flo = 0.0, fhi = 1.0;
    __int128 ilo = 0, ihi = 100;
    if (lo_s) {
        if (k == K_F32 || k == K_F64) {
            flo = strtod(lo_s, NULL);
            fhi = strtod(hi_s, NULL);
        } else {
            ilo = (__int128)strtoll(lo_s, NULL, 0);
            if (lo_s[0] != '-') {
                ilo = (__int128)strtoull(lo_s, NULL, 0);
            }
            ihi = hi_s[0] == '-' ? (__int128)strtoll(hi_s, NULL, 0) : (__int128)strtoull(hi_s, NULL, 0);
        }
    }
    free(s); /* lo_s and hi_s point into it */
    unsigned char *data = xmalloc(count * kind_size[k]);
    for (size_t i = 0; i < count; i++) {
        uint32_t b[4];
        philox_block(seed, (uint64_t)i, b);
        uint64_t u64 = (uint64_t)b[1] << 32 | b[0];
        if (k == K_BOOL) {
            data[i] = (unsigned char)(b[0] & 1);
        } else if (k == K_F32 || k == K_F64) {
            double v = flo + (fhi - flo) * ((double)(u64 >> 11) * 0x1p-53);
            if (k == K_F32) {
                float f = (float)v;
                memcpy(data + 4 * i, &f, 4);
            } else {
                memcpy(data + 8 * i, &v, 8);
            }
        } else {
            unsigned __int128 range = (unsigned __int128)(ihi - ilo);
            __int128 v = range ? ilo + (__int128)(u64 % range) : ilo;
            if (kind_size[k] == 4) {
                uint32_t x = (uint32_t)v;
                memcpy(data + 4 * i, &x, 4);
            } else {
                uint64_t x = (uint64_t)v;
                memcpy(data + 8 * i, &x, 8);
            }
        }
    }
    bool ok = npy_write(path, k, rank, shape, data, count);
    free(data);
    return ok ? NULL : strf("cannot write '%s'", path);
}

/* ---------------------------------------------------------------- blocks */

typedef struct Block {
    int line;
    char *entry, *desc;
    char **items;
    int nitems;
} Block;

static void blocks_free(Block *b, int n)
{
    for (int i = 0; i < n; i++) {
        free(b[i].entry);
        free(b[i].desc);
        for (int j = 0; j < b[i].nitems; j++) {
            free(b[i].items[j]);
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

static Block *read_blocks(char *src, int *nblocks)
{
    Block *bs = NULL;
    int n = 0;
    Block *cur = NULL;
    char *pending = NULL;
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
            if (cur && pending) {
                cur->items = xrealloc(cur->items, (size_t)(cur->nitems + 1) * sizeof *cur->items);
                cur->items[cur->nitems++] = pending;
                pending = NULL;
            }
            cur = NULL;
        } else {
            char *body = trim(p + 3);
            if (strncmp(body, "test", 4) == 0 && (body[4] == ' ' || body[4] == '\t' || !body[4]) && !pending) {
                bs = xrealloc(bs, (size_t)(n + 1) * sizeof *bs);
                cur = &bs[n++];
                memset(cur, 0, sizeof *cur);
                cur->line = line;
                char *e = trim(body + 4);
                char *colon = strchr(e, ':');
                if (colon) {
                    *colon = 0;
                    cur->desc = xstrdup(trim(colon + 1));
                }
                cur->entry = xstrdup(trim(e));
            } else if (cur && *body) {
                if (pending) {
                    char *j = strf("%s %s", pending, body);
                    free(pending);
                    pending = j;
                } else {
                    pending = xstrdup(body);
                }
                if (depth_of(pending) <= 0) {
                    cur->items = xrealloc(cur->items, (size_t)(cur->nitems + 1) * sizeof *cur->items);
                    cur->items[cur->nitems++] = pending;
                    pending = NULL;
                }
            }
        }
        ln = nl ? nl + 1 : NULL;
    }
    if (cur && pending) {
        cur->items = xrealloc(cur->items, (size_t)(cur->nitems + 1) * sizeof *cur->items);
        cur->items[cur->nitems++] = pending;
        pending = NULL;
    }
    free(pending);
    *nblocks = n;
    return bs;
}

/* ---------------------------------------------------------------- programs */

typedef struct Sig {
    char *name;
    char *broken;  /* the runner's complaint when --help could not show the signature */
    int nparams;
    char **pnames, **ptypes;
    char *result;
} Sig;

typedef struct Build {
    char *defines;   /* "\n"-separated -D arguments: the key */
    char *exe;
    bool ok;
    char *log;       /* gpuc's messages when the build failed */
    Sig *sigs;
    int nsigs;
} Build;

static void build_free(Build *b)
{
    free(b->defines);
    free(b->exe);
    free(b->log);
    for (int i = 0; i < b->nsigs; i++) {
        free(b->sigs[i].name);
        free(b->sigs[i].broken);
        for (int j = 0; j < b->sigs[i].nparams; j++) {
            free(b->sigs[i].pnames[j]);
            free(b->sigs[i].ptypes[j]);
        }
        free(b->sigs[i].pnames);
        free(b->sigs[i].ptypes);
        free(b->sigs[i].result);
    }
    free(b->sigs);
}

/* "  name(p: T, q: U) -> R" lines of the program's --help */
static void read_sigs(Build *b, char *help)
{
    char *p = strstr(help, "\nentries:\n");
    if (!p) {
        return;
    }
    p += 10;
    while (p[0] == ' ' && p[1] == ' ') {
        char *nl = strchr(p, '\n');
        if (nl) {
            *nl = 0;
        }
        char *line = trim(p);
        char *open = strchr(line, '(');
        char *arrow = strstr(line, ") -> ");
        while (arrow && strstr(arrow + 1, ") -> ")) {
            arrow = strstr(arrow + 1, ") -> ");
        }
        if (!arrow && *line) {
            /* "name  (internal error: ...)": the runner rejected the entry's table */
            size_t nlen = strcspn(line, " (");
            b->sigs = xrealloc(b->sigs, (size_t)(b->nsigs + 1) * sizeof *b->sigs);
            Sig *s = &b->sigs[b->nsigs++];
            memset(s, 0, sizeof *s);
            s->name = xstrndup(line, nlen);
            s->broken = xstrdup(trim(line + nlen));
        } else if (open && arrow) {
            b->sigs = xrealloc(b->sigs, (size_t)(b->nsigs + 1) * sizeof *b->sigs);
            Sig *s = &b->sigs[b->nsigs++];
            memset(s, 0, sizeof *s);
            s->name = xstrndup(line, (size_t)(open - line));
            s->result = xstrdup(trim(arrow + 5));
            /* parameters: split at top-level commas */
            char *q = open + 1;
            while (q < arrow) {
                int d = 0;
                char *e = q;
                while (e < arrow && (d > 0 || *e != ',')) {
                    d += strchr("[({", *e) ? 1 : strchr("])}", *e) ? -1 : 0;
                    e++;
                }
                char *param = xstrndup(q, (size_t)(e - q));
                char *colon = strchr(param, ':');
                if (colon) {
                    *colon = 0;
                    s->pnames = xrealloc(s->pnames, (size_t)(s->nparams + 1) * sizeof *s->pnames);
                    s->ptypes = xrealloc(s->ptypes, (size_t)(s->nparams + 1) * sizeof *s->ptypes);
                    s->pnames[s->nparams] = xstrdup(trim(param));
                    s->ptypes[s->nparams++] = xstrdup(trim(colon + 1));
                }
                free(param);
                q = e + 1;
            }
        }
        if (!nl) {
            break;
        }
        p = nl + 1;
    }
}

typedef struct TestRun {
    const char *self;      /* this gpuc */
    const char *backend;   /* c or cuda */
    const char *only;      /* -k ENTRY */
    char *tmp;             /* scratch directory */
    int counter;           /* unique names in tmp */
    unsigned timeout;      /* seconds a run of a block may take (--timeout) */
    int passed, failed, skipped;
} TestRun;

static Build *get_build(TestRun *tr, const char *file, Build **builds, int *nbuilds, const char *defines)
{
    for (int i = 0; i < *nbuilds; i++) {
        if (strcmp((*builds)[i].defines, defines) == 0) {
            return &(*builds)[i];
        }
    }
    *builds = xrealloc(*builds, (size_t)(*nbuilds + 1) * sizeof **builds);
    Build *b = &(*builds)[(*nbuilds)++];
    memset(b, 0, sizeof *b);
    b->defines = xstrdup(defines);
    b->exe = strf("%s/prog%d", tr->tmp, tr->counter++);
    char *log = strf("%s/build%d.log", tr->tmp, tr->counter++);
    char *argv[256];
    int n = 0;
    argv[n++] = (char *)tr->self;
    argv[n++] = (char *)file;
    argv[n++] = "-o";
    argv[n++] = b->exe;
    char *defs = xstrdup(defines);
    for (char *d = strtok(defs, "\n"); d && n < 250; d = strtok(NULL, "\n")) {
        argv[n++] = "-D";
        argv[n++] = d;
    }
    argv[n] = NULL;
    int st = drv_spawn(argv, "/dev/null", log, log, 0);
    b->ok = st == 0;
    if (!b->ok) {
        b->log = drv_read_file(log, NULL);
        if (!b->log) {
            b->log = xstrdup("");
        }
        char *t = trim(b->log);
        memmove(b->log, t, strlen(t) + 1);
    } else {
        char *help = strf("%s/help%d.txt", tr->tmp, tr->counter++);
        char *hargv[] = { b->exe, "--help", NULL };
        if (drv_spawn(hargv, "/dev/null", help, "/dev/null", 60) == 0) {
            char *text = drv_read_file(help, NULL);
            if (text) {
                read_sigs(b, text);
            }
            free(text);
        }
        unlink(help);
        free(help);
    }
    unlink(log);
    free(log);
    free(defs);
    return b;
}

static void report(TestRun *tr, const char *file, const Block *bl, const char *what, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static void report(TestRun *tr, const char *file, const Block *bl, const char *what, const char *fmt, ...)
{
    (void)tr;
    printf("%s:%d: test %s%s%s: %s: ", file, bl->line, bl->entry, bl->desc ? ": " : "", bl->desc ? bl->desc : "", what);
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
}

static void fmt_elem(const Comp *c, size_t i, char *buf, size_t n)
{
    const unsigned char *p = c->data + i * kind_size[c->kind];
    switch (c->kind) {
    case K_BOOL: snprintf(buf, n, "%s", *p ? "true" : "false"); break;
    case K_I32: { int32_t v; memcpy(&v, p, 4); snprintf(buf, n, "%d", v); break; }
    case K_U32: { uint32_t v; memcpy(&v, p, 4); snprintf(buf, n, "%u", v); break; }
    case K_I64: { int64_t v; memcpy(&v, p, 8); snprintf(buf, n, "%lld", (long long)v); break; }
    case K_U64: { uint64_t v; memcpy(&v, p, 8); snprintf(buf, n, "%llu", (unsigned long long)v); break; }
    case K_F32: { float v; memcpy(&v, p, 4); snprintf(buf, n, "%.9g", v); break; }
    default: { double v; memcpy(&v, p, 8); snprintf(buf, n, "%.17g", v); break; }
    }
    if ((c->kind == K_F32 || c->kind == K_F64) && !strpbrk(buf, ".eni") && strlen(buf) + 3 < n) {
        strcat(buf, ".0"); /* read as a float, like the programs print */
    }
}

static const char *shape_str(const Comp *c, char *buf, size_t n)
{
    if (c->rank == 0) {
        snprintf(buf, n, "a scalar");
    } else if (c->rank == 1) {
        snprintf(buf, n, "shape (%lld)", c->shape[0]);
    } else {
        snprintf(buf, n, "shape (%lld, %lld)", c->shape[0], c->shape[1]);
    }
    return buf;
}

/* Compare got with want; NULL when equal, else a message. */
static char *compare(const Comp *want, const Comp *got, int ncomps, bool tol_set, double rel, double abs_tol,
                     bool exact)
{
    for (int i = 0; i < ncomps; i++) {
        const Comp *w = &want[i], *g = &got[i];
        const char *cn = ncomps > 1 ? strf("component %d: ", i) : xstrdup("");
        char *msg = NULL;
        char b1[64], b2[64];
        if (w->kind != g->kind) {
            msg = strf("%sthe result is %s but %s was expected", cn, kind_names[g->kind], kind_names[w->kind]);
        } else if (w->rank != g->rank || w->shape[0] != g->shape[0] || w->shape[1] != g->shape[1]) {
            msg = strf("%sexpected %s, got %s", cn, shape_str(w, b1, sizeof b1), shape_str(g, b2, sizeof b2));
        } else {
            double r = tol_set ? rel : w->kind == K_F32 ? 1e-5 : 1e-12;
            double a = tol_set ? abs_tol : w->kind == K_F32 ? 1e-6 : 1e-12;
            size_t es = kind_size[w->kind];
            for (size_t j = 0; j < w->count && !msg; j++) {
                const unsigned char *pw = w->data + j * es, *pg = g->data + j * es;
                bool same;
                if (w->kind == K_F32 || w->kind == K_F64) {
                    double x, y;
                    if (w->kind == K_F32) {
                        float fx, fy;
                        memcpy(&fx, pw, 4);
                        memcpy(&fy, pg, 4);
                        x = fx;
                        y = fy;
                    } else {
                        memcpy(&x, pw, 8);
                        memcpy(&y, pg, 8);
                    }
                    if (isnan(x) || isnan(y)) {
                        same = isnan(x) && isnan(y);
                    } else if (exact) {
                        same = memcmp(pw, pg, es) == 0;
                    } else if (isinf(x) || isinf(y)) {
                        same = x == y;
                    } else {
                        same = fabs(y - x) <= a + r * fabs(x);
                    }
                } else if (w->kind == K_BOOL) {
                    same = (*pw != 0) == (*pg != 0);
                } else {
                    same = memcmp(pw, pg, es) == 0;
                }
                if (!same) {
                    fmt_elem(w, j, b1, sizeof b1);
                    fmt_elem(g, j, b2, sizeof b2);
                    if (w->rank == 2 && w->shape[1] > 0) {
                        msg = strf("%selement [%lld][%lld]: expected %s, got %s", cn, (long long)j / w->shape[1],
                                   (long long)j % w->shape[1], b1, b2);
                    } else if (w->rank == 1) {
                        msg = strf("%selement [%zu]: expected %s, got %s", cn, j, b1, b2);
                    } else {
                        msg = strf("%sexpected %s, got %s", cn, b1, b2);
                    }
                }
            }
        }
        free((char *)cn);
        if (msg) {
            return msg;
        }
    }
    return NULL;
}

/* Run the program on one backend; returns the exit status, results in *out
 * (NULL unless status 0 and all files read), stderr text in *errtext. */
static int run_prog(TestRun *tr, const Build *b, const char *entry, const char *backend, char **extra, int nextra,
                    const char *stdin_path, int nresults, Comp **out, char **errtext)
{
    char *argv[512];
    int n = 0;
    argv[n++] = b->exe;
    argv[n++] = "-e";
    argv[n++] = (char *)entry;
    char *be = strf("--backend=%s", backend);
    argv[n++] = be;
    for (int i = 0; i < nextra && n < 500; i++) {
        argv[n++] = extra[i];
    }
    int id = tr->counter++;
    char **files = xmalloc((size_t)nresults * sizeof *files);
    size_t flen = 1;
    for (int i = 0; i < nresults; i++) {
        files[i] = strf("%s/out%d.%d.npy", tr->tmp, id, i);
        flen += strlen(files[i]) + 1;
    }
    char *outarg = xmalloc(flen);
    outarg[0] = 0;
    for (int i = 0; i < nresults; i++) {
        strcat(outarg, i ? "," : "");
        strcat(outarg, files[i]);
    }
    argv[n++] = "--out";
    argv[n++] = outarg;
    argv[n] = NULL;
    char *so = strf("%s/stdout%d", tr->tmp, id);
    char *se = strf("%s/stderr%d", tr->tmp, id);
    int st = drv_spawn(argv, stdin_path, so, se, tr->timeout);
    *errtext = drv_read_file(se, NULL);
    if (!*errtext) {
        *errtext = xstrdup("");
    }
    char *t = trim(*errtext);
    memmove(*errtext, t, strlen(t) + 1);
    *out = NULL;
    if (st == 0) {
        Comp *c = calloc((size_t)nresults, sizeof *c);
        if (!c) {
            exit(1);
        }
        char err[512];
        bool ok = true;
        for (int i = 0; i < nresults && ok; i++) {
            ok = npy_read(files[i], &c[i], err, sizeof err);
        }
        if (ok) {
            *out = c;
        } else {
            comps_free(c, nresults);
            free(*errtext);
            *errtext = xstrdup(err);
            st = -1;
        }
    }
    for (int i = 0; i < nresults; i++) {
        unlink(files[i]);
        free(files[i]);
    }
    unlink(so);
    unlink(se);
    free(so);
    free(se);
    free(files);
    free(outarg);
    free(be);
    return st;
}

static char *first_line(const char *s)
{
    const char *nl = strchr(s, '\n');
    return nl ? xstrndup(s, (size_t)(nl - s)) : xstrdup(s);
}

/* One block: passes, fails or is skipped (counted in tr). */
static void run_block(TestRun *tr, const char *file, const Block *bl, Build **builds, int *nbuilds)
{
    /* the defines first: they choose the build */
    char *defines = xstrdup("");
    for (int i = 0; i < bl->nitems; i++) {
        char *it = bl->items[i];
        if (strncmp(it, "define ", 7) == 0) {
            char *eq = strchr(it, '=');
            if (!eq) {
                tr->failed++;
                report(tr, file, bl, "FAIL", "malformed line '%s'", it);
                free(defines);
                return;
            }
            char *name = xstrndup(it + 7, (size_t)(eq - it - 7));
            char *val = xstrdup(eq + 1);
            char *nd = strf("%s%s.%s=%s\n", defines, bl->entry, trim(name), trim(val));
            free(defines);
            free(name);
            free(val);
            defines = nd;
        }
    }
    Build *b = get_build(tr, file, builds, nbuilds, defines);
    free(defines);

    /* the expectation and tolerance */
    const char *expect = NULL, *expect_err = NULL;
    bool reference = false, tol_set = false, exact = false;
    double rel = 0, abs_tol = 0;
    int nexpect = 0;
    char *errbuf = NULL;
    for (int i = 0; i < bl->nitems; i++) {
        char *it = bl->items[i];
        if (strncmp(it, "expect", 6) == 0 && (it[6] == ' ' || it[6] == '\t')) {
            nexpect++;
            char *v = it + 7;
            while (*v == ' ') {
                v++;
            }
            if (strncmp(v, "error", 5) == 0 && (v[5] == ' ' || v[5] == '"')) {
                char *q1 = strchr(v, '"'), *q2 = q1 ? strrchr(q1 + 1, '"') : NULL;
                if (q2) {
                    free(errbuf);
                    errbuf = xstrndup(q1 + 1, (size_t)(q2 - q1 - 1));
                    expect_err = errbuf;
                }
            } else if (strcmp(v, "reference") == 0) {
                reference = true;
            } else {
                expect = v;
            }
        } else if (strncmp(it, "tol ", 4) == 0) {
            tol_set = true;
            if (strstr(it, "exact")) {
                exact = true;
            } else {
                char *e;
                rel = strtod(it + 4, &e);
                abs_tol = *trim(e) ? strtod(e, NULL) : rel;
            }
        }
    }
    if (nexpect != 1 || (!expect && !expect_err && !reference)) {
        tr->failed++;
        report(tr, file, bl, "FAIL", "the block needs exactly one 'expect' line (has %d)", nexpect);
        free(errbuf);
        return;
    }
    if (!b->ok) {
        char *msg = first_line(b->log);
        if (expect_err && strstr(b->log, expect_err)) {
            tr->passed++;
        } else {
            tr->failed++;
            report(tr, file, bl, "FAIL", "%s%s", expect_err ? "expected an error containing the text, but building failed with: " : "building the program failed: ", msg);
        }
        free(msg);
        free(errbuf);
        return;
    }
    const Sig *sig = NULL;
    for (int i = 0; i < b->nsigs; i++) {
        if (strcmp(b->sigs[i].name, bl->entry) == 0) {
            sig = &b->sigs[i];
        }
    }
    if (!sig) {
        tr->skipped++;
        report(tr, file, bl, "SKIP", "'%s' is not an entry of the built program (fns tested as entries need the backend to export them)", bl->entry);
        free(errbuf);
        return;
    }
    if (sig->broken) {
        tr->failed++;
        report(tr, file, bl, "FAIL", "the program cannot run '%s': %s", bl->entry, sig->broken);
        free(errbuf);
        return;
    }
    Type *rt = parse_type(sig->result);
    if (!rt) {
        tr->failed++;
        report(tr, file, bl, "FAIL", "cannot read the result type '%s'", sig->result);
        free(errbuf);
        return;
    }

    /* inputs: text on stdin in parameter order, files and generated ones with --in */
    int id = tr->counter++;
    char *stdin_path = strf("%s/stdin%d", tr->tmp, id);
    FILE *in = fopen(stdin_path, "w");
    char *extra[256];
    int nextra = 0;
    char *gen_files[128];
    int ngen = 0;
    char *problem = NULL;
    bool skip = false;
    char *dir = xstrdup(file);
    char *slash = strrchr(dir, '/');
    if (slash) {
        *slash = 0;
    } else {
        strcpy(dir, ".");
    }
    for (int p = 0; p < sig->nparams && !problem && in; p++) {
        const char *val = NULL;
        for (int i = 0; i < bl->nitems; i++) {
            char *it = bl->items[i];
            size_t nl = strlen(sig->pnames[p]);
            if (strncmp(it, sig->pnames[p], nl) == 0) {
                const char *q = it + nl;
                while (*q == ' ' || *q == '\t') {
                    q++;
                }
                if (*q == '=') {
                    val = q + 1;
                    while (*val == ' ') {
                        val++;
                    }
                }
            }
        }
        if (!val) {
            problem = strf("no input for parameter '%s'", sig->pnames[p]);
        } else if (strncmp(val, "random ", 7) == 0 && ngen < 120 && nextra < 250) {
            char *path = strf("%s/in%d.%d.npy", tr->tmp, id, p);
            gen_files[ngen++] = path;
            problem = gen_random(val + 7, path, &skip);
            extra[nextra++] = "--in";
            extra[nextra++] = strf("%s=%s", sig->pnames[p], path);
        } else if (strncmp(val, "file ", 5) == 0 && nextra < 250) {
            const char *q1 = strchr(val, '"'), *q2 = q1 ? strchr(q1 + 1, '"') : NULL;
            if (!q2) {
                problem = strf("parameter '%s': expected file \"PATH\"", sig->pnames[p]);
            } else {
                extra[nextra++] = "--in";
                extra[nextra++] = strf("%s=%s/%.*s", sig->pnames[p], dir, (int)(q2 - q1 - 1), q1 + 1);
            }
        } else {
            fprintf(in, "%s\n", val);
        }
    }
    free(dir);
    if (!in) {
        problem = strf("cannot write '%s'", stdin_path);
    } else if (fclose(in) != 0 && !problem) {
        problem = strf("cannot write '%s'", stdin_path);
    }
    if (problem) {
        if (skip) {
            tr->skipped++;
        } else {
            tr->failed++;
        }
        report(tr, file, bl, skip ? "SKIP" : "FAIL", "%s", problem);
        free(problem);
    } else {
        Comp *got = NULL;
        char *err = NULL;
        int st = run_prog(tr, b, bl->entry, tr->backend, extra, nextra, stdin_path, rt->nleaves, &got, &err);
        char *e1 = first_line(err);
        if (expect_err) {
            if (st != 0 && strstr(err, expect_err)) {
                tr->passed++;
            } else if (st != 0) {
                tr->failed++;
                report(tr, file, bl, "FAIL", "expected an error containing \"%s\", got: %s", expect_err, e1);
            } else {
                tr->failed++;
                report(tr, file, bl, "FAIL", "expected an error containing \"%s\", but the program succeeded", expect_err);
            }
        } else if (st == 128 + 14) { /* SIGALRM */
            tr->failed++;
            report(tr, file, bl, "FAIL", "the program ran longer than %u s (--timeout)", tr->timeout);
        } else if (st != 0) {
            tr->failed++;
            report(tr, file, bl, "FAIL", "the program failed (exit status %d): %s", st, e1);
        } else {
            Comp *want = NULL;
            char perr[300];
            char *msg = NULL;
            if (reference) {
                char *err2 = NULL;
                int st2 = run_prog(tr, b, bl->entry, "c", extra, nextra, stdin_path, rt->nleaves, &want, &err2);
                if (st2 != 0) {
                    char *e2 = first_line(err2);
                    msg = strf("the reference C backend failed (exit status %d): %s", st2, e2);
                    free(e2);
                }
                free(err2);
            } else {
                want = parse_value(expect, rt, perr, sizeof perr);
                if (!want) {
                    msg = strf("cannot read the expected value as %s: %s", sig->result, perr);
                }
            }
            if (!msg) {
                msg = compare(want, got, rt->nleaves, tol_set, rel, abs_tol, exact);
            }
            if (msg) {
                tr->failed++;
                report(tr, file, bl, "FAIL", "%s", msg);
                free(msg);
            } else {
                tr->passed++;
            }
            comps_free(want, rt->nleaves);
        }
        free(e1);
        free(err);
        comps_free(got, rt->nleaves);
    }
    for (int i = 1; i < nextra; i += 2) {
        free(extra[i]);
    }
    for (int i = 0; i < ngen; i++) {
        unlink(gen_files[i]);
        free(gen_files[i]);
    }
    unlink(stdin_path);
    free(stdin_path);
    type_free(rt);
    free(errbuf);
}

static void test_file(TestRun *tr, const char *file)
{
    char *src = drv_read_file(file, NULL);
    if (!src) {
        printf("%s: error: cannot read: %s\n", file, strerror(errno));
        tr->failed++;
        return;
    }
    int nb = 0;
    Block *bs = read_blocks(src, &nb);
    Build *builds = NULL;
    int nbuilds = 0;
    for (int i = 0; i < nb; i++) {
        if (tr->only && strcmp(tr->only, bs[i].entry) != 0) {
            continue;
        }
        run_block(tr, file, &bs[i], &builds, &nbuilds);
    }
    for (int i = 0; i < nbuilds; i++) {
        unlink(builds[i].exe);
        build_free(&builds[i]);
    }
    free(builds);
    blocks_free(bs, nb);
    free(src);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A file, or every .gdsl file under a directory (sorted). */
static void test_path(TestRun *tr, const char *path, int depth)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        printf("%s: error: %s\n", path, strerror(errno));
        tr->failed++;
        return;
    }
    if (!S_ISDIR(st.st_mode)) {
        test_file(tr, path);
        return;
    }
    if (depth > 16) {
        return;
    }
    DIR *d = opendir(path);
    if (!d) {
        printf("%s: error: %s\n", path, strerror(errno));
        tr->failed++;
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
        char *full = strf("%s/%s", path, e->d_name);
        struct stat es;
        if (stat(full, &es) == 0 && (S_ISDIR(es.st_mode) || (len > 5 && strcmp(e->d_name + len - 5, ".gdsl") == 0))) {
            names = xrealloc(names, (size_t)(n + 1) * sizeof *names);
            names[n++] = full;
        } else {
            free(full);
        }
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof *names, cmp_str);
    for (int i = 0; i < n; i++) {
        test_path(tr, names[i], depth + 1);
        free(names[i]);
    }
    free(names);
}

int drv_test_main(int argc, char **argv)
{
    TestRun tr = { 0 };
    tr.backend = "c";
    tr.timeout = 600;
    char self[4096];
    ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
    if (sl <= 0) {
        fprintf(stderr, "gpuc: error: cannot find the gpuc executable (/proc/self/exe)\n");
        return 1;
    }
    self[sl] = 0;
    tr.self = self;
    int first = 0;
    const char **paths = xmalloc((size_t)argc * sizeof *paths);
    int npaths = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strncmp(a, "--backend=", 10) == 0) {
            tr.backend = a + 10;
            if (strcmp(tr.backend, "c") && strcmp(tr.backend, "cuda")) {
                fprintf(stderr, "gpuc: error: gpuc test: --backend must be c or cuda, not '%s'\n", tr.backend);
                free(paths);
                return 2;
            }
        } else if (strncmp(a, "--timeout=", 10) == 0) {
            char *end;
            unsigned long t = strtoul(a + 10, &end, 10);
            if (*end || !a[10] || t > 86400) {
                fprintf(stderr, "gpuc: error: gpuc test: --timeout needs seconds (0 for none), not '%s'\n", a + 10);
                free(paths);
                return 2;
            }
            tr.timeout = (unsigned)t;
        } else if (strcmp(a, "-k") == 0 && i + 1 < argc) {
            tr.only = argv[++i];
        } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            printf("usage: gpuc test [--backend=c|cuda] [-k ENTRY] [--timeout=SECONDS] FILES-OR-DIRS...\n"
                   "Runs the //! test blocks of .gdsl files (docs/testing.md) and prints\n"
                   "a line per failing or skipped block and 'N passed, N failed, N skipped'.\n");
            free(paths);
            return 0;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "gpuc: error: gpuc test: unknown option '%s'\n", a);
            free(paths);
            return 2;
        } else {
            paths[npaths++] = a;
        }
    }
    (void)first;
    if (!npaths) {
        fprintf(stderr, "gpuc: error: gpuc test needs .gdsl files or directories\n");
        free(paths);
        return 2;
    }
    tr.tmp = drv_temp_dir();
    if (!tr.tmp) {
        free(paths);
        return 1;
    }
    for (int i = 0; i < npaths; i++) {
        test_path(&tr, paths[i], 0);
    }
    drv_remove_dir(tr.tmp);
    free(tr.tmp);
    free(paths);
    printf("%d passed, %d failed, %d skipped\n", tr.passed, tr.failed, tr.skipped);
    return tr.failed ? 1 : 0;
}

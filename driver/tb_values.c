/* tb_values.c: the data of the `//!` blocks of `gpuc test` and `gpuc bench`
 * (declared and described in blocks.h): gdsl type strings, values as
 * components, .npy files, and Philox-generated inputs (docs/testing.md,
 * docs/bench.md). The blocks themselves and the executables that read and
 * write this data: blocks.c. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blocks.h"
#include "driver.h"

/* ---------------------------------------------------------------- types */

/* ORDER KIND: numbered like GpucKind (runner/gpuc_program.h) */
const char *const tb_kind_names[] = { "bool", "i32", "i64", "u32", "u64", "f32", "f64" };
static const char *const kind_descr[] = { "|b1", "<i4", "<i8", "<u4", "<u8", "<f4", "<f8" };
const size_t tb_kind_size[] = { 1, 4, 8, 4, 8, 4, 8 };


void tb_type_free(TbType *t)
{
    if (!t) {
        return;
    }
    for (int i = 0; i < t->n; i++) {
        tb_type_free(t->elems[i]);
        if (t->fields) {
            free(t->fields[i]);
        }
    }
    free(t->elems);
    free(t->fields);
    free(t->name);
    free(t->dimnames[0]);
    free(t->dimnames[1]);
    tb_type_free(t->elem);
    free(t);
}

typedef struct TypeParser {
    const char *s;
    bool bad;
    bool bare_structs; /* a struct may be named without its fields */
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
    return tb_strndup(b, (size_t)(p->s - b));
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
static TbType *tp_type(TypeParser *p, int depth)
{
    if (depth > 64) {
        p->bad = true;
        return NULL;
    }
    TbType *t = calloc(1, sizeof *t);
    if (!t) {
        exit(1);
    }
    if (tp_eat(p, '(')) {
        t->k = TB_TUPLE;
        do {
            t->elems = tb_realloc(t->elems, (size_t)(t->n + 1) * sizeof *t->elems);
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
        t->k = TB_SCALAR;
        t->scalar = TB_NONE;
        for (int i = 0; i < 7; i++) {
            if (strcmp(w, tb_kind_names[i]) == 0) {
                t->scalar = i;
            }
        }
        if (t->scalar == TB_NONE) {
            t->k = TB_STRUCT;
            t->name = w;
            w = NULL;
            if (!tp_eat(p, '{')) {
                p->bad = !p->bare_structs;
            } else while (!p->bad && !tp_eat(p, '}')) {
                char *f = tp_word(p);
                if (!f || !tp_eat(p, ':')) {
                    free(f);
                    p->bad = true;
                    break;
                }
                t->elems = tb_realloc(t->elems, (size_t)(t->n + 1) * sizeof *t->elems);
                t->fields = tb_realloc(t->fields, (size_t)(t->n + 1) * sizeof *t->fields);
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
        char *dn = NULL;
        if (*p->s >= '0' && *p->s <= '9') {
            d = strtoll(p->s, (char **)&p->s, 10);
        } else {
            dn = tp_word(p);
        }
        if (!tp_eat(p, ']')) {
            p->bad = true;
        }
        if (t->k == TB_ARRAY && t->rank == 1) {
            t->rank = 2;
            t->dims[1] = d;
            t->dimnames[1] = dn;
        } else if (t->k == TB_ARRAY) {
            p->bad = true;
            free(dn);
        } else {
            TbType *a = calloc(1, sizeof *a);
            if (!a) {
                exit(1);
            }
            a->k = TB_ARRAY;
            a->rank = 1;
            a->dims[0] = d;
            a->dimnames[0] = dn;
            a->elem = t;
            t = a;
        }
    }
    return t;
}

static int number_leaves(TbType *t, int first)
{
    t->leaf0 = first;
    if (t->k == TB_SCALAR) {
        t->nleaves = 1;
    } else if (t->k == TB_ARRAY) {
        t->nleaves = number_leaves(t->elem, first);
    } else {
        t->nleaves = 0;
        for (int i = 0; i < t->n; i++) {
            t->nleaves += number_leaves(t->elems[i], first + t->nleaves);
        }
    }
    return t->nleaves;
}

/* The scalar kind of leaf i. */
int tb_leaf_kind(const TbType *t, int i)
{
    if (t->k == TB_SCALAR) {
        return t->scalar;
    }
    if (t->k == TB_ARRAY) {
        return tb_leaf_kind(t->elem, i);
    }
    for (int j = 0; j < t->n; j++) {
        const TbType *e = t->elems[j];
        if (i >= e->leaf0 && i < e->leaf0 + e->nleaves) {
            return tb_leaf_kind(e, i);
        }
    }
    return TB_NONE;
}

TbType *tb_parse_type(const char *s, bool bare_structs)
{
    TypeParser p = { s, false, bare_structs };
    TbType *t = tp_type(&p, 0);
    tp_space(&p);
    if (p.bad || !t || *p.s) {
        tb_type_free(t);
        return NULL;
    }
    number_leaves(t, 0);
    return t;
}

/* ---------------------------------------------------------------- values */


void tb_comps_free(TbComp *c, int n)
{
    for (int i = 0; c && i < n; i++) {
        free(c[i].data);
    }
    free(c);
}

static void comp_push(TbComp *c, const void *elem)
{
    size_t es = tb_kind_size[c->kind];
    if (c->count == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 16;
        c->data = tb_realloc(c->data, c->cap * es);
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
        snprintf(err, errlen, "expected a %s value", tb_kind_names[k]);
        return false;
    }
    memcpy(buf, w, n);
    buf[n] = 0;
    if (k == TB_BOOL) {
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
        size_t sl = strlen(tb_kind_names[i]);
        if (len > sl && strcmp(buf + len - sl, tb_kind_names[i]) == 0 && buf[len - sl - 1] != 'x') {
            buf[len - sl] = 0;
            len -= sl;
            break;
        }
    }
    if (k == TB_F32 || k == TB_F64) {
        char *end;
        errno = 0;
        if (k == TB_F32) {
            float f = strtof(buf, &end);
            memcpy(out, &f, 4);
        } else {
            double d = strtod(buf, &end);
            memcpy(out, &d, 8);
        }
        if (*end || end == buf) {
            snprintf(err, errlen, "expected a number (%s), found '%.40s'", tb_kind_names[k], buf);
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
        snprintf(err, errlen, "expected an integer (%s), found '%.40s'", tb_kind_names[k], buf);
        return false;
    }
    for (; *q; q++) {
        int d = *q >= '0' && *q <= '9' ? *q - '0'
                : base == 16 && *q >= 'a' && *q <= 'f' ? *q - 'a' + 10
                : base == 16 && *q >= 'A' && *q <= 'F' ? *q - 'A' + 10 : -1;
        if (d < 0 || d >= base) {
            snprintf(err, errlen, "expected an integer (%s), found '%.40s'", tb_kind_names[k], buf);
            return false;
        }
        v = v * (unsigned)base + (unsigned)d;
        if (v >> 65) {
            break;
        }
    }
    __int128 s = neg ? -(__int128)v : (__int128)v;
    __int128 lo = k == TB_I32 ? INT32_MIN : k == TB_I64 ? INT64_MIN : 0;
    __int128 hi = k == TB_I32 ? INT32_MAX : k == TB_I64 ? INT64_MAX : k == TB_U32 ? (__int128)UINT32_MAX
                                                                                : (__int128)UINT64_MAX;
    if ((v >> 65) || s < lo || s > hi) {
        snprintf(err, errlen, "%.40s is out of range for %s", buf, tb_kind_names[k]);
        return false;
    }
    if (k == TB_I32 || k == TB_U32) {
        uint32_t x = (uint32_t)s;
        memcpy(out, &x, 4);
    } else {
        uint64_t x = (uint64_t)s;
        memcpy(out, &x, 8);
    }
    return true;
}

static bool vp_value(ValueParser *p, const TbType *t, TbComp *c, int depth);

static void set_shape(const TbType *t, TbComp *c, int rank, long long r, long long cols)
{
    for (int i = t->leaf0; i < t->leaf0 + t->nleaves; i++) {
        c[i].rank = rank;
        c[i].shape[0] = r;
        c[i].shape[1] = rank == 2 ? cols : 0;
    }
}

/* elements of a 1-D array (or one row): '[' v, v, ... ']' */
static bool vp_row(ValueParser *p, const TbType *elem, TbComp *c, long long *count, int depth)
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

static bool vp_value(ValueParser *p, const TbType *t, TbComp *c, int depth)
{
    if (depth > 16) {
        return vp_fail(p, "a shallower value");
    }
    if (t->k == TB_SCALAR) {
        const char *w;
        size_t n = vp_word(p, &w);
        unsigned char buf[8];
        if (!convert_scalar(w, n, t->scalar, buf, p->err, sizeof p->err)) {
            return false;
        }
        comp_push(&c[t->leaf0], buf);
        return true;
    }
    if (t->k == TB_TUPLE) {
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
    if (t->k == TB_STRUCT) {
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
TbComp *tb_parse_value(const char *text, const TbType *t, char *err, size_t errlen)
{
    TbComp *c = calloc((size_t)t->nleaves, sizeof *c);
    if (!c) {
        exit(1);
    }
    for (int i = 0; i < t->nleaves; i++) {
        c[i].kind = tb_leaf_kind(t, i);
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
        tb_comps_free(c, t->nleaves);
        return NULL;
    }
    return c;
}

uint64_t tb_comps_bytes(const TbComp *c, int n)
{
    uint64_t b = 0;
    for (int i = 0; c && i < n; i++) {
        b += (uint64_t)c[i].count * tb_kind_size[c[i].kind];
    }
    return b;
}

/* ---------------------------------------------------------------- .npy */

bool tb_npy_write(const char *path, int kind, int rank, const long long *shape, const void *data, size_t count)
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
        fwrite(data, tb_kind_size[kind], count, f);
    }
    return fclose(f) == 0;
}

/* Read a .npy file the runner wrote (version 1-3, C order). */
bool tb_npy_read(const char *path, TbComp *c, char *err, size_t errlen)
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
        char *hdr = tb_strndup(buf + off, hl);
        char *d = strstr(hdr, "'descr'");
        char *s = strstr(hdr, "'shape'");
        int kind = TB_NONE;
        if (d && (d = strchr(d + 7, '\''))) {
            for (int k = 0; k < 7; k++) {
                if (strncmp(d + 1, kind_descr[k], 3) == 0 ||
                    (k == TB_BOOL && (strncmp(d + 1, "<b1", 3) == 0 || strncmp(d + 1, "=b1", 3) == 0))) {
                    kind = k;
                }
            }
        }
        if (s && (s = strchr(s, '(')) && kind != TB_NONE) {
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
            if (*s == ')' && len - off - hl == count * tb_kind_size[kind]) {
                c->count = c->cap = count;
                c->data = tb_malloc(count * tb_kind_size[kind]);
                memcpy(c->data, buf + off + hl, count * tb_kind_size[kind]);
                ok = true;
            }
        }
        free(hdr);
    }
    if (!ok) {
        snprintf(err, errlen, "%s: not a .npy file gpuc can read", path);
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


/* ---------------------------------------------------------------- generated inputs */

/* Does generated type g fit parameter type p? Bare struct names in g take
 * p's fields. Writes why not into why. */
static bool fits(const TbType *g, const TbType *p, char *why, size_t n)
{
    static const char *const what[] = { "scalar", "tuple", "struct", "array" };
    if (g->k != p->k) {
        snprintf(why, n, "a %s where the parameter has a %s", what[g->k], what[p->k]);
        return false;
    }
    if (g->k == TB_SCALAR) {
        if (g->scalar != p->scalar) {
            snprintf(why, n, "%s where the parameter has %s", tb_kind_names[g->scalar], tb_kind_names[p->scalar]);
            return false;
        }
        return true;
    }
    if (g->k == TB_ARRAY) {
        if (g->rank != p->rank) {
            snprintf(why, n, "rank %d where the parameter has rank %d", g->rank, p->rank);
            return false;
        }
        return fits(g->elem, p->elem, why, n);
    }
    if (g->k == TB_STRUCT && strcmp(g->name, p->name) != 0) {
        snprintf(why, n, "struct %s where the parameter has %s", g->name, p->name);
        return false;
    }
    if (g->k == TB_STRUCT && g->n == 0) {
        return true; /* a bare struct name: the parameter's fields */
    }
    if (g->n != p->n) {
        snprintf(why, n, "%d elements where the parameter has %d", g->n, p->n);
        return false;
    }
    for (int i = 0; i < g->n; i++) {
        if (g->k == TB_STRUCT && strcmp(g->fields[i], p->fields[i]) != 0) {
            snprintf(why, n, "field '%s' where the parameter has '%s'", g->fields[i], p->fields[i]);
            return false;
        }
        if (g->elems[i]->k == TB_ARRAY) {
            snprintf(why, n, "a tuple or struct holding arrays (generate each array separately)");
            return false;
        }
        if (!fits(g->elems[i], p->elems[i], why, n)) {
            return false;
        }
    }
    return true;
}

/* The component suffix of leaf c of t: ".0", ".x", ".1.0", "" for a scalar
 * (malloc'd). */
static char *leaf_suffix(const TbType *t, int c)
{
    if (t->k == TB_ARRAY) {
        return leaf_suffix(t->elem, c);
    }
    for (int j = 0; j < t->n; j++) {
        const TbType *e = t->elems[j];
        if (c >= e->leaf0 && c < e->leaf0 + e->nleaves) {
            char *rest = leaf_suffix(e, c);
            char *r = t->k == TB_STRUCT ? tb_printf(".%s%s", t->fields[j], rest) : tb_printf(".%d%s", j, rest);
            free(rest);
            return r;
        }
    }
    return tb_strdup("");
}

/* A size: an integer, or a name from sizes. */
static bool size_value(const char *s, const TbSize *sizes, int nsizes, long long *v)
{
    char *end;
    errno = 0;
    long long x = strtoll(s, &end, 0);
    if (*s && !*end && !errno) {
        *v = x;
        return true;
    }
    for (int i = 0; i < nsizes; i++) {
        if (strcmp(sizes[i].name, s) == 0) {
            *v = sizes[i].value;
            return true;
        }
    }
    return false;
}

/* One end of `in LO .. HI`: a number or a size name, as a double and, for
 * integer kinds, exactly. */
static bool range_end(const char *s, const TbSize *sizes, int nsizes, double *f, __int128 *i)
{
    long long v;
    if (size_value(s, sizes, nsizes, &v)) {
        *f = (double)v;
        *i = v;
        return true;
    }
    char *end;
    errno = 0;
    if (s[0] != '-') {
        unsigned long long u = strtoull(s, &end, 0);
        if (*s && !*end && !errno) {
            *f = (double)u;
            *i = (__int128)u;
            return true;
        }
    }
    *f = strtod(s, &end);
    *i = (__int128)*f;
    return *s && !*end;
}

char *tb_gen_random(const char *spec, const char *pname, const char *ptype, const TbSize *sizes, int nsizes,
                    const char *base, TbArgs *args, char ***files, int *nfiles, uint64_t *bytes)
{
    char *s = tb_strdup(spec);
    char *msg = NULL;
    TbType *g = NULL, *p = NULL;
    char *seedp = strstr(s, " seed ");
    if (!seedp) {
        msg = tb_strdup("expected 'random TYPE seed S [in LO .. HI]'");
        goto out;
    }
    *seedp = 0;
    char *rest = seedp + 6, *lo_s = NULL, *hi_s = NULL;
    char *inp = strstr(rest, " in ");
    if (inp) {
        *inp = 0;
        lo_s = inp + 4;
        char *dots = strstr(lo_s, "..");
        if (!dots) {
            msg = tb_strdup("random input: expected 'in LO .. HI'");
            goto out;
        }
        *dots = 0;
        hi_s = tb_trim(dots + 2);
        lo_s = tb_trim(lo_s);
    }
    char *end;
    errno = 0;
    uint64_t seed = strtoull(tb_trim(rest), &end, 0);
    if (*end || !*tb_trim(rest) || errno || rest[strspn(rest, " ")] == '-') {
        msg = tb_printf("random input: expected a seed (a non-negative integer), found '%s'", tb_trim(rest));
        goto out;
    }
    g = tb_parse_type(tb_trim(s), true);
    if (!g) {
        msg = tb_printf("random input: cannot read the type '%s'", tb_trim(s));
        goto out;
    }
    p = tb_parse_type(ptype, false);
    if (!p) {
        msg = tb_printf("cannot read the type '%s' of parameter '%s'", ptype, pname);
        goto out;
    }
    char why[200];
    if (!fits(g, p, why, sizeof why)) {
        msg = tb_printf("random %s does not fit parameter '%s' of type %s: %s", tb_trim(s), pname, ptype, why);
        goto out;
    }
    long long shape[2] = { 0, 0 };
    int rank = g->k == TB_ARRAY ? g->rank : 0;
    uint64_t count = 1;
    for (int d = 0; d < rank; d++) {
        if (g->dims[d] < 0 && !size_value(g->dimnames[d], sizes, nsizes, &shape[d])) {
            msg = sizes ? tb_printf("random input: size '%s' has no value (no 'size %s = ...' line)",
                                     g->dimnames[d], g->dimnames[d])
                         : tb_printf("random input: size '%s' must be an integer here", g->dimnames[d]);
            goto out;
        }
        if (g->dims[d] >= 0) {
            shape[d] = g->dims[d];
        }
        if (shape[d] < 0 || shape[d] > (1ll << 34)) {
            msg = tb_printf("random input: size %lld is out of range", shape[d]);
            goto out;
        }
        count *= (uint64_t)shape[d];
    }
    const TbType *elem = p->k == TB_ARRAY ? p->elem : p;
    int nleaves = elem->nleaves;
    if (count * (uint64_t)nleaves > (1ull << 34)) {
        msg = tb_strdup("random input: more than 2^34 values");
        goto out;
    }
    double flo = 0.0, fhi = 1.0;
    __int128 ilo = 0, ihi = 100;
    if (lo_s) {
        double f1, f2;
        __int128 i1, i2;
        if (!range_end(lo_s, sizes, nsizes, &f1, &i1) || !range_end(hi_s, sizes, nsizes, &f2, &i2)) {
            msg = tb_printf("random input: 'in %s .. %s' needs numbers or sizes", lo_s, hi_s);
            goto out;
        }
        flo = f1, fhi = f2, ilo = i1, ihi = i2;
    }
    for (int c = 0; c < nleaves; c++) {
        int k = tb_leaf_kind(elem, c);
        if (k != TB_F32 && k != TB_F64 && k != TB_BOOL) {
            __int128 lo = k == TB_I32 ? INT32_MIN : k == TB_I64 ? INT64_MIN : 0;
            __int128 hi = k == TB_I32 ? INT32_MAX : k == TB_I64 ? INT64_MAX : k == TB_U32 ? (__int128)UINT32_MAX
                                                                                       : (__int128)UINT64_MAX;
            if (ihi <= ilo || ilo < lo || ihi - 1 > hi) {
                msg = tb_printf("random input: the range %s .. %s (HI excluded) is empty or does not fit %s",
                                lo_s ? lo_s : "0", hi_s ? hi_s : "100", tb_kind_names[k]);
                goto out;
            }
        }
    }
    for (int c = 0; c < nleaves; c++) {
        int k = tb_leaf_kind(elem, c);
        size_t es = tb_kind_size[k];
        unsigned char *data = tb_malloc((size_t)count * es);
        unsigned __int128 range = (unsigned __int128)(ihi - ilo);
        for (uint64_t i = 0; i < count; i++) {
            uint32_t b[4];
            philox_block(seed, i * (uint64_t)nleaves + (uint64_t)c, b); /* draw k*C + c */
            uint64_t u64 = (uint64_t)b[1] << 32 | b[0];
            if (k == TB_BOOL) {
                data[i] = (unsigned char)(b[0] & 1);
            } else if (k == TB_F32 || k == TB_F64) {
                double v = flo + (fhi - flo) * ((double)(u64 >> 11) * 0x1p-53);
                if (k == TB_F32) {
                    float f = (float)v;
                    memcpy(data + 4 * i, &f, 4);
                } else {
                    memcpy(data + 8 * i, &v, 8);
                }
            } else {
                __int128 v = ilo + (__int128)(u64 % range);
                if (es == 4) {
                    uint32_t x = (uint32_t)v;
                    memcpy(data + 4 * i, &x, 4);
                } else {
                    uint64_t x = (uint64_t)v;
                    memcpy(data + 8 * i, &x, 8);
                }
            }
        }
        char *suffix = leaf_suffix(elem, c);
        char *path = tb_printf("%s.%d.npy", base, c);
        bool ok = tb_npy_write(path, k, rank, shape, data, (size_t)count);
        free(data);
        *files = tb_realloc(*files, (size_t)(*nfiles + 1) * sizeof **files);
        (*files)[(*nfiles)++] = path;
        if (!ok) {
            msg = tb_printf("cannot write '%s'", path);
            goto out;
        }
        *bytes += count * es;
        tb_args_add(args, tb_strdup("--in"));
        tb_args_add(args, tb_printf("%s%s=%s", pname, suffix, path));
        free(suffix);
    }
out:
    tb_type_free(g);
    tb_type_free(p);
    free(s);
    return msg;
}

char *tb_write_inputs(const TbBlock *bl, const TbSig *sig, const TbSize *sizes, int nsizes, const char *base,
                      FILE *in, TbArgs *args, char ***files, int *nfiles, uint64_t *bytes, int *line, int *col)
{
    char *err = NULL;
    const TbItem *it = NULL; /* the input's item; NULL: the block */
    for (int p = 0; p < sig->nparams && !err; p++) {
        it = NULL;
        const char *val = tb_block_input(bl, sig->pnames[p], &it);
        if (!val) {
            /* an i64 parameter that is a size: its value */
            for (int i = 0; i < nsizes && !val; i++) {
                if (strcmp(sizes[i].name, sig->pnames[p]) == 0) {
                    fprintf(in, "%lld\n", sizes[i].value);
                    *bytes += 8;
                    val = "";
                }
            }
            if (!val) {
                err = tb_printf("no input for parameter '%s'", sig->pnames[p]);
            }
            continue;
        }
        if (strncmp(val, "random ", 7) == 0) {
            char *pbase = tb_printf("%s.%d", base, p);
            err = tb_gen_random(val + 7, sig->pnames[p], sig->ptypes[p], sizes, nsizes, pbase, args, files, nfiles,
                                bytes);
            free(pbase);
            continue;
        }
        TbType *t = tb_parse_type(sig->ptypes[p], false);
        char perr[300] = "cannot read the parameter's type";
        TbComp *c = t ? tb_parse_value(val, t, perr, sizeof perr) : NULL;
        if (!c) {
            err = tb_printf("parameter '%s' (%s): %s", sig->pnames[p], sig->ptypes[p], perr);
        } else {
            *bytes += tb_comps_bytes(c, t->nleaves);
            fprintf(in, "%s\n", val);
        }
        tb_comps_free(c, t ? t->nleaves : 0);
        tb_type_free(t);
    }
    *line = it ? it->line : bl->line;
    *col = it ? it->col : bl->col;
    return err;
}


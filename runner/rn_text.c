/* rn_text.c: the text value syntax of docs/testing.md, read against a type
 * (a hand-written recursive-descent reader that is driven by the type tree,
 * so its recursion depth is the type's, never the input's) and written back.
 * Every error carries FILE:LINE:COL of the offending token. Memory grows
 * with the elements actually read, so garbage cannot claim more than a small
 * multiple of its own size.
 *
 *   value  = scalar | tuple | struct | array
 *   tuple  = "(" value ("," value)+ ")"
 *   struct = NAME? "{" NAME ":" value ("," NAME ":" value)* ","? "}"
 *   array  = "[" (value ("," value)* ","?)? "]" | "empty" "(" INT "," INT ")"
 *   scalar = "true" | "false" | "-"? (INT | FLOAT | "inf" | "nan") SUFFIX?
 * White space separates tokens; "#" starts a comment to the end of the line. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runner.h"

void rn_reader_init(RnReader *r, const char *src, size_t len, const char *file)
{
  r->src = src;
  r->len = len;
  r->pos = 0;
  r->line = 1;
  r->col = 1;
  r->file = file;
}

static int peek(const RnReader *r)
{
  return r->pos < r->len ? (unsigned char)r->src[r->pos] : -1;
}

static void advance(RnReader *r)
{
  if (r->pos >= r->len) {
    return;
  }
  if (r->src[r->pos] == '\n') {
    r->line++;
    r->col = 1;
  } else {
    r->col++;
  }
  r->pos++;
}

static void skip_space(RnReader *r)
{
  for (;;) {
    int c = peek(r);
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
      advance(r);
    } else if (c == '#') {
      while (peek(r) != -1 && peek(r) != '\n') {
        advance(r);
      }
    } else {
      return;
    }
  }
}

bool rn_reader_at_end(RnReader *r)
{
  skip_space(r);
  return r->pos >= r->len;
}

static bool word_char(int c)
{
  return c != -1 && (isalnum(c) || c == '_' || c == '.');
}

/* A description of the token at pos, for "found ..." in messages. */
static void describe(const RnReader *r, char *buf, size_t size)
{
  int c = peek(r);
  if (c == -1) {
    snprintf(buf, size, "end of input");
  } else if (word_char(c) || c == '-') {
    size_t n = 1;
    while (r->pos + n < r->len && n < 24 && word_char((unsigned char)r->src[r->pos + n])) {
      n++;
    }
    bool more = r->pos + n < r->len && word_char((unsigned char)r->src[r->pos + n]);
    snprintf(buf, size, "'%.*s%s'", (int)n, r->src + r->pos, more ? "..." : "");
  } else if (isprint(c)) {
    snprintf(buf, size, "'%c'", c);
  } else {
    snprintf(buf, size, "byte 0x%02x", (unsigned)c);
  }
}

/* Report an error at the reader's position. */
static int fail_at(const RnReader *r, int line, int col, RnError *e, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static int fail_at(const RnReader *r, int line, int col, RnError *e, const char *fmt, ...)
{
  char msg[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  rn_err(e, "%s:%d:%d: %s", r->file, line, col, msg);
  return -1;
}

/* "expected WHAT, found TOKEN" at the current position. */
static int expected(RnReader *r, RnError *e, const char *what)
{
  char found[64];
  describe(r, found, sizeof found);
  return fail_at(r, r->line, r->col, e, "expected %s, found %s", what, found);
}

static bool eat(RnReader *r, char c)
{
  skip_space(r);
  if (peek(r) == c) {
    advance(r);
    return true;
  }
  return false;
}

/* A NAME token, or false (nothing consumed). */
static bool read_name(RnReader *r, char *out, size_t size)
{
  skip_space(r);
  int c = peek(r);
  if (c == -1 || !(isalpha(c) || c == '_')) {
    return false;
  }
  size_t n = 0;
  while ((c = peek(r)) != -1 && (isalnum(c) || c == '_')) {
    if (n + 1 < size) {
      out[n++] = (char)c;
    }
    advance(r);
  }
  out[n] = '\0';
  return true;
}

/* ---- scalars ---- */

/* The characters of a number or word: "-"? [A-Za-z0-9_.]* with a sign
 * allowed right after a decimal exponent's e. */
static size_t scan_token(const RnReader *r)
{
  size_t n = 0;
  const char *s = r->src + r->pos;
  size_t left = r->len - r->pos;
  if (n < left && s[n] == '-') {
    n++;
  }
  bool hex = left > n + 1 && s[n] == '0' && (s[n + 1] == 'x' || s[n + 1] == 'X');
  while (n < left) {
    unsigned char c = (unsigned char)s[n];
    if (isalnum(c) || c == '_' || c == '.') {
      n++;
    } else if ((c == '+' || c == '-') && !hex && n > 0 && (s[n - 1] == 'e' || s[n - 1] == 'E') && n + 1 < left &&
               isdigit((unsigned char)s[n + 1])) {
      n++;
    } else {
      break;
    }
  }
  return n;
}

static int is_kind_suffix(const char *s, size_t n)
{
  static const char *const names[] = {"bool", "i32", "i64", "u32", "u64", "f32", "f64"};
  for (int k = 1; k < 7; k++) {
    if (strlen(names[k]) == n && memcmp(s, names[k], n) == 0) {
      return k;
    }
  }
  return -1;
}

static int read_int(RnReader *r, GpucKind kind, void *out, RnError *e)
{
  int line = r->line, col = r->col;
  size_t n = scan_token(r);
  const char *tok = r->src + r->pos;
  bool neg = n > 0 && tok[0] == '-';
  size_t i = neg ? 1 : 0;
  int base = 10;
  if (n >= i + 2 && tok[i] == '0' && (tok[i + 1] == 'x' || tok[i + 1] == 'X')) {
    base = 16;
    i += 2;
  }
  uint64_t mag = 0;
  bool overflow = false;
  size_t digits = 0;
  for (; i < n; i++, digits++) {
    int c = (unsigned char)tok[i], d;
    if (isdigit(c)) {
      d = c - '0';
    } else if (base == 16 && isxdigit(c)) {
      d = tolower(c) - 'a' + 10;
    } else {
      break;
    }
    if (mag > (UINT64_MAX - (uint64_t)d) / (uint64_t)base) {
      overflow = true;
    } else {
      mag = mag * (uint64_t)base + (uint64_t)d;
    }
  }
  if (digits == 0 || (i < n && is_kind_suffix(tok + i, n - i) < 0)) {
    if (n == 0) {
      return expected(r, e, "an integer");
    }
    return fail_at(r, line, col, e, "expected an integer (%s), found '%.*s'", rn_kind_name(kind), n > 40 ? 40 : (int)n,
                   tok);
  }
  if (i < n && is_kind_suffix(tok + i, n - i) != (int)kind) {
    return fail_at(r, line, col, e, "suffix '%.*s' does not match the type %s", (int)(n - i), tok + i,
                   rn_kind_name(kind));
  }
  int bits = (kind == GPUC_KIND_I32 || kind == GPUC_KIND_U32) ? 32 : 64;
  bool is_signed = kind == GPUC_KIND_I32 || kind == GPUC_KIND_I64;
  uint64_t max = is_signed ? (((uint64_t)1 << (bits - 1)) - 1) : (bits == 64 ? UINT64_MAX : 0xFFFFFFFFu);
  bool ok = !overflow && (is_signed ? mag <= max + (neg ? 1 : 0) : (!neg || mag == 0) && mag <= max);
  if (!ok) {
    return fail_at(r, line, col, e, "%.*s is out of range for %s", n > 40 ? 40 : (int)n, tok, rn_kind_name(kind));
  }
  for (size_t k = 0; k < n; k++) {
    advance(r);
  }
  switch (kind) {
  case GPUC_KIND_I32: {
    int32_t v = neg ? (int32_t)(0 - (int64_t)mag) : (int32_t)mag;
    memcpy(out, &v, sizeof v);
    break;
  }
  case GPUC_KIND_I64: {
    int64_t v = neg ? (mag == (uint64_t)1 << 63 ? INT64_MIN : -(int64_t)mag) : (int64_t)mag;
    memcpy(out, &v, sizeof v);
    break;
  }
  case GPUC_KIND_U32: {
    uint32_t v = (uint32_t)mag;
    memcpy(out, &v, sizeof v);
    break;
  }
  default: {
    uint64_t v = mag;
    memcpy(out, &v, sizeof v);
    break;
  }
  }
  return 0;
}

static int read_float(RnReader *r, GpucKind kind, void *out, RnError *e)
{
  int line = r->line, col = r->col;
  size_t n = scan_token(r);
  const char *tok = r->src + r->pos;
  bool neg = n > 0 && tok[0] == '-';
  size_t i = neg ? 1 : 0, end;
  double special = 0;
  bool is_special = false;
  if (n >= i + 3 && (memcmp(tok + i, "inf", 3) == 0 || memcmp(tok + i, "nan", 3) == 0)) {
    is_special = true;
    special = tok[i] == 'i' ? INFINITY : NAN;
    end = i + 3;
  } else {
    size_t digits = 0;
    while (i < n && isdigit((unsigned char)tok[i])) {
      i++, digits++;
    }
    if (i < n && tok[i] == '.') {
      i++;
      while (i < n && isdigit((unsigned char)tok[i])) {
        i++, digits++;
      }
    }
    if (digits > 0 && i < n && (tok[i] == 'e' || tok[i] == 'E')) {
      size_t j = i + 1;
      if (j < n && (tok[j] == '+' || tok[j] == '-')) {
        j++;
      }
      if (j < n && isdigit((unsigned char)tok[j])) {
        while (j < n && isdigit((unsigned char)tok[j])) {
          j++;
        }
        i = j;
      }
    }
    if (digits == 0) {
      if (n == 0) {
        return expected(r, e, "a number");
      }
      return fail_at(r, line, col, e, "expected a number (%s), found '%.*s'", rn_kind_name(kind),
                     n > 40 ? 40 : (int)n, tok);
    }
    end = i;
  }
  if (end < n) {
    int k = is_kind_suffix(tok + end, n - end);
    if (k < 0) {
      return fail_at(r, line, col, e, "expected a number (%s), found '%.*s'", rn_kind_name(kind),
                     n > 40 ? 40 : (int)n, tok);
    }
    if (k != (int)kind) {
      return fail_at(r, line, col, e, "suffix '%.*s' does not match the type %s", (int)(n - end), tok + end,
                     rn_kind_name(kind));
    }
  }
  if (end > 400) {
    return fail_at(r, line, col, e, "number too long (%zu characters)", end);
  }
  char num[416];
  memcpy(num, tok, end);
  num[end] = '\0';
  if (kind == GPUC_KIND_F32) {
    float v;
    if (is_special) {
      v = (float)(neg ? -special : special);
    } else {
      errno = 0;
      v = strtof(num, NULL);
      if (isinf(v)) {
        return fail_at(r, line, col, e, "%s is out of range for f32", num);
      }
    }
    memcpy(out, &v, sizeof v);
  } else {
    double v;
    if (is_special) {
      v = neg ? -special : special;
    } else {
      errno = 0;
      v = strtod(num, NULL);
      if (isinf(v)) {
        return fail_at(r, line, col, e, "%s is out of range for f64", num);
      }
    }
    memcpy(out, &v, sizeof v);
  }
  for (size_t k = 0; k < n; k++) {
    advance(r);
  }
  return 0;
}

static int read_scalar(RnReader *r, GpucKind kind, void *out, RnError *e)
{
  skip_space(r);
  if (kind == GPUC_KIND_BOOL) {
    int line = r->line, col = r->col;
    RnReader save = *r;
    char w[8];
    if (read_name(r, w, sizeof w) && (strcmp(w, "true") == 0 || strcmp(w, "false") == 0)) {
      *(unsigned char *)out = w[0] == 't';
      return 0;
    }
    *r = save;
    (void)line, (void)col;
    return expected(r, e, "true or false");
  }
  if (kind == GPUC_KIND_F32 || kind == GPUC_KIND_F64) {
    return read_float(r, kind, out, e);
  }
  return read_int(r, kind, out, e);
}

/* ---- compound values ---- */

typedef struct ReadCtx {
  RnBuf *bufs;     /* one per component of the top-level value */
  int64_t (*shape)[2];
} ReadCtx;

static int read_value(RnReader *r, const RnType *t, ReadCtx *cx, RnError *e);

static int read_array(RnReader *r, const RnType *t, ReadCtx *cx, RnError *e)
{
  int64_t rows = 0, cols = -1;
  skip_space(r);
  if (t->rank == 2 && peek(r) == 'e') {
    RnReader save = *r;
    char w[8];
    if (read_name(r, w, sizeof w) && strcmp(w, "empty") == 0) {
      int line = r->line, col = r->col;
      int64_t dims[2];
      if (!eat(r, '(')) {
        return expected(r, e, "'(' after empty");
      }
      skip_space(r);
      line = r->line, col = r->col;
      if (read_int(r, GPUC_KIND_I64, &dims[0], e) || !eat(r, ',')) {
        return e->set ? -1 : expected(r, e, "','");
      }
      skip_space(r);
      if (read_int(r, GPUC_KIND_I64, &dims[1], e) || !eat(r, ')')) {
        return e->set ? -1 : expected(r, e, "')'");
      }
      if (dims[0] < 0 || dims[1] < 0 || (dims[0] != 0 && dims[1] != 0)) {
        return fail_at(r, line, col, e, "empty(ROWS, COLS) needs sizes >= 0 with one of them 0");
      }
      if (dims[0] > RN_MAX_EMPTY_DIM || dims[1] > RN_MAX_EMPTY_DIM) {
        return fail_at(r, line, col, e, "empty(ROWS, COLS): a size above %lld", (long long)RN_MAX_EMPTY_DIM);
      }
      for (int c = 0; c < t->ncomp; c++) {
        cx->shape[t->first + c][0] = dims[0];
        cx->shape[t->first + c][1] = dims[1];
      }
      return 0;
    }
    *r = save;
  }
  if (!eat(r, '[')) {
    return expected(r, e, t->rank == 2 ? "'[' starting a 2-D array" : "'[' starting an array");
  }
  for (;;) {
    skip_space(r);
    if (eat(r, ']')) {
      break;
    }
    if (t->rank == 1) {
      if (read_value(r, t->elem, cx, e)) {
        return -1;
      }
      rows++;
    } else {
      int line = r->line, col = r->col;
      if (!eat(r, '[')) {
        return expected(r, e, "'[' starting a row");
      }
      int64_t n = 0;
      for (;;) {
        skip_space(r);
        if (eat(r, ']')) {
          break;
        }
        if (read_value(r, t->elem, cx, e)) {
          return -1;
        }
        n++;
        if (eat(r, ',')) {
          continue;
        }
        if (!eat(r, ']')) {
          return expected(r, e, "',' or ']' in a row");
        }
        break;
      }
      if (cols >= 0 && n != cols) {
        return fail_at(r, line, col, e, "row %" PRId64 " has length %" PRId64 " but row 1 has length %" PRId64, rows + 1,
                       n, cols);
      }
      cols = n;
      rows++;
    }
    if (eat(r, ',')) {
      continue;
    }
    if (!eat(r, ']')) {
      return expected(r, e, t->rank == 2 ? "',' or ']' after a row" : "',' or ']' in an array");
    }
    break;
  }
  for (int c = 0; c < t->ncomp; c++) {
    cx->shape[t->first + c][0] = rows;
    cx->shape[t->first + c][1] = t->rank == 2 ? (cols < 0 ? 0 : cols) : 0;
  }
  return 0;
}

static int read_value(RnReader *r, const RnType *t, ReadCtx *cx, RnError *e)
{
  switch (t->tag) {
  case RN_SCALAR: {
    void *slot = rn_buf_push(&cx->bufs[t->first]);
    if (!slot) {
      rn_err(e, "out of memory reading the input");
      return -1;
    }
    return read_scalar(r, t->kind, slot, e);
  }
  case RN_ARRAY:
    return read_array(r, t, cx, e);
  case RN_TUPLE: {
    if (!eat(r, '(')) {
      char what[64];
      snprintf(what, sizeof what, "'(' starting a tuple of %d", t->count);
      return expected(r, e, what);
    }
    for (int i = 0; i < t->count; i++) {
      if (i > 0 && !eat(r, ',')) {
        char what[64];
        snprintf(what, sizeof what, "',' before tuple element %d of %d", i + 1, t->count);
        return expected(r, e, what);
      }
      if (read_value(r, t->members[i], cx, e)) {
        return -1;
      }
    }
    if (!eat(r, ')')) {
      char what[64];
      snprintf(what, sizeof what, "')' closing a tuple of %d", t->count);
      return expected(r, e, what);
    }
    return 0;
  }
  case RN_STRUCT: {
    char name[64];
    int line, col;
    skip_space(r);
    line = r->line, col = r->col;
    if (read_name(r, name, sizeof name) && strcmp(name, t->name) != 0) {
      return fail_at(r, line, col, e, "expected a %s, found '%s'", t->name, name);
    }
    if (!eat(r, '{')) {
      char what[80];
      snprintf(what, sizeof what, "'{' starting a %s", t->name);
      return expected(r, e, what);
    }
    unsigned char seen[RN_MAX_DEPTH * 4] = {0};
    int count = 0;
    for (;;) {
      skip_space(r);
      if (count > 0 && eat(r, '}')) {
        break;
      }
      line = r->line, col = r->col;
      if (!read_name(r, name, sizeof name)) {
        return expected(r, e, "a field name");
      }
      int f = -1;
      for (int i = 0; i < t->count; i++) {
        if (strcmp(t->fields[i], name) == 0) {
          f = i;
        }
      }
      if (f < 0) {
        return fail_at(r, line, col, e, "%s has no field '%s'", t->name, name);
      }
      if (f < (int)sizeof seen && seen[f]) {
        return fail_at(r, line, col, e, "field '%s' given twice", name);
      }
      if (f < (int)sizeof seen) {
        seen[f] = 1;
      }
      if (!eat(r, ':')) {
        return expected(r, e, "':' after the field name");
      }
      if (read_value(r, t->members[f], cx, e)) {
        return -1;
      }
      count++;
      if (eat(r, ',')) {
        continue;
      }
      if (!eat(r, '}')) {
        return expected(r, e, "',' or '}'");
      }
      break;
    }
    for (int i = 0; i < t->count; i++) {
      if (i < (int)sizeof seen && !seen[i]) {
        return fail_at(r, r->line, r->col, e, "missing field '%s' of %s", t->fields[i], t->name);
      }
    }
    return 0;
  }
  }
  return -1;
}

int rn_text_read(RnReader *r, const RnType *t, GpucValue *comps, RnError *e)
{
  int n = t->ncomp;
  RnBuf *bufs = calloc((size_t)n, sizeof *bufs);
  int64_t (*shape)[2] = calloc((size_t)n, sizeof *shape);
  RnComp *info = calloc((size_t)n, sizeof *info);
  if (!bufs || !shape || !info) {
    free(bufs);
    free(shape);
    free(info);
    rn_err(e, "out of memory");
    return -1;
  }
  rn_type_components(t, "", 0, info);
  for (int i = 0; i < n; i++) {
    bufs[i].size = gpuc_kind_size(info[i].kind);
  }
  ReadCtx cx = {bufs, shape};
  skip_space(r);
  int rc;
  if (r->pos >= r->len) {
    rc = expected(r, e, "a value");
  } else {
    rc = read_value(r, t, &cx, e);
  }
  for (int i = 0; i < n; i++) {
    comps[i].kind = info[i].kind;
    comps[i].rank = info[i].rank;
    comps[i].shape[0] = info[i].rank >= 1 ? shape[i][0] : 0;
    comps[i].shape[1] = info[i].rank == 2 ? shape[i][1] : 0;
    comps[i].data = bufs[i].data;
    if (rc == 0 && !comps[i].data && !(comps[i].data = malloc(1))) {
      rn_err(e, "out of memory");
      rc = -1;
    }
  }
  if (rc != 0) {
    rn_values_free(comps, n);
  }
  free(bufs);
  free(shape);
  free(info);
  return rc;
}

/* ---- writing ---- */

/* Fewest significant digits (up to max) that read back to x, then plain
 * notation for moderate exponents, else d.ddde[-]X; always looks like a float. */
static void format_float(double x, bool single, char *buf, size_t size)
{
  if (isnan(x)) {
    snprintf(buf, size, "nan");
    return;
  }
  if (isinf(x)) {
    snprintf(buf, size, x > 0 ? "inf" : "-inf");
    return;
  }
  /* Round-tripping is monotone in the digit count: binary search for the
   * fewest digits in 1..max (max always round-trips). */
  int lo = 1, hi = single ? 9 : 17, p;
  char tmp[64];
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    snprintf(tmp, sizeof tmp, "%.*e", mid - 1, x);
    if (single ? strtof(tmp, NULL) == (float)x : strtod(tmp, NULL) == x) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  p = lo;
  snprintf(tmp, sizeof tmp, "%.*e", p - 1, x);
  int exp10 = atoi(strchr(tmp, 'e') + 1);
  if (exp10 >= -5 && exp10 < 16 && size >= 48) {
    /* Plain notation built from the p significant digits themselves:
     * printing the binary value with %f would show more digits than p
     * (81133346816.0 for the f32 8.113335e10). */
    char digits[32];
    int nd = 0;
    for (const char *c = tmp; *c != 'e' && nd < 31; c++) {
      if (*c >= '0' && *c <= '9') {
        digits[nd++] = *c;
      }
    }
    char *o = buf;
    if (signbit(x)) {
      *o++ = '-';
    }
    if (exp10 < 0) {                  /* 0.000ddd */
      *o++ = '0';
      *o++ = '.';
      for (int i = 0; i < -exp10 - 1; i++) {
        *o++ = '0';
      }
      memcpy(o, digits, (size_t)nd);
      o += nd;
    } else if (exp10 >= nd - 1) {     /* ddd000.0 */
      memcpy(o, digits, (size_t)nd);
      o += nd;
      for (int i = 0; i < exp10 - (nd - 1); i++) {
        *o++ = '0';
      }
      *o++ = '.';
      *o++ = '0';
    } else {                          /* dd.ddd */
      memcpy(o, digits, (size_t)exp10 + 1);
      o += exp10 + 1;
      *o++ = '.';
      memcpy(o, digits + exp10 + 1, (size_t)(nd - exp10 - 1));
      o += nd - exp10 - 1;
    }
    *o = '\0';
    return;
  }
  /* 1.5e+20 -> 1.5e20, 1e-06 -> 1e-6 */
  char *ep = strchr(tmp, 'e');
  *ep = '\0';
  snprintf(buf, size, "%se%d", tmp, exp10);
}

void rn_format_f32(float x, char *buf, size_t size)
{
  format_float(x, true, buf, size);
}

void rn_format_f64(double x, char *buf, size_t size)
{
  format_float(x, false, buf, size);
}

static void write_scalar(FILE *out, const GpucValue *v, int64_t i)
{
  char buf[64];
  switch (v->kind) {
  case GPUC_KIND_BOOL:
    fputs(((const unsigned char *)v->data)[i] ? "true" : "false", out);
    break;
  case GPUC_KIND_I32:
    fprintf(out, "%" PRId32, ((const int32_t *)v->data)[i]);
    break;
  case GPUC_KIND_I64:
    fprintf(out, "%" PRId64, ((const int64_t *)v->data)[i]);
    break;
  case GPUC_KIND_U32:
    fprintf(out, "%" PRIu32, ((const uint32_t *)v->data)[i]);
    break;
  case GPUC_KIND_U64:
    fprintf(out, "%" PRIu64, ((const uint64_t *)v->data)[i]);
    break;
  case GPUC_KIND_F32:
    rn_format_f32(((const float *)v->data)[i], buf, sizeof buf);
    fputs(buf, out);
    break;
  case GPUC_KIND_F64:
    rn_format_f64(((const double *)v->data)[i], buf, sizeof buf);
    fputs(buf, out);
    break;
  }
}

/* Write element i of t (i = 0 outside arrays); comps are the top value's. */
static void write_value(FILE *out, const RnType *t, const GpucValue *comps, int64_t i)
{
  switch (t->tag) {
  case RN_SCALAR:
    write_scalar(out, &comps[t->first], i);
    break;
  case RN_TUPLE:
    fputc('(', out);
    for (int k = 0; k < t->count; k++) {
      fputs(k ? ", " : "", out);
      write_value(out, t->members[k], comps, i);
    }
    fputc(')', out);
    break;
  case RN_STRUCT:
    fprintf(out, "%s { ", t->name);
    for (int k = 0; k < t->count; k++) {
      fprintf(out, "%s%s: ", k ? ", " : "", t->fields[k]);
      write_value(out, t->members[k], comps, i);
    }
    fputs(" }", out);
    break;
  case RN_ARRAY: {
    const GpucValue *v = &comps[t->first];
    if (t->rank == 1) {
      fputc('[', out);
      for (int64_t k = 0; k < v->shape[0]; k++) {
        fputs(k ? ", " : "", out);
        write_value(out, t->elem, comps, k);
      }
      fputc(']', out);
    } else if (v->shape[0] == 0 || v->shape[1] == 0) {
      /* No elements: print the shape, not a row of "[]" per row. */
      fprintf(out, "empty(%" PRId64 ", %" PRId64 ")", v->shape[0], v->shape[1]);
    } else {
      fputc('[', out);
      for (int64_t row = 0; row < v->shape[0]; row++) {
        fputs(row ? ", [" : "[", out);
        for (int64_t k = 0; k < v->shape[1]; k++) {
          fputs(k ? ", " : "", out);
          write_value(out, t->elem, comps, row * v->shape[1] + k);
        }
        fputc(']', out);
      }
      fputc(']', out);
    }
    break;
  }
  }
}

void rn_text_write(FILE *out, const RnType *t, const GpucValue *comps)
{
  write_value(out, t, comps - t->first, 0);
}

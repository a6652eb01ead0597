/* rn_npy.c: NumPy .npy files, read and written. Reads format versions 1.0,
 * 2.0 and 3.0 with dtypes <i4 <i8 <u4 <u8 <f4 <f8 |b1, rank 0 to 2, C order;
 * validates the header dictionary (exactly descr, fortran_order, shape), and
 * checks the data length against the shape before allocating anything, so a
 * lying header cannot make the reader allocate more than the file holds.
 * Writes version 1.0, little-endian, C order, header padded to 64 bytes.
 * Format: https://numpy.org/devdocs/reference/generated/numpy.lib.format.html */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "runner.h"

#define NPY_MAX_HEADER ((size_t)1 << 20)

/* grep "ORDER KIND" */
static const char *const descrs[] = {"|b1", "<i4", "<i8", "<u4", "<u8", "<f4", "<f8"};

const char *rn_npy_descr(GpucKind kind)
{
  return (unsigned)kind < 7 ? descrs[kind] : "?";
}

typedef struct NpyHeader {
  GpucKind kind;
  int rank;
  int64_t shape[2];
  size_t data_offset;   /* bytes before the data */
  size_t data_bytes;    /* bytes the shape needs */
} NpyHeader;

typedef struct DictParser {
  const char *s;
  size_t len, pos;
} DictParser;

static void dskip(DictParser *p)
{
  while (p->pos < p->len && (p->s[p->pos] == ' ' || p->s[p->pos] == '\t' || p->s[p->pos] == '\n' || p->s[p->pos] == '\r')) {
    p->pos++;
  }
}

static bool deat(DictParser *p, char c)
{
  dskip(p);
  if (p->pos < p->len && p->s[p->pos] == c) {
    p->pos++;
    return true;
  }
  return false;
}

/* A Python string literal in ' or " quotes (no escapes needed for our keys). */
static bool dstring(DictParser *p, char *out, size_t size)
{
  dskip(p);
  if (p->pos >= p->len || (p->s[p->pos] != '\'' && p->s[p->pos] != '"')) {
    return false;
  }
  char q = p->s[p->pos++];
  size_t n = 0;
  while (p->pos < p->len && p->s[p->pos] != q) {
    if (n + 1 >= size) {
      return false;
    }
    out[n++] = p->s[p->pos++];
  }
  if (p->pos >= p->len) {
    return false;
  }
  p->pos++;
  out[n] = '\0';
  return true;
}

static bool dword(DictParser *p, const char *w)
{
  dskip(p);
  size_t n = strlen(w);
  if (p->len - p->pos >= n && memcmp(p->s + p->pos, w, n) == 0) {
    p->pos += n;
    return true;
  }
  return false;
}

static int parse_descr(const char *d, GpucKind *kind, RnError *e)
{
  for (int k = 0; k < 7; k++) {
    if (strcmp(d, descrs[k]) == 0) {
      *kind = (GpucKind)k;
      return 0;
    }
  }
  if (d[0] == '>' && d[1] != '\0') {
    rn_err(e, "big-endian dtype '%s' is not supported (convert it with a.astype('<%s'))", d, d + 1);
  } else if (strcmp(d, "=b1") == 0 || strcmp(d, "<b1") == 0) {
    *kind = GPUC_KIND_BOOL;
    return 0;
  } else {
    rn_err(e, "dtype '%s' is not supported (supported: <i4 <i8 <u4 <u8 <f4 <f8 |b1)", d);
  }
  return -1;
}

/* Parse the magic, version and header dictionary from buf (at least the
 * header's bytes, len of them). */
static int parse_header(const unsigned char *buf, size_t len, NpyHeader *h, RnError *e)
{
  memset(h, 0, sizeof *h);
  if (len < 6 || memcmp(buf, "\x93NUMPY", 6) != 0) {
    rn_err(e, "not a .npy file (no \\x93NUMPY magic)");
    return -1;
  }
  if (len < 10) {
    rn_err(e, "truncated .npy header");
    return -1;
  }
  int major = buf[6], minor = buf[7];
  if (major < 1 || major > 3 || minor != 0) {
    rn_err(e, ".npy format version %d.%d is not supported (1.0, 2.0 and 3.0 are)", major, minor);
    return -1;
  }
  size_t hlen, start;
  if (major == 1) {
    hlen = (size_t)buf[8] | (size_t)buf[9] << 8;
    start = 10;
  } else {
    if (len < 12) {
      rn_err(e, "truncated .npy header");
      return -1;
    }
    hlen = (size_t)buf[8] | (size_t)buf[9] << 8 | (size_t)buf[10] << 16 | (size_t)buf[11] << 24;
    start = 12;
  }
  if (hlen > NPY_MAX_HEADER) {
    rn_err(e, ".npy header of %zu bytes is longer than the limit of %zu", hlen, (size_t)NPY_MAX_HEADER);
    return -1;
  }
  if (len - start < hlen) {
    rn_err(e, "truncated .npy header (%zu of %zu bytes)", len - start, hlen);
    return -1;
  }
  DictParser p = {(const char *)buf + start, hlen, 0};
  bool have_descr = false, have_order = false, have_shape = false, fortran = false;
  char descr[32] = "";
  if (!deat(&p, '{')) {
    rn_err(e, "malformed .npy header: expected a dictionary");
    return -1;
  }
  while (!deat(&p, '}')) {
    char key[32];
    if (!dstring(&p, key, sizeof key) || !deat(&p, ':')) {
      rn_err(e, "malformed .npy header: expected 'key': value");
      return -1;
    }
    if (strcmp(key, "descr") == 0 && !have_descr) {
      if (!dstring(&p, descr, sizeof descr)) {
        dskip(&p);
        if (p.pos < p.len && p.s[p.pos] == '[') {
          rn_err(e, "structured dtypes are not supported");
        } else {
          rn_err(e, "malformed .npy header: bad 'descr'");
        }
        return -1;
      }
      have_descr = true;
    } else if (strcmp(key, "fortran_order") == 0 && !have_order) {
      if (dword(&p, "True")) {
        fortran = true;
      } else if (!dword(&p, "False")) {
        rn_err(e, "malformed .npy header: 'fortran_order' is not True or False");
        return -1;
      }
      have_order = true;
    } else if (strcmp(key, "shape") == 0 && !have_shape) {
      if (!deat(&p, '(')) {
        rn_err(e, "malformed .npy header: 'shape' is not a tuple");
        return -1;
      }
      int rank = 0;
      while (!deat(&p, ')')) {
        dskip(&p);
        uint64_t v = 0;
        size_t digits = 0;
        while (p.pos < p.len && p.s[p.pos] >= '0' && p.s[p.pos] <= '9') {
          if (v > (uint64_t)INT64_MAX / 10) {
            rn_err(e, "malformed .npy header: a dimension is too large");
            return -1;
          }
          v = v * 10 + (uint64_t)(p.s[p.pos++] - '0');
          digits++;
        }
        if (digits == 0 || v > (uint64_t)INT64_MAX) {
          rn_err(e, "malformed .npy header: bad 'shape'");
          return -1;
        }
        deat(&p, 'L');
        if (rank < 2) {
          h->shape[rank] = (int64_t)v;
        }
        rank++;
        if (rank > 32) {
          rn_err(e, "malformed .npy header: bad 'shape'");
          return -1;
        }
        if (!deat(&p, ',')) {
          if (!deat(&p, ')')) {
            rn_err(e, "malformed .npy header: bad 'shape'");
            return -1;
          }
          break;
        }
      }
      if (rank > 2) {
        rn_err(e, "arrays of rank %d are not supported (rank 0, 1 or 2)", rank);
        return -1;
      }
      h->rank = rank;
      have_shape = true;
    } else {
      rn_err(e, "malformed .npy header: unexpected key '%s'", key);
      return -1;
    }
    if (!deat(&p, ',')) {
      if (!deat(&p, '}')) {
        rn_err(e, "malformed .npy header: expected ',' or '}'");
        return -1;
      }
      break;
    }
  }
  if (!have_descr || !have_order || !have_shape) {
    rn_err(e, "malformed .npy header: missing '%s'", !have_descr ? "descr" : !have_order ? "fortran_order" : "shape");
    return -1;
  }
  dskip(&p);
  if (p.pos != p.len) {
    rn_err(e, "malformed .npy header: text after the dictionary");
    return -1;
  }
  if (parse_descr(descr, &h->kind, e)) {
    return -1;
  }
  if (fortran && h->rank == 2) {
    rn_err(e, "Fortran-order arrays are not supported (save a C-order array: np.save(f, np.ascontiguousarray(a)))");
    return -1;
  }
  uint64_t count = 1;
  for (int i = 0; i < h->rank; i++) {
    uint64_t d = (uint64_t)h->shape[i];
    if (d != 0 && count > (uint64_t)(RN_MAX_INPUT_BYTES * 8) / d) {
      rn_err(e, "shape is too large");
      return -1;
    }
    count *= d;
  }
  h->data_offset = start + hlen;
  h->data_bytes = (size_t)count * gpuc_kind_size(h->kind);
  return 0;
}

static void shape_text(const NpyHeader *h, char *buf, size_t size)
{
  if (h->rank == 0) {
    snprintf(buf, size, "()");
  } else if (h->rank == 1) {
    snprintf(buf, size, "(%" PRId64 ",)", h->shape[0]);
  } else {
    snprintf(buf, size, "(%" PRId64 ", %" PRId64 ")", h->shape[0], h->shape[1]);
  }
}

/* Check that `have` bytes of data follow the header; fill v's shape. */
static int check_length(const NpyHeader *h, size_t have, GpucValue *v, RnError *e)
{
  char shape[64];
  shape_text(h, shape, sizeof shape);
  if (have < h->data_bytes) {
    rn_err(e, "truncated: shape %s of %s needs %zu bytes of data but the file has %zu", shape, descrs[h->kind],
           h->data_bytes, have);
    return -1;
  }
  if (have > h->data_bytes) {
    rn_err(e, "%zu bytes after the data of shape %s (the file is longer than its header says)", have - h->data_bytes,
           shape);
    return -1;
  }
  v->kind = h->kind;
  v->rank = h->rank;
  v->shape[0] = h->rank >= 1 ? h->shape[0] : 0;
  v->shape[1] = h->rank == 2 ? h->shape[1] : 0;
  v->data = NULL;
  return 0;
}

static void normalize_bools(GpucValue *v, size_t bytes)
{
  if (v->kind == GPUC_KIND_BOOL) {
    unsigned char *b = v->data;
    for (size_t i = 0; i < bytes; i++) {
      b[i] = b[i] != 0;
    }
  }
}

int rn_npy_read_mem(const unsigned char *buf, size_t len, GpucValue *v, RnError *e)
{
  NpyHeader h;
  memset(v, 0, sizeof *v);
  if (parse_header(buf, len, &h, e) || check_length(&h, len - h.data_offset, v, e)) {
    return -1;
  }
  v->data = malloc(h.data_bytes ? h.data_bytes : 1);
  if (!v->data) {
    rn_err(e, "out of memory (%zu bytes)", h.data_bytes);
    return -1;
  }
  if (h.data_bytes) {
    memcpy(v->data, buf + h.data_offset, h.data_bytes);
  }
  normalize_bools(v, h.data_bytes);
  return 0;
}

/* A pipe or device: read it all, then parse from memory. */
static int read_stream(const char *path, GpucValue *v, RnError *e)
{
  size_t len;
  char *all = rn_read_all(path, &len, e);
  if (!all) {
    return -1;
  }
  int rc = rn_npy_read_mem((const unsigned char *)all, len, v, e);
  free(all);
  return rc;
}

int rn_npy_read_file(const char *path, GpucValue *v, RnError *e)
{
  int64_t rows;
  return rn_npy_read_part(path, 0, 1, v, &rows, e);
}

int rn_npy_write(FILE *out, const GpucValue *v, RnError *e)
{
  char dict[256];
  int n;
  if (v->rank == 0) {
    n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (), }", descrs[v->kind]);
  } else if (v->rank == 1) {
    n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (%" PRId64 ",), }",
                 descrs[v->kind], v->shape[0]);
  } else {
    n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (%" PRId64 ", %" PRId64 "), }",
                 descrs[v->kind], v->shape[0], v->shape[1]);
  }
  size_t total = 10 + (size_t)n + 1;           /* magic, version, length, dict, newline */
  size_t pad = (64 - total % 64) % 64;
  size_t hlen = (size_t)n + pad + 1;
  unsigned char head[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(hlen & 0xff),
                            (unsigned char)(hlen >> 8)};
  size_t bytes = (size_t)gpuc_value_count(v) * gpuc_kind_size(v->kind);
  bool ok = fwrite(head, 1, 10, out) == 10 && fwrite(dict, 1, (size_t)n, out) == (size_t)n;
  for (size_t i = 0; ok && i < pad; i++) {
    ok = fputc(' ', out) != EOF;
  }
  ok = ok && fputc('\n', out) != EOF;
  ok = ok && (bytes == 0 || fwrite(v->data, 1, bytes, out) == bytes);
  if (!ok) {
    rn_err(e, "write error: %s", strerror(errno));
    return -1;
  }
  return 0;
}

/* Rows [lo, hi) of v, moved to the front of its buffer (the rest freed). */
static int keep_rows(GpucValue *v, int64_t lo, int64_t hi, RnError *e)
{
  size_t row = (size_t)(v->rank == 2 ? v->shape[1] : 1) * gpuc_kind_size(v->kind);
  size_t bytes = (size_t)(hi - lo) * row;
  if (lo > 0 && bytes) {
    memmove(v->data, (char *)v->data + (size_t)lo * row, bytes);
  }
  void *smaller = realloc(v->data, bytes ? bytes : 1);
  if (!smaller) {
    rn_err(e, "out of memory");
    return -1;
  }
  v->data = smaller;
  v->shape[0] = hi - lo;
  return 0;
}

int rn_npy_read_part(const char *path, int part, int parts, GpucValue *v, int64_t *rows, RnError *e)
{
  memset(v, 0, sizeof *v);
  *rows = -1;
  FILE *f = fopen(path, "rb");
  if (!f) {
    rn_err(e, "cannot open: %s", strerror(errno));
    return -1;
  }
  struct stat st;
  if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
    /* A pipe or device: read it all, then keep this part. */
    fclose(f);
    if (read_stream(path, v, e)) {
      return -1;
    }
    if (v->rank >= 1) {
      *rows = v->shape[0];
      if (keep_rows(v, *rows * part / parts, *rows * (part + 1) / parts, e)) {
        free(v->data);
        v->data = NULL;
        return -1;
      }
    }
    return 0;
  }
  size_t size = (size_t)st.st_size;
  size_t prefix_len = size < 12 + NPY_MAX_HEADER ? size : 12 + NPY_MAX_HEADER;
  unsigned char *prefix = malloc(prefix_len ? prefix_len : 1);
  NpyHeader h;
  int rc = -1;
  if (!prefix) {
    rn_err(e, "out of memory");
  } else if (fread(prefix, 1, prefix_len, f) != prefix_len) {
    rn_err(e, "read error: %s", strerror(errno));
  } else if (parse_header(prefix, prefix_len, &h, e) == 0 && check_length(&h, size - h.data_offset, v, e) == 0) {
    int64_t lo = 0, hi = 1;
    size_t row = h.data_bytes;
    if (h.rank >= 1) {
      *rows = h.shape[0];
      lo = *rows * part / parts;
      hi = *rows * (part + 1) / parts;
      row = (size_t)(h.rank == 2 ? h.shape[1] : 1) * gpuc_kind_size(h.kind);
      v->shape[0] = hi - lo;
    }
    size_t bytes = (size_t)(hi - lo) * row;
    v->data = malloc(bytes ? bytes : 1);
    if (!v->data) {
      rn_err(e, "out of memory (%zu bytes)", bytes);
    } else if (fseeko(f, (off_t)(h.data_offset + (size_t)lo * row), SEEK_SET) != 0 ||
               fread(v->data, 1, bytes, f) != bytes) {
      rn_err(e, "read error: %s", strerror(errno));
      free(v->data);
      v->data = NULL;
    } else {
      normalize_bools(v, bytes);
      rc = 0;
    }
  }
  free(prefix);
  fclose(f);
  return rc;
}

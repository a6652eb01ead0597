/* rn_util.c: small pieces every runner file uses: first-error-wins messages,
 * growable buffers, kind names, reading whole inputs with a size limit, the
 * clock and row helpers of --ranks, and
 * the value helpers gpuc_program.h exports to generated code. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "runner.h"

void rn_err(RnError *e, const char *fmt, ...)
{
  if (!e || e->set) {
    return;
  }
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(e->msg, sizeof e->msg, fmt, ap);
  va_end(ap);
  e->set = true;
}

void rn_err_prefix(RnError *e, const char *fmt, ...)
{
  if (!e || !e->set) {
    return;
  }
  char prefix[512], old[sizeof e->msg];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(prefix, sizeof prefix, fmt, ap);
  va_end(ap);
  memcpy(old, e->msg, sizeof old);
  size_t n = strlen(prefix);
  if (n + 2 < sizeof e->msg) {
    memcpy(e->msg, prefix, n);
    memcpy(e->msg + n, ": ", 2);
    size_t room = sizeof e->msg - n - 3, m = strlen(old);
    if (m > room) {
      m = room;
    }
    memcpy(e->msg + n + 2, old, m);
    e->msg[n + 2 + m] = '\0';
  }
}

void *rn_buf_push(RnBuf *b)
{
  if (b->len == b->cap) {
    size_t cap = b->cap ? b->cap * 2 : 16;
    if (cap > SIZE_MAX / b->size) {
      return NULL;
    }
    unsigned char *data = realloc(b->data, cap * b->size);
    if (!data) {
      return NULL;
    }
    b->data = data;
    b->cap = cap;
  }
  void *slot = b->data + b->len * b->size;
  memset(slot, 0, b->size);
  b->len++;
  return slot;
}

/* grep "ORDER KIND" if you change these */
static const char *const kind_names[] = {"bool", "i32", "i64", "u32", "u64", "f32", "f64"};
static const size_t kind_sizes[] = {1, 4, 8, 4, 8, 4, 8};

const char *rn_kind_name(GpucKind kind)
{
  return (unsigned)kind < 7 ? kind_names[kind] : "?";
}

size_t gpuc_kind_size(GpucKind kind)
{
  return (unsigned)kind < 7 ? kind_sizes[kind] : 0;
}

int64_t gpuc_value_count(const GpucValue *v)
{
  if (v->rank == 0) {
    return 1;
  }
  if (v->rank == 1) {
    return v->shape[0];
  }
  return v->shape[0] * v->shape[1];
}

int gpuc_value_alloc(GpucValue *v)
{
  free(v->data);
  v->data = NULL;
  if (v->rank < 0 || v->rank > 2) {
    return -1;
  }
  size_t n = 1;
  for (int i = 0; i < v->rank; i++) {
    if (v->shape[i] < 0) {
      return -1;
    }
  }
  for (int i = 0; i < v->rank && n > 0; i++) {
    if (v->shape[i] > 0 && n > (SIZE_MAX / 16) / (size_t)v->shape[i]) {
      return -1;
    }
    n *= (size_t)v->shape[i];
  }
  size_t bytes = n * gpuc_kind_size(v->kind);
  v->data = calloc(bytes ? bytes : 1, 1);
  return v->data ? 0 : -1;
}

void rn_values_free(GpucValue *v, int n)
{
  for (int i = 0; v && i < n; i++) {
    free(v[i].data);
    v[i].data = NULL;
  }
}

char *rn_read_all(const char *path, size_t *len, RnError *e)
{
  FILE *f = path ? fopen(path, "rb") : stdin;
  if (!f) {
    rn_err(e, "cannot open: %s", strerror(errno));
    return NULL;
  }
  size_t cap = 1 << 16, n = 0;
  struct stat st;
  if (path && fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_size < RN_MAX_INPUT_BYTES) {
    cap = (size_t)st.st_size + 1;
  }
  char *buf = malloc(cap);
  while (buf) {
    if (n + 1 >= cap) {
      if (cap >= RN_MAX_INPUT_BYTES) {
        rn_err(e, "input is larger than the limit of %zu bytes", (size_t)RN_MAX_INPUT_BYTES);
        free(buf);
        buf = NULL;
        break;
      }
      char *bigger = realloc(buf, cap * 2);
      if (!bigger) {
        free(buf);
        buf = NULL;
        break;
      }
      buf = bigger;
      cap *= 2;
    }
    size_t got = fread(buf + n, 1, cap - n - 1, f);
    n += got;
    if (got == 0) {
      if (ferror(f)) {
        rn_err(e, "read error: %s", strerror(errno));
        free(buf);
        buf = NULL;
      }
      break;
    }
  }
  if (path) {
    fclose(f);
  }
  if (!buf) {
    rn_err(e, "out of memory reading the input");
    return NULL;
  }
  buf[n] = '\0';
  *len = n;
  return buf;
}

double rn_now_us(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

int64_t rn_row_len(const GpucValue *v)
{
  return v->rank == 2 ? v->shape[1] : 1;
}

int rn_value_shaped(GpucValue *to, int64_t rows, int64_t cols)
{
  if (to->data && to->shape[0] == rows && (to->rank < 2 || to->shape[1] == cols)) {
    return 0;
  }
  to->shape[0] = rows;
  if (to->rank == 2) {
    to->shape[1] = cols;
  }
  return gpuc_value_alloc(to);
}

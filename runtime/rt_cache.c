/* rt_cache.c: the on-disk cache of compiled kernels (CuPy's and Triton's
 * design). An entry is <dir>/<sha256 key in hex>.bin holding a header (magic,
 * the key again, payload size, payload SHA-256) and the payload. Entries are
 * written to a temporary file in the same directory and renamed into place, so
 * readers see a whole entry or none; every read is verified, and an entry that
 * is truncated, corrupt or belongs to another key is rejected (and rebuilt by
 * the caller). The cache only speeds things up: any failure falls back to
 * compiling. Directory: $GPUC_CACHE_DIR, else $XDG_CACHE_HOME/gpuc, else
 * $HOME/.cache/gpuc; GPUC_CACHE=0 disables it. */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rt_internal.h"

#define MAGIC "GPUCKC01"
#define HEADER_SIZE (8 + 32 + 8 + 32)
#define MAX_ENTRY ((size_t)1 << 30)

static atomic_size_t n_hits, n_misses, n_rejected, n_writes, n_write_failures;

void gpuc_cache_counters(GpucCacheCounters *c) {
  if (!c) {
    return;
  }
  c->hits = atomic_load(&n_hits);
  c->misses = atomic_load(&n_misses);
  c->rejected = atomic_load(&n_rejected);
  c->writes = atomic_load(&n_writes);
  c->write_failures = atomic_load(&n_write_failures);
}

/* mkdir -p; true when path is a directory afterwards. */
static bool make_dirs(char *path) {
  for (char *p = path + 1; *p; p++) {
    if (*p == '/') {
      *p = '\0';
      (void)mkdir(path, 0755);
      *p = '/';
    }
  }
  (void)mkdir(path, 0755);
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

const char *rt_cache_dir(char *buf, size_t size) {
  const char *v = getenv("GPUC_CACHE");
  if (v && strcmp(v, "0") == 0) {
    return NULL;
  }
  const char *dir = getenv("GPUC_CACHE_DIR");
  const char *xdg = getenv("XDG_CACHE_HOME");
  const char *home = getenv("HOME");
  int n;
  if (dir && *dir) {
    n = snprintf(buf, size, "%s", dir);
  } else if (xdg && *xdg) {
    n = snprintf(buf, size, "%s/gpuc", xdg);
  } else if (home && *home) {
    n = snprintf(buf, size, "%s/.cache/gpuc", home);
  } else {
    return NULL;
  }
  if (n <= 0 || (size_t)n >= size) {
    return NULL;
  }
  while (n > 1 && buf[n - 1] == '/') {
    buf[--n] = '\0';
  }
  return make_dirs(buf) ? buf : NULL;
}

const char *gpuc_cache_dir(char *buf, size_t size) {
  if (!buf || size == 0) {
    return NULL;
  }
  return rt_cache_dir(buf, size);
}

static bool entry_path(const unsigned char key[32], char *path, size_t size) {
  char dir[4096], hex[65];
  if (!rt_cache_dir(dir, sizeof dir)) {
    return false;
  }
  rt_hex(key, 32, hex);
  int n = snprintf(path, size, "%s/%s.bin", dir, hex);
  return n > 0 && (size_t)n < size;
}

static void put_u64(unsigned char *p, uint64_t v) {
  for (int i = 0; i < 8; i++) {
    p[i] = (unsigned char)(v >> (8 * i));
  }
}

static uint64_t get_u64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) {
    v |= (uint64_t)p[i] << (8 * i);
  }
  return v;
}

static void reject(const char *path, const char *why) {
  atomic_fetch_add(&n_rejected, 1);
  if (rt_env_flag("GPUC_DEBUG")) {
    fprintf(stderr, "gpuc: cache: rejected %s: %s; rebuilding\n", path, why);
  }
}

bool rt_cache_get(const unsigned char key[32], void **data, size_t *size) {
  char path[4200];
  if (!entry_path(key, path, sizeof path)) {
    return false;
  }
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    atomic_fetch_add(&n_misses, 1);
    return false;
  }
  struct stat st;
  unsigned char *buf = NULL;
  const char *why = NULL;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    why = "not a regular file";
  } else if ((size_t)st.st_size < HEADER_SIZE) {
    why = "truncated header";
  } else if ((size_t)st.st_size > MAX_ENTRY) {
    why = "too large";
  } else if (!(buf = malloc((size_t)st.st_size))) {
    why = "out of host memory";
  } else {
    size_t got = 0;
    while (got < (size_t)st.st_size) {
      ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);
      if (r < 0 && errno == EINTR) {
        continue;
      }
      if (r <= 0) {
        break;
      }
      got += (size_t)r;
    }
    if (got != (size_t)st.st_size) {
      why = "short read";
    } else if (memcmp(buf, MAGIC, 8) != 0) {
      why = "bad magic (not a gpuc cache entry)";
    } else if (memcmp(buf + 8, key, 32) != 0) {
      why = "entry belongs to another key";
    } else if (get_u64(buf + 40) != (uint64_t)st.st_size - HEADER_SIZE) {
      why = "truncated or extended payload";
    } else {
      unsigned char sum[32];
      rt_sha256(buf + HEADER_SIZE, (size_t)st.st_size - HEADER_SIZE, sum);
      if (memcmp(sum, buf + 48, 32) != 0) {
        why = "checksum mismatch (corrupt payload)";
      }
    }
  }
  close(fd);
  if (why) {
    free(buf);
    reject(path, why);
    return false;
  }
  size_t n = (size_t)st.st_size - HEADER_SIZE;
  /* One byte more, zeroed, so PTX payloads are NUL-terminated. */
  unsigned char *out = malloc(n + 1);
  if (!out) {
    free(buf);
    return false;
  }
  memcpy(out, buf + HEADER_SIZE, n);
  out[n] = 0;
  free(buf);
  *data = out;
  *size = n;
  atomic_fetch_add(&n_hits, 1);
  return true;
}

static bool write_all(int fd, const void *data, size_t size) {
  const unsigned char *p = data;
  while (size > 0) {
    ssize_t w = write(fd, p, size);
    if (w < 0 && errno == EINTR) {
      continue;
    }
    if (w <= 0) {
      return false;
    }
    p += w;
    size -= (size_t)w;
  }
  return true;
}

void rt_cache_put(const unsigned char key[32], const void *data, size_t size) {
  char path[4200], tmp[4300];
  if (!entry_path(key, path, sizeof path)) {
    return;
  }
  /* Same directory, so rename() is atomic; the dot keeps it out of the way. */
  char *slash = strrchr(path, '/');
  snprintf(tmp, sizeof tmp, "%.*s/.%s.tmp.XXXXXX", (int)(slash - path), path, slash + 1);
  int fd = mkstemp(tmp);
  if (fd < 0) {
    atomic_fetch_add(&n_write_failures, 1);
    return;
  }
  unsigned char header[HEADER_SIZE];
  memcpy(header, MAGIC, 8);
  memcpy(header + 8, key, 32);
  put_u64(header + 40, size);
  rt_sha256(data, size, header + 48);
  bool ok = write_all(fd, header, sizeof header) && write_all(fd, data, size);
  ok = (fchmod(fd, 0644) == 0) && ok;
  ok = (close(fd) == 0) && ok;
  if (ok && rename(tmp, path) == 0) {
    atomic_fetch_add(&n_writes, 1);
    return;
  }
  unlink(tmp);
  atomic_fetch_add(&n_write_failures, 1);
}

/* test_cache.c: the kernel cache through the offline compile path (no GPU):
 * SHA-256 against FIPS 180-4 vectors; keys that change with source, options
 * and arch; hits returning identical bytes; truncated, corrupt, foreign and
 * garbage entries rejected and rebuilt; an unwritable directory; GPUC_CACHE=0;
 * and several processes filling one directory at once. argv[1]: a scratch
 * directory (created). */
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rt_internal.h"
#include "rt_test.h"

static const char *src_a = "extern \"C\" __global__ void a(int *p) { p[threadIdx.x] = 1; }\n";
static const char *src_b = "extern \"C\" __global__ void b(int *p) { p[threadIdx.x] = 2; }\n";

static GpucCacheCounters counters(void) {
  GpucCacheCounters c;
  gpuc_cache_counters(&c);
  return c;
}

/* Compile and return the image (caller frees), checking success. */
static void *compile(const char *src, const char *arch, const char *opt, size_t *size) {
  void *image = NULL;
  const char *opts[1] = {opt};
  GpucStatus s = gpuc_compile_cuda_to_image(src, arch, opts, opt ? 1 : 0, &image, size, NULL);
  CHECK(s == GPUC_SUCCESS, "compile %s: %s", arch, gpuc_last_error());
  return image;
}

/* The single *.bin entry in dir (path into out), or how many there are. */
static int entries(const char *dir, char *out, size_t size, int *temps) {
  DIR *d = opendir(dir);
  int n = 0;
  *temps = 0;
  if (!d) {
    return 0;
  }
  struct dirent *e;
  while ((e = readdir(d))) {
    size_t len = strlen(e->d_name);
    if (len > 4 && strcmp(e->d_name + len - 4, ".bin") == 0 && e->d_name[0] != '.') {
      n++;
      if (out) {
        snprintf(out, size, "%s/%s", dir, e->d_name);
      }
    } else if (strstr(e->d_name, ".tmp.")) {
      (*temps)++;
    }
  }
  closedir(d);
  return n;
}

static void clear_dir(const char *dir) {
  DIR *d = opendir(dir);
  struct dirent *e;
  char path[4096];
  while (d && (e = readdir(d))) {
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
      snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
      unlink(path);
    }
  }
  if (d) {
    closedir(d);
  }
}

static long file_size(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

static void flip_byte(const char *path, long offset) {
  int fd = open(path, O_RDWR);
  unsigned char c;
  if (fd >= 0 && pread(fd, &c, 1, offset) == 1) {
    c ^= 0x5a;
    CHECK(pwrite(fd, &c, 1, offset) == 1, "pwrite");
  }
  if (fd >= 0) {
    close(fd);
  }
}

static void test_sha256(void) {
  static const struct {
    const char *msg;
    const char *hex;
  } v[] = {
    {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
    {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
    {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
     "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
  };
  for (size_t i = 0; i < 3; i++) {
    unsigned char out[32];
    char hex[65];
    rt_sha256(v[i].msg, strlen(v[i].msg), out);
    rt_hex(out, 32, hex);
    CHECK(strcmp(hex, v[i].hex) == 0, "sha256('%s') = %s", v[i].msg, hex);
  }
  /* One million 'a', fed in uneven pieces. */
  RtSha256 h;
  rt_sha256_init(&h);
  char chunk[997];
  memset(chunk, 'a', sizeof chunk);
  size_t left = 1000000;
  while (left) {
    size_t n = left < sizeof chunk ? left : sizeof chunk;
    rt_sha256_update(&h, chunk, n);
    left -= n;
  }
  unsigned char out[32];
  char hex[65];
  rt_sha256_final(&h, out);
  rt_hex(out, 32, hex);
  CHECK(strcmp(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0") == 0, "sha256(1M a) = %s", hex);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: test_cache SCRATCH_DIR\n");
    return 2;
  }
  test_sha256();

  char dir[2048], sub[2100], want[2200], got[4096];
  snprintf(dir, sizeof dir, "%s", argv[1]);

  /* Where the cache lives: GPUC_CACHE_DIR, else $XDG_CACHE_HOME/gpuc, else
   * $HOME/.cache/gpuc (created); GPUC_CACHE=0 turns it off. */
  unsetenv("GPUC_CACHE");
  unsetenv("GPUC_CACHE_DIR");
  setenv("HOME", dir, 1);
  unsetenv("XDG_CACHE_HOME");
  snprintf(want, sizeof want, "%s/.cache/gpuc", dir);
  CHECK(gpuc_cache_dir(got, sizeof got) && strcmp(got, want) == 0, "HOME: %s", got);
  snprintf(sub, sizeof sub, "%s/xdg", dir);
  setenv("XDG_CACHE_HOME", sub, 1);
  snprintf(want, sizeof want, "%s/xdg/gpuc", dir);
  CHECK(gpuc_cache_dir(got, sizeof got) && strcmp(got, want) == 0, "XDG_CACHE_HOME: %s", got);
  snprintf(sub, sizeof sub, "%s/explicit/", dir);
  setenv("GPUC_CACHE_DIR", sub, 1);
  snprintf(want, sizeof want, "%s/explicit", dir);
  CHECK(gpuc_cache_dir(got, sizeof got) && strcmp(got, want) == 0, "GPUC_CACHE_DIR: %s", got);
  setenv("GPUC_CACHE", "0", 1);
  CHECK(gpuc_cache_dir(got, sizeof got) == NULL, "GPUC_CACHE=0");
  unsetenv("GPUC_CACHE");
  snprintf(sub, sizeof sub, "%s/file", dir);
  FILE *blocker = fopen(sub, "w");
  if (blocker) {
    fclose(blocker);
  }
  snprintf(sub, sizeof sub, "%s/file/sub", dir);
  setenv("GPUC_CACHE_DIR", sub, 1);
  CHECK(gpuc_cache_dir(got, sizeof got) == NULL, "a path through a file: no cache");

  snprintf(sub, sizeof sub, "%s/cache", dir);
  setenv("GPUC_CACHE_DIR", sub, 1);
  unsetenv("GPUC_CACHE");
  clear_dir(sub);
  CHECK(gpuc_cache_dir(got, sizeof got) && strcmp(got, sub) == 0, "cache dir %s", got);

  /* Miss, write, then a hit with the same bytes. */
  GpucCacheCounters c0 = counters();
  size_t n1, n2;
  void *i1 = compile(src_a, "sm_90", "-DX=1", &n1);
  GpucCacheCounters c1 = counters();
  CHECK(c1.misses == c0.misses + 1 && c1.writes == c0.writes + 1, "first compile: a miss and a write");
  char entry[4096];
  int temps;
  CHECK(entries(sub, entry, sizeof entry, &temps) == 1 && temps == 0, "one entry, no temporary file");
  void *i2 = compile(src_a, "sm_90", "-DX=1", &n2);
  GpucCacheCounters c2 = counters();
  CHECK(c2.hits == c1.hits + 1 && c2.misses == c1.misses, "second compile: a hit");
  CHECK(n1 == n2 && i1 && i2 && memcmp(i1, i2, n1) == 0, "hit returns the same cubin");
  free(i2);
  printf("entry: %ld bytes for a %zu-byte cubin\n", file_size(entry), n1);

  /* The key covers options, arch and source. */
  free(compile(src_a, "sm_90", "-DX=2", &n2));
  free(compile(src_a, "sm_80", "-DX=1", &n2));
  free(compile(src_b, "sm_90", "-DX=1", &n2));
  free(compile(src_a, "compute_90", "-DX=1", &n2));
  GpucCacheCounters c3 = counters();
  CHECK(c3.misses == c2.misses + 4 && c3.hits == c2.hits, "4 different keys, 4 misses");
  CHECK(entries(sub, NULL, 0, &temps) == 5, "5 entries");

  /* A corrupt payload byte: rejected, rebuilt, then a hit again. */
  long size = file_size(entry);
  flip_byte(entry, size - 10);
  void *i3 = compile(src_a, "sm_90", "-DX=1", &n2);
  GpucCacheCounters c4 = counters();
  CHECK(c4.rejected == c3.rejected + 1 && c4.writes == c3.writes + 1, "corrupt entry rejected and rewritten");
  CHECK(n2 == n1 && memcmp(i1, i3, n1) == 0, "rebuilt image is right");
  free(i3);
  free(compile(src_a, "sm_90", "-DX=1", &n2));
  CHECK(counters().hits == c4.hits + 1, "hit after rebuild");

  /* A corrupt header byte (the stored checksum). */
  flip_byte(entry, 60);
  free(compile(src_a, "sm_90", "-DX=1", &n2));
  GpucCacheCounters c5 = counters();
  CHECK(c5.rejected == c4.rejected + 1, "corrupt checksum rejected");

  /* Truncated: payload cut short, and header cut short. */
  CHECK(truncate(entry, size / 2) == 0, "truncate");
  free(compile(src_a, "sm_90", "-DX=1", &n2));
  CHECK(truncate(entry, 20) == 0, "truncate");
  free(compile(src_a, "sm_90", "-DX=1", &n2));
  GpucCacheCounters c6 = counters();
  CHECK(c6.rejected == c5.rejected + 2, "truncated entries rejected");
  CHECK(file_size(entry) == size, "entry rebuilt whole");

  /* Foreign: another key's valid entry under this name. */
  char entry_b[4096];
  clear_dir(sub);
  free(compile(src_b, "sm_90", "-DX=1", &n2));
  entries(sub, entry_b, sizeof entry_b, &temps);
  free(compile(src_a, "sm_90", "-DX=1", &n2));
  CHECK(rename(entry_b, entry) == 0, "rename b over a");
  GpucCacheCounters c7 = counters();
  void *i4 = compile(src_a, "sm_90", "-DX=1", &n2);
  GpucCacheCounters c8 = counters();
  CHECK(c8.rejected == c7.rejected + 1, "foreign entry rejected");
  CHECK(n2 == n1 && memcmp(i1, i4, n1) == 0, "foreign entry not trusted");
  free(i4);

  /* Garbage and empty files. */
  FILE *fp = fopen(entry, "w");
  for (int k = 0; k < 20; k++) {
    fputs("this is not a cubin ", fp);
  }
  fclose(fp);
  free(compile(src_a, "sm_90", "-DX=1", &n2));
  fp = fopen(entry, "w");
  fclose(fp);
  free(compile(src_a, "sm_90", "-DX=1", &n2));
  CHECK(counters().rejected == c8.rejected + 2, "garbage and empty entries rejected");

  /* A directory in place of the entry. */
  unlink(entry);
  CHECK(mkdir(entry, 0755) == 0, "mkdir");
  free(compile(src_a, "sm_90", "-DX=1", &n2));
  CHECK(counters().rejected == c8.rejected + 3, "directory entry rejected");
  rmdir(entry);

  /* An unwritable cache directory: compiling still works, the write fails. */
  char ro[2100];
  if (geteuid() != 0) {
    snprintf(ro, sizeof ro, "%s/readonly", dir);
    mkdir(ro, 0755);
    chmod(ro, 0555);
  } else {
    snprintf(ro, sizeof ro, "/proc/self");  /* root ignores modes; /proc takes no new files */
  }
  setenv("GPUC_CACHE_DIR", ro, 1);
  GpucCacheCounters c9 = counters();
  void *i5 = compile(src_a, "sm_90", "-DX=3", &n2);
  GpucCacheCounters c10 = counters();
  CHECK(i5 != NULL && c10.write_failures == c9.write_failures + 1, "read-only dir: compiled, write failed (%zu)",
        c10.write_failures - c9.write_failures);
  free(i5);
  if (geteuid() != 0) {
    chmod(ro, 0755);
    rmdir(ro);
  }

  /* GPUC_CACHE=0: neither read nor written. */
  setenv("GPUC_CACHE_DIR", sub, 1);
  setenv("GPUC_CACHE", "0", 1);
  clear_dir(sub);
  free(compile(src_a, "sm_90", "-DX=1", &n2));
  GpucCacheCounters c11 = counters();
  CHECK(c11.hits == c10.hits && c11.misses == c10.misses && c11.writes == c10.writes, "GPUC_CACHE=0 bypasses");
  CHECK(entries(sub, NULL, 0, &temps) == 0, "GPUC_CACHE=0 writes nothing");
  unsetenv("GPUC_CACHE");

  /* Several processes at once into one directory, same and different keys. */
  fflush(stdout);
  const int procs = 6;
  for (int p = 0; p < procs; p++) {
    pid_t pid = fork();
    if (pid == 0) {
      size_t sz;
      void *img = NULL;
      const char *opts[1] = {p % 2 ? "-DX=1" : "-DX=9"};
      int bad = 0;
      for (int k = 0; k < 3; k++) {
        if (gpuc_compile_cuda_to_image(p % 3 ? src_a : src_b, "sm_90", opts, 1, &img, &sz, NULL) != GPUC_SUCCESS) {
          bad = 1;
        }
        free(img);
      }
      _exit(bad);
    }
  }
  int failures = 0;
  for (int p = 0; p < procs; p++) {
    int status = 0;
    wait(&status);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      failures++;
    }
  }
  CHECK(failures == 0, "%d concurrent compilers failed", failures);
  int n_entries = entries(sub, NULL, 0, &temps);
  CHECK(n_entries == 4 && temps == 0, "concurrent: %d entries (want 4), %d temporary files", n_entries, temps);
  GpucCacheCounters c12 = counters();
  free(compile(src_a, "sm_90", "-DX=1", &n2));
  free(compile(src_b, "sm_90", "-DX=9", &n2));
  GpucCacheCounters c13 = counters();
  CHECK(c13.hits == c12.hits + 2 && c13.rejected == c12.rejected, "entries written concurrently verify");

  free(i1);
  clear_dir(sub);
  rmdir(sub);
  return rt_test_summary("test_cache");
}

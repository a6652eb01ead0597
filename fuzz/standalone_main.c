/* standalone_main.c: runs a fuzz target over files named on the command line
 * (directories are walked one level), without libFuzzer. lit uses it to replay
 * the regression inputs in tests/fuzz/; AFL++ can drive it with
 * `afl-fuzz -i corpus -o findings -- fuzz_frontend_run @@`. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "fuzz: cannot open '%s'\n", path);
        return 1;
    }
    size_t cap = 4096, len = 0;
    uint8_t *buf = malloc(cap);
    size_t n;
    while (buf && (n = fread(buf + len, 1, cap - len, f)) > 0) {
        len += n;
        if (len == cap) {
            uint8_t *bigger = realloc(buf, cap *= 2);
            if (!bigger) {
                free(buf);
                buf = NULL;
            }
            buf = bigger;
        }
    }
    fclose(f);
    if (!buf) {
        fprintf(stderr, "fuzz: out of memory reading '%s'\n", path);
        return 1;
    }
    LLVMFuzzerTestOneInput(buf, len);
    free(buf);
    return 0;
}

int main(int argc, char **argv)
{
    int failures = 0, runs = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)) {
            DIR *d = opendir(argv[i]);
            struct dirent *e;
            while (d && (e = readdir(d)) != NULL) {
                if (e->d_name[0] == '.') {
                    continue;
                }
                char path[4096];
                snprintf(path, sizeof path, "%s/%s", argv[i], e->d_name);
                failures += run_file(path);
                runs++;
            }
            if (d) {
                closedir(d);
            }
        } else {
            failures += run_file(argv[i]);
            runs++;
        }
    }
    printf("fuzz: ran %d inputs\n", runs);
    return failures ? 1 : 0;
}

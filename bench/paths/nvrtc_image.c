/* bench/paths/nvrtc_image.c: compile a CUDA C file the way gpuc's
 * executables and libraries compile their kernels (the runtime's
 * gpuc_compile_cuda_to_image: NVRTC with -lineinfo, as driver/build_exe.c
 * passes it) and write the image, for bench/paths/nvrtc_regs.sh.
 *   nvrtc_image FILE.cu ARCH OUT.cubin [OPTION ...]   (default option: -lineinfo) */
#include <stdio.h>
#include <stdlib.h>

#include "gpuc.h"

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: nvrtc_image FILE.cu ARCH OUT.cubin [OPTION ...]\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    long n = f && fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    char *src = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (!src || fseek(f, 0, SEEK_SET) != 0 || fread(src, 1, (size_t)n, f) != (size_t)n) {
        fprintf(stderr, "nvrtc_image: cannot read '%s'\n", argv[1]);
        return 1;
    }
    src[n] = 0;
    fclose(f);
    static const char *const lineinfo[] = { "-lineinfo" };
    const char *const *opts = argc > 4 ? (const char *const *)argv + 4 : lineinfo;
    int nopts = argc > 4 ? argc - 4 : 1;
    void *image = NULL;
    size_t size = 0;
    char *log = NULL;
    if (gpuc_compile_cuda_to_image(src, argv[2], opts, nopts, &image, &size, &log) != GPUC_SUCCESS) {
        fprintf(stderr, "nvrtc_image: %s\n%s\n", gpuc_last_error(), log ? log : "");
        return 1;
    }
    FILE *o = fopen(argv[3], "wb");
    if (!o || fwrite(image, 1, size, o) != size || fclose(o) != 0) {
        fprintf(stderr, "nvrtc_image: cannot write '%s'\n", argv[3]);
        return 1;
    }
    free(src);
    return 0;
}

/* images.c: images.h, the kernel images of an executable or a library made
 * by gpuc (driver/build_exe.c) or by the Python package's CUDA backend
 * (python/src/gpuc/_cuda.py through _gpuc.write_images): one writer, so the
 * two agree byte for byte. The images themselves (cubins, PTX) come from the
 * runtime's NVRTC (gpuc_compile_cuda_to_image); this file only formats them
 * as the `static const GpucImage gpuc_images[]` the generated C includes
 * (-DGPUC_IMAGES="images.h"). */
#include <stdio.h>

#include "gpuc_compiler.h"

int gpuc_compiler_write_images(const char *path, const GpucImageData *images, int count)
{
    FILE *out = fopen(path, "w");
    if (!out) {
        return -1;
    }
    for (int i = 0; i < count; i++) {
        /* a string literal: compilers read it ten times faster than an
         * initializer list of numbers */
        fprintf(out, "static const char gpuc_image_%d[] =", i);
        const unsigned char *bytes = images[i].data;
        size_t size = images[i].size;
        for (size_t k = 0; k < size; k++) {
            fprintf(out, "%s\\x%02x%s", k % 64 ? "" : "\n\"", bytes[k], k % 64 == 63 || k + 1 == size ? "\"" : "");
        }
        fprintf(out, "%s;\n", size ? "" : " \"\"");
    }
    fprintf(out, "static const GpucImage gpuc_images[] = {\n");
    for (int i = 0; i < count; i++) {
        fprintf(out, "    { \"%s\", gpuc_image_%d, sizeof gpuc_image_%d - 1 },\n", images[i].name, i, i);
    }
    fprintf(out, "};\n");
    int failed = ferror(out);
    return fclose(out) != 0 || failed ? -1 : 0;
}

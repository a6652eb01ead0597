/* test_nvrtc.c: the offline compiler (gpuc_compile_cuda_to_image), which needs
 * NVRTC but no device: cubins (ELF) and PTX for sm_80 and sm_90, -D options
 * reaching the source, and a compile error returning NVRTC's log both in
 * *log and in gpuc_last_error(). Prints lines for FileCheck. */
#include <stdbool.h>
#include <stdlib.h>

#include "gpuc.h"
#include "rt_test.h"

static const char *vadd =
    "extern \"C\" __global__ void vadd(const float *x, const float *y, float *out, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) out[i] = x[i] + y[i] * SCALE;\n"
    "}\n";

int main(void) {
  int major = 0, minor = 0;
  CHECK_STATUS(gpuc_nvrtc_version(&major, &minor), GPUC_SUCCESS);
  printf("nvrtc %d.%d\n", major, minor);
  const char *opts[] = {"-DSCALE=2.0f", "--std=c++17"};
  const char *archs[] = {"sm_80", "sm_90", "compute_80", "compute_90"};
  for (int i = 0; i < 4; i++) {
    void *image = NULL;
    size_t size = 0;
    char *log = NULL;
    GpucStatus s = gpuc_compile_cuda_to_image(vadd, archs[i], opts, 2, &image, &size, &log);
    CHECK(s == GPUC_SUCCESS && image && size > 0, "%s: %s: %s", archs[i], gpuc_status_name(s), gpuc_last_error());
    if (s != GPUC_SUCCESS) {
      continue;
    }
    const unsigned char *b = image;
    if (archs[i][0] == 's') {
      bool elf = size > 4 && b[0] == 0x7f && b[1] == 'E' && b[2] == 'L' && b[3] == 'F';
      CHECK(elf, "%s: not an ELF cubin", archs[i]);
      printf("%s: cubin%s\n", archs[i], elf ? " (ELF)" : "");
    } else {
      const char *ptx = image;
      char target[64];
      snprintf(target, sizeof target, ".target sm_%s", archs[i] + 8);
      CHECK(ptx[size - 1] == '\0' || ptx[size] == '\0', "PTX is NUL-terminated");
      CHECK(strstr(ptx, target) != NULL, "%s: no '%s' in PTX", archs[i], target);
      CHECK(strstr(ptx, ".entry vadd") != NULL, "%s: no unmangled entry vadd", archs[i]);
      printf("%s: PTX with '%s'\n", archs[i], target);
    }
    free(image);
    free(log);
  }

  /* A compile error: NVRTC's log comes back, with the line. */
  void *image = (void *)&major;
  size_t size = 1;
  char *log = NULL;
  GpucStatus s = gpuc_compile_cuda_to_image("extern \"C\" __global__ void k() { undefined_thing = 1; }\n", "sm_90",
                                            NULL, 0, &image, &size, &log);
  CHECK(s == GPUC_ERROR_COMPILE, "compile error status %s", gpuc_status_name(s));
  CHECK(image == NULL && size == 0, "no image on failure");
  CHECK(log && strstr(log, "undefined_thing"), "log names the identifier: %s", log ? log : "(null)");
  printf("error: %s: %s\n", gpuc_status_name(s), gpuc_last_error());
  free(log);

  /* log may be NULL; a missing -D is an error too. */
  s = gpuc_compile_cuda_to_image(vadd, "sm_90", NULL, 0, &image, &size, NULL);
  CHECK(s == GPUC_ERROR_COMPILE && strstr(gpuc_last_error(), "SCALE"), "missing define: %s", gpuc_last_error());

  /* An arch NVRTC does not know. */
  s = gpuc_compile_cuda_to_image(vadd, "sm_10", opts, 1, &image, &size, &log);
  CHECK(s == GPUC_ERROR_COMPILE, "sm_10: %s", gpuc_status_name(s));
  printf("sm_10: %s\n", gpuc_status_name(s));
  free(log);
  return rt_test_summary("test_nvrtc");
}

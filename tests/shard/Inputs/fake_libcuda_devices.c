/* fake_libcuda_devices.c: tests/runtime's stand-in libcuda.so.1 reporting
 * FAKE_DEVICES devices (cuInit succeeds; contexts cannot be made), for the
 * argument checks of `prog --ranks N` on the CUDA backend without a GPU. */
#define cuDeviceGetCount fake_zero_devices
#include "../../runtime/Inputs/fake_libcuda.c"
#undef cuDeviceGetCount
int cuDeviceGetCount(int *n) { *n = FAKE_DEVICES; return 0; }

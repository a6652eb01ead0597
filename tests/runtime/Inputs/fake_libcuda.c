/* fake_libcuda.c: a stand-in libcuda.so.1 for the no-GPU tests. Built with
 * -DOLD it exports only cuInit and the error-name calls, like a driver too old
 * for gpuc; otherwise every entry point gpuc uses exists, cuInit succeeds and
 * the driver reports no device. Arguments of the unused calls are ignored. */
#include <stddef.h>

int cuInit(unsigned flags) { return 0; }
int cuGetErrorName(int e, const char **s) { *s = "CUDA_ERROR_FAKE"; return 0; }
int cuGetErrorString(int e, const char **s) { *s = "fake driver error"; return 0; }

#ifndef OLD
int cuDriverGetVersion(int *v) { *v = 13000; return 0; }
int cuDeviceGetCount(int *n) { *n = 0; return 0; }
int cuDeviceGet(int *d, int ordinal) { return 101; /* CUDA_ERROR_INVALID_DEVICE */ }
#define FAKE(name) int name(void) { return 999; }
FAKE(cuDeviceGetName) FAKE(cuDeviceGetAttribute) FAKE(cuDeviceTotalMem_v2) FAKE(cuDevicePrimaryCtxRetain)
FAKE(cuDevicePrimaryCtxRelease_v2) FAKE(cuCtxGetCurrent) FAKE(cuCtxSetCurrent) FAKE(cuCtxPushCurrent_v2)
FAKE(cuCtxPopCurrent_v2) FAKE(cuCtxGetDevice) FAKE(cuCtxSynchronize) FAKE(cuMemGetInfo_v2) FAKE(cuMemAlloc_v2)
FAKE(cuMemFree_v2) FAKE(cuMemAllocHost_v2) FAKE(cuMemFreeHost) FAKE(cuMemHostAlloc) FAKE(cuMemHostGetDevicePointer_v2)
FAKE(cuMemsetD8_v2) FAKE(cuMemsetD8Async)
FAKE(cuMemcpyHtoD_v2) FAKE(cuMemcpyDtoH_v2) FAKE(cuMemcpyDtoD_v2) FAKE(cuMemcpyHtoDAsync_v2)
FAKE(cuMemcpyDtoHAsync_v2) FAKE(cuMemcpyDtoDAsync_v2) FAKE(cuModuleLoadDataEx) FAKE(cuModuleUnload)
FAKE(cuModuleGetFunction) FAKE(cuModuleGetGlobal_v2) FAKE(cuFuncGetAttribute) FAKE(cuFuncSetAttribute)
FAKE(cuOccupancyMaxActiveBlocksPerMultiprocessor)
FAKE(cuLaunchKernel) FAKE(cuStreamCreate) FAKE(cuStreamDestroy_v2) FAKE(cuStreamSynchronize)
FAKE(cuStreamWaitEvent) FAKE(cuEventCreate) FAKE(cuEventDestroy_v2) FAKE(cuEventRecord) FAKE(cuEventSynchronize)
FAKE(cuEventElapsedTime)
#endif

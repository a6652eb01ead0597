// nvcc_kernel.cu: the vector add built by nvcc (-cubin and -fatbin) in
// run_gpu_tests.sh, so test_gpu loads images that did not come from NVRTC.
extern "C" __global__ void vadd(const float *x, const float *y, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = x[i] + y[i];
}

// Corpus program in the CUDA 11.7+ style: a large parameter struct passed as __grid_constant__,
// with a CUDART_VERSION guard around the newer path.
#include <cuda_runtime.h>
#include <cstdio>
#include <helper_cuda.h>

struct Stencil {
  float weights[32];
  int radius;
  int n;
};

#if CUDART_VERSION >= 11070
__global__ void applyStencil(const __grid_constant__ Stencil s, const float *in, float *out) {
#else
__global__ void applyStencil(const Stencil s, const float *in, float *out) {
#endif
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= s.n) return;
  float acc = 0.0f;
  for (int k = -s.radius; k <= s.radius; ++k) {
    int j = min(max(i + k, 0), s.n - 1);
    acc += s.weights[k + s.radius] * in[j];
  }
  out[i] = acc;
}

int main(int argc, char **argv) {
  findCudaDevice(argc, (const char **)argv);
  Stencil s;
  s.radius = 4;
  s.n = 1 << 16;
  for (int k = 0; k < 2 * s.radius + 1; ++k) s.weights[k] = 1.0f / (2 * s.radius + 1);
  float *d_in, *d_out;
  checkCudaErrors(cudaMalloc(&d_in, s.n * sizeof(float)));
  checkCudaErrors(cudaMalloc(&d_out, s.n * sizeof(float)));
  checkCudaErrors(cudaMemset(d_in, 0, s.n * sizeof(float)));
  cudaEvent_t start, stop;
  checkCudaErrors(cudaEventCreate(&start));
  checkCudaErrors(cudaEventCreate(&stop));
  checkCudaErrors(cudaEventRecord(start));
  applyStencil<<<(s.n + 255) / 256, 256>>>(s, d_in, d_out);
  checkCudaErrors(cudaEventRecord(stop));
  checkCudaErrors(cudaEventSynchronize(stop));
  float ms = 0;
  checkCudaErrors(cudaEventElapsedTime(&ms, start, stop));
  printf("stencil: %.3f ms\n", ms);
  checkCudaErrors(cudaFree(d_in));
  checkCudaErrors(cudaFree(d_out));
  return 0;
}

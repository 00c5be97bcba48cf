// Low-pass filter of a signal with cuFFT: R2C, zero the high frequencies, C2R.
#include <cstdio>
#include <vector>
#include <cmath>
#include <cuda_runtime.h>
#include <cufft.h>

__global__ void zeroHigh(cufftComplex *spec, int bins, int keep) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < bins && i >= keep) {
    spec[i].x = 0.f;
    spec[i].y = 0.f;
  }
}

__global__ void scale(cufftReal *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] /= n;
}

int main() {
  const int n = 1024, bins = n / 2 + 1;
  std::vector<float> h(n);
  for (int i = 0; i < n; ++i) h[i] = sinf(2 * 3.14159265f * 5 * i / n) + 0.3f * sinf(2 * 3.14159265f * 200 * i / n);
  cufftReal *d_x;
  cufftComplex *d_spec;
  cudaMalloc(&d_x, n * sizeof(cufftReal));
  cudaMalloc(&d_spec, bins * sizeof(cufftComplex));
  cudaMemcpy(d_x, h.data(), n * sizeof(float), cudaMemcpyHostToDevice);
  cufftHandle fwd, inv;
  if (cufftPlan1d(&fwd, n, CUFFT_R2C, 1) != CUFFT_SUCCESS || cufftPlan1d(&inv, n, CUFFT_C2R, 1) != CUFFT_SUCCESS) {
    fprintf(stderr, "cufftPlan1d failed\n");
    return 1;
  }
  cufftExecR2C(fwd, d_x, d_spec);
  zeroHigh<<<(bins + 255) / 256, 256>>>(d_spec, bins, 50);
  cufftExecC2R(inv, d_spec, d_x);
  scale<<<(n + 255) / 256, 256>>>(d_x, n);
  cudaMemcpy(h.data(), d_x, n * sizeof(float), cudaMemcpyDeviceToHost);
  printf("x[10] = %f\n", h[10]);
  cufftDestroy(fwd);
  cufftDestroy(inv);
  cudaFree(d_x);
  cudaFree(d_spec);
  return 0;
}

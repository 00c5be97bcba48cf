// Fused bias + GELU for a [rows, cols] float32 matrix, forward and backward, as a plain CUDA
// library (build/libfusedgelu.so) that fused_gelu.py loads through ctypes. Pointers are device
// pointers (a CUDA tensor's data_ptr()); calls run on the default stream.
#include <cuda_runtime.h>
#include "gelu.cuh"

__global__ void bias_gelu_forward_kernel(const float* __restrict__ x, const float* __restrict__ bias,
                                         float* __restrict__ y, int n, int cols) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = gelu_tanh(x[i] + bias[i % cols]);
}

__global__ void bias_gelu_backward_kernel(const float* __restrict__ x, const float* __restrict__ bias,
                                          const float* __restrict__ dy, float* __restrict__ dx, int n, int cols) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) dx[i] = dy[i] * gelu_tanh_grad(x[i] + bias[i % cols]);
}

static int blocks_for(int n, int threads) { return (n + threads - 1) / threads; }

extern "C" int bias_gelu_forward(const float* x, const float* bias, float* y, int n, int cols) {
  const int threads = 256;
  bias_gelu_forward_kernel<<<blocks_for(n, threads), threads>>>(x, bias, y, n, cols);
  return (int)cudaGetLastError();
}

extern "C" int bias_gelu_backward(const float* x, const float* bias, const float* dy, float* dx, int n, int cols) {
  const int threads = 256;
  bias_gelu_backward_kernel<<<blocks_for(n, threads), threads>>>(x, bias, dy, dx, n, cols);
  return (int)cudaGetLastError();
}

extern "C" int fused_gelu_synchronize() { return (int)cudaDeviceSynchronize(); }

extern "C" const char* fused_gelu_error_string(int code) { return cudaGetErrorString((cudaError_t)code); }

// Vector addition with the CUDA runtime API: allocation, copies, streams, events, device query.
// In the style of NVIDIA's samples (0_Introduction/vectorAdd).
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

#define CHECK_CUDA(call)                                                        \
  do {                                                                          \
    cudaError_t err_ = (call);                                                  \
    if (err_ != cudaSuccess) {                                                  \
      fprintf(stderr, "CUDA error %s at %s:%d\n", cudaGetErrorString(err_),     \
              __FILE__, __LINE__);                                              \
      exit(EXIT_FAILURE);                                                       \
    }                                                                           \
  } while (0)

__global__ void vectorAdd(const float *A, const float *B, float *C, int n) {
  int i = blockDim.x * blockIdx.x + threadIdx.x;
  if (i < n) C[i] = A[i] + B[i];
}

int main(int argc, char **argv) {
  const int n = argc > 1 ? atoi(argv[1]) : 50000;
  const size_t bytes = n * sizeof(float);

  int device = 0;
  cudaDeviceProp prop;
  CHECK_CUDA(cudaGetDevice(&device));
  CHECK_CUDA(cudaGetDeviceProperties(&prop, device));
  printf("Running on %s (cudaMalloc of %zu bytes, warp size %d)\n", prop.name, bytes, prop.warpSize);

  float *hA, *hB, *hC;
  CHECK_CUDA(cudaMallocHost(&hA, bytes));
  CHECK_CUDA(cudaMallocHost(&hB, bytes));
  hC = (float *)malloc(bytes);
  for (int i = 0; i < n; ++i) {
    hA[i] = rand() / (float)RAND_MAX;
    hB[i] = rand() / (float)RAND_MAX;
  }

  float *dA = nullptr, *dB = nullptr, *dC = nullptr;
  CHECK_CUDA(cudaMalloc((void **)&dA, bytes));
  CHECK_CUDA(cudaMalloc((void **)&dB, bytes));
  CHECK_CUDA(cudaMalloc((void **)&dC, bytes));

  cudaStream_t stream;
  cudaEvent_t start, stop;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  CHECK_CUDA(cudaEventCreate(&start));
  CHECK_CUDA(cudaEventCreate(&stop));

  CHECK_CUDA(cudaMemcpyAsync(dA, hA, bytes, cudaMemcpyHostToDevice, stream));
  CHECK_CUDA(cudaMemcpyAsync(dB, hB, bytes, cudaMemcpyHostToDevice, stream));
  CHECK_CUDA(cudaEventRecord(start, stream));
  int threads = 256;
  int blocks = (n + threads - 1) / threads;
  vectorAdd<<<blocks, threads, 0, stream>>>(dA, dB, dC, n);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaEventRecord(stop, stream));
  CHECK_CUDA(cudaMemcpyAsync(hC, dC, bytes, cudaMemcpyDeviceToHost, stream));
  CHECK_CUDA(cudaStreamSynchronize(stream));
  float ms = 0.f;
  CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));

  for (int i = 0; i < n; ++i) {
    if (fabs(hA[i] + hB[i] - hC[i]) > 1e-5f) {
      fprintf(stderr, "Result verification failed at element %d!\n", i);
      return EXIT_FAILURE;
    }
  }
  printf("Test PASSED in %.3f ms\n", ms);

  CHECK_CUDA(cudaFree(dA));
  CHECK_CUDA(cudaFree(dB));
  CHECK_CUDA(cudaFree(dC));
  CHECK_CUDA(cudaFreeHost(hA));
  CHECK_CUDA(cudaFreeHost(hB));
  free(hC);
  CHECK_CUDA(cudaEventDestroy(start));
  CHECK_CUDA(cudaEventDestroy(stop));
  CHECK_CUDA(cudaStreamDestroy(stream));
  CHECK_CUDA(cudaDeviceReset());
  return 0;
}

// Corpus program in the style of cuda-samples' stream-ordered allocation and L2-persistence code:
// cudaMallocAsync from the default pool, and an access-policy window that keeps a lookup table in
// the persisting part of L2 (CUDA 11+, sm_80).
#include <cuda_runtime.h>
#include <stdio.h>
#include <algorithm>
#include <helper_cuda.h>

__global__ void gather(const float *table, const int *idx, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = table[idx[i]];
}

int main(int argc, char **argv) {
  int dev = findCudaDevice(argc, (const char **)argv);
  cudaDeviceProp prop;
  checkCudaErrors(cudaGetDeviceProperties(&prop, dev));
  int poolsSupported = 0;
  checkCudaErrors(cudaDeviceGetAttribute(&poolsSupported, cudaDevAttrMemoryPoolsSupported, dev));

  const int n = 1 << 20, tableSize = 1 << 16;
  cudaStream_t stream;
  checkCudaErrors(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

  cudaMemPool_t memPool;
  checkCudaErrors(cudaDeviceGetDefaultMemPool(&memPool, dev));
  uint64_t thresholdVal = UINT64_MAX;
  checkCudaErrors(cudaMemPoolSetAttribute(memPool, cudaMemPoolAttrReleaseThreshold, (void *)&thresholdVal));

  float *table, *out;
  int *idx;
  checkCudaErrors(cudaMallocAsync(&table, tableSize * sizeof(float), stream));
  checkCudaErrors(cudaMallocAsync(&idx, n * sizeof(int), stream));
  checkCudaErrors(cudaMallocAsync(&out, n * sizeof(float), stream));
  checkCudaErrors(cudaMemsetAsync(table, 0, tableSize * sizeof(float), stream));
  checkCudaErrors(cudaMemsetAsync(idx, 0, n * sizeof(int), stream));

  // Keep the lookup table resident in L2 while the gather runs
  size_t persist = std::min<size_t>(prop.l2CacheSize * 3 / 4, prop.persistingL2CacheMaxSize);
  checkCudaErrors(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, persist));
  cudaStreamAttrValue stream_attribute;
  stream_attribute.accessPolicyWindow.base_ptr = reinterpret_cast<void *>(table);
  stream_attribute.accessPolicyWindow.num_bytes = std::min<size_t>(tableSize * sizeof(float), prop.accessPolicyMaxWindowSize);
  stream_attribute.accessPolicyWindow.hitRatio = 0.6f;
  stream_attribute.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
  stream_attribute.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
  checkCudaErrors(cudaStreamSetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &stream_attribute));

  gather<<<(n + 255) / 256, 256, 0, stream>>>(table, idx, out, n);
  getLastCudaError("gather failed");

  // Reset the persisting lines so later kernels get the whole L2 back
  stream_attribute.accessPolicyWindow.num_bytes = 0;
  checkCudaErrors(cudaStreamSetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &stream_attribute));
  checkCudaErrors(cudaCtxResetPersistingL2Cache());

  checkCudaErrors(cudaFreeAsync(table, stream));
  checkCudaErrors(cudaFreeAsync(idx, stream));
  checkCudaErrors(cudaFreeAsync(out, stream));
  checkCudaErrors(cudaStreamSynchronize(stream));
  checkCudaErrors(cudaStreamDestroy(stream));
  printf("done (pools supported: %d)\n", poolsSupported);
  return 0;
}

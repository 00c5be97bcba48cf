// Sum of a large array: shared-memory tree reduction, warp shuffles, votes and cooperative groups.
#include <cstdio>
#include <vector>
#include "reduce.cuh"

__global__ void reduceShared(const float *in, float *out, int n) {
  extern __shared__ float sdata[];
  cg::thread_block block = cg::this_thread_block();
  unsigned int tid = threadIdx.x;
  unsigned int i = blockIdx.x * (blockDim.x * 2) + threadIdx.x;
  float sum = (i < n) ? in[i] : 0.0f;
  if (i + blockDim.x < n) sum += in[i + blockDim.x];
  sdata[tid] = sum;
  block.sync();
  for (unsigned int s = blockDim.x / 2; s > 32; s >>= 1) {
    if (tid < s) sdata[tid] = sum = sum + sdata[tid + s];
    block.sync();
  }
  if (tid < 32) {  // planted: wave64 (the last warp finishes without __syncthreads)
    if (blockDim.x >= 64) sum += sdata[tid + 32];
    for (int offset = 16; offset > 0; offset >>= 1)  // planted: wave64
      sum += __shfl_down_sync(0xffffffff, sum, offset);  // planted: wave64
  }
  if (tid == 0) out[blockIdx.x] = sum;
}

__global__ void reduceWarps(const float *in, float *out, int n) {
  float sum = 0.f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) sum += in[i];
  sum = blockReduceSum(sum);
  if (threadIdx.x == 0) atomicAdd(out, sum);
}

__global__ void countPositive(const float *in, int *count, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned int ballot = __ballot_sync(0xffffffff, i < n && in[i] > 0.f);  // planted: wave64
  int laneId = threadIdx.x & 31;  // planted: wave64
  if (laneId == 0) atomicAdd(count, __popc(ballot));  // planted: wave64
  unsigned mask = __activemask();  // planted: wave64
  __syncwarp(mask);
  if (laneId == 0 && mask == 0) atomicAdd(count, 0);
}

int main() {
  const int n = 1 << 20;
  std::vector<float> h(n, 1.0f);
  float *d_in, *d_out;
  int *d_count;
  cudaMalloc(&d_in, n * sizeof(float));
  cudaMalloc(&d_out, 1024 * sizeof(float));
  cudaMalloc(&d_count, sizeof(int));
  cudaMemcpy(d_in, h.data(), n * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemset(d_out, 0, 1024 * sizeof(float));
  int threads = 256;
  reduceShared<<<1024, threads, threads * sizeof(float)>>>(d_in, d_out, n);
  reduceWarps<<<64, threads>>>(d_in, d_out, n);
  countPositive<<<n / threads, threads>>>(d_in, d_count, n);
  cudaError_t err = cudaDeviceSynchronize();
  if (err != cudaSuccess) {
    printf("kernel failed: %s\n", cudaGetErrorString(err));
    return 1;
  }
  float result;
  cudaMemcpy(&result, d_out, sizeof(float), cudaMemcpyDeviceToHost);
  printf("sum = %f\n", result);
  cudaFree(d_in);
  cudaFree(d_out);
  cudaFree(d_count);
  return 0;
}

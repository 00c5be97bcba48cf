// Corpus program in the style of cuda-samples' warpAggregatedAtomicsCG / shfl_scan: warp intrinsics
// with explicit lane masks (__activemask, __ballot_sync, __shfl_sync, __shfl_up_sync, __syncwarp).
#include <stdio.h>
#include <cuda_runtime.h>
#include <helper_cuda.h>

#define NUM_ELEMS 10000000
#define NUM_THREADS_PER_BLOCK 512

// warp-aggregated atomic increment: one atomicAdd per warp
__device__ int atomicAggInc(int *counter) {
  unsigned int active = __activemask();
  int leader = __ffs(active) - 1;
  int change = __popc(active);
  int lane_mask_lt = (1 << (threadIdx.x & 31)) - 1;
  unsigned int rank = __popc(active & lane_mask_lt);
  int warp_res;
  if (rank == 0) warp_res = atomicAdd(counter, change);
  warp_res = __shfl_sync(active, warp_res, leader);
  return warp_res + rank;
}

__global__ void filter_arr(int *dst, int *nres, const int *src, int n) {
  int id = threadIdx.x + blockIdx.x * blockDim.x;
  for (int i = id; i < n; i += gridDim.x * blockDim.x) {
    if (src[i] > 0) dst[atomicAggInc(nres)] = src[i];
  }
}

// inclusive scan within a warp
__global__ void shfl_scan_test(int *data, int width, int *partial_sums = NULL) {
  extern __shared__ int sums[];
  int id = ((blockIdx.x * blockDim.x) + threadIdx.x);
  int lane_id = id % warpSize;
  int warp_id = threadIdx.x / warpSize;
  unsigned int mask = 0xffffffff;
  int value = data[id];
  for (int i = 1; i <= width; i *= 2) {
    int n = __shfl_up_sync(mask, value, i, width);
    if (lane_id >= i) value += n;
  }
  if (threadIdx.x % warpSize == warpSize - 1) sums[warp_id] = value;
  __syncthreads();
  unsigned int any_positive = __ballot_sync(mask, value > 0);
  if (warp_id == 0 && lane_id < (blockDim.x / warpSize)) {
    int warp_sum = sums[lane_id];
    int mask2 = (1 << (blockDim.x / warpSize)) - 1;
    for (int i = 1; i <= (blockDim.x / warpSize); i *= 2) {
      int n = __shfl_up_sync(mask2, warp_sum, i, (blockDim.x / warpSize));
      if (lane_id >= i) warp_sum += n;
    }
    sums[lane_id] = warp_sum;
  }
  __syncwarp();
  __syncthreads();
  if (warp_id > 0) value += sums[warp_id - 1];
  data[id] = value;
  if (partial_sums != NULL && threadIdx.x == blockDim.x - 1 && any_positive) partial_sums[blockIdx.x] = value;
}

int main(int argc, char **argv) {
  int *data_to_filter, *filtered_data, nres = 0;
  int *d_data_to_filter, *d_filtered_data, *d_nres;
  findCudaDevice(argc, (const char **)argv);
  data_to_filter = reinterpret_cast<int *>(malloc(sizeof(int) * NUM_ELEMS));
  for (int i = 0; i < NUM_ELEMS; i++) data_to_filter[i] = rand() % 20;
  checkCudaErrors(cudaMalloc(&d_data_to_filter, sizeof(int) * NUM_ELEMS));
  checkCudaErrors(cudaMalloc(&d_filtered_data, sizeof(int) * NUM_ELEMS));
  checkCudaErrors(cudaMalloc(&d_nres, sizeof(int)));
  checkCudaErrors(cudaMemcpy(d_data_to_filter, data_to_filter, sizeof(int) * NUM_ELEMS, cudaMemcpyHostToDevice));
  checkCudaErrors(cudaMemset(d_nres, 0, sizeof(int)));
  dim3 dimBlock(NUM_THREADS_PER_BLOCK, 1, 1);
  dim3 dimGrid((NUM_ELEMS / NUM_THREADS_PER_BLOCK) + 1, 1, 1);
  filter_arr<<<dimGrid, dimBlock>>>(d_filtered_data, d_nres, d_data_to_filter, NUM_ELEMS);
  shfl_scan_test<<<dimGrid, dimBlock, NUM_THREADS_PER_BLOCK / 32 * sizeof(int)>>>(d_data_to_filter, 32);
  getLastCudaError("kernels failed");
  checkCudaErrors(cudaMemcpy(&nres, d_nres, sizeof(int), cudaMemcpyDeviceToHost));
  filtered_data = reinterpret_cast<int *>(malloc(sizeof(int) * nres));
  checkCudaErrors(cudaMemcpy(filtered_data, d_filtered_data, sizeof(int) * nres, cudaMemcpyDeviceToHost));
  printf("%d positive elements\n", nres);
  checkCudaErrors(cudaFree(d_data_to_filter));
  checkCudaErrors(cudaFree(d_filtered_data));
  checkCudaErrors(cudaFree(d_nres));
  free(data_to_filter);
  free(filtered_data);
  return 0;
}

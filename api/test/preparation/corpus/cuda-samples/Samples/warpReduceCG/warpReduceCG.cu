// Corpus program in the CUDA 11+ style: cg::reduce on a tile (cooperative_groups/reduce.h) and the
// sm_80 warp reduction intrinsic. HIP 5.2 has neither: the migration must say so, not hide it.
#include <cuda_runtime.h>
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <stdio.h>
#include <helper_cuda.h>

namespace cg = cooperative_groups;

__global__ void sumKernel(const int *in, int *out, int n) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = i < n ? in[i] : 0;
  int tileSum = cg::reduce(tile, v, cg::plus<int>());
  int warpSum = __reduce_add_sync(0xffffffff, v);
  if (tile.thread_rank() == 0 && tileSum == warpSum) atomicAdd(out, tileSum);
}

int main(int argc, char **argv) {
  findCudaDevice(argc, (const char **)argv);
  const int n = 1 << 20;
  int *d_in, *d_out, h_out = 0;
  checkCudaErrors(cudaMalloc(&d_in, n * sizeof(int)));
  checkCudaErrors(cudaMalloc(&d_out, sizeof(int)));
  checkCudaErrors(cudaMemset(d_in, 0, n * sizeof(int)));
  checkCudaErrors(cudaMemset(d_out, 0, sizeof(int)));
  sumKernel<<<(n + 255) / 256, 256>>>(d_in, d_out, n);
  getLastCudaError("sumKernel failed");
  checkCudaErrors(cudaMemcpy(&h_out, d_out, sizeof(int), cudaMemcpyDeviceToHost));
  printf("sum = %d\n", h_out);
  return 0;
}

// Corpus program in the style of cuda-samples' reductionMultiBlockCG: a grid-wide reduction in one
// cooperative launch (grid.sync()), warp-level partial sums on a thread_block_tile.
#include <cuda_runtime.h>
#include <cooperative_groups.h>
#include <stdio.h>

#include <helper_cuda.h>
#include <helper_functions.h>

namespace cg = cooperative_groups;

__device__ void reduceBlock(double *sdata, const cg::thread_block &cta) {
  const unsigned int tid = cta.thread_rank();
  cg::thread_block_tile<32> tile32 = cg::tiled_partition<32>(cta);
  double beta = sdata[tid];
  double temp;
  for (int i = tile32.num_threads() / 2; i > 0; i >>= 1) {
    if (tile32.thread_rank() < i) {
      temp = sdata[tid + i];
      beta += temp;
      sdata[tid] = beta;
    }
    cg::sync(tile32);
  }
  cg::sync(cta);
  if (cta.thread_rank() == 0) {
    beta = 0;
    for (int i = 0; i < blockDim.x; i += tile32.num_threads()) {
      beta += sdata[i];
    }
    sdata[0] = beta;
  }
  cg::sync(cta);
}

extern "C" __global__ void reduceSinglePassMultiBlockCG(const float *g_idata, float *g_odata, unsigned int n) {
  cg::thread_block block = cg::this_thread_block();
  cg::grid_group grid = cg::this_grid();
  extern double __shared__ sdata[];
  sdata[block.thread_rank()] = 0;
  for (int i = grid.thread_rank(); i < n; i += grid.size()) {
    sdata[block.thread_rank()] += g_idata[i];
  }
  cg::sync(block);
  reduceBlock(sdata, block);
  if (block.thread_rank() == 0) {
    g_odata[blockIdx.x] = sdata[0];
  }
  cg::sync(grid);
  if (grid.thread_rank() == 0) {
    for (int block = 1; block < gridDim.x; block++) {
      g_odata[0] += g_odata[block];
    }
  }
}

int main(int argc, char **argv) {
  int dev = findCudaDevice(argc, (const char **)argv);
  cudaDeviceProp deviceProp;
  checkCudaErrors(cudaGetDeviceProperties(&deviceProp, dev));
  int supportsCoopLaunch = 0;
  checkCudaErrors(cudaDeviceGetAttribute(&supportsCoopLaunch, cudaDevAttrCooperativeLaunch, dev));
  if (!supportsCoopLaunch) {
    printf("Selected GPU (%d) does not support Cooperative Kernel Launch, Waiving the run\n", dev);
    exit(EXIT_WAIVED);
  }
  unsigned int size = 1 << 20;
  int numThreads = 1024, numBlocksPerSm = 0;
  checkCudaErrors(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&numBlocksPerSm, reduceSinglePassMultiBlockCG, numThreads, numThreads * sizeof(double)));
  int numBlocks = deviceProp.multiProcessorCount * numBlocksPerSm;

  float *d_idata = NULL, *d_odata = NULL;
  checkCudaErrors(cudaMalloc((void **)&d_idata, size * sizeof(float)));
  checkCudaErrors(cudaMalloc((void **)&d_odata, numBlocks * sizeof(float)));
  checkCudaErrors(cudaMemset(d_idata, 0, size * sizeof(float)));

  dim3 dimBlock(numThreads, 1, 1);
  dim3 dimGrid(numBlocks, 1, 1);
  int smemSize = numThreads * sizeof(double);
  void *kernelArgs[] = {(void *)&d_idata, (void *)&d_odata, (void *)&size};
  StopWatch timer;
  timer.start();
  checkCudaErrors(cudaLaunchCooperativeKernel((void *)reduceSinglePassMultiBlockCG, dimGrid, dimBlock, kernelArgs, smemSize, NULL));
  checkCudaErrors(cudaDeviceSynchronize());
  float gpu_result = 0;
  checkCudaErrors(cudaMemcpy(&gpu_result, d_odata, sizeof(float), cudaMemcpyDeviceToHost));
  printf("GPU result = %f in %.3f ms\n", gpu_result, timer.getTime());
  checkCudaErrors(cudaFree(d_idata));
  checkCudaErrors(cudaFree(d_odata));
  return 0;
}

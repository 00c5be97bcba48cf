// Warp- and block-level sum reductions, written for 32-lane warps.
#pragma once
#include <cuda_runtime.h>
#include <cooperative_groups.h>

namespace cg = cooperative_groups;

#define WARP_SIZE 32  // planted: wave64
#define FULL_MASK 0xffffffff  // planted: wave64

__device__ __forceinline__ float warpReduceSum(float val) {
  for (int offset = 16; offset > 0; offset /= 2)  // planted: wave64
    val += __shfl_down_sync(FULL_MASK, val, offset);
  return val;
}

__device__ __forceinline__ float warpReduceSumUnrolled(float v) {
  v += __shfl_xor_sync(0xffffffff, v, 16);  // planted: wave64
  v += __shfl_xor_sync(0xffffffff, v, 8);  // planted: wave64
  v += __shfl_xor_sync(0xffffffff, v, 4);  // planted: wave64
  v += __shfl_xor_sync(0xffffffff, v, 2);  // planted: wave64
  v += __shfl_xor_sync(0xffffffff, v, 1);  // planted: wave64
  return v;
}

__device__ float blockReduceSum(float val) {
  static __shared__ float shared[32];  // planted: wave64
  int lane = threadIdx.x % WARP_SIZE;  // planted: wave64
  int wid = threadIdx.x / WARP_SIZE;  // planted: wave64
  val = warpReduceSum(val);
  if (lane == 0) shared[wid] = val;
  __syncthreads();
  val = (threadIdx.x < blockDim.x / WARP_SIZE) ? shared[lane] : 0.0f;  // planted: wave64
  if (wid == 0) val = warpReduceSum(val);
  return val;
}

// A CPU emulation of the few CUDA runtime pieces csrc/fused_bias_gelu.cu uses, so the kernel
// source itself (as written, or as migrated to HIP) can run serially on a machine without a GPU:
// `make cpu` compiles it with the host C++ compiler against this header. Kernel launches are
// turned into loops over the grid (one thread at a time): right for element-wise kernels like
// ours, wrong for kernels that use shared memory, __syncthreads or warp intrinsics.
#pragma once
#include <cstring>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline

struct dim3 {
  unsigned x, y, z;
  dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};
static thread_local dim3 threadIdx, blockIdx, blockDim, gridDim;

typedef int cudaError_t;
static const cudaError_t cudaSuccess = 0;
inline cudaError_t cudaGetLastError() { return cudaSuccess; }
inline cudaError_t cudaDeviceSynchronize() { return cudaSuccess; }
inline const char* cudaGetErrorString(cudaError_t e) { return e == cudaSuccess ? "no error" : "error (CPU emulation)"; }

// k<<<grid, block>>>(args…) is rewritten by `make cpu` to CHATGPU_CPU_LAUNCH(k, grid, block)(args…).
template <class Kernel>
struct CpuLaunch {
  Kernel* kernel;
  dim3 grid, block;
  template <class... Args>
  void operator()(Args... args) const {
    gridDim = grid;
    blockDim = block;
    for (unsigned bz = 0; bz < grid.z; ++bz)
      for (unsigned by = 0; by < grid.y; ++by)
        for (unsigned bx = 0; bx < grid.x; ++bx)
          for (unsigned tz = 0; tz < block.z; ++tz)
            for (unsigned ty = 0; ty < block.y; ++ty)
              for (unsigned tx = 0; tx < block.x; ++tx) {
                blockIdx = dim3(bx, by, bz);
                threadIdx = dim3(tx, ty, tz);
                kernel(args...);
              }
  }
};
template <class Kernel>
CpuLaunch<Kernel> chatgpu_cpu_launch(Kernel* k, dim3 grid, dim3 block) { return CpuLaunch<Kernel>{k, grid, block}; }
#define CHATGPU_CPU_LAUNCH(k, grid, block) chatgpu_cpu_launch(k, dim3(grid), dim3(block))

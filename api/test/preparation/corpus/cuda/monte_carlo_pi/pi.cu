// Monte Carlo estimate of pi: cuRAND device API (per-thread states) and host API (a generator).
#include <cstdio>
#include <cuda_runtime.h>
#include <curand.h>
#include <curand_kernel.h>

#define CURAND_CALL(x)                                         \
  do {                                                         \
    if ((x) != CURAND_STATUS_SUCCESS) {                        \
      printf("cuRAND error at %s:%d\n", __FILE__, __LINE__);   \
      return 1;                                                \
    }                                                          \
  } while (0)

__global__ void setupStates(curandState *states, unsigned long long seed) {
  int id = blockIdx.x * blockDim.x + threadIdx.x;
  curand_init(seed, id, 0, &states[id]);
}

__global__ void countInside(curandState *states, int samplesPerThread, unsigned long long *hits) {
  int id = blockIdx.x * blockDim.x + threadIdx.x;
  curandState local = states[id];
  unsigned long long inside = 0;
  for (int i = 0; i < samplesPerThread; ++i) {
    float x = curand_uniform(&local);
    float y = curand_uniform(&local);
    inside += (x * x + y * y <= 1.0f);
  }
  states[id] = local;
  // sum over the warp before one atomic per warp
  for (int offset = warpSize / 2; offset > 0; offset /= 2) inside += __shfl_down_sync(0xffffffffu, inside, offset);  // planted: wave64
  __syncwarp();
  if ((threadIdx.x & (warpSize - 1)) == 0) atomicAdd(hits, inside);
}

__global__ void countInsideFromBuffer(const float *xy, int n, unsigned long long *hits) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && xy[2 * i] * xy[2 * i] + xy[2 * i + 1] * xy[2 * i + 1] <= 1.0f) atomicAdd(hits, 1ULL);
}

int main() {
  const int blocks = 64, threads = 128, perThread = 256;
  curandState *states;
  unsigned long long *hits, h = 0;
  cudaMalloc(&states, blocks * threads * sizeof(curandState));
  cudaMalloc(&hits, sizeof(unsigned long long));
  cudaMemset(hits, 0, sizeof(unsigned long long));
  setupStates<<<blocks, threads>>>(states, 1234ULL);
  countInside<<<blocks, threads>>>(states, perThread, hits);
  cudaMemcpy(&h, hits, sizeof(h), cudaMemcpyDeviceToHost);
  printf("pi (device API) ~ %f\n", 4.0 * h / ((double)blocks * threads * perThread));

  const int n = 1 << 16;
  float *xy;
  cudaMalloc(&xy, 2 * n * sizeof(float));
  curandGenerator_t gen;
  CURAND_CALL(curandCreateGenerator(&gen, CURAND_RNG_PSEUDO_DEFAULT));
  CURAND_CALL(curandSetPseudoRandomGeneratorSeed(gen, 1234ULL));
  CURAND_CALL(curandGenerateUniform(gen, xy, 2 * n));
  cudaMemset(hits, 0, sizeof(unsigned long long));
  countInsideFromBuffer<<<(n + 255) / 256, 256>>>(xy, n, hits);
  cudaMemcpy(&h, hits, sizeof(h), cudaMemcpyDeviceToHost);
  printf("pi (host API) ~ %f\n", 4.0 * h / n);
  CURAND_CALL(curandDestroyGenerator(gen));
  cudaFree(xy);
  cudaFree(states);
  cudaFree(hits);
  return 0;
}

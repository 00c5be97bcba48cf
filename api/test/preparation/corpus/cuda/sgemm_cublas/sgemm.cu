// C = alpha * A * B + beta * C with cuBLAS, checked against a naive kernel.
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <cuda_runtime.h>
#include <cublas_v2.h>

#define CUBLAS_CHECK(x)                                                   \
  do {                                                                    \
    cublasStatus_t st = (x);                                              \
    if (st != CUBLAS_STATUS_SUCCESS) {                                    \
      fprintf(stderr, "cuBLAS error %d at line %d\n", (int)st, __LINE__); \
      exit(1);                                                            \
    }                                                                     \
  } while (0)

#define TILE 16

__global__ void sgemmNaive(int m, int n, int k, const float *A, const float *B, float *C) {
  __shared__ float As[TILE][TILE];
  __shared__ float Bs[TILE][TILE];
  int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
  float acc = 0.f;
  for (int t = 0; t < (k + TILE - 1) / TILE; ++t) {
    As[threadIdx.y][threadIdx.x] = (row < m && t * TILE + threadIdx.x < k) ? A[(t * TILE + threadIdx.x) * m + row] : 0.f;
    Bs[threadIdx.y][threadIdx.x] = (col < n && t * TILE + threadIdx.y < k) ? B[col * k + t * TILE + threadIdx.y] : 0.f;
    __syncthreads();
    for (int i = 0; i < TILE; ++i) acc += As[threadIdx.y][i] * Bs[i][threadIdx.x];
    __syncthreads();
  }
  if (row < m && col < n) C[col * m + row] = acc;
}

int main() {
  const int m = 128, n = 96, k = 64;
  float *A, *B, *C, *Cref;
  cudaMallocManaged(&A, m * k * sizeof(float));
  cudaMallocManaged(&B, k * n * sizeof(float));
  cudaMallocManaged(&C, m * n * sizeof(float));
  cudaMallocManaged(&Cref, m * n * sizeof(float));
  for (int i = 0; i < m * k; ++i) A[i] = (float)(i % 7) / 7.f;
  for (int i = 0; i < k * n; ++i) B[i] = (float)(i % 5) / 5.f;

  cublasHandle_t handle;
  CUBLAS_CHECK(cublasCreate(&handle));
  cudaStream_t stream;
  cudaStreamCreate(&stream);
  CUBLAS_CHECK(cublasSetStream(handle, stream));
  const float alpha = 1.f, beta = 0.f;
  CUBLAS_CHECK(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, A, m, B, k, &beta, C, m));
  dim3 block(TILE, TILE), grid((n + TILE - 1) / TILE, (m + TILE - 1) / TILE);
  sgemmNaive<<<grid, block, 0, stream>>>(m, n, k, A, B, Cref);
  cudaStreamSynchronize(stream);
  double maxErr = 0;
  for (int i = 0; i < m * n; ++i) maxErr = fmax(maxErr, fabs(C[i] - Cref[i]));
  printf("max |cublas - naive| = %g\n", maxErr);
  float nrm = 0.f;
  CUBLAS_CHECK(cublasSnrm2(handle, m * n, C, 1, &nrm));
  printf("||C|| = %f\n", nrm);
  CUBLAS_CHECK(cublasDestroy(handle));
  cudaStreamDestroy(stream);
  cudaFree(A);
  cudaFree(B);
  cudaFree(C);
  cudaFree(Cref);
  return maxErr < 1e-3 ? 0 : 1;
}

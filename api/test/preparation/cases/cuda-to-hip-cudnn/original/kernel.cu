#include <cuda_runtime.h>
#include <cudnn.h>
__global__ void k(float *x) { x[threadIdx.x] = 1.0f; }
int main() { cudnnHandle_t h; cudnnCreate(&h); float *d; cudaMalloc(&d, 4); k<<<1, 1>>>(d); cudaDeviceSynchronize(); return 0; }

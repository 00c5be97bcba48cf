// Corpus program in the style of cuda-samples' vectorAddDrv: the CUDA driver API (context, module,
// cuLaunchKernel), with helper_cuda_drvapi.h's checkCudaErrors, which exists only after cuda.h.
#include <stdio.h>
#include <string.h>
#include <cstring>
#include <iostream>

// includes, CUDA
#include <cuda.h>

// includes, project
#include <helper_cuda_drvapi.h>
#include <helper_functions.h>

using namespace std;

CUdevice cuDevice;
CUcontext cuContext;
CUmodule cuModule;
CUfunction vecAdd_kernel;
float *h_A, *h_B, *h_C;
CUdeviceptr d_A, d_B, d_C;

int CleanupNoFailure() {
  checkCudaErrors(cuMemFree(d_A));
  checkCudaErrors(cuMemFree(d_B));
  checkCudaErrors(cuMemFree(d_C));
  free(h_A);
  free(h_B);
  free(h_C);
  checkCudaErrors(cuCtxDestroy(cuContext));
  return EXIT_SUCCESS;
}

int main(int argc, char **argv) {
  printf("Vector Addition (Driver API)\n");
  int N = 50000, devID = 0;
  size_t size = N * sizeof(float);

  checkCudaErrors(cuInit(0));
  cuDevice = findCudaDeviceDRV(argc, (const char **)argv);

  int driverVersion = 0, totalGlobalMemMB = 0;
  size_t totalMem = 0;
  checkCudaErrors(cuDriverGetVersion(&driverVersion));
  checkCudaErrors(cuDeviceTotalMem(&totalMem, cuDevice));
  totalGlobalMemMB = (int)(totalMem >> 20);
  int warpSize = 0, maxThreads = 0;
  checkCudaErrors(cuDeviceGetAttribute(&warpSize, CU_DEVICE_ATTRIBUTE_WARP_SIZE, cuDevice));
  checkCudaErrors(cuDeviceGetAttribute(&maxThreads, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, cuDevice));
  printf("driver %d, %d MB, warp %d, %d threads per block\n", driverVersion, totalGlobalMemMB, warpSize, maxThreads);

  // Create context
  checkCudaErrors(cuCtxCreate(&cuContext, CU_CTX_SCHED_AUTO, cuDevice));

  // first search for the module path before we load the results
  string module_path = "vectorAdd_kernel64.fatbin";
  CUresult loaded = cuModuleLoad(&cuModule, module_path.c_str());
  if (loaded != CUDA_SUCCESS) {
    const char *name = NULL, *text = NULL;
    cuGetErrorName(loaded, &name);
    checkCudaErrors(cuGetErrorString(loaded, &text));
    printf("cuModuleLoad failed: %s (%s)\n", name, text);
    exit(EXIT_FAILURE);
  }
  checkCudaErrors(cuModuleGetFunction(&vecAdd_kernel, cuModule, "VecAdd_kernel"));

  h_A = (float *)malloc(size);
  h_B = (float *)malloc(size);
  h_C = (float *)malloc(size);
  for (int i = 0; i < N; ++i) {
    h_A[i] = rand() / (float)RAND_MAX;
    h_B[i] = rand() / (float)RAND_MAX;
  }

  checkCudaErrors(cuMemAlloc(&d_A, size));
  checkCudaErrors(cuMemAlloc(&d_B, size));
  checkCudaErrors(cuMemAlloc(&d_C, size));
  checkCudaErrors(cuMemcpyHtoD(d_A, h_A, size));
  checkCudaErrors(cuMemcpyHtoD(d_B, h_B, size));

  CUstream stream;
  CUevent start, stop;
  checkCudaErrors(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  checkCudaErrors(cuEventCreate(&start, CU_EVENT_DEFAULT));
  checkCudaErrors(cuEventCreate(&stop, CU_EVENT_DEFAULT));

  int threadsPerBlock = 256;
  int blocksPerGrid = (N + threadsPerBlock - 1) / threadsPerBlock;
  void *args[] = {&d_A, &d_B, &d_C, &N};
  checkCudaErrors(cuEventRecord(start, stream));
  checkCudaErrors(cuLaunchKernel(vecAdd_kernel, blocksPerGrid, 1, 1, threadsPerBlock, 1, 1, 0, stream, args, NULL));
  checkCudaErrors(cuEventRecord(stop, stream));
  checkCudaErrors(cuStreamSynchronize(stream));
  float ms = 0.0f;
  checkCudaErrors(cuEventElapsedTime(&ms, start, stop));
  printf("kernel: %.3f ms (device %d)\n", ms, devID);

  checkCudaErrors(cuMemcpyDtoH(h_C, d_C, size));
  size_t freeMem = 0, totalMem2 = 0;
  checkCudaErrors(cuMemGetInfo(&freeMem, &totalMem2));

  int i;
  for (i = 0; i < N; ++i) {
    float sum = h_A[i] + h_B[i];
    if (fabs(h_C[i] - sum) > 1e-7f) break;
  }
  checkCudaErrors(cuEventDestroy(start));
  checkCudaErrors(cuEventDestroy(stop));
  checkCudaErrors(cuStreamDestroy(stream));
  CleanupNoFailure();
  printf("%s\n", (i == N) ? "Result = PASS" : "Result = FAIL");
  exit((i == N) ? EXIT_SUCCESS : EXIT_FAILURE);
}

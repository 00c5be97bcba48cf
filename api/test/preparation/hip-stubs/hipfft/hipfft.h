// Declaration-only stand-in for hipFFT (see ../README.md). Not a working library.
#pragma once
// the real header's include guard, which helper headers test (#ifdef HIPFFT_H_)
#ifndef HIPFFT_H_
#define HIPFFT_H_
#include <hip/hip_runtime_api.h>
#include <hip/hip_complex.h>

typedef enum {
  HIPFFT_SUCCESS = 0,
  HIPFFT_INVALID_PLAN = 1,
  HIPFFT_ALLOC_FAILED = 2,
  HIPFFT_INVALID_TYPE = 3,
  HIPFFT_INVALID_VALUE = 4,
  HIPFFT_INTERNAL_ERROR = 5,
  HIPFFT_EXEC_FAILED = 6,
  HIPFFT_SETUP_FAILED = 7,
  HIPFFT_INVALID_SIZE = 8,
} hipfftResult;
typedef enum { HIPFFT_R2C = 0x2a, HIPFFT_C2R = 0x2c, HIPFFT_C2C = 0x29, HIPFFT_D2Z = 0x6a, HIPFFT_Z2D = 0x6c, HIPFFT_Z2Z = 0x69 } hipfftType;
#define HIPFFT_FORWARD -1
#define HIPFFT_BACKWARD 1
typedef struct hipfftHandle_t *hipfftHandle;
typedef hipComplex hipfftComplex;
typedef float hipfftReal;

hipfftResult hipfftPlan1d(hipfftHandle *plan, int nx, hipfftType type, int batch);
hipfftResult hipfftExecR2C(hipfftHandle plan, hipfftReal *idata, hipfftComplex *odata);
hipfftResult hipfftExecC2R(hipfftHandle plan, hipfftComplex *idata, hipfftReal *odata);
hipfftResult hipfftDestroy(hipfftHandle plan);
#endif // HIPFFT_H_

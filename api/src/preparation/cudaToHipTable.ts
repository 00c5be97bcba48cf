/**
 * The CUDA → HIP mapping used by migrateCudaToHip: identifiers, headers and device intrinsics.
 *
 * The runtime/driver and cuRAND names are generated from the HIP 5.2 headers
 * (cudaToHipGeneratedNames.ts). cuBLAS → hipBLAS and cuFFT → hipFFT are written out here, because
 * Debian packages neither hipBLAS nor hipFFT to derive them from; the names follow the libraries'
 * one-for-one naming (cublasSgemm → hipblasSgemm, CUFFT_C2C → HIPFFT_C2C) except where noted.
 * Target is HIP 5.2 (the oldest ROCm our workers run): no `__shfl_*_sync`, no `__syncwarp`.
 */
import { HIPRAND_NAMES, RUNTIME_NAMES } from './cudaToHipGeneratedNames.js';

// ---- cuBLAS → hipBLAS
const BLAS_PRECISION_FUNCTIONS = [
  'gemm', 'gemv', 'ger', 'axpy', 'scal', 'nrm2', 'asum', 'copy', 'swap', 'rot', 'symv', 'symm', 'syrk',
  'syr2k', 'trsm', 'trmm', 'trsv', 'trmv', 'gemmBatched', 'gemmStridedBatched', 'gemvBatched',
  'gemvStridedBatched', 'geam', 'dgmm', 'getrfBatched', 'getrsBatched', 'getriBatched', 'geqrfBatched',
];
const BLAS_COMPLEX_ONLY = ['dotu', 'dotc', 'gerc', 'geru', 'hemv', 'herk', 'hemm'];
const BLAS_HANDLE_FUNCTIONS = [
  'Create', 'Destroy', 'SetStream', 'GetStream', 'SetPointerMode', 'GetPointerMode', 'SetVector',
  'GetVector', 'SetMatrix', 'GetMatrix', 'SetVectorAsync', 'GetVectorAsync', 'SetMatrixAsync',
  'GetMatrixAsync', 'SetAtomicsMode', 'GetAtomicsMode',
];
const BLAS_ENUMS = [
  'STATUS_SUCCESS', 'STATUS_NOT_INITIALIZED', 'STATUS_ALLOC_FAILED', 'STATUS_INVALID_VALUE',
  'STATUS_ARCH_MISMATCH', 'STATUS_MAPPING_ERROR', 'STATUS_EXECUTION_FAILED', 'STATUS_INTERNAL_ERROR',
  'STATUS_NOT_SUPPORTED', 'OP_N', 'OP_T', 'OP_C', 'FILL_MODE_UPPER', 'FILL_MODE_LOWER', 'FILL_MODE_FULL',
  'DIAG_NON_UNIT', 'DIAG_UNIT', 'SIDE_LEFT', 'SIDE_RIGHT', 'POINTER_MODE_HOST', 'POINTER_MODE_DEVICE',
  'ATOMICS_NOT_ALLOWED', 'ATOMICS_ALLOWED',
];
const BLAS_TYPES = [
  'Handle_t', 'Status_t', 'Operation_t', 'FillMode_t', 'DiagType_t', 'SideMode_t', 'PointerMode_t', 'AtomicsMode_t',
];

function blasNames(): Record<string, string> {
  const m: Record<string, string> = {};
  for (const f of BLAS_PRECISION_FUNCTIONS) {
    for (const p of ['S', 'D', 'C', 'Z']) {
      m[`cublas${p}${f}`] = `hipblas${p}${f}`;
      m[`cublas${p}${f}_v2`] = `hipblas${p}${f}`;
    }
  }
  for (const f of BLAS_COMPLEX_ONLY) {
    for (const p of ['C', 'Z']) {
      m[`cublas${p}${f}`] = `hipblas${p}${f}`;
      m[`cublas${p}${f}_v2`] = `hipblas${p}${f}`;
    }
  }
  for (const p of ['S', 'D']) m[`cublas${p}dot`] = m[`cublas${p}dot_v2`] = `hipblas${p}dot`;
  for (const [cu, hip] of [['Isamax', 'Isamax'], ['Idamax', 'Idamax'], ['Isamin', 'Isamin'], ['Idamin', 'Idamin']]) {
    m[`cublas${cu}`] = m[`cublas${cu}_v2`] = `hipblas${hip}`;
  }
  for (const f of BLAS_HANDLE_FUNCTIONS) m[`cublas${f}`] = m[`cublas${f}_v2`] = `hipblas${f}`;
  m.cublasGetVersion = m.cublasGetVersion_v2 = 'hipblasGetVersion';
  for (const e of BLAS_ENUMS) m[`CUBLAS_${e}`] = `HIPBLAS_${e}`;
  for (const t of BLAS_TYPES) m[`cublas${t}`] = `hipblas${t}`;
  return m;
}

// ---- cuFFT → hipFFT
const FFT_FUNCTIONS = [
  'Plan1d', 'Plan2d', 'Plan3d', 'PlanMany', 'MakePlan1d', 'MakePlan2d', 'MakePlan3d', 'MakePlanMany',
  'Create', 'Destroy', 'SetStream', 'GetSize', 'SetAutoAllocation', 'SetWorkArea', 'GetVersion',
  'ExecC2C', 'ExecR2C', 'ExecC2R', 'ExecZ2Z', 'ExecD2Z', 'ExecZ2D', 'EstimateMany',
];
const FFT_ENUMS = [
  'SUCCESS', 'INVALID_PLAN', 'ALLOC_FAILED', 'INVALID_TYPE', 'INVALID_VALUE', 'INTERNAL_ERROR',
  'EXEC_FAILED', 'SETUP_FAILED', 'INVALID_SIZE', 'UNALIGNED_DATA', 'INVALID_DEVICE', 'NO_WORKSPACE',
  'NOT_IMPLEMENTED', 'NOT_SUPPORTED', 'R2C', 'C2R', 'C2C', 'D2Z', 'Z2D', 'Z2Z', 'FORWARD',
];
function fftNames(): Record<string, string> {
  const m: Record<string, string> = {};
  for (const f of FFT_FUNCTIONS) m[`cufft${f}`] = `hipfft${f}`;
  for (const e of FFT_ENUMS) m[`CUFFT_${e}`] = `HIPFFT_${e}`;
  for (const t of ['Handle', 'Result', 'Type', 'Complex', 'DoubleComplex', 'Real', 'DoubleReal']) {
    m[`cufft${t}`] = `hipfft${t}`;
  }
  m.CUFFT_INVERSE = 'HIPFFT_BACKWARD'; // the one irregular name
  return m;
}

// ---- everything else that is not a library prefix
const MISC_NAMES: Record<string, string> = {
  __CUDACC__: '__HIPCC__',
  __CUDA_ARCH__: '__HIP_DEVICE_COMPILE__',
  __NVCC__: '__HIPCC__',
  CUDART_VERSION: 'HIP_VERSION',
  // runtime names the generator's pattern missed (HIP implements them as macros or templates)
  cudaGetLastError: 'hipGetLastError',
  cudaPeekAtLastError: 'hipPeekAtLastError',
  cudaLaunchHostFunc: 'hipLaunchHostFunc',
  cudaStreamLegacy: 'hipStreamLegacy',
  cudaSetValidDevices: 'hipSetValidDevices',
  make_cudaExtent: 'make_hipExtent',
  make_cudaPitchedPtr: 'make_hipPitchedPtr',
  make_cudaPos: 'make_hipPos',
  cudaDataType: 'hipDataType',
  cudaDataType_t: 'hipDataType',
  CUDA_R_32F: 'HIP_R_32F',
  CUDA_R_64F: 'HIP_R_64F',
  CUDA_R_16F: 'HIP_R_16F',
  CUDA_C_32F: 'HIP_C_32F',
  CUDA_C_64F: 'HIP_C_64F',
};

/** Every identifier mapping (an identifier token equal to a key becomes the value). */
export const CUDA_TO_HIP: Readonly<Record<string, string>> = Object.freeze({
  ...RUNTIME_NAMES,
  ...HIPRAND_NAMES,
  ...blasNames(),
  ...fftNames(),
  ...MISC_NAMES,
});

/** Warp intrinsics with a lane-mask first argument → their HIP 5.2 form without it. */
export const SYNC_INTRINSICS: Readonly<Record<string, string>> = {
  __shfl_sync: '__shfl',
  __shfl_up_sync: '__shfl_up',
  __shfl_down_sync: '__shfl_down',
  __shfl_xor_sync: '__shfl_xor',
  __ballot_sync: '__ballot',
  __any_sync: '__any',
  __all_sync: '__all',
};

/**
 * `#include` targets. `null` removes nothing but marks the header unconverted (no HIP
 * counterpart); `hip/hip_runtime.h` is where nvcc's implicit includes go, since hipcc adds none.
 */
export const CUDA_HEADERS: Readonly<Record<string, string | null>> = {
  'cuda_runtime.h': 'hip/hip_runtime.h',
  'cuda_runtime_api.h': 'hip/hip_runtime_api.h',
  'cuda.h': 'hip/hip_runtime.h',
  'device_launch_parameters.h': 'hip/hip_runtime.h',
  'device_functions.h': 'hip/device_functions.h',
  'cuda_fp16.h': 'hip/hip_fp16.h',
  'cuda_profiler_api.h': 'hip/hip_runtime_api.h',
  'vector_types.h': 'hip/hip_vector_types.h',
  'cooperative_groups.h': 'hip/hip_cooperative_groups.h',
  'cublas_v2.h': 'hipblas/hipblas.h',
  'cublas.h': 'hipblas/hipblas.h',
  'curand.h': 'hiprand/hiprand.h',
  'curand_kernel.h': 'hiprand/hiprand_kernel.h',
  'cufft.h': 'hipfft/hipfft.h',
  'cub/cub.cuh': 'hipcub/hipcub.hpp',
  'cuComplex.h': 'hip/hip_complex.h',
  'cooperative_groups/reduce.h': null,
  'cuda_bf16.h': null,
  'helper_cuda.h': null,
  'helper_functions.h': null,
  'math_constants.h': null,
  'cudnn.h': null,
  'cusparse.h': null,
  'cusolverDn.h': null,
  'nvToolsExt.h': null,
  'nvrtc.h': null,
};

/** Prefixes that mark an identifier as NVIDIA-specific, for the "left unconverted" report. */
export const CUDA_IDENT_PATTERN =
  /^(?:cuda[A-Z_]|cu[A-Z][a-z]|CU[A-Z_]|CUDA_|cublas|CUBLAS_|curand|CURAND_|cufft|CUFFT_|cusparse|CUSPARSE_|cusolver|CUSOLVER_|cudnn|CUDNN_|nvrtc|NVRTC_|nvtx|__nv_|__shfl\w*_sync$|__syncwarp$|__activemask$|__reduce_\w+_sync$|__match_\w+_sync$)/;

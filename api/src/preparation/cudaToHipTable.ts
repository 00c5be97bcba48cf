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
  'gemm',
  'gemv',
  'ger',
  'axpy',
  'scal',
  'nrm2',
  'asum',
  'copy',
  'swap',
  'rot',
  'symv',
  'symm',
  'syrk',
  'syr2k',
  'trsm',
  'trmm',
  'trsv',
  'trmv',
  'gemmBatched',
  'gemmStridedBatched',
  'gemvBatched',
  'gemvStridedBatched',
  'geam',
  'dgmm',
  'getrfBatched',
  'getrsBatched',
  'getriBatched',
  'geqrfBatched',
];
const BLAS_COMPLEX_ONLY = ['dotu', 'dotc', 'gerc', 'geru', 'hemv', 'herk', 'hemm'];
const BLAS_HANDLE_FUNCTIONS = [
  'Create',
  'Destroy',
  'SetStream',
  'GetStream',
  'SetPointerMode',
  'GetPointerMode',
  'SetVector',
  'GetVector',
  'SetMatrix',
  'GetMatrix',
  'SetVectorAsync',
  'GetVectorAsync',
  'SetMatrixAsync',
  'GetMatrixAsync',
  'SetAtomicsMode',
  'GetAtomicsMode',
];
const BLAS_ENUMS = [
  'STATUS_SUCCESS',
  'STATUS_NOT_INITIALIZED',
  'STATUS_ALLOC_FAILED',
  'STATUS_INVALID_VALUE',
  'STATUS_ARCH_MISMATCH',
  'STATUS_MAPPING_ERROR',
  'STATUS_EXECUTION_FAILED',
  'STATUS_INTERNAL_ERROR',
  'STATUS_NOT_SUPPORTED',
  'OP_N',
  'OP_T',
  'OP_C',
  'FILL_MODE_UPPER',
  'FILL_MODE_LOWER',
  'FILL_MODE_FULL',
  'DIAG_NON_UNIT',
  'DIAG_UNIT',
  'SIDE_LEFT',
  'SIDE_RIGHT',
  'POINTER_MODE_HOST',
  'POINTER_MODE_DEVICE',
  'ATOMICS_NOT_ALLOWED',
  'ATOMICS_ALLOWED',
];
const BLAS_TYPES = ['Handle_t', 'Status_t', 'Operation_t', 'FillMode_t', 'DiagType_t', 'SideMode_t', 'PointerMode_t', 'AtomicsMode_t'];

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
  for (const [cu, hip] of [
    ['Isamax', 'Isamax'],
    ['Idamax', 'Idamax'],
    ['Isamin', 'Isamin'],
    ['Idamin', 'Idamin'],
  ]) {
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
  'Plan1d',
  'Plan2d',
  'Plan3d',
  'PlanMany',
  'MakePlan1d',
  'MakePlan2d',
  'MakePlan3d',
  'MakePlanMany',
  'Create',
  'Destroy',
  'SetStream',
  'GetSize',
  'SetAutoAllocation',
  'SetWorkArea',
  'GetVersion',
  'ExecC2C',
  'ExecR2C',
  'ExecC2R',
  'ExecZ2Z',
  'ExecD2Z',
  'ExecZ2D',
  'EstimateMany',
];
const FFT_ENUMS = [
  'SUCCESS',
  'INVALID_PLAN',
  'ALLOC_FAILED',
  'INVALID_TYPE',
  'INVALID_VALUE',
  'INTERNAL_ERROR',
  'EXEC_FAILED',
  'SETUP_FAILED',
  'INVALID_SIZE',
  'UNALIGNED_DATA',
  'INVALID_DEVICE',
  'NO_WORKSPACE',
  'NOT_IMPLEMENTED',
  'NOT_SUPPORTED',
  'R2C',
  'C2R',
  'C2C',
  'D2Z',
  'Z2D',
  'Z2Z',
  'FORWARD',
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
  CUDA_VERSION: 'HIP_VERSION',
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

// ---- CUDA driver API (cuda.h) → HIP. HIP's runtime and driver halves share one error type
// (hipError_t), one device handle (int) and one stream/event type, so most calls map one for one.
// Functions whose signature differs (cuGetErrorName/cuGetErrorString return through an out-pointer)
// are rewritten as expressions in migrateCudaToHip.ts (DRIVER_OUT_POINTER_CALLS).
const DRIVER_FUNCTIONS: Record<string, string> = {
  cuDeviceGetAttribute: 'hipDeviceGetAttribute',
  cuMemGetInfo: 'hipMemGetInfo',
  cuMemFreeHost: 'hipHostFree',
  cuMemHostAlloc: 'hipHostMalloc',
  cuMemAllocManaged: 'hipMallocManaged',
  cuMemHostGetDevicePointer: 'hipHostGetDevicePointer',
  cuMemHostRegister: 'hipHostRegister',
  cuMemHostUnregister: 'hipHostUnregister',
  cuMemPrefetchAsync: 'hipMemPrefetchAsync',
  cuStreamCreate: 'hipStreamCreateWithFlags', // cuStreamCreate(&s, flags)
  cuStreamCreateWithPriority: 'hipStreamCreateWithPriority',
  cuStreamDestroy: 'hipStreamDestroy',
  cuStreamSynchronize: 'hipStreamSynchronize',
  cuStreamQuery: 'hipStreamQuery',
  cuStreamWaitEvent: 'hipStreamWaitEvent',
  cuEventCreate: 'hipEventCreateWithFlags', // cuEventCreate(&e, flags)
  cuEventRecord: 'hipEventRecord',
  cuEventSynchronize: 'hipEventSynchronize',
  cuEventQuery: 'hipEventQuery',
  cuEventElapsedTime: 'hipEventElapsedTime',
  cuEventDestroy: 'hipEventDestroy',
  cuOccupancyMaxActiveBlocksPerMultiprocessor: 'hipModuleOccupancyMaxActiveBlocksPerMultiprocessor',
  cuOccupancyMaxPotentialBlockSize: 'hipModuleOccupancyMaxPotentialBlockSize',
  cuDeviceCanAccessPeer: 'hipDeviceCanAccessPeer',
  cuDeviceGetPCIBusId: 'hipDeviceGetPCIBusId',
  cuDeviceGetByPCIBusId: 'hipDeviceGetByPCIBusId',
  cuCtxGetApiVersion: 'hipCtxGetApiVersion',
};
/** cuda.h `#define`s most calls to a `_v2` name; code written against either spelling maps the same. */
const DRIVER_V2 = [
  'cuCtxCreate',
  'cuCtxDestroy',
  'cuCtxPopCurrent',
  'cuCtxPushCurrent',
  'cuDeviceTotalMem',
  'cuMemAlloc',
  'cuMemAllocHost',
  'cuMemAllocPitch',
  'cuMemFree',
  'cuMemGetInfo',
  'cuMemGetAddressRange',
  'cuMemHostGetDevicePointer',
  'cuMemcpyHtoD',
  'cuMemcpyDtoH',
  'cuMemcpyDtoD',
  'cuMemcpyHtoDAsync',
  'cuMemcpyDtoHAsync',
  'cuMemcpyDtoDAsync',
  'cuMemsetD8',
  'cuMemsetD16',
  'cuMemsetD32',
  'cuModuleGetGlobal',
  'cuStreamDestroy',
  'cuEventDestroy',
  'cuDevicePrimaryCtxRelease',
  'cuDevicePrimaryCtxReset',
  'cuDevicePrimaryCtxSetFlags',
  'cuMemHostRegister',
];
/** CU_DEVICE_ATTRIBUTE_<X> → hipDeviceAttribute<Y> (the CUDA-compatible block of hipDeviceAttribute_t). */
const DEVICE_ATTRIBUTES: Record<string, string> = {
  MAX_THREADS_PER_BLOCK: 'MaxThreadsPerBlock',
  MAX_BLOCK_DIM_X: 'MaxBlockDimX',
  MAX_BLOCK_DIM_Y: 'MaxBlockDimY',
  MAX_BLOCK_DIM_Z: 'MaxBlockDimZ',
  MAX_GRID_DIM_X: 'MaxGridDimX',
  MAX_GRID_DIM_Y: 'MaxGridDimY',
  MAX_GRID_DIM_Z: 'MaxGridDimZ',
  MAX_SHARED_MEMORY_PER_BLOCK: 'MaxSharedMemoryPerBlock',
  SHARED_MEMORY_PER_BLOCK: 'MaxSharedMemoryPerBlock',
  TOTAL_CONSTANT_MEMORY: 'TotalConstantMemory',
  WARP_SIZE: 'WarpSize',
  MAX_PITCH: 'MaxPitch',
  MAX_REGISTERS_PER_BLOCK: 'MaxRegistersPerBlock',
  REGISTERS_PER_BLOCK: 'MaxRegistersPerBlock',
  CLOCK_RATE: 'ClockRate',
  TEXTURE_ALIGNMENT: 'TextureAlignment',
  TEXTURE_PITCH_ALIGNMENT: 'TexturePitchAlignment',
  GPU_OVERLAP: 'DeviceOverlap',
  MULTIPROCESSOR_COUNT: 'MultiprocessorCount',
  KERNEL_EXEC_TIMEOUT: 'KernelExecTimeout',
  INTEGRATED: 'Integrated',
  CAN_MAP_HOST_MEMORY: 'CanMapHostMemory',
  COMPUTE_MODE: 'ComputeMode',
  SURFACE_ALIGNMENT: 'SurfaceAlignment',
  CONCURRENT_KERNELS: 'ConcurrentKernels',
  ECC_ENABLED: 'EccEnabled',
  PCI_BUS_ID: 'PciBusId',
  PCI_DEVICE_ID: 'PciDeviceId',
  PCI_DOMAIN_ID: 'PciDomainID',
  TCC_DRIVER: 'TccDriver',
  MEMORY_CLOCK_RATE: 'MemoryClockRate',
  GLOBAL_MEMORY_BUS_WIDTH: 'MemoryBusWidth',
  L2_CACHE_SIZE: 'L2CacheSize',
  MAX_THREADS_PER_MULTIPROCESSOR: 'MaxThreadsPerMultiProcessor',
  ASYNC_ENGINE_COUNT: 'AsyncEngineCount',
  UNIFIED_ADDRESSING: 'UnifiedAddressing',
  COMPUTE_CAPABILITY_MAJOR: 'ComputeCapabilityMajor',
  COMPUTE_CAPABILITY_MINOR: 'ComputeCapabilityMinor',
  STREAM_PRIORITIES_SUPPORTED: 'StreamPrioritiesSupported',
  GLOBAL_L1_CACHE_SUPPORTED: 'GlobalL1CacheSupported',
  LOCAL_L1_CACHE_SUPPORTED: 'LocalL1CacheSupported',
  MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: 'SharedMemPerMultiprocessor',
  MAX_REGISTERS_PER_MULTIPROCESSOR: 'MaxRegistersPerMultiprocessor',
  MANAGED_MEMORY: 'ManagedMemory',
  MULTI_GPU_BOARD: 'IsMultiGpuBoard',
  MULTI_GPU_BOARD_GROUP_ID: 'MultiGpuBoardGroupID',
  HOST_NATIVE_ATOMIC_SUPPORTED: 'HostNativeAtomicSupported',
  SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO: 'SingleToDoublePrecisionPerfRatio',
  PAGEABLE_MEMORY_ACCESS: 'PageableMemoryAccess',
  CONCURRENT_MANAGED_ACCESS: 'ConcurrentManagedAccess',
  COMPUTE_PREEMPTION_SUPPORTED: 'ComputePreemptionSupported',
  CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM: 'CanUseHostPointerForRegisteredMem',
  COOPERATIVE_LAUNCH: 'CooperativeLaunch',
  COOPERATIVE_MULTI_DEVICE_LAUNCH: 'CooperativeMultiDeviceLaunch',
  MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: 'SharedMemPerBlockOptin',
  PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES: 'PageableMemoryAccessUsesHostPageTables',
  DIRECT_MANAGED_MEM_ACCESS_FROM_HOST: 'DirectManagedMemAccessFromHost',
  MAX_BLOCKS_PER_MULTIPROCESSOR: 'MaxBlocksPerMultiProcessor',
  MAX_PERSISTING_L2_CACHE_SIZE: 'PersistingL2CacheMaxSize',
  MAX_ACCESS_POLICY_WINDOW_SIZE: 'AccessPolicyMaxWindowSize',
  MEMORY_POOLS_SUPPORTED: 'MemoryPoolsSupported',
};
/** CUDA_ERROR_<X> → hipError<Y>. */
const DRIVER_ERRORS: Record<string, string> = {
  INVALID_VALUE: 'InvalidValue',
  OUT_OF_MEMORY: 'OutOfMemory',
  NOT_INITIALIZED: 'NotInitialized',
  DEINITIALIZED: 'Deinitialized',
  PROFILER_DISABLED: 'ProfilerDisabled',
  NO_DEVICE: 'NoDevice',
  INVALID_DEVICE: 'InvalidDevice',
  INVALID_IMAGE: 'InvalidImage',
  INVALID_CONTEXT: 'InvalidContext',
  CONTEXT_ALREADY_CURRENT: 'ContextAlreadyCurrent',
  MAP_FAILED: 'MapFailed',
  UNMAP_FAILED: 'UnmapFailed',
  ARRAY_IS_MAPPED: 'ArrayIsMapped',
  ALREADY_MAPPED: 'AlreadyMapped',
  NO_BINARY_FOR_GPU: 'NoBinaryForGpu',
  ALREADY_ACQUIRED: 'AlreadyAcquired',
  NOT_MAPPED: 'NotMapped',
  ECC_UNCORRECTABLE: 'ECCNotCorrectable',
  UNSUPPORTED_LIMIT: 'UnsupportedLimit',
  CONTEXT_ALREADY_IN_USE: 'ContextAlreadyInUse',
  PEER_ACCESS_UNSUPPORTED: 'PeerAccessUnsupported',
  INVALID_PTX: 'InvalidKernelFile',
  INVALID_GRAPHICS_CONTEXT: 'InvalidGraphicsContext',
  INVALID_SOURCE: 'InvalidSource',
  FILE_NOT_FOUND: 'FileNotFound',
  SHARED_OBJECT_SYMBOL_NOT_FOUND: 'SharedObjectSymbolNotFound',
  SHARED_OBJECT_INIT_FAILED: 'SharedObjectInitFailed',
  OPERATING_SYSTEM: 'OperatingSystem',
  INVALID_HANDLE: 'InvalidHandle',
  NOT_FOUND: 'NotFound',
  NOT_READY: 'NotReady',
  ILLEGAL_ADDRESS: 'IllegalAddress',
  LAUNCH_OUT_OF_RESOURCES: 'LaunchOutOfResources',
  LAUNCH_TIMEOUT: 'LaunchTimeOut',
  PEER_ACCESS_ALREADY_ENABLED: 'PeerAccessAlreadyEnabled',
  PEER_ACCESS_NOT_ENABLED: 'PeerAccessNotEnabled',
  PRIMARY_CONTEXT_ACTIVE: 'SetOnActiveProcess',
  CONTEXT_IS_DESTROYED: 'ContextIsDestroyed',
  ASSERT: 'Assert',
  HOST_MEMORY_ALREADY_REGISTERED: 'HostMemoryAlreadyRegistered',
  HOST_MEMORY_NOT_REGISTERED: 'HostMemoryNotRegistered',
  LAUNCH_FAILED: 'LaunchFailure',
  COOPERATIVE_LAUNCH_TOO_LARGE: 'CooperativeLaunchTooLarge',
  NOT_SUPPORTED: 'NotSupported',
  UNKNOWN: 'Unknown',
};
/** Driver enumerators and flags with irregular HIP names. */
const DRIVER_CONSTANTS: Record<string, string> = {
  CU_COMPUTEMODE_DEFAULT: 'hipComputeModeDefault',
  CU_COMPUTEMODE_PROHIBITED: 'hipComputeModeProhibited',
  CU_COMPUTEMODE_EXCLUSIVE_PROCESS: 'hipComputeModeExclusiveProcess',
  CU_CTX_SCHED_AUTO: 'hipDeviceScheduleAuto',
  CU_CTX_SCHED_SPIN: 'hipDeviceScheduleSpin',
  CU_CTX_SCHED_YIELD: 'hipDeviceScheduleYield',
  CU_CTX_SCHED_BLOCKING_SYNC: 'hipDeviceScheduleBlockingSync',
  CU_CTX_BLOCKING_SYNC: 'hipDeviceScheduleBlockingSync',
  CU_CTX_SCHED_MASK: 'hipDeviceScheduleMask',
  CU_CTX_MAP_HOST: 'hipDeviceMapHost',
  CU_CTX_LMEM_RESIZE_TO_MAX: 'hipDeviceLmemResizeToMax',
  CU_STREAM_DEFAULT: 'hipStreamDefault',
  CU_STREAM_NON_BLOCKING: 'hipStreamNonBlocking',
  CU_EVENT_DEFAULT: 'hipEventDefault',
  CU_EVENT_BLOCKING_SYNC: 'hipEventBlockingSync',
  CU_EVENT_DISABLE_TIMING: 'hipEventDisableTiming',
  CU_EVENT_INTERPROCESS: 'hipEventInterprocess',
  CU_MEMHOSTALLOC_PORTABLE: 'hipHostMallocPortable',
  CU_MEMHOSTALLOC_DEVICEMAP: 'hipHostMallocMapped',
  CU_MEMHOSTALLOC_WRITECOMBINED: 'hipHostMallocWriteCombined',
  CU_MEMHOSTREGISTER_PORTABLE: 'hipHostRegisterPortable',
  CU_MEMHOSTREGISTER_DEVICEMAP: 'hipHostRegisterMapped',
  CU_MEM_ATTACH_GLOBAL: 'hipMemAttachGlobal',
  CU_MEM_ATTACH_HOST: 'hipMemAttachHost',
  CU_MEM_ATTACH_SINGLE: 'hipMemAttachSingle',
  CU_MEMORYTYPE_HOST: 'hipMemoryTypeHost',
  CU_MEMORYTYPE_DEVICE: 'hipMemoryTypeDevice',
  CU_MEMORYTYPE_ARRAY: 'hipMemoryTypeArray',
  CU_MEMORYTYPE_UNIFIED: 'hipMemoryTypeUnified',
  CU_FUNC_CACHE_PREFER_NONE: 'hipFuncCachePreferNone',
  CU_FUNC_CACHE_PREFER_SHARED: 'hipFuncCachePreferShared',
  CU_FUNC_CACHE_PREFER_L1: 'hipFuncCachePreferL1',
  CU_FUNC_CACHE_PREFER_EQUAL: 'hipFuncCachePreferEqual',
  CU_LAUNCH_PARAM_BUFFER_POINTER: 'HIP_LAUNCH_PARAM_BUFFER_POINTER',
  CU_LAUNCH_PARAM_BUFFER_SIZE: 'HIP_LAUNCH_PARAM_BUFFER_SIZE',
  CU_LAUNCH_PARAM_END: 'HIP_LAUNCH_PARAM_END',
  CUdevice_attribute: 'hipDeviceAttribute_t',
  CUdevice_attribute_enum: 'hipDeviceAttribute_t',
  CUfunc_cache: 'hipFuncCache_t',
  CUmemorytype: 'hipMemoryType',
  CUipcMemHandle: 'hipIpcMemHandle_t',
  CUipcEventHandle: 'hipIpcEventHandle_t',
  CUgraph: 'hipGraph_t',
  CUgraphExec: 'hipGraphExec_t',
  CUmemoryPool: 'hipMemPool_t',
  // runtime names the generator missed
  cudaComputeModeDefault: 'hipComputeModeDefault',
  cudaComputeModeProhibited: 'hipComputeModeProhibited',
  cudaComputeModeExclusive: 'hipComputeModeExclusive',
  cudaComputeModeExclusiveProcess: 'hipComputeModeExclusiveProcess',
  cudaMemPoolAttrReleaseThreshold: 'hipMemPoolAttrReleaseThreshold',
  cudaMemPoolReuseAllowOpportunistic: 'hipMemPoolReuseAllowOpportunistic',
};

/** The driver API names above, expanded (`CU_DEVICE_ATTRIBUTE_*`, `CUDA_ERROR_*`, `_v2` spellings). */
export const DRIVER_NAMES: Readonly<Record<string, string>> = (() => {
  const m: Record<string, string> = { ...DRIVER_FUNCTIONS, ...DRIVER_CONSTANTS };
  for (const [cu, hip] of Object.entries(DEVICE_ATTRIBUTES)) m[`CU_DEVICE_ATTRIBUTE_${cu}`] = `hipDeviceAttribute${hip}`;
  for (const [cu, hip] of Object.entries(DRIVER_ERRORS)) m[`CUDA_ERROR_${cu}`] = `hipError${hip}`;
  const all = { ...RUNTIME_NAMES, ...m };
  for (const f of DRIVER_V2) if (all[f]) m[`${f}_v2`] = all[f]!;
  return m;
})();

/**
 * Header-guard macros that CUDA's own headers define, as helper headers test them
 * (`#ifdef __DRIVER_TYPES_H__`, `#ifdef __cuda_cuda_h__`, `#ifdef CUBLAS_API_H_` …), → the macro
 * the translated header defines. Only rewritten on preprocessor lines. Without this the helpers
 * (checkCudaErrors, findCudaDevice …) vanish after translation, since the CUDA headers that
 * defined the guards are no longer included.
 */
export const CUDA_HEADER_GUARDS: Readonly<Record<string, string>> = {
  __CUDA_RUNTIME_H__: 'HIP_INCLUDE_HIP_HIP_RUNTIME_H',
  __CUDA_RUNTIME_API_H__: 'HIP_INCLUDE_HIP_HIP_RUNTIME_API_H',
  __DRIVER_TYPES_H__: 'HIP_INCLUDE_HIP_DRIVER_TYPES_H',
  __cuda_cuda_h__: 'HIP_INCLUDE_HIP_HIP_RUNTIME_H',
  __VECTOR_TYPES_H__: 'HIP_INCLUDE_HIP_HIP_VECTOR_TYPES_H',
  __DEVICE_FUNCTIONS_H__: 'HIP_INCLUDE_HIP_DEVICE_FUNCTIONS_H',
  __CUDA_FP16_H__: 'HIP_INCLUDE_HIP_HIP_FP16_H',
  __CUDA_FP16_HPP__: 'HIP_INCLUDE_HIP_HIP_FP16_H',
  _COOPERATIVE_GROUPS_H_: 'HIP_INCLUDE_HIP_HIP_COOPERATIVE_GROUP_H',
  CUBLAS_API_H_: 'HIPBLAS_H',
  CUBLAS_V2_H_: 'HIPBLAS_H',
  _CUFFT_H_: 'HIPFFT_H_',
  CURAND_H_: 'HIPRAND_H_',
  CURAND_KERNEL_H_: 'HIPRAND_KERNEL_H_',
  CUDA_COMPLEX_H_: 'HIP_INCLUDE_HIP_HIP_COMPLEX_H',
};

/**
 * Guards of CUDA libraries this toolkit does not translate: the block they guard stays inactive
 * after migration (as it would in CUDA without that library), which is right unless the program
 * uses the library, and then its calls are reported unconverted anyway.
 */
export const UNTRANSLATED_LIBRARY_GUARDS: Readonly<Record<string, string>> = {
  CUSPARSEAPI: 'cuSPARSE',
  CUSOLVER_COMMON_H_: 'cuSOLVER',
  NVJPEGAPI: 'nvJPEG',
  NV_NPPIDEFS_H: 'NPP',
  CUDNN_H_: 'cuDNN',
  NVRTC_H__: 'NVRTC',
};

/** Helper headers of NVIDIA's cuda-samples (Common/): translatable when the user brings them along. */
export const CUDA_SAMPLES_HELPERS: ReadonlySet<string> = new Set([
  'helper_cuda.h',
  'helper_cuda_drvapi.h',
  'helper_functions.h',
  'helper_string.h',
  'helper_timer.h',
  'helper_math.h',
  'helper_image.h',
  'exception.h',
  'helper_multiprocess.h',
]);

/** Every identifier mapping (an identifier token equal to a key becomes the value). */
export const CUDA_TO_HIP: Readonly<Record<string, string>> = Object.freeze({
  ...RUNTIME_NAMES,
  ...HIPRAND_NAMES,
  ...blasNames(),
  ...fftNames(),
  ...DRIVER_NAMES,
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
  'math_constants.h': null,
  'cudnn.h': null,
  'cusparse.h': null,
  'cusolverDn.h': null,
  'nvToolsExt.h': null,
  'nvrtc.h': null,
};

/** Prefixes that mark an identifier as NVIDIA-specific, for the "left unconverted" report. */
export const CUDA_IDENT_PATTERN =
  /^(?:cuda[A-Z_]|cu[A-Z][a-z]|CU[A-Z_]|CUDA_|cublas|CUBLAS_|curand|CURAND_|cufft|CUFFT_|cusparse|CUSPARSE_|cusolver|CUSOLVER_|cudnn|CUDNN_|nvrtc|NVRTC_|nvtx|__nv_|__shfl\w*_sync$|__syncwarp$|__activemask$|__reduce_\w+_sync$|__match_\w+_sync$|__nanosleep$|__cluster_dims__$|__grid_constant__$|nvcuda$)/;

/** What HIP 5.2 cannot express, by identifier: reported as an error hazard (and left unconverted). */
export const HIP52_LACKS: Readonly<Record<string, { what: string; fix: string }>> = {
  __reduce_add_sync: {
    what: 'warp reduction intrinsic (sm_80+)',
    fix: 'Write the reduction with __shfl_xor over the wavefront (mind its 64 lanes).',
  },
  __reduce_min_sync: { what: 'warp reduction intrinsic (sm_80+)', fix: 'Write the reduction with __shfl_xor over the wavefront.' },
  __reduce_max_sync: { what: 'warp reduction intrinsic (sm_80+)', fix: 'Write the reduction with __shfl_xor over the wavefront.' },
  __reduce_and_sync: { what: 'warp reduction intrinsic (sm_80+)', fix: 'Use __all / __ballot over the wavefront.' },
  __reduce_or_sync: { what: 'warp reduction intrinsic (sm_80+)', fix: 'Use __any / __ballot over the wavefront.' },
  __reduce_xor_sync: { what: 'warp reduction intrinsic (sm_80+)', fix: 'Write the reduction with __shfl_xor over the wavefront.' },
  __match_any_sync: {
    what: 'warp match intrinsic (sm_70+)',
    fix: 'Compare values with __shfl in a loop and build the lane mask with __ballot.',
  },
  __match_all_sync: { what: 'warp match intrinsic (sm_70+)', fix: 'Compare with lane 0 through __shfl and use __all.' },
  __nanosleep: { what: 'timed thread sleep', fix: 'Use __builtin_amdgcn_s_sleep(n) (units of 64 clocks) or drop the back-off.' },
  __cluster_dims__: { what: 'thread-block clusters (sm_90)', fix: 'AMD GPUs have no clusters: restructure around single blocks.' },
  cudaLaunchKernelEx: {
    what: 'extensible launch with attributes (CUDA 12)',
    fix: 'Launch with <<<…>>> or hipLaunchKernelGGL; attributes such as clusters have no HIP counterpart.',
  },
  cudaLaunchAttribute: { what: 'launch attributes (CUDA 12)', fix: 'Launch with <<<…>>>; drop the attributes.' },
  cudaLaunchConfig_t: { what: 'launch configuration of cudaLaunchKernelEx (CUDA 12)', fix: 'Launch with <<<…>>>.' },
  cudaDeviceSetLimit: {
    what: 'cudaDeviceSetLimit (HIP 5.2 has only hipDeviceGetLimit)',
    fix: 'Drop the call (HIP sizes the heap and printf buffer itself) or target a newer ROCm.',
  },
  nvcuda: { what: 'WMMA tensor-core API (mma.h)', fix: 'Port to rocWMMA (not in HIP 5.2) or to plain FMA loops.' },
  cudaGraphicsMapResources: { what: 'graphics interop', fix: 'No OpenGL/Direct3D interop in HIP 5.2: copy through host memory.' },
};

/**
 * Cooperative-groups features HIP 5.2 lacks (its amd_hip_cooperative_groups.h has thread_block,
 * grid_group, multi_grid_group, coalesced_group, tiled_partition and thread_block_tile with
 * shfl*, size(), thread_rank(), sync()): namespace functions and member functions.
 */
export const HIP52_CG_LACKS_FUNCTIONS: ReadonlySet<string> = new Set([
  'reduce',
  'inclusive_scan',
  'exclusive_scan',
  'memcpy_async',
  'wait',
  'wait_prior',
  'this_cluster',
  'cluster_group',
  'labeled_partition',
  'binary_partition',
  'invoke_one',
  'invoke_one_broadcast',
  'plus',
  'less',
  'greater',
  'bit_and',
  'bit_or',
  'bit_xor',
]);
export const HIP52_CG_LACKS_MEMBERS: ReadonlySet<string> = new Set([
  'any',
  'all',
  'ballot',
  'match_any',
  'match_all',
  'meta_group_rank',
  'meta_group_size',
  'num_blocks',
  'block_rank',
  'dim_blocks',
  'block_index',
  'dim_threads',
]);
/** Newer cooperative-groups spellings with a HIP 5.2 equivalent: `.num_threads()` is `.size()`. */
export const CG_MEMBER_RENAMES: Readonly<Record<string, string>> = { num_threads: 'size' };

/** L2 persistence (access-policy windows): performance hints HIP 5.2 has no API for. */
export const L2_HINT_NAMES: ReadonlySet<string> = new Set([
  'cudaStreamSetAttribute',
  'cudaStreamGetAttribute',
  'cudaStreamAttrValue',
  'cudaStreamAttributeAccessPolicyWindow',
  'cudaAccessPolicyWindow',
  'cudaLimitPersistingL2CacheSize',
  'cudaCtxResetPersistingL2Cache',
  'cudaAccessPropertyPersisting',
  'cudaAccessPropertyStreaming',
  'cudaAccessPropertyNormal',
  'cudaLaunchAttributeAccessPolicyWindow',
]);
/** cudaDeviceProp fields HIP 5.2's hipDeviceProp_t lacks, read as 0 (no persisting L2 on the target). */
export const L2_PROP_FIELDS: ReadonlySet<string> = new Set(['persistingL2CacheMaxSize', 'accessPolicyMaxWindowSize']);

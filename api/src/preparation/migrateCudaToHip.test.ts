import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HIPRAND_NAMES, RUNTIME_NAMES } from './cudaToHipGeneratedNames.js';
import { CUDA_HEADER_GUARDS, CUDA_TO_HIP, DRIVER_NAMES } from './cudaToHipTable.js';
import { migrateBuildFile } from './migrateBuildFile.js';
import { migrateCudaToHip } from './migrateCudaToHip.js';
import { tokenizeCpp } from './tokenizeCpp.js';

describe('tokenizeCpp', () => {
  it('is lossless', () => {
    const src = 'R"x(a "cuda" )x" // c\n#include <cuda.h>\n/* cudaMalloc */ int a = 0x1p-3f; char c = \'\\n\';\\\n';
    expect(
      tokenizeCpp(src)
        .map((t) => t.text)
        .join(''),
    ).toBe(src);
  });
});

describe('migrateCudaToHip', () => {
  it('leaves comments and string literals alone and maps identifiers', () => {
    const src =
      '// cudaMalloc in a comment\nconst char *s = "cudaMalloc failed";\nvoid f(float **p) { cudaMalloc(p, 4); /* cudaFree */ }\n';
    const r = migrateCudaToHip('a.cpp', src);
    expect(r.content).toBe(
      '#include <hip/hip_runtime.h>\n// cudaMalloc in a comment\nconst char *s = "cudaMalloc failed";\nvoid f(float **p) { hipMalloc(p, 4); /* cudaFree */ }\n',
    );
    expect(r.edits.find((e) => e.line === 3)).toMatchObject({
      before: 'void f(float **p) { cudaMalloc(p, 4); /* cudaFree */ }',
      rule: 'cuda-identifier',
    });
  });

  it('drops the lane mask of the _sync intrinsics and maps warp primitives', () => {
    const r = migrateCudaToHip(
      'k.cu',
      '#include <cuda_runtime.h>\n__device__ float f(float v) { v += __shfl_down_sync(0xffffffff, v, 1); __syncwarp(); return v + __shfl_sync(mask(a, b), v, 0); }\n',
    );
    expect(r.content).toContain('__shfl_down(v, 1)');
    expect(r.content).toContain('__builtin_amdgcn_wave_barrier()');
    expect(r.content).toContain('__shfl(v, 0)');
    expect(r.content.startsWith('#include <hip/hip_runtime.h>\n')).toBe(true);
  });

  it('keeps triple-chevron launches and reports unconverted names and compute-capability tests', () => {
    const src =
      '#include <cuda_runtime.h>\n#include <helper_cuda.h>\n__global__ void k() {}\nint main() { k<<<1, 1>>>(); cudaGraphicsMapResources(0, 0, 0);\n#if __CUDA_ARCH__ >= 700\n#endif\n}\n';
    const r = migrateCudaToHip('m.cu', src);
    expect(r.content).toContain('k<<<1, 1>>>();');
    expect(r.unconverted.map((u) => `${u.line}:${u.identifier}`)).toEqual([
      '2:#include <helper_cuda.h>',
      '4:cudaGraphicsMapResources',
      '5:__CUDA_ARCH__',
    ]);
    expect(r.hazards.find((h) => h.rule === 'cuda-arch-number')?.line).toBe(5);
  });

  it("does not rename the program's own macros and functions", () => {
    const r = migrateCudaToHip(
      'm.cu',
      '#define CUDA_CHECK(x) x\nvoid cudaHelper() {}\nint main() { CUDA_CHECK(cudaDeviceSynchronize()); cudaHelper(); }\n',
    );
    expect(r.content).toContain('CUDA_CHECK(hipDeviceSynchronize()); cudaHelper();');
    expect(r.unconverted).toEqual([]);
  });

  it('returns code without CUDA-isms unchanged', () => {
    const src = '#include <vector>\nint main() { std::vector<int> v; return (int)v.size(); }\n';
    const r = migrateCudaToHip('plain.cpp', src);
    expect(r.content).toBe(src);
    expect(r.edits).toEqual([]);
  });
});

describe('migrateCudaToHip on cuda-samples-style code', () => {
  it("rewrites guards on CUDA header macros to the HIP headers' guards, on preprocessor lines only", () => {
    const src =
      '#ifdef __DRIVER_TYPES_H__\n#define checkCudaErrors(v) v\n#endif\n#if defined(__CUDA_RUNTIME_H__) && defined(CUBLAS_API_H_)\n#endif\n#ifndef __cuda_cuda_h__\n#endif\nint __DRIVER_TYPES_H__x;\n';
    const r = migrateCudaToHip('helper_cuda.h', src);
    expect(r.content).toContain('#ifdef HIP_INCLUDE_HIP_DRIVER_TYPES_H\n');
    expect(r.content).toContain('#if defined(HIP_INCLUDE_HIP_HIP_RUNTIME_H) && defined(HIPBLAS_H)\n');
    expect(r.content).toContain('#ifndef HIP_INCLUDE_HIP_HIP_RUNTIME_H\n');
    expect(r.edits.filter((e) => e.rule.includes('cuda-header-guard')).map((e) => e.line)).toEqual([1, 4, 6]);
  });

  it('keeps blocks guarded by untranslated libraries inactive and says so for each name in them', () => {
    const r = migrateCudaToHip('h.h', '#ifdef CUSPARSEAPI\nconst char *f(cusparseStatus_t e);\n#endif\n');
    expect(r.content).toContain('#ifdef CUSPARSEAPI\n');
    expect(r.unconverted.map((u) => `${u.line}:${u.identifier}`)).toEqual(['1:CUSPARSEAPI', '2:cusparseStatus_t']);
    expect(r.unconverted[1]!.reason).toMatch(/guarded by CUSPARSEAPI: cuSPARSE is not translated/);
  });

  it('maps the driver API; cuGetErrorName/cuGetErrorString become assignments from hipGetErrorName/String', () => {
    const src = [
      'void f(CUresult err, CUdevice dev) {',
      '  const char *s = NULL;',
      '  cuGetErrorName(err, &s);',
      '  checkCudaErrors(cuGetErrorString(CUDA_ERROR_INVALID_VALUE, &s));',
      '  int sms; cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);',
      '  CUstream st; cuStreamCreate(&st, CU_STREAM_NON_BLOCKING); cuMemAlloc_v2(0, 4);',
      '}',
    ].join('\n');
    const r = migrateCudaToHip('d.cpp', src);
    const lines = r.content.split('\n');
    expect(lines[1]).toBe('void f(hipError_t err, hipDevice_t dev) {');
    expect(lines[3]).toBe('  s = hipGetErrorName(err);');
    expect(lines[4]).toBe('  checkCudaErrors((s = hipGetErrorString(hipErrorInvalidValue), hipSuccess));');
    expect(lines[5]).toBe('  int sms; hipDeviceGetAttribute(&sms, hipDeviceAttributeMultiprocessorCount, dev);');
    expect(lines[6]).toBe('  hipStream_t st; hipStreamCreateWithFlags(&st, hipStreamNonBlocking); hipMalloc(0, 4);');
    expect(r.unconverted).toEqual([]);
  });

  it("does not report the program's own variables that look like CUDA names, nor mangle JavaScript-object words", () => {
    const r = migrateCudaToHip(
      'v.cpp',
      'CUdevice cuDevice;\nint toString = 0, constructor = 1;\nvoid g() { cuDeviceGet(&cuDevice, 0); }\n',
    );
    expect(r.content).toContain('hipDevice_t cuDevice;\nint toString = 0, constructor = 1;\nvoid g() { hipDeviceGet(&cuDevice, 0); }');
    expect(r.unconverted).toEqual([]);
  });

  it('drops __grid_constant__ with an info hazard, and renames .num_threads() on cooperative groups', () => {
    const src =
      '#include <cooperative_groups.h>\nnamespace cg = cooperative_groups;\nstruct P { int n; };\n__global__ void k(const __grid_constant__ P p) { auto t = cg::tiled_partition<32>(cg::this_thread_block()); int n = t.num_threads(); }\n';
    const r = migrateCudaToHip('g.cu', src);
    expect(r.content).toContain(
      '__global__ void k(const P p) { auto t = cg::tiled_partition<32>(cg::this_thread_block()); int n = t.size(); }',
    );
    expect(r.hazards.map((h) => `${h.line}:${h.severity}:${h.rule}`)).toEqual(['4:info:grid-constant']);
  });

  it('reports what HIP 5.2 cannot express as error hazards at their lines', () => {
    const src =
      '#include <cooperative_groups.h>\nnamespace cg = cooperative_groups;\n__global__ void k(int *o, int v) {\n  auto t = cg::tiled_partition<32>(cg::this_thread_block());\n  o[0] = cg::reduce(t, v, cg::plus<int>());\n  if (t.any(v)) o[1] = __reduce_add_sync(0xffffffff, v);\n  __nanosleep(100);\n}\n';
    const r = migrateCudaToHip('r.cu', src);
    expect(r.hazards.filter((h) => h.severity === 'error').map((h) => `${h.line}:${h.rule}:${h.what.split(': ')[0]}`)).toEqual([
      '5:hip52-cooperative-groups:cg::reduce',
      '5:hip52-cooperative-groups:cg::plus',
      '6:hip52-cooperative-groups:cooperative-groups member any()',
      '6:hip52-missing:__reduce_add_sync',
      '7:hip52-missing:__nanosleep',
    ]);
    expect(r.unconverted.map((u) => `${u.line}:${u.identifier}`)).toEqual([
      '5:cg::plus',
      '5:cg::reduce',
      '6:.any()',
      '6:__reduce_add_sync',
      '7:__nanosleep',
    ]);
  });

  it('removes access-policy-window statements (a cache hint HIP 5.2 lacks) with a warning each, lines kept', () => {
    const src = [
      'void f(cudaStream_t s, float *p, cudaDeviceProp prop) {',
      '  size_t n = prop.persistingL2CacheMaxSize;',
      '  cudaStreamAttrValue attr;',
      '  attr.accessPolicyWindow.base_ptr = p;',
      '  checkCudaErrors(cudaStreamSetAttribute(s, cudaStreamAttributeAccessPolicyWindow,',
      '                                         &attr));',
      '  if (n) cudaCtxResetPersistingL2Cache();',
      '}',
    ].join('\n');
    const r = migrateCudaToHip('l2.cu', src);
    const lines = r.content.split('\n');
    expect(lines.length).toBe(src.split('\n').length + 1); // + the hip_runtime include
    expect(lines[2]).toBe('  size_t n = 0;');
    expect(lines[3]).toMatch(/^ {2}\/\* chatgpu: L2 access-policy hint removed .*\*\/;$/);
    expect(lines[5]).toMatch(/^ {2}\/\* chatgpu: L2 access-policy hint removed .*\*\/;$/);
    expect(lines[6]).toBe('');
    expect(r.hazards.map((h) => `${h.line}:${h.severity}`)).toEqual(['2:warning', '3:warning', '4:warning', '5:warning', '7:error']);
    expect(r.unconverted.map((u) => `${u.line}:${u.identifier}`)).toEqual(['7:cudaCtxResetPersistingL2Cache']);
  });

  it('reports a cuda-samples helper include only when the helper is not in the tree', () => {
    const src = '#include <cuda_runtime.h>\n#include <helper_cuda.h>\nint main() { return 0; }\n';
    expect(migrateCudaToHip('m.cu', src, { treeFiles: ['Common/helper_cuda.h', 'm.cu'] }).unconverted).toEqual([]);
    expect(migrateCudaToHip('m.cu', src, { treeFiles: ['m.cu'] }).unconverted[0]).toMatchObject({
      line: 2,
      identifier: '#include <helper_cuda.h>',
    });
  });
});

describe('mapping table', () => {
  it('has a HIP name for the runtime, cuBLAS, cuRAND and cuFFT APIs NVIDIA samples use', () => {
    expect(Object.keys(CUDA_TO_HIP).length).toBeGreaterThan(900);
    for (const [cu, hip] of [
      ['cudaMemcpyAsync', 'hipMemcpyAsync'],
      ['cudaDeviceProp', 'hipDeviceProp_t'],
      ['cudaMallocHost', 'hipHostMalloc'],
      ['cudaDevAttrMultiProcessorCount', 'hipDeviceAttributeMultiprocessorCount'],
      ['cublasSgemm', 'hipblasSgemm'],
      ['CUBLAS_OP_T', 'HIPBLAS_OP_T'],
      ['curand_uniform', 'hiprand_uniform'],
      ['CUFFT_INVERSE', 'HIPFFT_BACKWARD'],
    ])
      expect(CUDA_TO_HIP[cu!]).toBe(hip);
  });

  it('maps runtime and hipRAND names only to names the installed HIP headers declare', () => {
    const roots = ['/usr/include/hip', '/usr/include/hiprand', '/usr/include/rocrand'];
    if (!existsSync(roots[0]!)) throw new Error('HIP headers not found: apt-get install -y hipcc libhiprand-dev librocrand-dev');
    const words = new Set<string>();
    const walk = (d: string): void => {
      if (!existsSync(d)) return;
      for (const e of readdirSync(d, { withFileTypes: true })) {
        if (statSync(join(d, e.name)).isDirectory()) {
          if (!/nvidia_detail|nvcc_detail/.test(e.name)) walk(join(d, e.name));
        } else if (!/nvcc/.test(e.name)) for (const w of readFileSync(join(d, e.name), 'utf8').match(/\w+/g) ?? []) words.add(w);
      }
    };
    roots.forEach(walk);
    const guards = Object.values(CUDA_HEADER_GUARDS).filter((g) => !/^HIPBLAS|^HIPFFT/.test(g)); // hipBLAS/hipFFT: not packaged by Debian
    const missing = [...Object.values({ ...RUNTIME_NAMES, ...HIPRAND_NAMES, ...DRIVER_NAMES }), ...guards].filter((h) => !words.has(h));
    expect(missing).toEqual([]);
  });
});

describe('migrateBuildFile', () => {
  it('rewrites a Makefile from nvcc to hipcc and reports what it cannot map', () => {
    const mk =
      'NVCC ?= nvcc\nNVCCFLAGS := -O3 -gencode arch=compute_80,code=sm_80 -Xcompiler -fopenmp\n# nvcc is great\nLIBS := -lcudart -lcublas -L$(CUDA_PATH)/lib64\n';
    const r = migrateBuildFile('Makefile', mk, 'gfx90a');
    expect(r.content).toBe(
      'HIPCC ?= hipcc\nHIPCCFLAGS := -O3 --offload-arch=gfx90a -fopenmp\n# nvcc is great\nLIBS := -lhipblas -L$(CUDA_PATH)/lib64\n',
    );
    expect(r.unconverted.map((u) => u.identifier)).toEqual(['$(CUDA_PATH)']);
  });
  it('rewrites CMake to the HIP language', () => {
    const r = migrateBuildFile(
      'CMakeLists.txt',
      'cmake_minimum_required(VERSION 3.18)\nproject(p LANGUAGES CXX CUDA)\nadd_executable(p main.cu)\ntarget_link_libraries(p CUDA::cublas)\n',
    );
    expect(r.content).toBe(
      'cmake_minimum_required(VERSION 3.21)\nproject(p LANGUAGES CXX HIP)\nadd_executable(p main.cu)\ntarget_link_libraries(p roc::hipblas)\nset_source_files_properties(main.cu PROPERTIES LANGUAGE HIP)\n',
    );
  });
});

import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HIPRAND_NAMES, RUNTIME_NAMES } from './cudaToHipGeneratedNames.js';
import { CUDA_TO_HIP } from './cudaToHipTable.js';
import { migrateBuildFile } from './migrateBuildFile.js';
import { migrateCudaToHip } from './migrateCudaToHip.js';
import { tokenizeCpp } from './tokenizeCpp.js';

describe('tokenizeCpp', () => {
  it('is lossless', () => {
    const src = 'R"x(a "cuda" )x" // c\n#include <cuda.h>\n/* cudaMalloc */ int a = 0x1p-3f; char c = \'\\n\';\\\n';
    expect(tokenizeCpp(src).map((t) => t.text).join('')).toBe(src);
  });
});

describe('migrateCudaToHip', () => {
  it('leaves comments and string literals alone and maps identifiers', () => {
    const src = '// cudaMalloc in a comment\nconst char *s = "cudaMalloc failed";\nvoid f(float **p) { cudaMalloc(p, 4); /* cudaFree */ }\n';
    const r = migrateCudaToHip('a.cpp', src);
    expect(r.content).toBe('#include <hip/hip_runtime.h>\n// cudaMalloc in a comment\nconst char *s = "cudaMalloc failed";\nvoid f(float **p) { hipMalloc(p, 4); /* cudaFree */ }\n');
    expect(r.edits.find((e) => e.line === 3)).toMatchObject({ before: 'void f(float **p) { cudaMalloc(p, 4); /* cudaFree */ }', rule: 'cuda-identifier' });
  });

  it('drops the lane mask of the _sync intrinsics and maps warp primitives', () => {
    const r = migrateCudaToHip('k.cu', '#include <cuda_runtime.h>\n__device__ float f(float v) { v += __shfl_down_sync(0xffffffff, v, 1); __syncwarp(); return v + __shfl_sync(mask(a, b), v, 0); }\n');
    expect(r.content).toContain('__shfl_down(v, 1)');
    expect(r.content).toContain('__builtin_amdgcn_wave_barrier()');
    expect(r.content).toContain('__shfl(v, 0)');
    expect(r.content.startsWith('#include <hip/hip_runtime.h>\n')).toBe(true);
  });

  it('keeps triple-chevron launches and reports unconverted names and compute-capability tests', () => {
    const src = '#include <cuda_runtime.h>\n#include <helper_cuda.h>\n__global__ void k() {}\nint main() { k<<<1, 1>>>(); cudaGraphicsMapResources(0, 0, 0);\n#if __CUDA_ARCH__ >= 700\n#endif\n}\n';
    const r = migrateCudaToHip('m.cu', src);
    expect(r.content).toContain('k<<<1, 1>>>();');
    expect(r.unconverted.map((u) => `${u.line}:${u.identifier}`)).toEqual(['2:#include <helper_cuda.h>', '4:cudaGraphicsMapResources', '5:__CUDA_ARCH__']);
    expect(r.hazards.find((h) => h.rule === 'cuda-arch-number')?.line).toBe(5);
  });

  it('does not rename the program\'s own macros and functions', () => {
    const r = migrateCudaToHip('m.cu', '#define CUDA_CHECK(x) x\nvoid cudaHelper() {}\nint main() { CUDA_CHECK(cudaDeviceSynchronize()); cudaHelper(); }\n');
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

describe('mapping table', () => {
  it('has a HIP name for the runtime, cuBLAS, cuRAND and cuFFT APIs NVIDIA samples use', () => {
    expect(Object.keys(CUDA_TO_HIP).length).toBeGreaterThan(900);
    for (const [cu, hip] of [
      ['cudaMemcpyAsync', 'hipMemcpyAsync'], ['cudaDeviceProp', 'hipDeviceProp_t'], ['cudaMallocHost', 'hipHostMalloc'],
      ['cudaDevAttrMultiProcessorCount', 'hipDeviceAttributeMultiprocessorCount'], ['cublasSgemm', 'hipblasSgemm'],
      ['CUBLAS_OP_T', 'HIPBLAS_OP_T'], ['curand_uniform', 'hiprand_uniform'], ['CUFFT_INVERSE', 'HIPFFT_BACKWARD'],
    ]) expect(CUDA_TO_HIP[cu!]).toBe(hip);
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
    const missing = Object.values({ ...RUNTIME_NAMES, ...HIPRAND_NAMES }).filter((h) => !words.has(h));
    expect(missing).toEqual([]);
  });
});

describe('migrateBuildFile', () => {
  it('rewrites a Makefile from nvcc to hipcc and reports what it cannot map', () => {
    const mk = 'NVCC ?= nvcc\nNVCCFLAGS := -O3 -gencode arch=compute_80,code=sm_80 -Xcompiler -fopenmp\n# nvcc is great\nLIBS := -lcudart -lcublas -L$(CUDA_PATH)/lib64\n';
    const r = migrateBuildFile('Makefile', mk, 'gfx90a');
    expect(r.content).toBe('HIPCC ?= hipcc\nHIPCCFLAGS := -O3 --offload-arch=gfx90a -fopenmp\n# nvcc is great\nLIBS := -lhipblas -L$(CUDA_PATH)/lib64\n');
    expect(r.unconverted.map((u) => u.identifier)).toEqual(['$(CUDA_PATH)']);
  });
  it('rewrites CMake to the HIP language', () => {
    const r = migrateBuildFile('CMakeLists.txt', 'cmake_minimum_required(VERSION 3.18)\nproject(p LANGUAGES CXX CUDA)\nadd_executable(p main.cu)\ntarget_link_libraries(p CUDA::cublas)\n');
    expect(r.content).toBe('cmake_minimum_required(VERSION 3.21)\nproject(p LANGUAGES CXX HIP)\nadd_executable(p main.cu)\ntarget_link_libraries(p roc::hipblas)\nset_source_files_properties(main.cu PROPERTIES LANGUAGE HIP)\n');
  });
});

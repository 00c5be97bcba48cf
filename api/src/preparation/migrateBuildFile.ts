/**
 * Build files for CUDA → HIP: CMake (`LANGUAGES CUDA`, CUDA::* targets, CMAKE_CUDA_*) and Makefiles
 * (nvcc → hipcc, nvcc-only flags, CUDA libraries). Works line by line on words outside comments;
 * a build file is a list of commands and flags, not a program, so words are the right unit.
 */
import { emptyFileTransform, type FileTransform } from './types.js';

export type BuildFileKind = 'cmake' | 'make';

export function buildFileKind(path: string): BuildFileKind | null {
  const base = path.split('/').pop() ?? path;
  if (base === 'CMakeLists.txt' || base.endsWith('.cmake')) return 'cmake';
  if (/^(?:GNUmakefile|makefile|Makefile)$/.test(base) || base.endsWith('.mk')) return 'make';
  return null;
}

type Rewrite = [RegExp, string | ((...m: string[]) => string), string];

function rewrites(kind: BuildFileKind, arch: string): Rewrite[] {
  const common: Rewrite[] = [
    [/-lcudart(?:_static)?\b/g, '', 'nvcc-lib'],
    [/-lcublas(?:Lt)?\b/g, '-lhipblas', 'nvcc-lib'],
    [/-lcurand\b/g, '-lhiprand', 'nvcc-lib'],
    [/-lcufft\b/g, '-lhipfft', 'nvcc-lib'],
  ];
  if (kind === 'make') {
    return [
      ...common,
      [/(^|[\s=(])(?:\/usr\/local\/cuda\/bin\/)?nvcc(?=\s|$|\))/g, '$1hipcc', 'nvcc-compiler'],
      [/\bNVCC(?=\s*[:?+]?=|\))/g, 'HIPCC', 'nvcc-variable'],
      [/\bNVCCFLAGS\b/g, 'HIPCCFLAGS', 'nvcc-variable'],
      [/\bNVCC_FLAGS\b/g, 'HIPCC_FLAGS', 'nvcc-variable'],
      [
        /(?:-gencode[= ]\s*)?arch=compute_\d+[a-z]?,\s*code=\\?"?\[?(?:sm|compute)_\d+[a-z]?(?:,\s*(?:sm|compute)_\d+[a-z]?)*\]?\\?"?/g,
        `--offload-arch=${arch}`,
        'nvcc-arch',
      ],
      [/(?:-arch|--gpu-architecture)[= ]\s*(?:sm|compute)_\d+[a-z]?/g, `--offload-arch=${arch}`, 'nvcc-arch'],
      [/(?:-code|--gpu-code)[= ]\s*\S+/g, '', 'nvcc-arch'],
      [/-Xcompiler[= ]\s*(\S+)/g, (_m, f: string) => f.replace(/^"|"$/g, '').split(',').join(' '), 'nvcc-flag'],
      [/(?:-rdc|--relocatable-device-code)[= ]true/g, '-fgpu-rdc', 'nvcc-flag'],
      [/--use_fast_math|-use_fast_math/g, '-ffast-math', 'nvcc-fast-math'],
      [
        /--expt-relaxed-constexpr|--expt-extended-lambda|--extended-lambda|-lineinfo|--ptxas-options=\S+|-Xptxas[= ]\s*\S+|--default-stream[= ]per-thread|-Wno-deprecated-gpu-targets/g,
        '',
        'nvcc-flag',
      ],
      [/-x cu\b/g, '-x hip', 'nvcc-flag'],
    ];
  }
  return [
    ...common,
    [/\bLANGUAGES(\s+[A-Z ]*?)\bCUDA\b/g, 'LANGUAGES$1HIP', 'cmake-language'],
    [/\benable_language\s*\(\s*CUDA\s*\)/g, 'enable_language(HIP)', 'cmake-language'],
    [
      /\bCMAKE_CUDA_ARCHITECTURES(\s+|\s*")[\w;. "]*?(\)|")/g,
      (_m, sep: string, end: string) => `CMAKE_HIP_ARCHITECTURES${sep}${sep.includes('"') ? '' : ''}${arch}${end}`,
      'cmake-arch',
    ],
    [/\bCMAKE_CUDA_(STANDARD_REQUIRED|STANDARD|FLAGS|EXTENSIONS|COMPILER)\b/g, 'CMAKE_HIP_$1', 'cmake-variable'],
    [/\bCUDA_ARCHITECTURES\b/g, 'HIP_ARCHITECTURES', 'cmake-variable'],
    [/\bfind_package\s*\(\s*CUDAToolkit\b[^)]*\)/g, 'find_package(hip REQUIRED)', 'cmake-package'],
    [/\bfind_package\s*\(\s*CUDA\b[^)]*\)/g, 'find_package(hip REQUIRED)', 'cmake-package'],
    [/\bCUDA::cudart(?:_static)?\b/g, 'hip::host', 'cmake-target'],
    [/\bCUDA::cuda_driver\b/g, 'hip::host', 'cmake-target'],
    [/\bCUDA::cublas(?:Lt)?\b/g, 'roc::hipblas', 'cmake-target'],
    [/\bCUDA::curand\b/g, 'hip::hiprand', 'cmake-target'],
    [/\bCUDA::cufft\b/g, 'hip::hipfft', 'cmake-target'],
  ];
}

const REMAINING =
  /\b(nvcc|CUDA_[A-Z_]+|CMAKE_CUDA_\w+|CUDA::\w+|cuda_add_\w+|-lcu\w+|sm_\d+|compute_\d+|\/usr\/local\/cuda\S*|\$\(CUDA_\w+\)|\$\{CUDA_\w+\})/g;

export function migrateBuildFile(file: string, content: string, arch = 'gfx1030'): FileTransform {
  const kind = buildFileKind(file);
  const res = emptyFileTransform(content);
  if (!kind) return res;
  const rules = rewrites(kind, arch);
  const lines = content.split('\n');
  const cuSources = new Set<string>();
  const out = lines.map((line, i) => {
    const hash = line.search(/(^|[^\\$])#/);
    const code = hash < 0 ? line : line.slice(0, hash + (line[hash] === '#' ? 0 : 1));
    const comment = line.slice(code.length);
    let next = code;
    const applied = new Set<string>();
    for (const [re, to, rule] of rules) {
      const before = next;
      next = typeof to === 'string' ? next.replace(re, to) : next.replace(re, to as (...m: string[]) => string);
      if (next !== before) applied.add(rule);
    }
    if (applied.size) next = next.replace(/(\S)[ \t]{2,}(?=\S)/g, '$1 ').replace(/[ \t]+$/, '');
    const after = next + comment;
    if (after !== line) {
      res.edits.push({ file, line: i + 1, before: line, after, rule: [...applied].sort().join('+') });
      if (applied.has('nvcc-fast-math')) {
        res.numericsNotes.push(`${file}:${i + 1}: --use_fast_math → -ffast-math: both trade IEEE accuracy for speed, differently.`);
      }
    }
    if (kind === 'cmake') for (const m of code.matchAll(/[\w./-]+\.cu\b/g)) cuSources.add(m[0]);
    for (const m of next.matchAll(REMAINING)) {
      res.unconverted.push({ file, line: i + 1, identifier: m[0], reason: 'CUDA build setting without a HIP rewrite' });
    }
    return after;
  });
  // CMake compiles .cu files with the CUDA language unless told otherwise
  if (kind === 'cmake' && cuSources.size > 0 && res.edits.length > 0 && !/LANGUAGE\s+HIP/.test(content)) {
    const list = [...cuSources].sort().join(' ');
    const line = `set_source_files_properties(${list} PROPERTIES LANGUAGE HIP)`;
    out.push(line);
    if (out.at(-2) === '') {
      out.splice(out.length - 2, 1); // keep the trailing newline at the end
      out.push('');
    }
    res.edits.push({ file, line: lines.length, before: '', after: line, rule: 'cmake-cu-language' });
  }
  if (kind === 'cmake') {
    const m = /cmake_minimum_required\s*\(\s*VERSION\s+(\d+)\.(\d+)/.exec(content);
    if (m && res.edits.length > 0 && (Number(m[1]) < 3 || (Number(m[1]) === 3 && Number(m[2]) < 21))) {
      const i = content.slice(0, m.index).split('\n').length - 1;
      const before = out[i]!;
      out[i] = before.replace(/VERSION\s+[\d.]+/, 'VERSION 3.21');
      res.edits.push({ file, line: i + 1, before, after: out[i]!, rule: 'cmake-minimum-for-hip' });
    }
  }
  res.content = out.join('\n');
  res.edits.sort((a, b) => a.line - b.line);
  return res;
}

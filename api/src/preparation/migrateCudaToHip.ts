/**
 * CUDA C/C++ → HIP, one source file at a time, on tokens (comments and string literals are never
 * touched; see tokenizeCpp.ts).
 *
 * Choices:
 * - Kernel launches keep the triple-chevron syntax. hipcc (HIP-Clang) accepts `k<<<g, b, s, st>>>(…)`
 *   natively; rewriting to hipLaunchKernelGGL would gain nothing on HIP ≥ 1.x and breaks template
 *   kernels whose template arguments contain commas (the macro splits them). hipify-clang also keeps
 *   chevrons by default.
 * - Target is HIP 5.2: the `__shfl*_sync` / vote `_sync` intrinsics lose their mask argument
 *   (HIP 5.2 has only the mask-less forms, which act on the whole wavefront), `__syncwarp` becomes
 *   the wave barrier builtin and `__activemask()` becomes `__ballot(1)`.
 * - nvcc includes cuda_runtime.h implicitly in .cu files; hipcc includes nothing, so a translated
 *   CUDA source gets `#include <hip/hip_runtime.h>` when it has none (added above its first include).
 * - File names are kept (hipcc compiles .cu as HIP): no build file or #include needs renaming.
 * - `__CUDA_ARCH__` compared with a number (`#if __CUDA_ARCH__ >= 700`) is left unconverted and
 *   reported: there is no HIP equivalent of a compute capability number.
 */
import { CUDA_HEADERS, CUDA_IDENT_PATTERN, CUDA_TO_HIP, SYNC_INTRINSICS } from './cudaToHipTable.js';
import { findWave64Hazards } from './findWave64Hazards.js';
import { significant, tokenizeCpp, type CppToken } from './tokenizeCpp.js';
import { emptyFileTransform, type FileTransform } from './types.js';

const KERNEL_LANGUAGE = new Set(['__global__', '__device__', '__shared__', 'threadIdx', 'blockIdx', 'blockDim', 'gridDim', '__syncthreads']);
const CXX_KEYWORDS_BEFORE_NAME = new Set(['void', 'int', 'float', 'double', 'bool', 'char', 'auto', 'static', 'inline', 'unsigned', 'long', 'size_t', 'const', '__host__', '__device__', '__global__', '__forceinline__']);

const LIBRARY_NOTES: Array<[RegExp, string]> = [
  [/^hiprand/i, 'cuRAND → hipRAND: the generators are different implementations (rocRAND); the same seed gives a different random stream.'],
  [/^hipblas/i, 'cuBLAS → hipBLAS: rocBLAS orders its floating-point sums differently; results differ in the last bits.'],
  [/^hipfft/i, 'cuFFT → hipFFT: rocFFT uses different algorithms; results differ in the last bits.'],
];

export function migrateCudaToHip(file: string, content: string): FileTransform {
  const tokens = tokenizeCpp(content);
  const sig = significant(tokens);
  const res = emptyFileTransform(content);
  const out = tokens.map((t) => t.text);
  const rulesByLine = new Map<number, Set<string>>();
  const mark = (line: number, rule: string): void => {
    const s = rulesByLine.get(line) ?? new Set<string>();
    s.add(rule);
    rulesByLine.set(line, s);
  };
  const at = (k: number): CppToken | undefined => (k >= 0 && k < sig.length ? tokens[sig[k]!] : undefined);
  const text = (k: number): string => at(k)?.text ?? '';

  const userDefined = new Set<string>();
  for (let k = 0; k < sig.length; k++) {
    const t = at(k)!;
    if (t.kind !== 'ident') continue;
    if (text(k - 1) === 'define' && text(k - 2) === '#') userDefined.add(t.text);
    // function definitions/declarations: `type name (`
    if (text(k + 1) === '(' && CXX_KEYWORDS_BEFORE_NAME.has(text(k - 1)) && !(t.text in CUDA_TO_HIP)) userDefined.add(t.text);
  }

  let usesKernelLanguage = false;
  let hasHipRuntimeInclude = false;
  let firstIncludeLine = 0;
  const libraries = new Set<string>();

  for (let k = 0; k < sig.length; k++) {
    const t = at(k)!;
    const idx = sig[k]!;
    if (t.kind === 'header') {
      if (!firstIncludeLine) firstIncludeLine = t.line;
      const name = t.text.slice(1, -1);
      if (name === 'hip/hip_runtime.h') hasHipRuntimeInclude = true;
      if (name in CUDA_HEADERS) {
        const to = CUDA_HEADERS[name];
        if (to === null || to === undefined) {
          res.unconverted.push({ file, line: t.line, identifier: `#include ${t.text}`, reason: 'no HIP counterpart for this header' });
        } else {
          out[idx] = `${t.text[0]}${to}${t.text.at(-1)}`;
          if (to === 'hip/hip_runtime.h') hasHipRuntimeInclude = true;
          mark(t.line, 'cuda-header');
        }
      }
      continue;
    }
    if (t.kind !== 'ident') continue;
    if (KERNEL_LANGUAGE.has(t.text)) usesKernelLanguage = true;
    if (text(k + 1) === '<<<') usesKernelLanguage = true;
    const prev = text(k - 1);
    if (prev === '.' || prev === '->') continue; // a member, not the API
    if (t.text === '__CUDA_ARCH__' && /^(?:[<>]=?|==|!=)$/.test(text(k + 1))) {
      res.hazards.push({
        file,
        line: t.line,
        severity: 'error',
        rule: 'cuda-arch-number',
        what: '__CUDA_ARCH__ compared with a compute capability',
        why: 'AMD GPUs have no compute capability number; HIP defines no equivalent, so the branch cannot be translated.',
        fix: 'Test a feature instead (e.g. __HIP_DEVICE_COMPILE__ for "device pass", or a HIP feature macro).',
      });
      continue; // reported as unconverted below
    }
    const sync = SYNC_INTRINSICS[t.text];
    if (sync && text(k + 1) === '(') {
      out[idx] = sync;
      // drop the mask argument: everything from after '(' through the first top-level ',' and its spacing
      let depth = 0;
      for (let j = k + 1; j < sig.length; j++) {
        const s = text(j);
        if (s === '(' || s === '[' || s === '{') depth++;
        else if (s === ')' || s === ']' || s === '}') depth--;
        if (depth === 0) break;
        if (j > k + 1) {
          if (depth === 1 && s === ',') {
            for (let d = sig[k + 1]! + 1; d <= sig[j]!; d++) out[d] = '';
            // and the whitespace after the comma (same line only)
            for (let d = sig[j]! + 1; d < tokens.length && tokens[d]!.kind === 'space'; d++) out[d] = '';
            break;
          }
        }
      }
      mark(t.line, 'warp-intrinsic-mask');
      continue;
    }
    if ((t.text === '__syncwarp' || t.text === '__activemask') && text(k + 1) === '(') {
      let depth = 0;
      let close = k + 1;
      for (let j = k + 1; j < sig.length; j++) {
        if (text(j) === '(') depth++;
        if (text(j) === ')') depth--;
        if (depth === 0) {
          close = j;
          break;
        }
      }
      for (let d = sig[k + 1]!; d <= sig[close]!; d++) out[d] = '';
      out[idx] = t.text === '__syncwarp' ? '__builtin_amdgcn_wave_barrier()' : '__ballot(1)';
      mark(t.line, t.text === '__syncwarp' ? 'syncwarp' : 'activemask');
      continue;
    }
    if (t.text === 'cub' && text(k + 1) === '::') {
      out[idx] = 'hipcub';
      mark(t.line, 'cub-namespace');
      continue;
    }
    const mapped = CUDA_TO_HIP[t.text];
    if (mapped !== undefined && !userDefined.has(t.text)) {
      out[idx] = mapped;
      mark(t.line, 'cuda-identifier');
      for (const [re] of LIBRARY_NOTES) if (re.test(mapped)) libraries.add(mapped);
    }
  }

  // unconverted identifiers: NVIDIA-specific names still present after the mapping
  for (let k = 0; k < sig.length; k++) {
    const t = at(k)!;
    const idx = sig[k]!;
    if (t.kind !== 'ident' || out[idx] !== t.text || userDefined.has(t.text)) continue;
    const prev = text(k - 1);
    if (prev === '.' || prev === '->') continue;
    if (CUDA_IDENT_PATTERN.test(t.text) || t.text === '__CUDA_ARCH__') {
      if (!res.unconverted.some((u) => u.line === t.line && u.identifier === t.text)) {
        res.unconverted.push({ file, line: t.line, identifier: t.text, reason: 'no HIP mapping known for this identifier' });
      }
    }
  }
  // inline PTX has no translation at all
  for (let k = 0; k < sig.length; k++) {
    const t = at(k)!;
    if (t.kind === 'ident' && (t.text === 'asm' || t.text === '__asm__') && (text(k + 1) === '(' || text(k + 1) === 'volatile')) {
      res.hazards.push({
        file,
        line: t.line,
        severity: 'error',
        rule: 'inline-ptx',
        what: 'inline assembly (PTX)',
        why: 'PTX is NVIDIA assembly; it does not assemble for AMD GPUs.',
        fix: 'Replace it with the equivalent C++ or a HIP intrinsic.',
      });
    }
    if (t.kind === 'ident' && t.text === '__launch_bounds__' && text(k + 1) === '(') {
      let depth = 0;
      let commas = 0;
      for (let j = k + 1; j < sig.length; j++) {
        if (text(j) === '(') depth++;
        if (text(j) === ')') depth--;
        if (depth === 1 && text(j) === ',') commas++;
        if (depth === 0) break;
      }
      if (commas > 0) {
        res.hazards.push({
          file,
          line: t.line,
          severity: 'warning',
          rule: 'launch-bounds',
          what: '__launch_bounds__ with a second argument',
          why: 'In CUDA the second argument is the minimum blocks per multiprocessor; in HIP it is the minimum waves per execution unit, so the same number asks for a different occupancy.',
          fix: 'Recompute the second argument for the AMD target, or drop it.',
        });
      }
    }
  }
  res.hazards.push(...findWave64Hazards(file, tokens));

  let migrated = out.join('');
  const changed = migrated !== content;
  if ((changed || usesKernelLanguage) && !hasHipRuntimeInclude) {
    // insert above the first #include (or at the top), as a line of its own
    const lines = migrated.split('\n');
    const at0 = firstIncludeLine > 0 ? firstIncludeLine - 1 : 0;
    lines.splice(at0, 0, '#include <hip/hip_runtime.h>');
    migrated = lines.join('\n');
    res.edits.push({ file, line: at0 + 1, before: '', after: '#include <hip/hip_runtime.h>', rule: 'include-hip-runtime' });
  }

  // one edit per changed line, in input coordinates
  const inLines = content.split('\n');
  const outLinesNoInsert = out.join('').split('\n');
  for (const [line, rules] of [...rulesByLine.entries()].sort((a, b) => a[0] - b[0])) {
    const before = inLines[line - 1] ?? '';
    const after = outLinesNoInsert[line - 1] ?? '';
    if (before !== after) res.edits.push({ file, line, before, after, rule: [...rules].sort().join('+') });
  }
  res.edits.sort((a, b) => a.line - b.line);
  for (const [re, note] of LIBRARY_NOTES) if ([...libraries].some((n) => re.test(n))) res.numericsNotes.push(note);
  res.content = migrated;
  res.unconverted.sort((a, b) => a.line - b.line || (a.identifier < b.identifier ? -1 : 1));
  res.hazards.sort((a, b) => a.line - b.line);
  return res;
}


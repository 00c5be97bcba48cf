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
 * - Guards on macros CUDA's headers define (`#ifdef __DRIVER_TYPES_H__`, `__CUDA_RUNTIME_H__`,
 *   `__cuda_cuda_h__`, `CUBLAS_API_H_` …) become the include guards of the HIP headers that replace
 *   them, so helper headers keep their content (checkCudaErrors, findCudaDevice …).
 * - Driver API calls map to HIP's (one error type, hipError_t, for both halves); cuGetErrorName /
 *   cuGetErrorString (out-pointer) become an assignment from hipGetErrorName / hipGetErrorString.
 * - What HIP 5.2 cannot express is reported as a hazard where it is: access-policy windows (L2
 *   persistence hints) are removed, statement by statement, since they change only speed;
 *   `__grid_constant__` is dropped (HIP passes kernel arguments by value in argument memory anyway);
 *   missing cooperative-groups features, warp reduce/match intrinsics, clusters, WMMA … are errors.
 */
import {
  CG_MEMBER_RENAMES,
  CUDA_HEADER_GUARDS,
  CUDA_HEADERS,
  CUDA_IDENT_PATTERN,
  CUDA_SAMPLES_HELPERS,
  CUDA_TO_HIP,
  HIP52_CG_LACKS_FUNCTIONS,
  HIP52_CG_LACKS_MEMBERS,
  HIP52_LACKS,
  L2_HINT_NAMES,
  L2_PROP_FIELDS,
  SYNC_INTRINSICS,
  UNTRANSLATED_LIBRARY_GUARDS,
} from './cudaToHipTable.js';
import { findWave64Hazards } from './findWave64Hazards.js';
import { significant, tokenizeCpp, type CppToken } from './tokenizeCpp.js';
import { emptyFileTransform, type FileTransform, type Hazard } from './types.js';

const KERNEL_LANGUAGE = new Set([
  '__global__',
  '__device__',
  '__shared__',
  'threadIdx',
  'blockIdx',
  'blockDim',
  'gridDim',
  '__syncthreads',
]);
const CONTROL_KEYWORDS = new Set(['if', 'for', 'while', 'switch', 'do']);
/** Words before an identifier that make it something other than a declared name. */
const NOT_A_TYPE = new Set([
  'return',
  'case',
  'else',
  'goto',
  'delete',
  'throw',
  'new',
  'sizeof',
  'typedef',
  'define',
  'ifdef',
  'ifndef',
  'if',
  'elif',
  'defined',
  'undef',
  'co_return',
  'co_yield',
  'operator',
]);
/** cuda-samples conventions: macros a sample defines before including the helpers (not CUDA's). */
const SAMPLE_MACROS = new Set(['CUDA_DRIVER_API']);
const CXX_KEYWORDS_BEFORE_NAME = new Set([
  'void',
  'int',
  'float',
  'double',
  'bool',
  'char',
  'auto',
  'static',
  'inline',
  'unsigned',
  'long',
  'size_t',
  'const',
  '__host__',
  '__device__',
  '__global__',
  '__forceinline__',
]);

const LIBRARY_NOTES: Array<[RegExp, string]> = [
  [/^hiprand/i, 'cuRAND → hipRAND: the generators are different implementations (rocRAND); the same seed gives a different random stream.'],
  [/^hipblas/i, 'cuBLAS → hipBLAS: rocBLAS orders its floating-point sums differently; results differ in the last bits.'],
  [/^hipfft/i, 'cuFFT → hipFFT: rocFFT uses different algorithms; results differ in the last bits.'],
];

export interface CudaMigrateOptions {
  /** Paths of every file in the tree, so that an `#include` of a helper the user brought is not reported. */
  treeFiles?: readonly string[];
}

const OUT_POINTER_CALLS: Readonly<Record<string, string>> = { cuGetErrorName: 'hipGetErrorName', cuGetErrorString: 'hipGetErrorString' };

export function migrateCudaToHip(file: string, content: string, opts: CudaMigrateOptions = {}): FileTransform {
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
  /** The simple statement around significant token k, as [first, last ';'], or null when it is not one. */
  const statementAround = (k: number): [number, number] | null => {
    let s0 = 0;
    let depth = 0;
    for (let j = k - 1; j >= 0; j--) {
      const s = text(j);
      if (at(j)!.directive || (depth === 0 && (s === ';' || s === '{' || s === '}'))) {
        s0 = j + 1;
        break;
      }
      if (s === ')' || s === ']') depth++;
      else if (s === '(' || s === '[') {
        if (depth === 0) {
          // the argument of a wrapper such as checkCudaErrors(…): the wrapper's statement goes too
          if (s === '(' && at(j - 1)?.kind === 'ident' && !CONTROL_KEYWORDS.has(text(j - 1))) continue;
          return null; // inside a for(...) header, a condition or an initializer
        }
        depth--;
      }
    }
    if (text(s0) === 'else') s0++;
    if (CONTROL_KEYWORDS.has(text(s0)) || text(s0) === 'return' || text(s0) === 'case') return null;
    depth = 0;
    let braces = 0;
    for (let j = s0; j < sig.length; j++) {
      const s = text(j);
      if (at(j)!.directive) return null;
      if (s === '(' || s === '[') depth++;
      else if (s === ')' || s === ']') depth--;
      else if (s === '{') braces++;
      else if (s === '}') braces--;
      if (depth < 0 || braces < 0) return null;
      if (s === ';' && depth === 0 && braces === 0) return [s0, j];
    }
    return null;
  };

  const userDefined = new Set<string>();
  for (let k = 0; k < sig.length; k++) {
    const t = at(k)!;
    if (t.kind !== 'ident') continue;
    if (text(k - 1) === 'define' && text(k - 2) === '#') userDefined.add(t.text);
    // function definitions/declarations: `type name (`
    if (text(k + 1) === '(' && CXX_KEYWORDS_BEFORE_NAME.has(text(k - 1)) && !own(CUDA_TO_HIP, t.text)) userDefined.add(t.text);
    // variables: `Type name;`, `Type *name = …`, `Type name[…]`, parameters `(Type name, …)`
    const before = at(k - 1);
    const declarator = before?.kind === 'ident' || ((text(k - 1) === '*' || text(k - 1) === '&') && at(k - 2)?.kind === 'ident');
    if (
      declarator &&
      !t.directive &&
      [';', '=', ',', ')', '['].includes(text(k + 1)) &&
      !NOT_A_TYPE.has(text(k - 1)) &&
      !NOT_A_TYPE.has(text(k - 2)) &&
      !own(CUDA_TO_HIP, t.text)
    )
      userDefined.add(t.text);
  }
  for (const m of SAMPLE_MACROS) userDefined.add(m);
  const libraryBlocks = untranslatedLibraryBlocks(tokens);

  const closeOf = (open: number): number => {
    let depth = 0;
    for (let j = open; j < sig.length; j++) {
      const s = text(j);
      if (s === '(' || s === '[' || s === '{') depth++;
      else if (s === ')' || s === ']' || s === '}') {
        depth--;
        if (depth === 0) return j;
      }
    }
    return -1;
  };
  /** Source text of significant tokens from..to, with the trivia between them. */
  const original = (from: number, to: number): string =>
    tokens
      .slice(sig[from]!, sig[to]! + 1)
      .map((x) => x.text)
      .join('');
  /** Blank tokens from..to (newlines kept, so output lines stay aligned with input lines). */
  const blank = (from: number, to: number): void => {
    for (let d = sig[from]!; d <= sig[to]!; d++) if (tokens[d]!.kind !== 'newline') out[d] = '';
  };
  const mapText = (src: string): string =>
    tokenizeCpp(src)
      .map((x) => (x.kind === 'ident' && own(CUDA_TO_HIP, x.text) && !userDefined.has(x.text) ? CUDA_TO_HIP[x.text]! : x.text))
      .join('');
  const done = new Set<number>(); // significant tokens already rewritten as part of a larger edit
  const hazard = (line: number, severity: Hazard['severity'], rule: string, what: string, why: string, fix: string): void => {
    if (!res.hazards.some((h) => h.line === line && h.rule === rule && h.what === what))
      res.hazards.push({ file, line, severity, rule, what, why, fix });
  };

  // cooperative groups: the namespace and its aliases (`namespace cg = cooperative_groups;`)
  const cgNamespaces = new Set(['cooperative_groups']);
  for (let k = 0; k + 3 < sig.length; k++) {
    if (text(k) === 'namespace' && at(k + 1)!.kind === 'ident' && text(k + 2) === '=' && text(k + 3) === 'cooperative_groups')
      cgNamespaces.add(text(k + 1));
  }
  const usesCooperativeGroups = sig.some((i) => tokens[i]!.text === 'cooperative_groups');

  // L2 access-policy windows: whole statements removed (a hint: only speed changes), each reported
  const l2Vars = new Set<string>();
  for (let k = 0; k + 1 < sig.length; k++) {
    if (
      (text(k) === 'cudaStreamAttrValue' || text(k) === 'cudaAccessPolicyWindow' || text(k) === 'cudaLaunchAttribute') &&
      at(k + 1)!.kind === 'ident'
    )
      l2Vars.add(text(k + 1));
  }
  for (let k = 0; k < sig.length; k++) {
    const t = at(k)!;
    if (t.kind !== 'ident' || done.has(k) || t.directive) continue;
    const member = text(k - 1) === '.' || text(k - 1) === '->';
    if (!L2_HINT_NAMES.has(t.text) && !(l2Vars.has(t.text) && !member)) continue;
    const stmt = statementAround(k);
    if (!stmt) {
      hazard(
        t.line,
        'error',
        'l2-access-policy',
        `${t.text}: L2 access-policy (persistence) control`,
        'HIP 5.2 has no stream attributes and no persisting-L2 limit; this use could not be removed on its own (it is part of a larger statement).',
        'Remove the access-policy setup by hand: it only tunes cache residency.',
      );
      continue;
    }
    const [s0, s1] = stmt;
    blank(s0, s1);
    out[sig[s0]!] = '/* chatgpu: L2 access-policy hint removed (not in HIP 5.2) */;';
    for (let j = s0; j <= s1; j++) done.add(j);
    for (let line = at(s0)!.line; line <= at(s1)!.line; line++) mark(line, 'l2-access-policy');
    hazard(
      at(s0)!.line,
      'warning',
      'l2-access-policy',
      `L2 access-policy hint removed: ${original(s0, s1).replace(/\s+/g, ' ').slice(0, 100)}`,
      'HIP 5.2 has no stream attributes, access-policy windows or persisting-L2 limit; these statements only tune which data stays in the L2 cache.',
      'Nothing to do for correctness; on a newer ROCm, hipStreamSetAttribute may be used again.',
    );
  }

  let usesKernelLanguage = false;
  let hasHipRuntimeInclude = false;
  let firstIncludeLine = 0;
  const libraries = new Set<string>();

  for (let k = 0; k < sig.length; k++) {
    const t = at(k)!;
    const idx = sig[k]!;
    if (done.has(k)) continue;
    if (t.kind === 'header') {
      if (!firstIncludeLine) firstIncludeLine = t.line;
      const name = t.text.slice(1, -1);
      if (name === 'hip/hip_runtime.h') hasHipRuntimeInclude = true;
      const inTree = (opts.treeFiles ?? []).some((f) => f === name || f.endsWith(`/${name}`));
      if (CUDA_SAMPLES_HELPERS.has(name) && !inTree) {
        res.unconverted.push({
          file,
          line: t.line,
          identifier: `#include ${t.text}`,
          reason: `helper header of NVIDIA's cuda-samples (Common/${name}) not in the tree: bring it along and it is translated with the program`,
        });
      } else if (own(CUDA_HEADERS, name)) {
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
    if (prev === '.' || prev === '->') {
      if (L2_PROP_FIELDS.has(t.text) && at(k - 2)?.kind === 'ident' && !['.', '->', '::', ']'].includes(text(k - 3))) {
        blank(k - 2, k);
        out[sig[k - 2]!] = '0';
        mark(t.line, 'l2-prop-field');
        hazard(
          t.line,
          'warning',
          'l2-access-policy',
          `${t.text} read as 0`,
          `HIP 5.2's hipDeviceProp_t has no ${t.text}: the target offers no L2 persistence control, which is what 0 means in CUDA.`,
          'Nothing to do unless the program needs the value for something other than access-policy windows.',
        );
      } else if (usesCooperativeGroups && text(k + 1) === '(' && own(CG_MEMBER_RENAMES, t.text)) {
        out[idx] = CG_MEMBER_RENAMES[t.text]!;
        mark(t.line, 'cooperative-groups');
      } else if (usesCooperativeGroups && text(k + 1) === '(' && HIP52_CG_LACKS_MEMBERS.has(t.text)) {
        hazard(
          t.line,
          'error',
          'hip52-cooperative-groups',
          `cooperative-groups member ${t.text}()`,
          `HIP 5.2's cooperative groups have no ${t.text}() (they offer size(), thread_rank(), sync(), shfl*()).`,
          'Rewrite with the warp intrinsics (__ballot, __any, __all over the wavefront) or target a newer ROCm.',
        );
        res.unconverted.push({ file, line: t.line, identifier: `.${t.text}()`, reason: 'cooperative-groups member HIP 5.2 lacks' });
      }
      continue; // a member, not the API
    }
    if (t.directive && own(CUDA_HEADER_GUARDS, t.text)) {
      out[idx] = CUDA_HEADER_GUARDS[t.text]!;
      mark(t.line, 'cuda-header-guard');
      continue;
    }
    if (t.directive && own(UNTRANSLATED_LIBRARY_GUARDS, t.text)) continue; // stays undefined: that library is not translated
    if (prev === '::' && cgNamespaces.has(text(k - 2)) && HIP52_CG_LACKS_FUNCTIONS.has(t.text)) {
      hazard(
        t.line,
        'error',
        'hip52-cooperative-groups',
        `${text(k - 2)}::${t.text}`,
        `HIP 5.2's cooperative groups have no ${t.text} (no reduce/scan, memcpy_async, clusters or labeled partitions).`,
        'Write the reduction or copy with shuffles and __syncthreads, or target a newer ROCm.',
      );
      res.unconverted.push({
        file,
        line: t.line,
        identifier: `${text(k - 2)}::${t.text}`,
        reason: 'cooperative-groups feature HIP 5.2 lacks',
      });
      continue;
    }
    if (own(HIP52_LACKS, t.text) && !userDefined.has(t.text)) {
      const lack = HIP52_LACKS[t.text]!;
      hazard(
        t.line,
        'error',
        'hip52-missing',
        `${t.text}: ${lack.what}`,
        'HIP 5.2 (the oldest ROCm the workers run) has no counterpart, so the translation would not compile.',
        lack.fix,
      );
      continue; // reported as unconverted below
    }
    if (t.text === '__grid_constant__') {
      out[idx] = '';
      for (let d = idx + 1; d < tokens.length && tokens[d]!.kind === 'space'; d++) out[d] = '';
      mark(t.line, 'grid-constant');
      hazard(
        t.line,
        'info',
        'grid-constant',
        '__grid_constant__ dropped',
        "HIP 5.2 has no __grid_constant__; a const kernel parameter is still passed by value in kernel-argument memory, so the code means the same unless it relies on the parameter's address being the argument itself.",
        'Nothing to do, unless the kernel passes &param to code that expects the grid-wide argument.',
      );
      continue;
    }
    if (
      (t.text === 'CUDART_VERSION' || t.text === 'CUDA_VERSION') &&
      /^(?:[<>]=?|==|!=)$/.test(text(k + 1)) &&
      at(k + 2)?.kind === 'number'
    ) {
      hazard(
        t.line,
        'warning',
        'cuda-version-number',
        `${t.text} compared with a CUDA version number`,
        `It becomes HIP_VERSION (5.2 = 50221153), larger than any CUDA version number, so the branch for the newest CUDA is taken; what that branch calls must exist in HIP 5.2.`,
        'Check the branch taken, or test a HIP feature instead.',
      );
    }
    if (own(OUT_POINTER_CALLS, t.text) && text(k + 1) === '(' && !userDefined.has(t.text)) {
      const close = closeOf(k + 1);
      const commas: number[] = [];
      let depth = 0;
      for (let j = k + 1; close > 0 && j < close; j++) {
        const s = text(j);
        if (s === '(' || s === '[' || s === '{') depth++;
        else if (s === ')' || s === ']' || s === '}') depth--;
        else if (s === ',' && depth === 1) commas.push(j);
      }
      if (close > 0 && commas.length === 1) {
        const err = mapText(original(k + 2, commas[0]! - 1)).trim();
        const ptr = mapText(original(commas[0]! + 1, close - 1)).trim();
        const target = /^&\s*[A-Za-z_]\w*(?:\s*(?:\.|->)\s*[A-Za-z_]\w*)*$/.test(ptr) ? ptr.slice(1).trim() : `*(${ptr})`;
        const statement = [';', '{', '}'].includes(prev) && text(close + 1) === ';';
        const call = `${OUT_POINTER_CALLS[t.text]}(${err})`;
        blank(k, close);
        out[idx] = statement ? `${target} = ${call}` : `(${target} = ${call}, hipSuccess)`;
        mark(t.line, 'driver-error-string');
        for (let j = k; j <= close; j++) done.add(j);
        k = close;
        continue;
      }
    }
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
    const sync = own(SYNC_INTRINSICS, t.text) ? SYNC_INTRINSICS[t.text] : undefined;
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
    const mapped = own(CUDA_TO_HIP, t.text) ? CUDA_TO_HIP[t.text] : undefined;
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
        const library = libraryBlocks.get(t.line);
        const reason = library
          ? `in a block guarded by ${library.guard}: ${library.name} is not translated, so the block stays inactive after migration (as in CUDA without ${library.name})`
          : 'no HIP mapping known for this identifier';
        res.unconverted.push({ file, line: t.line, identifier: t.text, reason });
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

function own<T>(table: Readonly<Record<string, T>>, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(table, key);
}

/** Lines inside `#ifdef G` / `#if defined(G)` blocks where G guards a CUDA library this toolkit does not translate. */
function untranslatedLibraryBlocks(tokens: readonly CppToken[]): Map<number, { guard: string; name: string }> {
  const lines = new Map<number, { guard: string; name: string }>();
  const stack: Array<{ guard: string; name: string } | null> = [];
  const directives = new Map<number, string[]>();
  let lastLine = 1;
  for (const t of tokens) {
    lastLine = t.line;
    if (!t.directive || t.kind === 'space' || t.kind === 'comment') continue;
    const words = directives.get(t.line) ?? [];
    words.push(t.text);
    directives.set(t.line, words);
  }
  for (let line = 1; line <= lastLine; line++) {
    const d = directives.get(line);
    const kw = d?.[1];
    if (kw === 'if' || kw === 'ifdef' || kw === 'ifndef') {
      const guard = d!.slice(2).find((w) => own(UNTRANSLATED_LIBRARY_GUARDS, w));
      stack.push(guard && kw !== 'ifndef' ? { guard, name: UNTRANSLATED_LIBRARY_GUARDS[guard]! } : null);
    } else if (kw === 'else' || kw === 'elif') {
      if (stack.length) stack[stack.length - 1] = null;
    } else if (kw === 'endif') stack.pop();
    const active = stack.find((x) => x !== null);
    if (active) lines.set(line, active);
  }
  return lines;
}

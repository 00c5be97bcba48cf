/**
 * Wave64 hazards: CUDA code written for 32-lane warps that still compiles for AMD GPUs whose
 * wavefronts are 64 lanes (GCN/CDNA: gfx9xx, MI100–MI300; RDNA runs wave32 by default but can run
 * wave64). None of these is an error to the compiler; each silently drops lanes, double counts, or
 * overflows shared memory. Found on the tokens of the original source, so lines are the user's.
 */
import type { Hazard } from './types.js';
import { significant, type CppToken } from './tokenizeCpp.js';

const RULE = 'wave64';
const LANEISH = /^(?:tid|lane\w*|thread\w*|idx|t|i|laneid|lane_id|warp_?lane|threadIdx)$/i;
const THIRTY_TWO_BIT_TYPES = new Set(['int', 'unsigned', 'uint32_t', 'uint', 'int32_t', 'unsigned int']);

export function findWave64Hazards(file: string, tokens: readonly CppToken[]): Hazard[] {
  const sig = significant(tokens);
  const tok = (k: number): CppToken | undefined => (k >= 0 && k < sig.length ? tokens[sig[k]!] : undefined);
  const text = (k: number): string => tok(k)?.text ?? '';
  const hazards: Hazard[] = [];
  const add = (line: number, what: string, why: string, fix: string, severity: Hazard['severity'] = 'warning'): void => {
    if (!hazards.some((h) => h.line === line && h.what === what)) hazards.push({ file, line, severity, rule: RULE, what, why, fix });
  };
  // macros and constants that spell the warp size as 32
  const warp32Names = new Set<string>();
  for (let k = 0; k < sig.length; k++) {
    const t = tok(k)!;
    if (t.kind === 'ident' && text(k - 1) === 'define' && text(k - 2) === '#' && /^32[uU]?$/.test(text(k + 1))) {
      if (/warp|lane/i.test(t.text)) warp32Names.add(t.text);
    }
    if (t.kind === 'ident' && /warp_?size/i.test(t.text) && text(k + 1) === '=' && /^32[uU]?$/.test(text(k + 2))) {
      warp32Names.add(t.text);
    }
  }

  // variables that hold a ballot (`m = __ballot_sync(...)`), to catch __popc(m) later
  const ballotVars = new Set<string>();
  for (let k = 0; k < sig.length; k++) {
    const s = text(k);
    if ((s === '__ballot_sync' || s === '__ballot' || s === '__activemask') && text(k - 1) === '=' && tok(k - 2)?.kind === 'ident')
      ballotVars.add(text(k - 2));
  }

  for (let k = 0; k < sig.length; k++) {
    const t = tok(k)!;
    const line = t.line;
    if (t.kind === 'number' && /^0x[fF]{8}[uUlL]*$/.test(t.text)) {
      add(
        line,
        `32-bit full lane mask ${t.text}`,
        'A 64-lane wavefront has lanes 32–63 outside this mask: a vote, ballot or shuffle limited by it ignores half the wavefront.',
        'Use a 64-bit mask (~0ull, unsigned long long) or drop the mask (HIP 5.2 intrinsics act on the whole wavefront), and size the algorithm with warpSize.',
      );
    }
    if (t.kind === 'ident' && t.text === '__activemask') {
      add(
        line,
        '__activemask() yields a 64-bit mask on AMD',
        'The result has 64 lanes on wave64 hardware; code that stores or tests it as 32 bits loses lanes 32–63.',
        'Keep the result in an unsigned long long and count it with __popcll.',
      );
    }
    if (t.kind === 'ident' && (t.text === '__ballot_sync' || t.text === '__ballot' || t.text === '__activemask')) {
      // `unsigned int m = __ballot_sync(...)`: look back over `=`, the name and the type words
      if (text(k - 1) === '=' && tok(k - 2)?.kind === 'ident') {
        const typeWords: string[] = [];
        for (let j = k - 3; j >= 0 && tok(j)?.kind === 'ident' && typeWords.length < 3; j--) typeWords.unshift(text(j));
        const type = typeWords.filter((w) => w !== 'const' && w !== 'auto').join(' ');
        if (THIRTY_TWO_BIT_TYPES.has(type) || (type.endsWith('int') && !type.includes('long'))) {
          add(
            line,
            `${t.text} result stored in a 32-bit ${type}`,
            'On AMD the ballot is 64 bits wide; assigning it to 32 bits truncates lanes 32–63.',
            'Declare the variable as unsigned long long (uint64_t) and use __popcll/__ffsll on it.',
            'error',
          );
        }
      }
    }
    if (t.kind === 'ident' && (t.text === '__popc' || t.text === '__ffs') && text(k + 1) === '(') {
      const inner = text(k + 2);
      if (inner === '__ballot_sync' || inner === '__ballot' || inner === '__activemask' || (ballotVars.has(inner) && text(k + 3) === ')')) {
        add(
          line,
          `${t.text}() applied to a ballot`,
          `${t.text} reads 32 bits; a 64-lane ballot needs the 64-bit variant.`,
          `Use ${t.text}ll.`,
          'error',
        );
      }
    }
    if (t.kind === 'ident' && warp32Names.has(t.text) && (text(k - 1) === 'define' || text(k + 1) === '=')) {
      add(
        line,
        `warp size hard-coded as 32 (${t.text})`,
        'Wavefronts are 64 lanes on GCN/CDNA: per-warp indexing, partial-sum counts and shuffle ranges derived from 32 cover half a wavefront.',
        'Use the built-in warpSize (or a template parameter set from it) instead of 32.',
      );
    }
    // lane / warp arithmetic with 32: tid % 32, tid & 31, tid / 32, tid >> 5, blockDim.x / 32
    const op = text(k);
    const rhs = text(k + 1);
    if (
      ((op === '%' || op === '/') && /^32[uU]?$/.test(rhs)) ||
      (op === '&' && /^31[uU]?$/.test(rhs)) ||
      (op === '>>' && /^5[uU]?$/.test(rhs))
    ) {
      const lhs = text(k - 1);
      const lhs2 = text(k - 3);
      if (LANEISH.test(lhs) || (lhs === 'x' && (lhs2 === 'threadIdx' || lhs2 === 'blockDim')) || /warp|lane|tid|thread/i.test(lhs)) {
        add(
          line,
          `lane/warp index computed with ${op} ${rhs}`,
          'This assumes 32 lanes per warp; on a 64-lane wavefront lanes and warp numbers come out wrong.',
          'Compute with warpSize: lane = threadIdx.x % warpSize, warp = threadIdx.x / warpSize.',
        );
      }
    }
    // "only the first warp": tid < 32, threadIdx.x < 32
    if (
      op === '<' &&
      /^32[uU]?$/.test(rhs) &&
      ((LANEISH.test(text(k - 1)) && text(k - 1) !== 'i') || (text(k - 1) === 'x' && text(k - 3) === 'threadIdx'))
    ) {
      add(
        line,
        'first-warp test against 32',
        'Code that lets "the first warp" (threads below 32) finish a reduction assumes 32 lanes per warp: on wave64 the first wavefront has 64 threads, and warp-synchronous steps over 32 threads race.',
        'Compare with warpSize and keep warp-synchronous steps within one wavefront.',
      );
    }
    if (t.kind === 'ident' && warp32Names.has(t.text) && text(k - 1) !== 'define' && text(k + 1) !== '=') {
      // uses of the 32 constant in index arithmetic
      if (['%', '/', '*'].includes(text(k - 1)) || ['%', '/'].includes(text(k + 1))) {
        add(
          line,
          `lane/warp arithmetic uses ${t.text} (= 32)`,
          'Per-warp indexing derived from a 32-lane warp is wrong on 64-lane wavefronts.',
          'Use warpSize.',
        );
      }
    }
    // reduction loops starting at 16: for (int offset = 16; offset > 0; offset /= 2)
    if (t.kind === 'ident' && t.text === 'for' && text(k + 1) === '(') {
      let depth = 0;
      let j = k + 1;
      const header: string[] = [];
      for (; j < sig.length; j++) {
        const s = text(j);
        if (s === '(') depth++;
        if (s === ')') depth--;
        header.push(s);
        if (depth === 0) break;
      }
      const h = header.join(' ');
      if (/=\s*16[uU]?\s*;/.test(h) && /(\/=\s*2|>>=\s*1)/.test(h)) {
        add(
          line,
          'shuffle reduction starts at offset 16',
          'A butterfly from 16 down to 1 combines 32 lanes; on a 64-lane wavefront the upper half is never folded in and the warp result is partial.',
          'Start the loop at warpSize / 2.',
        );
      }
    }
    if (t.kind === 'ident' && /^__shfl(_down|_xor|_up)?(_sync)?$/.test(t.text) && text(k + 1) === '(') {
      // last argument literal 16 (unrolled reduction step)
      let depth = 0;
      let last = '';
      let lastIsLiteral16 = false;
      for (let j = k + 1; j < sig.length; j++) {
        const s = text(j);
        if (s === '(') depth++;
        else if (s === ')') {
          depth--;
          if (depth === 0) {
            lastIsLiteral16 = /^16[uU]?$/.test(last) && text(j - 2) === ',';
            break;
          }
        }
        last = s;
      }
      if (lastIsLiteral16) {
        add(
          line,
          `${t.text} with offset 16`,
          'An unrolled 32-lane reduction step: on a 64-lane wavefront lanes 32–63 are never combined.',
          'Add the offset-32 step (or loop from warpSize / 2).',
        );
      }
    }
    // shared memory sized for 32 lanes/warps, and warpSize as an array bound
    if (t.kind === 'ident' && t.text === '__shared__') {
      let j = k + 1;
      while (j < sig.length && text(j) !== ';' && text(j) !== '[') j++;
      if (text(j) === '[') {
        const dims: string[] = [];
        for (let d = j + 1; d < sig.length && text(d) !== ']'; d++) dims.push(text(d));
        const dim = dims.join(' ');
        if (dims.includes('warpSize')) {
          add(
            line,
            '__shared__ array sized with warpSize',
            'warpSize is not a compile-time constant in HIP: this does not compile, and a fixed 32 would be too small on wave64.',
            'Size the array for the largest wavefront (64) or with a template parameter.',
            'error',
          );
        } else if (/^32[uU]?$/.test(dim) || dims.some((d) => warp32Names.has(d)) || /\/\s*32\b/.test(dim)) {
          add(
            line,
            `__shared__ array sized [${dim}] for 32-lane warps`,
            'One slot per lane or per warp sized from 32: with 64-lane wavefronts per-lane slots overflow, and per-warp counts (blockDim / 32) no longer match the wavefronts in the block.',
            'Size from warpSize at run time (dynamic shared memory) or for 64 lanes.',
          );
        }
      }
    }
    if (t.kind === 'ident' && t.text === 'warpSize' && (text(k + 1) === '==' || text(k + 1) === '!=') && /^32/.test(text(k + 2))) {
      add(
        line,
        'code branches on warpSize == 32',
        'The branch for 32-lane warps is not taken on wave64 hardware; the other path is often untested.',
        'Make both paths correct, or write the code for any warpSize.',
      );
    }
  }
  return hazards.sort((a, b) => a.line - b.line);
}

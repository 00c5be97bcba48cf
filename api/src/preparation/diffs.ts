import { createTwoFilesPatch } from 'diff';
import type { CodeTree } from './types.js';

/** A unified diff (git style, one section per changed text file) from `before` to `after`. */
export function unifiedDiff(before: CodeTree, after: CodeTree): string {
  const paths = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  let out = '';
  for (const p of paths) {
    const a = before[p];
    const b = after[p];
    if (a === b) continue;
    out += createTwoFilesPatch(
      a === undefined ? '/dev/null' : `a/${p}`,
      b === undefined ? '/dev/null' : `b/${p}`,
      a ?? '',
      b ?? '',
      '',
      '',
      { context: 3 },
    );
  }
  return out;
}

/**
 * Command-line words for the builtin planner's rules: a flag's normalized name, the value a command
 * passes for it, the command with a flag set (the one way every rule sets one), the flags the user
 * wrote in the request, and a value as one shell word.
 */
import type { ArgFlag } from '../../planner/analyzeProject.js';

/** A flag's name without dashes, `_` as `-` (`--max_iters` → max-iters): how the rules compare names. */
export const flagName = (f: ArgFlag) => f.flag.replace(/^--?/, '').replace(/_/g, '-');

/** A value as one shell word (the plan's command runs under `sh -c`). */
export function shellWord(v: string): string {
  return /^[\w./:=+,@%-]+$/.test(v) ? v : `'${v.replace(/'/g, `'\\''`)}'`;
}

/** The value `args` pass for `flag` (`--epochs 3` or `--max_iters=200`), or undefined. */
export function flagValue(args: string[], flag: string): string | undefined {
  const eq = args.find((a) => a.startsWith(`${flag}=`));
  if (eq !== undefined) return eq.slice(flag.length + 1);
  const sep = args.indexOf(flag);
  return sep >= 0 ? args[sep + 1] : undefined;
}

/**
 * `args` with a flag (any of its spellings, `flags`) set to `value` as one shell word, in the form
 * already there (`--k v` or `--k=v`); a new one is added as `--k=v` for a configurator (`keyValue`),
 * else as `--k v`. A switch (`isSwitch`) is removed, then passed again when `value` is defined.
 */
export function setFlag(args: string[], flags: string[], value: string | undefined, keyValue: boolean, isSwitch = false): string[] {
  const out = [...args];
  const at = out.findIndex((a) => flags.includes(a) || flags.some((f) => a.startsWith(`${f}=`)));
  if (isSwitch) {
    if (at >= 0) out.splice(at, 1);
    if (value !== undefined) out.push(flags[0]!);
    return out;
  }
  const word = shellWord(value ?? '');
  if (at >= 0) {
    if (out[at]!.includes('=')) out[at] = `${out[at]!.split('=')[0]}=${word}`;
    else out[at + 1] = word;
  } else if (keyValue) out.push(`${flags[0]}=${word}`);
  else out.push(flags[0]!, word);
  return out;
}

/**
 * Flags written in the request: "--emsize 64", "--lr=0.1", "--dry-run" → emsize → "64",
 * lr → "0.1", dry-run → true. Names are normalized like the entry point's (dashes).
 */
export function requestFlags(request: string): Map<string, string | true> {
  const out = new Map<string, string | true>();
  for (const m of request.matchAll(/(?:^|\s)--([A-Za-z][\w-]*)(?:=(\S+)|\s+(?!-)([^\s,;]+))?/g)) {
    const raw = m[2] ?? m[3];
    // Sentence punctuation after the value is not part of it ("--epochs 3." / "--save 'a.pt',").
    const value = raw?.replace(/[,;:).]+$/, '').replace(/^(['"])(.*)\1$/, '$2');
    // "--epochs 2 and …": a following plain word that is not a value ("and", "then") is not taken.
    out.set(m[1]!.replace(/_/g, '-'), value !== undefined && !/^(and|then|with|for|to|on|in|please)$/i.test(value) ? value : true);
  }
  return out;
}

/** "run it with 50000 samples" → "50000" for --samples (also --batch-size ← "batch size 64"). */
export function numberBefore(request: string, flagName: string): string | undefined {
  const words = flagName.split('-').join('[ _-]?');
  const before = new RegExp(`(\\d[\\d_]*(?:\\.\\d+)?)\\s+${words}s?\\b`, 'i').exec(request)?.[1];
  const after = new RegExp(`\\b${words}s?\\s+(?:of\\s+|=\\s*)?(\\d[\\d_]*(?:\\.\\d+)?)\\b`, 'i').exec(request)?.[1];
  return (before ?? after)?.replace(/_/g, '');
}

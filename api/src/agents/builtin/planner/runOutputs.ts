/**
 * Rule: what the run keeps. A script that keeps its checkpoint through ChatGPU's helper is
 * resumable with no flag; a model path the user gave for a save flag is the checkpoint; else a
 * literal `torch.save(…, "x.pt")` path; and every file the script writes at a literal path in its
 * run folder (predictions, plots, tables) is collected too, or the run's results stay on the worker.
 */
import { isCollected } from '../../../domain/jobs/planSchema.js';
import { CHECKPOINT_DIR } from './commandArgs.js';
import { flagName, requestFlags } from './flags.js';
import type { PlannerRule } from './planning.js';

export const runOutputs: PlannerRule = (p) => {
  const { entry, source, request, outputs } = p;
  if (!p.resumable && /CHATGPU_CHECKPOINT_DIR|chatgpu\.checkpoint|from chatgpu import checkpoint/.test(source))
    p.resumable = { path: CHECKPOINT_DIR };
  // A path the user gave for the checkpoint is still the checkpoint.
  for (const [name, value] of requestFlags(request)) {
    if (
      typeof value === 'string' &&
      /^(save|save-path|out|output|output-path|checkpoint|ckpt|model-path)$/.test(name) &&
      /\.(pt|pth|ckpt|bin|safetensors)$/i.test(value) &&
      entry.flags.some((f) => flagName(f) === name)
    ) {
      p.checkpoint = value.replace(/^\.\//, '');
      if (!isCollected({ outputs: [...outputs] }, p.checkpoint)) outputs.add(p.checkpoint);
    }
  }
  if (!p.checkpoint) {
    const literal = /torch\.save\([^,]+,\s*(?:os\.path\.join\(\s*[^,]+,\s*)?['"]([^'"]+\.(?:pt|pth|ckpt|bin))['"]/.exec(source)?.[1];
    if (literal) {
      p.checkpoint = literal.replace(/^\.\//, '');
      outputs.add(p.checkpoint);
    }
  }
  p.writes = literalWrites(source);
  for (const f of p.writes) if (!isCollected({ outputs: [...outputs] }, f)) outputs.add(f);
  return undefined;
};

/**
 * Files a script writes at literal relative paths outside outputs/ (`np.save('predict%d.npy' % i, y)`,
 * `plt.savefig("loss.png")`, `df.to_csv('results.csv')`, `open('log.txt', 'w')`, `torch.save(m, 'm.pt')`),
 * as globs: a %-format or {} field becomes `*`. Paths built at run time (os.path.join, variables)
 * are not guessed.
 */
export function literalWrites(source: string): string[] {
  const calls = [
    /\b(?:np|numpy)\.(?:save|savez|savez_compressed|savetxt)\(\s*f?(['"])([^'"\n]+)\1/g,
    /\.savefig\(\s*f?(['"])([^'"\n]+)\1/g,
    /\.to_(?:csv|json|parquet)\(\s*f?(['"])([^'"\n]+)\1/g,
    /\bopen\(\s*f?(['"])([^'"\n]+)\1\s*,\s*(['"])[wax]b?\+?\3/g,
    /\btorch\.save\((?:[^,()]|\([^()]*\))+,\s*f?(['"])([^'"\n]+)\1/g,
  ];
  const out = new Set<string>();
  for (const re of calls) {
    for (const m of source.matchAll(re)) {
      const f = m[2]!.replace(/^\.\//, '').replace(/%[-#0-9.]*[sdifgx]|\{[^}]*\}/g, '*');
      if (
        f.startsWith('/') ||
        f.split('/').includes('..') ||
        f.startsWith('outputs/') ||
        !/^[\w*.-]+(\/[\w*.-]+)*\.\w+$/.test(f) ||
        /^\*\.\w+$/.test(f)
      )
        continue;
      out.add(f);
    }
  }
  return [...out].sort().slice(0, 20);
}

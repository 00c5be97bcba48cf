/**
 * Which PyTorch calls of a project are newer than the workers' torch, and whether the
 * migration rewrites each (planner tool check_torch_apis). It runs the migration itself
 * (preparation/migrateTree.ts with the workers' torch version) and reads its `torch-version`
 * hazards: one rule decides both what the planner offers and what the preparation stage does.
 */
import { migrateTree } from '../../preparation/migrateTree.js';
import { targetOfWorkload } from '../../preparation/transformations.js';

export interface TorchApiUse {
  file: string;
  line: number;
  api: string;
  /** The first PyTorch release that has it ("2.0"). */
  needs: string;
  /** The migration replaces it with what the workers' torch has. */
  rewritten: boolean;
}

export interface TorchApiCheck {
  /** The workers' torch the code was checked against; null: no online worker of the workload has one. */
  torch: string | null;
  workload: string;
  uses: TorchApiUse[];
  /** none: nothing newer; migratable: every newer call is rewritten; blocked: some are not; unknown: no torch to compare with. */
  verdict: 'none' | 'migratable' | 'blocked' | 'unknown';
  summary: string;
}

const NEEDS = /^(\S+) needs PyTorch ≥ ([\d.]+)$/;

export async function checkTorchApis(
  sources: ReadonlyMap<string, string>,
  torch: string | null,
  workload: string,
  python: string,
): Promise<TorchApiCheck> {
  if (!torch)
    return {
      torch,
      workload,
      uses: [],
      verdict: 'unknown',
      summary: `No online ${workload} worker has PyTorch: nothing to compare the code with.`,
    };
  const tree: Record<string, string> = {};
  for (const [path, text] of sources) if (path.endsWith('.py')) tree[path] = text;
  const res = await migrateTree(tree, { target: targetOfWorkload(workload), runtime: { torch } }, { python });
  const uses: TorchApiUse[] = [];
  for (const h of res.hazards) {
    const m = h.rule === 'torch-version' ? NEEDS.exec(h.what) : null;
    if (m) uses.push({ file: h.file, line: h.line, api: m[1]!, needs: m[2]!, rewritten: h.severity !== 'error' });
  }
  const where = (u: TorchApiUse) => `${u.file}:${u.line} ${u.api} (≥ ${u.needs})`;
  const blocked = uses.filter((u) => !u.rewritten);
  if (!uses.length)
    return { torch, workload, uses, verdict: 'none', summary: `No PyTorch call of the project is newer than the workers' torch ${torch}.` };
  if (!blocked.length) {
    return {
      torch,
      workload,
      uses,
      verdict: 'migratable',
      summary: `${uses.length} PyTorch call(s) newer than the workers' torch ${torch}, each rewritten by the pytorch-version-compat migration: ${uses.slice(0, 6).map(where).join('; ')}.`,
    };
  }
  const highest = blocked
    .map((u) => u.needs)
    .sort((a, b) => a.localeCompare(b, 'en', { numeric: true }))
    .at(-1)!;
  return {
    torch,
    workload,
    uses,
    verdict: 'blocked',
    summary: `${blocked.length} PyTorch call(s) newer than the workers' torch ${torch} have no rewrite: ${blocked.slice(0, 6).map(where).join('; ')}. A worker with torch ≥ ${highest} is needed.`,
  };
}

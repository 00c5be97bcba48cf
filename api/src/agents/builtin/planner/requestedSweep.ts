/**
 * Rule: a sweep the user asked for ("dt over 0.1, 0.05 and 0.01") runs one run per value
 * (sweepRuns.ts), split into shards when it can be; each run's files go to a folder of their own,
 * so what is required is the sweep's table and there is no single checkpoint to evaluate. One
 * sweep per job: a second is refused, naming the first.
 */
import { call, type PlannerRule } from './planning.js';
import { SWEEP_TABLE, sweepRuns } from './sweepRuns.js';
import { boundedArgs } from './workload.js';

export const requestedSweep: PlannerRule = (p) => {
  const { entry, askPlan } = p;
  for (const [i, w] of askPlan.sweeps.entries()) {
    if (i > 0) {
      p.sweepDispositions.push({
        ask: w.ask.text,
        kind: w.ask.kind,
        status: 'refused',
        detail: `one sweep per job: ${askPlan.sweeps[0]!.setting.name} is swept already; submit the sweep of ${w.setting.name} as its own job`,
      });
      continue;
    }
    const workers = p.cap.classes.filter((c) => c.workloads.includes(p.hardware.workload)).reduce((n, c) => n + c.count, 0);
    const sp = sweepRuns({
      setting: w.setting,
      values: w.values,
      runner: p.runner,
      args: p.args,
      boundedArgs: boundedArgs(entry, p.args),
      ctx: { positionals: p.positionals, read: p.readOf, entry: entry.path },
      workers,
      shardable: !(p.migrate || p.versionMigrate || p.toAmd || p.before.length),
    });
    if ('need' in sp) return call('read_file', p.readCall(sp.path) ?? { path: sp.path });
    if ('refused' in sp) {
      p.sweepDispositions.push({ ask: w.ask.text, kind: w.ask.kind, status: 'refused', detail: sp.refused });
      continue;
    }
    p.command = sp.command;
    p.sharding = sp.shards ? { spec: sp.shards, reason: sp.detail } : null;
    p.smoke = null;
    p.checkpoint = null;
    p.resumable = null;
    p.resultFiles.splice(0, p.resultFiles.length, SWEEP_TABLE);
    askPlan.environment.push(...sp.environment);
    p.sweepDispositions.push({ ask: w.ask.text, kind: w.ask.kind, status: 'honoured', detail: sp.detail, setting: w.setting.id });
  }
  return undefined;
};

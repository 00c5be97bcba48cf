/**
 * Rule: every ask's final disposition, in the order the request makes them: the asks rule's, the
 * sweep's, "run the sweep" (the project's own sweep, honoured as it runs or as its shards), and
 * scale asks ("across all available workers": honoured by shards or a requested sweep, else
 * refused saying why the run is one task). A refused setting, sweep, output or target stops the job.
 */
import type { AskDisposition } from '../../../domain/jobs/planSchema.js';
import { BLOCKING_KINDS } from './disposeAsks.js';
import { call, type PlannerRule } from './planning.js';
import { refusalWords } from './requestAsks.js';

export const settleAsks: PlannerRule = (p) => {
  const { askPlan, sharding, sweepDispositions, entry } = p;
  const dispositions: AskDisposition[] = [
    ...askPlan.dispositions,
    ...sweepDispositions,
    ...askPlan.ownSweep.map((a) => ({
      ask: a.text,
      kind: a.kind,
      status: 'honoured' as const,
      detail: sharding?.spec
        ? `the project's own sweep, split into ${sharding.spec.shards.length} shards on the compatible workers online`
        : `the project's own sweep, run as it is written (${sharding?.reason ?? 'one run'})`,
    })),
    ...askPlan.scale.map((a) =>
      sharding?.spec || sweepDispositions.some((d) => d.status === 'honoured')
        ? {
            ask: a.text,
            kind: a.kind,
            status: 'honoured' as const,
            detail: sharding?.spec
              ? `split into ${sharding.spec.shards.length} shards run at once on the compatible workers online`
              : `the runs go to the one compatible worker online, one after another (${p.cap.summary})`,
          }
        : {
            ask: a.text,
            kind: a.kind,
            status: 'refused' as const,
            detail: `runs as one task: ${sharding?.reason ?? `${entry.path} is one program with nothing independent to split (no sample count, sweep or batch of inputs)`}`,
          },
    ),
  ];
  const askOrder = (d: AskDisposition) => p.asks.findIndex((a) => a.text === d.ask);
  dispositions.sort((a, b) => askOrder(a) - askOrder(b));
  p.dispositions = dispositions;
  if (dispositions.some((d) => d.status === 'refused' && BLOCKING_KINDS.has(d.kind)))
    return call('give_up', { reason: refusalWords(entry.path, dispositions) });
  return undefined;
};

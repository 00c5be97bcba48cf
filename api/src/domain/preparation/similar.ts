/**
 * Past preparation records as evidence for the next proposal (docs/architecture.md §4,
 * "Similar cases"). Two cases are similar when they tried the same transformation on the same
 * kind of program (modelFamilyOf: a convnet, a transformer, …) on the same accelerator vendor.
 *
 * What a caller may see (invariant 7): its own records in full (ids, outcomes, reasons), and
 * for the whole network only counts — no one else's code, ids or reasons.
 *
 * What the stage does with them (`verdictOf`), before proposing an optional step:
 *   decided (accepted + rejected) network-wide ≥ MIN_CASES and rejected ≥ SKIP_SHARE of them
 *     → SKIPPED, citing the counts and the user's own records;
 *   otherwise the steps with the higher acceptance rate are tried first (`orderSteps`).
 * Required steps are never skipped: the target needs them whatever happened elsewhere.
 * Only records made before the job's plan count, so the verdict of a job does not move while
 * it runs.
 */
import type { Resources } from '../resources.js';

export const MIN_CASES = 3;
export const SKIP_SHARE = 0.75;

export type ModelFamily = 'cuda-kernel' | 'transformer' | 'rnn' | 'convnet' | 'mlp' | 'other';

/** What kind of program a code tree is, from its sources (the first rule that matches). */
export function modelFamilyOf(files: Record<string, string>): ModelFamily {
  const paths = Object.keys(files);
  const py = paths
    .filter((p) => p.endsWith('.py'))
    .map((p) => files[p]!)
    .join('\n');
  if (paths.some((p) => /\.(cu|cuh)$/.test(p))) return 'cuda-kernel';
  if (/\bnn\.(Transformer\w*|MultiheadAttention)\b|scaled_dot_product_attention|\bclass \w*(Attention|Transformer|GPT)\w*\s*\(/.test(py))
    return 'transformer';
  if (/\bnn\.(LSTM|GRU|RNN)\b/.test(py)) return 'rnn';
  if (/\bnn\.Conv[123]d\b|\bF\.conv[123]d\b/.test(py)) return 'convnet';
  if (/\bnn\.Linear\b/.test(py)) return 'mlp';
  return 'other';
}

export interface SimilarKey {
  transformation: string;
  modelFamily: string;
  /** nvidia | amd | apple | none */
  accelerator: string;
}

export interface SimilarCases {
  key: SimilarKey;
  /** The caller's own similar records, newest first. */
  own: { recordId: string; jobId: string; outcome: string; reason: string; createdAt: Date }[];
  /** Across the network (everyone's jobs, the caller's included): counts only. */
  network: { accepted: number; rejected: number };
}

export async function similarPreparations(
  r: Pick<Resources, 'prisma'>,
  ownerId: string,
  key: SimilarKey,
  opts: { before?: Date; excludeJobId?: string } = {},
): Promise<SimilarCases> {
  const where = {
    transformation: key.transformation,
    modelFamily: key.modelFamily,
    accelerator: key.accelerator,
    // A similar case's verdict, not the job's own history, nor a verdict that only echoes this one.
    outcome: { in: ['ACCEPTED' as const, 'REJECTED' as const] },
    reason: { not: { startsWith: SIMILAR_REASON_PREFIX } },
    ...(opts.before ? { createdAt: { lt: opts.before } } : {}),
    ...(opts.excludeJobId ? { jobId: { not: opts.excludeJobId } } : {}),
  };
  const [counts, own] = await Promise.all([
    r.prisma.preparationRecord.groupBy({ by: ['outcome'], where, _count: { _all: true } }),
    r.prisma.preparationRecord.findMany({
      where: { ...where, job: { ownerId } },
      orderBy: { createdAt: 'desc' },
      take: 20,
      select: { id: true, jobId: true, outcome: true, reason: true, createdAt: true },
    }),
  ]);
  const n = (o: string) => counts.find((c) => c.outcome === o)?._count._all ?? 0;
  return {
    key,
    own: own.map((x) => ({ recordId: x.id, jobId: x.jobId, outcome: x.outcome, reason: x.reason, createdAt: x.createdAt })),
    network: { accepted: n('ACCEPTED'), rejected: n('REJECTED') },
  };
}

/** Every SKIPPED record written from similar cases starts so (and is not itself evidence). */
export const SIMILAR_REASON_PREFIX = 'Skipped on the evidence of similar cases:';

export interface Verdict {
  skip: boolean;
  /** accepted / decided, or null without enough cases. */
  acceptRate: number | null;
  /** Said in the SKIPPED record, or to the agents. */
  reason: string;
}

export function verdictOf(c: SimilarCases): Verdict {
  const { accepted, rejected } = c.network;
  const decided = accepted + rejected;
  const where = `${c.key.transformation} on a ${c.key.modelFamily} program on ${c.key.accelerator === 'none' ? 'CPU-only workers' : `${c.key.accelerator} accelerators`}`;
  if (decided < MIN_CASES)
    return { skip: false, acceptRate: null, reason: `${decided} similar case${decided === 1 ? '' : 's'} of ${where}: too few to go by.` };
  const acceptRate = accepted / decided;
  const mine = c.own.filter((o) => o.outcome === 'REJECTED').slice(0, 5);
  const cite = mine.length ? ` Your records: ${mine.map((o) => `${o.recordId.slice(0, 8)} (${oneLine(o.reason, 120)})`).join('; ')}.` : '';
  if (rejected / decided >= SKIP_SHARE) {
    return {
      skip: true,
      acceptRate,
      reason: `${SIMILAR_REASON_PREFIX} ${where} was rejected in ${rejected} of ${decided} similar cases across the network.${cite}`,
    };
  }
  return { skip: false, acceptRate, reason: `${where} was accepted in ${accepted} of ${decided} similar cases across the network.` };
}

/**
 * The plan's steps in the order to try them: each run of consecutive optional steps sorted by
 * acceptance rate among similar cases, higher first (too few cases counts as an even chance,
 * 0.5); required steps stay where the plan put them. Stable: ties keep the plan's order.
 */
export function orderSteps<S extends { required: boolean; name: string }>(steps: S[], rateOf: (s: S) => number | null): S[] {
  const out: S[] = [];
  let run: S[] = [];
  const flush = () => {
    const rated = run.map((s, i) => ({ s, i, rate: rateOf(s) }));
    rated.sort((a, b) => (b.rate ?? 0.5) - (a.rate ?? 0.5) || a.i - b.i);
    out.push(...rated.map((x) => x.s));
    run = [];
  };
  for (const s of steps) {
    if (s.required) {
      flush();
      out.push(s);
    } else run.push(s);
  }
  flush();
  return out;
}

function oneLine(s: string, max: number): string {
  const t = s.replace(/\s+/g, ' ').trim();
  return t.length > max ? `${t.slice(0, max - 1)}…` : t;
}

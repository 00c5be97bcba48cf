/**
 * What became of each ask of the request (invariant 12), from the current plan's dispositions and
 * the job's status: the job's summary lists these at the end (the CLI, job.json, the job page).
 * Pure: the plan's asks, the status and its reason in, one line per ask out.
 *
 *   honoured + SUCCEEDED                → done (how)
 *   honoured + FAILED/CANCELLED/STOPPED → not done (the job's reason)
 *   honoured + any other status         → planned (how)
 *   refused                             → refused (why)
 */
import type { AskDisposition } from './planSchema.js';

export type AskOutcomeState = 'done' | 'planned' | 'not-done' | 'refused';

export interface AskOutcome {
  ask: string;
  kind: string;
  status: AskDisposition['status'];
  detail: string;
  outcome: AskOutcomeState;
  /** One line for a person: `"200 iterations": done — --max_iters=200`. */
  line: string;
}

const ENDED_BADLY = new Set(['FAILED', 'CANCELLED', 'STOPPED']);

export function askOutcomes(asks: readonly AskDisposition[], jobStatus: string, statusReason: string | null): AskOutcome[] {
  return asks.map((a) => {
    const outcome: AskOutcomeState =
      a.status === 'refused' ? 'refused' : jobStatus === 'SUCCEEDED' ? 'done' : ENDED_BADLY.has(jobStatus) ? 'not-done' : 'planned';
    const why = outcome === 'not-done' ? `the job ended ${jobStatus.toLowerCase()}${statusReason ? `: ${statusReason}` : ''}` : a.detail;
    const word = { done: 'done', planned: 'planned', 'not-done': 'not done', refused: 'refused' }[outcome];
    return { ask: a.ask, kind: a.kind, status: a.status, detail: a.detail, outcome, line: `"${a.ask}": ${word} — ${why}` };
  });
}

/** The plan row's `asks` column as dispositions (rows written before asks existed hold []). */
export function planAsks(column: unknown): AskDisposition[] {
  return Array.isArray(column) ? (column as AskDisposition[]) : [];
}

/**
 * How an estimate reads (jobs/estimate.ts), in the job's reasons and as the GraphQL field Job.estimateText
 * (which the `chatgpu` CLI prints: it imports nothing of the server).
 */

/** "about 4 min (3 min–6 min), CA$0.0200 (0.0100–0.0300)" */
export function describeEstimate(e: {
  durationSec: number;
  lowSec: number;
  highSec: number;
  costCad: number;
  lowCad: number;
  highCad: number;
}): string {
  return `about ${fmt(e.durationSec)} (${fmt(e.lowSec)}–${fmt(e.highSec)}), CA$${e.costCad.toFixed(4)} (${e.lowCad.toFixed(4)}–${e.highCad.toFixed(4)})`;
}

/** "4.2 s", "42 s", "12 min", "3.5 h" */
export function fmt(sec: number): string {
  if (sec < 90) return `${sec < 10 ? sec.toFixed(1) : Math.round(sec)} s`;
  if (sec < 5400) return `${Math.round(sec / 60)} min`;
  return `${(sec / 3600).toFixed(1)} h`;
}

/** Job.estimateText: the estimate, and after the full run how long it took: "about 4 min (…), CA$… (…); the full run took 5 min (1.2× the estimate)". */
export function estimateText(e: Parameters<typeof describeEstimate>[0] & { actualSec?: number | null; ratio?: number | null }): string {
  const actual =
    e.actualSec != null ? `; the full run took ${fmt(e.actualSec)}${e.ratio != null ? ` (${e.ratio}× the estimate)` : ''}` : '';
  return `${describeEstimate(e)}${actual}`;
}

/**
 * Reports from a worker about one attempt: log lines and metric points (batched,
 * ordered by seq, idempotent when resent) — each fenced by (attemptId, fencingToken).
 */
import { insertLogLines } from '../../db/sql/insertLogLines.js';
import { insertMetricPoints } from '../../db/sql/insertMetricPoints.js';
import { ValidationError } from '../errors.js';
import type { Resources } from '../resources.js';
import { requireCurrentAttempt } from './currentAttempt.js';

export const MAX_LOG_LINES = 2000;
export const MAX_LOG_LINE_BYTES = 64 * 1024;
export const MAX_METRIC_POINTS = 5000;

export interface LogLineInput {
  seq: number;
  stream: string;
  text: string;
  /** When the line was printed, ms since the epoch; null: when it arrived. */
  ts?: number | null;
}

function checkSeqs(seqs: number[], what: string) {
  for (let i = 0; i < seqs.length; i++) {
    const s = seqs[i]!;
    if (!Number.isInteger(s) || s < 0)
      throw new ValidationError(`${what} seq must be a non-negative integer.`, [{ path: [String(i), 'seq'], message: 'bad seq' }]);
    // Consecutive, not only increasing: a batch with a hole inside it would leave that seq
    // missing for good (the next batch must continue after its last seq).
    if (i > 0 && s !== seqs[i - 1]! + 1) {
      throw new ValidationError(`${what} must have consecutive seqs (seq ${s} after ${seqs[i - 1]}).`, [
        { path: [String(i), 'seq'], message: 'not consecutive' },
      ]);
    }
  }
}

type WellFormed = { isWellFormed(): boolean; toWellFormed(): string };

/**
 * A program's output as PostgreSQL can store it: NUL characters removed (text cannot hold
 * them), and a lone UTF-16 surrogate (a JSON client can send one) replaced by U+FFFD, as
 * UTF-8 encoding would.
 */
function storableText(text: string): string {
  const t = text.includes('\u0000') ? text.replaceAll('\u0000', '') : text;
  return (t as unknown as WellFormed).isWellFormed() ? t : (t as unknown as WellFormed).toWellFormed();
}

export async function appendLogs(r: Resources, workerTokenId: string, attemptId: string, fencingToken: string, lines: LogLineInput[]) {
  if (lines.length === 0) return { accepted: 0, lastSeq: null as number | null };
  if (lines.length > MAX_LOG_LINES)
    throw new ValidationError(`At most ${MAX_LOG_LINES} log lines per batch.`, [{ path: ['lines'], message: 'too many' }]);
  checkSeqs(
    lines.map((l) => l.seq),
    'Log lines',
  );
  lines.forEach((l, i) => {
    if (!['stdout', 'stderr', 'system'].includes(l.stream))
      throw new ValidationError(`Unknown stream ${JSON.stringify(l.stream).slice(0, 40)}.`, [
        { path: [String(i), 'stream'], message: 'stdout, stderr or system' },
      ]);
    if (Buffer.byteLength(l.text) > MAX_LOG_LINE_BYTES)
      throw new ValidationError(`A log line exceeds ${MAX_LOG_LINE_BYTES} bytes.`, [{ path: [String(i), 'text'], message: 'too long' }]);
  });
  const attempt = await requireCurrentAttempt(r.prisma, attemptId, fencingToken, workerTokenId, r.now(), 'logs', { count: lines.length });
  const last = await r.prisma.logChunk.findFirst({ where: { attemptId }, orderBy: { seq: 'desc' }, select: { seq: true } });
  const next = (last?.seq ?? -1) + 1;
  if (lines[0]!.seq > next) {
    throw new ValidationError(`Log lines must continue at seq ${next}; got ${lines[0]!.seq} (lines were skipped).`, [
      { path: ['0', 'seq'], message: 'gap' },
    ]);
  }
  const fresh = lines.filter((l) => l.seq >= next);
  if (fresh.length > 0) {
    const arrived = r.now().getTime();
    await insertLogLines(
      r.prisma,
      attemptId,
      fresh.map((l) => ({ seq: l.seq, stream: l.stream, text: storableText(l.text), ms: l.ts ?? arrived })),
    );
    await r.events.emit({ type: 'job.logs', jobId: attempt.task.jobId, attemptId, fromSeq: fresh[0]!.seq, toSeq: fresh.at(-1)!.seq });
  }
  return { accepted: fresh.length, lastSeq: lines.at(-1)!.seq };
}

export interface MetricInput {
  seq: number;
  name: string;
  step?: number | null;
  value: number;
  ts?: Date | null;
}

export async function reportMetrics(r: Resources, workerTokenId: string, attemptId: string, fencingToken: string, points: MetricInput[]) {
  if (points.length === 0) return { accepted: 0, lastSeq: null as number | null };
  if (points.length > MAX_METRIC_POINTS)
    throw new ValidationError(`At most ${MAX_METRIC_POINTS} metric points per batch.`, [{ path: ['points'], message: 'too many' }]);
  // Several names may share one seq (one reported line); seqs never go down.
  for (let i = 1; i < points.length; i++) {
    if (points[i]!.seq < points[i - 1]!.seq)
      throw new ValidationError('Metric points must be ordered by seq.', [{ path: [String(i), 'seq'], message: 'not ordered' }]);
  }
  points.forEach((p, i) => {
    if (!Number.isInteger(p.seq) || p.seq < 0)
      throw new ValidationError('Metric seq must be a non-negative integer.', [{ path: [String(i), 'seq'], message: 'bad seq' }]);
    if (!/^[\w./:-]{1,100}$/.test(p.name))
      throw new ValidationError(`Bad metric name ${JSON.stringify(p.name).slice(0, 60)}.`, [
        { path: [String(i), 'name'], message: 'letters, digits, _ . / : -' },
      ]);
    if (!Number.isFinite(p.value))
      throw new ValidationError('Metric values must be finite numbers.', [{ path: [String(i), 'value'], message: 'not finite' }]);
  });
  const attempt = await requireCurrentAttempt(r.prisma, attemptId, fencingToken, workerTokenId, r.now(), 'metrics', {
    count: points.length,
  });
  const now = r.now();
  const count = await insertMetricPoints(
    r.prisma,
    attemptId,
    points.map((p) => ({ seq: p.seq, name: p.name, step: p.step ?? null, value: p.value, ts: p.ts ?? now })),
  );
  if (count > 0) {
    await r.events.emit({ type: 'job.metrics', jobId: attempt.task.jobId, attemptId, fromSeq: points[0]!.seq, toSeq: points.at(-1)!.seq });
  }
  return { accepted: count, lastSeq: points.at(-1)!.seq };
}

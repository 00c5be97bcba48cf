/**
 * The worker's log and metric batches, fuzzed against a model (docs/architecture.md §5:
 * "appendLogs / reportMetrics batched, ordered by seq, idempotent on retry"): sequences of
 * batches with gaps (between and inside batches), repeats (resent batches, with other
 * text), reordering, oversize lines and batches, unknown streams, bad metric names — sent
 * over real GraphQL by a worker holding the lease.
 *
 * Each batch gets exactly the model's answer (a ValidationError, or AppendResult with the
 * model's count of new lines), a refused batch writes nothing, and at the end the stored
 * log is seq 0..n-1 with each line as first sent (NUL characters removed), the stored
 * metric points the first of each (seq, name).
 */
import fc from 'fast-check';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { MAX_LOG_LINE_BYTES, MAX_LOG_LINES, MAX_METRIC_POINTS } from '../src/domain/leases/reports.js';
import { startTestApi } from './helpers/api.js';
import { fuzzParams, fuzzTimeout, snapshotter } from './helpers/fuzz.js';
import { addTask, createJobWithFile, createWorkerToken, ProtocolWorker } from './helpers/protocolClient.js';

const api = await startTestApi();
const owner = await api.signUp();
const worker = new ProtocolWorker(api, await createWorkerToken(api, owner.token, 'batches'), 'batch-box');
await worker.hello({ slots: 64 });
const job = await createJobWithFile(api, owner.token);
const snap = await snapshotter(api.databaseUrl, [path.join(api.dataDir, 'blobs')]);
const prisma = api.server.db.prisma;

/** A fresh lease per case: the model starts from an empty log. */
async function lease() {
  await addTask(api, job, { name: 'batches' });
  const [a] = await worker.claim({ max: 1 });
  if (!a) throw new Error('no lease');
  return a;
}

// ---------------------------------------------------------------- logs

type Line = { seq: number; stream: string; text: string };
/** A batch described relative to the log's next seq: where it starts and how each next seq steps. */
const logBatch = fc.oneof(
  {
    weight: 12,
    arbitrary: fc.record({
      start: fc.integer({ min: -4, max: 2 }),
      steps: fc.array(fc.oneof({ weight: 12, arbitrary: fc.constant(1) }, { weight: 1, arbitrary: fc.constantFrom(0, 2, -1, 5) }), {
        maxLength: 6,
      }),
      stream: fc.oneof(
        { weight: 12, arbitrary: fc.constantFrom('stdout', 'stderr', 'system') },
        { weight: 1, arbitrary: fc.constantFrom('STDOUT', '', 'err') },
      ),
      text: fc.oneof(
        { weight: 10, arbitrary: fc.string({ maxLength: 20 }) },
        {
          weight: 1,
          arbitrary: fc.constantFrom('nul\u0000inside', 'é'.repeat(MAX_LOG_LINE_BYTES / 2 + 1), 'x'.repeat(MAX_LOG_LINE_BYTES)),
        },
      ),
    }),
  },
  { weight: 1, arbitrary: fc.constant('tooMany' as const) },
);
type LogBatch = typeof logBatch extends fc.Arbitrary<infer T> ? T : never;

function linesOf(b: LogBatch, next: number, k: number): Line[] {
  if (b === 'tooMany') return Array.from({ length: MAX_LOG_LINES + 1 }, (_, i) => ({ seq: next + i, stream: 'stdout', text: `l${i}` }));
  const out: Line[] = [];
  let seq = next + b.start;
  if (b.steps.length === 0 && b.start === 0) return out;
  out.push({ seq, stream: b.stream, text: `${k}:${b.text}` });
  for (const s of b.steps) out.push({ seq: (seq += s), stream: b.stream, text: `${k}:${b.text}` });
  return out;
}

/** The model: the refusal, or how many lines are new. */
function logModel(lines: Line[], next: number): { error: string } | { accepted: number } {
  if (lines.length === 0) return { accepted: 0 };
  if (lines.length > MAX_LOG_LINES) return { error: 'too many' };
  for (let i = 0; i < lines.length; i++) {
    const s = lines[i]!.seq;
    if (s < 0) return { error: 'negative seq' };
    if (i > 0 && s !== lines[i - 1]!.seq + 1) return { error: 'not consecutive' };
  }
  if (lines.some((l) => !['stdout', 'stderr', 'system'].includes(l.stream))) return { error: 'stream' };
  if (lines.some((l) => Buffer.byteLength(l.text) > MAX_LOG_LINE_BYTES)) return { error: 'too long' };
  if (lines[0]!.seq > next) return { error: 'gap' };
  return { accepted: lines.filter((l) => l.seq >= next).length };
}

// ---------------------------------------------------------------- metrics

type Point = { seq: number; name: string; value: number; step?: number };
const metricBatch = fc.record({
  points: fc.array(
    fc.record({
      dseq: fc.oneof({ weight: 8, arbitrary: fc.constantFrom(0, 1) }, { weight: 1, arbitrary: fc.constantFrom(-1, -3, 7) }),
      name: fc.oneof(
        { weight: 10, arbitrary: fc.constantFrom('loss', 'acc', 'lr/group.0', 'val:loss') },
        { weight: 1, arbitrary: fc.constantFrom('', 'a b', 'x'.repeat(101), 'naïve') },
      ),
      value: fc.oneof(
        { weight: 9, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }) },
        // Found by this suite: the 17th digit was rounded, the largest double refused.
        { weight: 1, arbitrary: fc.constantFrom(1.5550195398945026e109, Number.MAX_VALUE, -Number.MAX_VALUE, Number.MIN_VALUE, 0.1 + 0.2) },
      ),
      step: fc.option(fc.integer({ min: 0, max: 1_000_000 })),
    }),
    { maxLength: 6 },
  ),
  start: fc.integer({ min: -3, max: 3 }),
});

function pointsOf(b: typeof metricBatch extends fc.Arbitrary<infer T> ? T : never, base: number): Point[] {
  let seq = base + b.start;
  return b.points.map((p) => ({ seq: (seq += p.dseq), name: p.name, value: p.value, ...(p.step !== null ? { step: p.step } : {}) }));
}

function metricModel(points: Point[]): { error: string } | null {
  if (points.length > MAX_METRIC_POINTS) return { error: 'too many' };
  for (let i = 0; i < points.length; i++) {
    const p = points[i]!;
    if (i > 0 && p.seq < points[i - 1]!.seq) return { error: 'not ordered' };
    if (p.seq < 0) return { error: 'negative seq' };
    if (!/^[\w./:-]{1,100}$/.test(p.name)) return { error: 'name' };
  }
  return null;
}

// ---------------------------------------------------------------- the properties

/** Cases the fuzzer found that failed before their fix (api/src/domain/leases/reports.ts). */
const LOG_REGRESSIONS: { why: string; batches: LogBatch[] }[] = [
  {
    why: 'a batch with a gap inside it (seq 0 then 2) was accepted, leaving seq 1 missing for good',
    batches: [
      { start: 0, steps: [2], stream: 'stdout', text: 'a' },
      { start: 0, steps: [1], stream: 'stdout', text: 'b' },
    ],
  },
];

async function runLogs(batches: LogBatch[]): Promise<string[]> {
  const a = await lease();
  const problems: string[] = [];
  const stored: Line[] = [];
  for (const [k, b] of batches.entries()) {
    const next = stored.length;
    const lines = linesOf(b, next, k);
    const want = logModel(lines, next);
    const before = await snap.take();
    const got = await worker.appendLogs(a, lines);
    const label = `batch ${k} (seqs ${lines.length > 8 ? `${lines[0]?.seq}…${lines.at(-1)?.seq}` : lines.map((l) => l.seq).join(',')}; next ${next})`;
    if ('error' in want) {
      if (got.__typename !== 'ValidationError')
        problems.push(`${label}: expected a ValidationError (${want.error}), got ${JSON.stringify(got).slice(0, 200)}`);
      const changed = snap.diff(before, await snap.take());
      if (changed.length) problems.push(`${label}: refused but wrote ${changed.join('; ')}`);
    } else {
      if (got.__typename !== 'AppendResult' || got.accepted !== want.accepted)
        problems.push(`${label}: expected ${want.accepted} accepted, got ${JSON.stringify(got).slice(0, 200)}`);
      for (const l of lines) if (l.seq >= next) stored.push({ ...l, text: l.text.replaceAll('\u0000', '') });
    }
  }
  const rows = await prisma.logChunk.findMany({
    where: { attemptId: a.attemptId },
    orderBy: { seq: 'asc' },
    select: { seq: true, stream: true, text: true },
  });
  if (rows.some((r, i) => r.seq !== i)) problems.push(`stored seqs not 0..n-1: ${rows.map((r) => r.seq).join(',')}`);
  if (JSON.stringify(rows) !== JSON.stringify(stored))
    problems.push(`stored log differs from the model (${rows.length} rows, model ${stored.length})`);
  await worker.complete(a); // frees the worker's slot
  return problems;
}

describe('fuzz: log batches', () => {
  for (const r of LOG_REGRESSIONS) {
    it(`regression: ${r.why}`, async () => {
      expect(await runLogs(r.batches)).toEqual([]);
    });
  }

  it(
    'each batch answered as the model says; the stored log is complete, in order, first text kept',
    async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(logBatch, { minLength: 1, maxLength: 6 }), async (batches) => {
          const problems = await runLogs(batches);
          if (problems.length) throw new Error(problems.join('\n'));
        }),
        fuzzParams(20),
      );
    },
    fuzzTimeout(),
  );
});

describe('fuzz: metric batches', () => {
  it(
    'each batch refused or stored as the model says; the first point of each (seq, name) is kept',
    async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(metricBatch, { minLength: 1, maxLength: 5 }), fc.boolean(), async (batches, oversize) => {
          const a = await lease();
          const problems: string[] = [];
          const stored = new Map<string, Point>();
          let base = 0;
          const all = batches.map((b) => {
            const pts = pointsOf(b, base);
            base = Math.max(base, ...pts.map((p) => p.seq));
            return pts;
          });
          // One oversize batch (more points than allowed) among them, sometimes.
          if (oversize)
            all.splice(
              1,
              0,
              Array.from({ length: MAX_METRIC_POINTS + 1 }, (_, i) => ({ seq: i, name: 'loss', value: i })),
            );
          for (const [k, points] of all.entries()) {
            const want = metricModel(points);
            const before = await snap.take();
            const got = await worker.reportMetrics(a, points);
            if (want) {
              if (got.__typename !== 'ValidationError')
                problems.push(`batch ${k}: expected a ValidationError (${want.error}), got ${JSON.stringify(got).slice(0, 200)}`);
              const changed = snap.diff(before, await snap.take());
              if (changed.length) problems.push(`batch ${k}: refused but wrote ${changed.join('; ')}`);
              continue;
            }
            let fresh = 0;
            for (const p of points) {
              const key = `${p.seq}|${p.name}`;
              if (!stored.has(key)) {
                stored.set(key, p);
                fresh++;
              }
            }
            if (got.__typename !== 'AppendResult' || got.accepted !== fresh)
              problems.push(`batch ${k}: expected ${fresh} accepted, got ${JSON.stringify(got).slice(0, 200)}`);
          }
          const rows = await prisma.metricPoint.findMany({
            where: { attemptId: a.attemptId },
            select: { seq: true, name: true, value: true },
          });
          // Values exactly (every finite double round-trips; Prisma's createMany used to round the
          // 17th significant digit — 1.5550195398945026e+109 came back …503e+109 — and refuse
          // Number.MAX_VALUE: db/sql/insertMetricPoints.ts). -0 is stored as 0.
          const v = (x: number) => String(x === 0 ? 0 : x);
          const model = [...stored.values()].map((p) => `${p.seq}|${p.name}|${v(p.value)}`).sort();
          const got = rows.map((r) => `${r.seq}|${r.name}|${v(r.value)}`).sort();
          if (JSON.stringify(got) !== JSON.stringify(model))
            problems.push(`stored points differ from the model:\n  stored ${got.join(' ')}\n  model  ${model.join(' ')}`);
          await worker.complete(a);
          if (problems.length) throw new Error(problems.join('\n'));
        }),
        fuzzParams(15),
      );
    },
    fuzzTimeout(),
  );
});

/**
 * Batched completions (completeAttempts, domain/leases/completeAttempts.ts) over real GraphQL
 * HTTP on real PostgreSQL: each attempt of a batch is fenced on its own (invariant 1) — a
 * stale member (its lease lost to the tick and handed on, or a wrong fencing token) is refused
 * and recorded while the others are accepted, with their events, usage and one NOTIFY batch;
 * foreign, unknown and badly declared members are refused in their own results; a malformed
 * batch changes nothing.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { startTestApi } from './helpers/api.js';
import { addTask, createJobWithFile, createWorkerToken, ProtocolWorker } from './helpers/protocolClient.js';
import { packEvents, NOTIFY_BYTES } from '../src/graphql/pubsub.js';
import { runTick } from '../src/scheduler/tick.js';
import type { DomainEvent } from '../src/domain/events.js';

const COMPLETE_MANY = `mutation($c: [CompletionInput!]!) { completeAttempts(completions: $c) { __typename
  ... on MutationCompleteAttemptsSuccess { data { attemptId accepted status error { code message reason } } }
  ... on Error { message code } } }`;

type Lease = { attemptId: string; fencingToken: string };
const completeMany = (w: ProtocolWorker, items: (Lease & { result?: Record<string, unknown> })[]) =>
  w.gql(COMPLETE_MANY, {
    c: items.map((i) => ({ attemptId: i.attemptId, fencingToken: i.fencingToken, result: i.result ?? { exitCode: 0 } })),
  });

describe('a batch of completions', async () => {
  // The first test's stale task is queued again after a retry backoff of an hour: a later test's
  // claim (on a loaded machine, long after) gets that test's own task, not this one.
  const api = await startTestApi({ RETRY_BASE_SEC: '3600' });
  const prisma = api.server.db.prisma;
  const owner = await api.signUp();
  const token = await createWorkerToken(api, owner.token);
  const w = new ProtocolWorker(api, token, 'batcher');
  await w.hello({ slots: 8 });
  const job = await createJobWithFile(api, owner.token);

  it('with one stale member accepts the others and rejects that one (recorded, its task untouched)', async () => {
    const tasks: { id: string }[] = [];
    for (let i = 0; i < 4; i++) tasks.push(await addTask(api, job, { name: `batch ${i}`, maxAttempts: 3 }));
    const got = await w.claim({ max: 4 });
    expect(got).toHaveLength(4);
    await w.heartbeat(got); // RUNNING
    const stale = got[1]!;
    // Its lease runs out and the tick hands the task on: the attempt is LOST, the task QUEUED again.
    await prisma.attempt.update({ where: { id: stale.attemptId }, data: { leaseExpiresAt: new Date(api.clock.now().getTime() - 1000) } });
    expect(await runTick(api.server.resources, api.clock.now())).toMatchObject({ lost: 1 });
    const eventsBefore = await prisma.jobEvent.count({ where: { jobId: job.jobId } });
    const costBefore = (await prisma.job.findUniqueOrThrow({ where: { id: job.jobId } })).costCad;

    const heard: DomainEvent[] = [];
    const off = api.server.pubsub.on(
      () => true,
      (e) => heard.push(e),
    );
    const finishedHeard = [0, 2, 3].map((i) =>
      api.server.pubsub.waitFor((e) => e.type === 'task.finished' && e.taskId === tasks[i]!.id, 10_000),
    );
    const r = await completeMany(
      w,
      got.map((a, i) => ({ ...a, result: { exitCode: i === 3 ? 2 : 0, metrics: { i } } })),
    );
    // Subscribers (every API process, through LISTEN) hear one task.finished per accepted task.
    expect(await Promise.all(finishedHeard)).toEqual([true, true, true]);
    off();
    expect(r.errors).toBeUndefined();
    const results = r.data.completeAttempts.data as { attemptId: string; accepted: boolean; status: string | null; error: any }[];
    expect(results.map((x) => x.attemptId)).toEqual(got.map((a) => a.attemptId));
    expect(results.map((x) => x.accepted)).toEqual([true, false, true, true]);
    expect(results.map((x) => x.status)).toEqual(['SUCCEEDED', null, 'SUCCEEDED', 'FAILED']);
    expect(results[1]!.error).toMatchObject({ code: 'STALE_ATTEMPT', reason: 'its lease expired and the task was handed on' });

    // The accepted ones: attempts final, tasks done with their results.
    for (const i of [0, 2]) {
      const t = await prisma.task.findUniqueOrThrow({ where: { id: tasks[i]!.id } });
      expect(t.status).toBe('SUCCEEDED');
      expect(t.result).toMatchObject({ attemptId: got[i]!.attemptId, exitCode: 0, metrics: { i } });
      const a = await prisma.attempt.findUniqueOrThrow({ where: { id: got[i]!.attemptId } });
      expect(a.status).toBe('SUCCEEDED');
      expect(a.finishedAt).not.toBeNull();
    }
    const failed = await prisma.task.findUniqueOrThrow({ where: { id: tasks[3]!.id } });
    expect([failed.status, failed.statusReason]).toEqual(['FAILED', 'The command exited with code 2.']);
    expect((await prisma.attempt.findUniqueOrThrow({ where: { id: got[3]!.attemptId } })).exitCode).toBe(2);

    // The stale one: LOST → STALE, recorded; its task is still queued for its next attempt, without a result.
    expect((await prisma.attempt.findUniqueOrThrow({ where: { id: stale.attemptId } })).status).toBe('STALE');
    const reports = await prisma.staleReport.findMany({ where: { attemptId: stale.attemptId } });
    expect(reports.map((x) => [x.kind, (x.detail as { reason: string }).reason])).toEqual([
      ['complete', 'its lease expired and the task was handed on'],
    ]);
    const requeued = await prisma.task.findUniqueOrThrow({ where: { id: tasks[1]!.id } });
    expect(requeued.status).toBe('QUEUED');
    expect(requeued.result).toBeNull();
    expect(requeued.currentAttemptId).toBeNull();

    // Two events per accepted attempt (attempt.status then task.status), in batch order; none for the stale one.
    const events = await prisma.jobEvent.findMany({ where: { jobId: job.jobId }, orderBy: { id: 'asc' }, skip: eventsBefore });
    expect(events.map((e) => [e.kind, (e.payload as { attemptId?: string; taskId: string }).taskId])).toEqual([
      ['attempt.status', tasks[0]!.id],
      ['task.status', tasks[0]!.id],
      ['attempt.status', tasks[2]!.id],
      ['task.status', tasks[2]!.id],
      ['attempt.status', tasks[3]!.id],
      ['task.status', tasks[3]!.id],
    ]);
    // Each accepted attempt got its final usage entry and the job's cost grew by exactly their sum.
    const entries = await prisma.usageEntry.findMany({ where: { attemptId: { in: [0, 2, 3].map((i) => got[i]!.attemptId) } } });
    expect(new Set(entries.map((e) => e.attemptId)).size).toBe(3);
    const job1 = await prisma.job.findUniqueOrThrow({ where: { id: job.jobId } });
    const added = entries.filter((e) => e.billable).reduce((s, e) => s.add(e.costCad), costBefore.sub(costBefore));
    expect(job1.costCad.sub(costBefore).toString()).toBe(added.toString());

    expect(heard.filter((e) => e.type === 'task.finished' && e.taskId === tasks[1]!.id)).toEqual([]);
    const jobEventIds = heard.filter((e) => e.type === 'job.event').map((e) => (e as { eventId: string }).eventId);
    for (const e of events) expect(jobEventIds).toContain(e.id.toString());

    // A second batch with the same (accepted) completions is stale for each and changes nothing.
    const again = await completeMany(w, [got[0]!, got[2]!]);
    expect((again.data.completeAttempts.data as { accepted: boolean; error: any }[]).map((x) => [x.accepted, x.error?.reason])).toEqual([
      [false, 'it already completed (succeeded)'],
      [false, 'it already completed (succeeded)'],
    ]);
    expect((await prisma.task.findUniqueOrThrow({ where: { id: tasks[0]!.id } })).result).toMatchObject({ attemptId: got[0]!.attemptId });
  });

  it('a wrong fencing token, an unknown attempt and an undeclared output are refused each in its own result; the valid member is accepted', async () => {
    const tasks = [
      await addTask(api, job, { name: 'ok' }),
      await addTask(api, job, { name: 'wrong token' }),
      await addTask(api, job, { name: 'bad output' }),
    ];
    const got = await w.claim({ max: 3 });
    expect(got.map((a) => a.task.id).sort()).toEqual(tasks.map((t) => t.id).sort());
    const by = (id: string) => got.find((a) => a.task.id === id)!;
    const [ok, wrong, bad] = tasks.map((t) => by(t.id));
    const r = await completeMany(w, [
      ok!,
      { ...wrong!, fencingToken: 'not-the-token' },
      { attemptId: randomUUID(), fencingToken: 'x' },
      { ...bad!, result: { exitCode: 0, outputs: [{ path: 'out.txt', sha256: 'a'.repeat(64) }] } },
    ]);
    const results = r.data.completeAttempts.data as { accepted: boolean; error: any }[];
    expect(results.map((x) => [x.accepted, x.error?.code ?? null])).toEqual([
      [true, null],
      [false, 'STALE_ATTEMPT'],
      [false, 'NOT_FOUND'],
      [false, 'VALIDATION_ERROR'],
    ]);
    expect(results[1]!.error.reason).toBe('the fencing token does not match');
    expect((await prisma.staleReport.findMany({ where: { attemptId: wrong!.attemptId } })).map((x) => x.kind)).toEqual(['complete']);
    // The refused ones are still live and can complete properly.
    for (const a of [wrong!, bad!]) expect((await prisma.attempt.findUniqueOrThrow({ where: { id: a.attemptId } })).status).toBe('LEASED');
    const later = await completeMany(w, [wrong!, bad!]);
    expect((later.data.completeAttempts.data as { accepted: boolean }[]).map((x) => x.accepted)).toEqual([true, true]);
  });

  it("another worker token's attempt is not found (no leak), even with the right fencing token", async () => {
    const other = new ProtocolWorker(api, await createWorkerToken(api, owner.token, 'other'), 'other box');
    await other.hello();
    const t = await addTask(api, job, { name: 'theirs' });
    const [mine] = await w.claim({ max: 1 });
    expect(mine!.task.id).toBe(t.id);
    const r = await completeMany(other, [mine!]);
    expect(r.data.completeAttempts.data[0]).toMatchObject({ accepted: false, error: { code: 'NOT_FOUND' } });
    expect((await prisma.attempt.findUniqueOrThrow({ where: { id: mine!.attemptId } })).status).toBe('LEASED');
    expect(await prisma.staleReport.count({ where: { attemptId: mine!.attemptId } })).toBe(0);
    expect((await completeMany(w, [mine!])).data.completeAttempts.data[0].accepted).toBe(true);
  });

  it('a malformed batch (empty, the same attempt twice, too many) is a ValidationError and changes nothing', async () => {
    const t = await addTask(api, job, { name: 'twice' });
    const [a] = await w.claim({ max: 1 });
    expect(a!.task.id).toBe(t.id);
    for (const items of [[], [a!, a!], Array.from({ length: 257 }, () => ({ attemptId: randomUUID(), fencingToken: 'x' }))]) {
      const r = await completeMany(w, items);
      expect(r.data?.completeAttempts?.__typename ?? r.errors?.[0]?.extensions?.code).toMatch(/ValidationError|BAD_USER_INPUT/);
    }
    expect((await prisma.attempt.findUniqueOrThrow({ where: { id: a!.attemptId } })).status).toBe('LEASED');
    expect((await completeMany(w, [a!])).data.completeAttempts.data[0].accepted).toBe(true);
  });
});

describe('events of a batch travel in one NOTIFY', () => {
  it('packs events in order into JSON arrays under the NOTIFY limit', () => {
    const events: DomainEvent[] = Array.from({ length: 500 }, (_, i) => ({ type: 'job.event', jobId: randomUUID(), eventId: String(i) }));
    const payloads = packEvents(events);
    expect(payloads.length).toBeGreaterThan(1);
    for (const p of payloads) expect(Buffer.byteLength(p)).toBeLessThanOrEqual(NOTIFY_BYTES);
    expect(payloads.flatMap((p) => JSON.parse(p) as DomainEvent[])).toEqual(events);
    expect(packEvents(events.slice(0, 3))).toHaveLength(1);
  });
});

/**
 * Hosted services (DESIGN §10): a SERVICE task runs the user's HTTP app on a worker; the
 * worker opens a tunnel (WebSocket, outbound) to an API process; `/svc/:slug/*` is proxied
 * through it. This module holds the service's state; the transport is in http/.
 *
 * Routing state of a service (all in PostgreSQL, so any API process can decide):
 *
 *   not ready ── the current attempt's readiness check passed (worker says READY over its
 *   (503)        tunnel; the attempt is still its task's current one) ──▶ ready (proxied to
 *       ▲                                                                 tunnelUrl)
 *       └── readiness failed, the tunnel closed, or the attempt is no longer current
 *           (lease lost → LOST, task re-queued: a replacement worker starts it again)
 *   any ── stopService / the job ended ──▶ stopped (410)
 *
 * `ready` is only trusted together with `currentAttemptId` = the task's current attempt: a
 * lease lost while the old tunnel still stands (a worker frozen, not dead) routes nothing.
 * The slug and the access token belong to the service, not to an attempt, so a replacement
 * serves at the same URL with the same token.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { Db } from '../../db/types.js';
import type { Prisma as P } from '../../generated/prisma/client.js';
import { hashToken, newToken } from '../auth/secrets.js';
import { ConflictError, NotFoundError } from '../errors.js';
import { cancelOutstandingWork } from '../jobs/outstandingWork.js';
import { recordJobEvent } from '../jobs/jobEvents.js';
import { applyTransition, commitTransition } from '../jobs/jobLifecycle.js';
import { isFinalJobStatus } from '../jobs/jobStatus.js';
import { requireCurrentAttempt } from '../leases/currentAttempt.js';
import type { Resources } from '../resources.js';
import { signServiceCredential, verifyServiceCredential } from './serviceCookie.js';

/** What a SERVICE task carries to its worker (task requirements `service`). */
export interface ServiceRuntime {
  readinessPath: string;
  intervalSec: number;
  timeoutSec: number;
  /** from the start to the first passed check; past it the attempt fails (absent in tasks made before it existed) */
  startTimeoutSec?: number;
  /** null: until stopped */
  durationSec: number | null;
}

/** Seconds a client is told to wait while a service is not ready. */
export const NOT_READY_RETRY_AFTER_SEC = 2;

/**
 * Creates the service of a SERVICE task inside the caller's transaction. Plans are accepted by
 * the planner, with no user present to be shown a secret, so the first token is issued when
 * the owner asks for it (rotateServiceToken with firstOnly: the job page, `chatgpu service`).
 */
export async function insertService(tx: Db, input: { jobId: string; taskId: string; spec: Record<string, unknown> }) {
  const slug = randomBytes(8).toString('hex');
  // A token nobody holds yet: the owner issues the first one (rotateServiceToken); only hashes are stored.
  return tx.service.create({
    data: {
      jobId: input.jobId,
      taskId: input.taskId,
      slug,
      accessTokenHash: hashToken(newToken('service').token),
      spec: input.spec as P.InputJsonValue,
    },
  });
}

/**
 * What a request to a service presents: its bearer token, or on the service's own host the
 * dashboard's ticket (query) or the cookie(s) named chatgpu_svc (serviceOrigin.ts).
 */
export type ServiceCredential = { bearer: string } | { ticket: string } | { cookies: string[] } | null;

export type Route =
  | { kind: 'unauthorized' }
  | { kind: 'open-in-browser'; cookie: string; maxAgeSec: number }
  | { kind: 'forbidden' }
  | { kind: 'gone'; reason: string }
  | { kind: 'not-ready'; retryAfterSec: number }
  | { kind: 'ready'; serviceId: string; attemptId: string; tunnelUrl: string };

/**
 * Where a request to /svc/:slug goes. No credential → unauthorized; a token, ticket or cookie
 * that is not this slug's (or an unknown slug: no oracle for slugs) → forbidden. A valid ticket
 * is exchanged for the cookie (open-in-browser). Nothing here reaches a worker.
 */
export async function routeFor(r: Pick<Resources, 'prisma'>, slug: string, cred: ServiceCredential, now: Date): Promise<Route> {
  if (!cred) return { kind: 'unauthorized' };
  const s = /^[0-9a-f]{16}$/.test(slug)
    ? await r.prisma.service.findUnique({
        where: { slug },
        include: {
          job: { select: { status: true } },
          task: { select: { currentAttemptId: true, currentAttempt: { select: { status: true, leaseExpiresAt: true } } } },
        },
      })
    : null;
  if (!s || !credentialOpens(s, cred, now)) return { kind: 'forbidden' };
  if ('ticket' in cred) {
    const c = signServiceCredential(s, 'cookie', now);
    return { kind: 'open-in-browser', cookie: c.value, maxAgeSec: Math.floor((c.expiresAt.getTime() - now.getTime()) / 1000) };
  }
  if (s.stoppedAt || isFinalJobStatus(s.job.status))
    return { kind: 'gone', reason: s.stoppedAt ? 'The service was stopped.' : `The service's job is ${s.job.status.toLowerCase()}.` };
  const live =
    s.task.currentAttempt && ['LEASED', 'RUNNING'].includes(s.task.currentAttempt.status) && s.task.currentAttempt.leaseExpiresAt > now;
  if (!s.ready || !s.tunnelUrl || !s.currentAttemptId || s.currentAttemptId !== s.task.currentAttemptId || !live)
    return { kind: 'not-ready', retryAfterSec: NOT_READY_RETRY_AFTER_SEC };
  return { kind: 'ready', serviceId: s.id, attemptId: s.currentAttemptId, tunnelUrl: s.tunnelUrl };
}

function credentialOpens(s: { slug: string; accessTokenHash: string }, cred: NonNullable<ServiceCredential>, now: Date): boolean {
  if ('bearer' in cred) return timingSafeEqual(Buffer.from(hashToken(cred.bearer)), Buffer.from(s.accessTokenHash));
  return 'ticket' in cred
    ? verifyServiceCredential(s, 'ticket', cred.ticket, now)
    : cred.cookies.some((c) => verifyServiceCredential(s, 'cookie', c, now));
}

/**
 * A worker opens the tunnel of an attempt: the attempt must be the worker token's, current,
 * fenced by its token (invariant 1), and of a SERVICE task. Returns the service.
 */
export async function openTunnel(r: Pick<Resources, 'prisma' | 'now'>, workerTokenId: string, attemptId: string, fencingToken: string) {
  const attempt = await requireCurrentAttempt(r.prisma, attemptId, fencingToken, workerTokenId, r.now(), 'tunnel');
  if (attempt.task.kind !== 'SERVICE') throw new NotFoundError('Service of attempt', attemptId);
  const service = await r.prisma.service.findFirst({ where: { taskId: attempt.taskId } });
  if (!service) throw new NotFoundError('Service of attempt', attemptId);
  return { service, attempt };
}

/**
 * The worker's readiness check passed (ready) or failed / the tunnel closed (not ready).
 * Ready is written only while the attempt is still its task's current one, so a late READY
 * from a replaced attempt changes nothing; not-ready only clears what this attempt set.
 */
export async function setServiceReady(
  r: Resources,
  serviceId: string,
  attemptId: string,
  ready: boolean,
  tunnelUrl: string | null,
): Promise<boolean> {
  const now = r.now();
  const res = await r.prisma.$transaction(async (tx) => {
    const s = ready
      ? await tx.service.updateMany({
          where: { id: serviceId, stoppedAt: null, task: { currentAttemptId: attemptId, status: { in: ['LEASED', 'RUNNING'] } } },
          data: { ready: true, currentAttemptId: attemptId, tunnelUrl, readyAt: now },
        })
      : await tx.service.updateMany({
          where: { id: serviceId, currentAttemptId: attemptId, ready: true, ...(tunnelUrl ? { tunnelUrl } : {}) },
          data: { ready: false, tunnelUrl: null },
        });
    if (s.count === 0) return null;
    const svc = await tx.service.findUniqueOrThrow({ where: { id: serviceId }, select: { jobId: true } });
    const eventId = await recordJobEvent(tx, svc.jobId, ready ? 'service.ready' : 'service.unready', { attemptId });
    return { jobId: svc.jobId, eventId };
  });
  if (res) await r.events.emit({ type: 'job.event', jobId: res.jobId, eventId: res.eventId });
  return res !== null;
}

/** What a service's figures grew by since the last flush. */
export interface ServiceStats {
  requests: number;
  errors: number;
  latencyMsSum: number;
  readinessChecks: number;
  readinessFailures: number;
}

/** Adds a batch of proxied requests and readiness checks to a service's counters (one UPDATE per flush). */
export async function recordServiceStats(r: Pick<Resources, 'prisma'>, serviceId: string, s: ServiceStats) {
  await r.prisma.service.update({
    where: { id: serviceId },
    data: {
      requestCount: { increment: s.requests },
      errorCount: { increment: s.errors },
      latencyMsSum: { increment: s.latencyMsSum },
      readinessCheckCount: { increment: s.readinessChecks },
      readinessFailureCount: { increment: s.readinessFailures },
    },
  });
}

async function ownService(r: Pick<Resources, 'prisma'>, userId: string, jobId: string) {
  const s = await r.prisma.service.findFirst({ where: { jobId, job: { ownerId: userId } }, orderBy: { createdAt: 'desc' } });
  if (!s) throw new NotFoundError('Service of job', jobId);
  return s;
}

/**
 * A new access token for the job's service (the old one, and every browser cookie, stop working
 * at once); shown once, stored hashed. `firstOnly`: only while none was issued yet, so two
 * clients fetching the first token (the job page, `chatgpu service`) cannot void each other's.
 */
export async function rotateServiceToken(r: Resources, userId: string, jobId: string, opts: { firstOnly?: boolean } = {}) {
  const s = await ownService(r, userId, jobId);
  const t = newToken('service');
  const now = r.now();
  const done = await r.prisma.service.updateMany({
    where: { id: s.id, ...(opts.firstOnly ? { tokenRotatedAt: null } : {}) },
    data: { accessTokenHash: t.hash, tokenRotatedAt: now },
  });
  if (done.count === 0)
    throw new ConflictError('A token was already issued for this service; rotate it to get a new one (the old one then stops working).');
  return { token: t.token, service: { ...s, accessTokenHash: t.hash, tokenRotatedAt: now } };
}

/**
 * A link that opens the service in the owner's browser (serviceCookie.ts): the service URL with
 * a ticket valid for a minute, which the API exchanges for a cookie on the first request.
 */
export async function openServiceInBrowser(r: Resources, userId: string, jobId: string) {
  const s = await ownService(r, userId, jobId);
  if (s.stoppedAt) throw new ConflictError('The service is stopped.');
  const t = signServiceCredential(s, 'ticket', r.now());
  return { slug: s.slug, ticket: t.value, expiresAt: t.expiresAt };
}

/**
 * The owner stops the service: it stops routing at once (410), its task and live attempt are
 * cancelled (the worker is told through its orders), and the job ends SUCCEEDED — a service
 * that ran until its owner stopped it did what was asked — if it ever passed its readiness
 * check; one that never did ends CANCELLED, saying so. Usage stops accruing with the attempt.
 */
export async function stopService(r: Resources, userId: string, jobId: string) {
  const s = await ownService(r, userId, jobId);
  if (s.stoppedAt) throw new ConflictError('The service is already stopped.');
  const { workers } = await commitTransition(r, jobId, async (tx, now) => {
    await tx.service.update({ where: { id: s.id }, data: { stoppedAt: now, ready: false, tunnelUrl: null } });
    const workers = await cancelOutstandingWork(tx, r, now, jobId, 'The service was stopped by its owner.');
    if (!(await everReady(tx, jobId))) {
      const c = await applyTransition(tx, now, jobId, 'cancel', {
        reason: 'The service was stopped by its owner before it ever answered its readiness check.',
      });
      return { eventIds: c.eventIds, workers };
    }
    const v = await applyTransition(tx, now, jobId, 'startValidation', { reason: 'The service was stopped by its owner.' });
    const done = await applyTransition(tx, now, jobId, 'succeed', { reason: 'The service ran until its owner stopped it.' });
    return { eventIds: [...v.eventIds, ...done.eventIds], workers };
  });
  for (const workerId of workers) await r.events.emit({ type: 'worker.orders', workerId });
  return r.prisma.service.findUniqueOrThrow({ where: { id: s.id } });
}

/** Whether a job's service ever passed its readiness check (on any attempt), inside the caller's transaction. */
export async function everReady(tx: Db, jobId: string): Promise<boolean> {
  return (await tx.service.count({ where: { jobId, readyAt: { not: null } } })) > 0;
}

/** Marks a job's services stopped (its SERVICE task ended for good), inside the caller's transaction. */
export async function markServicesStopped(tx: Db, jobId: string, now: Date) {
  await tx.service.updateMany({ where: { jobId, stoppedAt: null }, data: { stoppedAt: now, ready: false, tunnelUrl: null } });
}

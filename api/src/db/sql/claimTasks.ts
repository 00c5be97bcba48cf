import { hotQuery, type Db } from '../client.js';
import { Prisma as P } from '../../generated/prisma/client.js';

export interface ClaimedRow {
  attemptId: string;
  taskId: string;
  jobId: string;
  fencingToken: string;
  leaseExpiresAt: Date;
  number: number;
  /** The attempt.status LEASED job event written in the same statement (for the NOTIFY after it). */
  eventId: string;
  /** What the worker needs to run it (the assignment), read in the same statement. */
  task: ClaimedTask;
}

export interface ClaimedTask {
  id: string;
  jobId: string;
  kind: string;
  name: string;
  command: string;
  environment: unknown;
  requirements: unknown;
  checkpoint: unknown;
  codeVersion: { manifest: unknown };
}

/**
 * Claims up to `max` eligible QUEUED tasks for one worker and creates their attempts and
 * their attempt.status job events, in ONE statement (so it is atomic on PGlite's single connection too, and never holds
 * a transaction open across a long-poll).
 *
 * Locking: candidate task rows are taken with `FOR UPDATE OF t SKIP LOCKED`, so
 * concurrent claimers never wait on each other and never get the same task; the
 * UPDATE re-checks status = 'QUEUED' under the row lock.
 *
 * Eligibility (all in SQL): workload among the worker's workloads, accelerator vendor,
 * memory and accelerator memory, pinned worker, runAfter (retry backoff), a setup phase
 * (packages to install) only on a worker whose capabilities say it installs, the lowest
 * PyTorch a pin needs (requirements.minTorch, by major.minor), another owner's task never on a
 * worker whose capabilities say ownJobsOnly (no sandbox, not by its owner's --sandbox none); the worker must be of this
 * worker token and ONLINE, or OFFLINE (it is calling: the touch beside this statement,
 * leases/claim.ts, brings it back ONLINE) — paused and draining workers get nothing; at most
 * its free slots (slots less its live attempts) are claimed.
 * Fairness: round-robin between owners — a task's turn is its owner's live tasks plus
 * its rank among that owner's eligible tasks; then priority, then age. One user's
 * thousand tasks cannot starve another's one, in single or batch claims.
 * Spending cap: a task of a capped job is leased only when the job's cost so far, plus
 * what its live attempts may still cost to their time limits, plus this task on this
 * worker to its time limit, stays within the cap (the reservation and rates of usage.ts);
 * a run with an estimate from its smoke run is projected to the estimate's high end instead.
 * Trust (domain/trust): a checkable task goes only to a worker whose reputation is at least
 * `minReputation`; a replica or tie-breaker (avoidOwners) never to a worker of an owner whose
 * worker already ran that result; a tie-breaker only to a worker at least as trusted as it asks.
 * Placement: a worker with an accelerator skips accelerator-free work while an idle,
 * recently seen CPU-only worker could take it. A task that needs several devices on one worker
 * (requirements.devices: a distributed launch's processes) goes only to a worker with that many
 * accelerators of its vendor free (not held by its live GPU attempts), or, on the CPU, that many
 * cores in one slot; while it runs, no other GPU task joins it there (devicesFit below).
 * Network: a task that asks for it (requirements.network) only on a worker whose owner's policy
 * gives it — --allow-network always, or downloads for a data-download step (networkFits below) —
 * so a refusing worker never claims, and fails, what another would run.
 */
export interface Rates {
  cpuCoreHourCad: number;
  ramGbHourCad: number;
  gpuHourCad: number;
}

/** A task's default time limit when it states none (the worker's own default). */
export const DEFAULT_TIMEOUT_SEC = 24 * 3600;

/**
 * CAD an hour of task `t` on worker `w` (SQL aliases): billing/usage.ts reservationOf and
 * priceInterval, in SQL — the task's cores (else the worker's share per slot, bounded by its
 * cores), the larger of its memory and the worker's share, one accelerator when it needs one.
 */
function hourlyRate(t: string, w: string, rates: Rates) {
  const [T, W] = [P.raw(t), P.raw(w)];
  return P.sql`(GREATEST(1, LEAST(COALESCE((${T}.requirements ->> 'cpuCores')::int, GREATEST(1, ${W}."cpuCores" / GREATEST(${W}.slots, 1))), GREATEST(${W}."cpuCores", 1))) * ${rates.cpuCoreHourCad.toFixed(8)}::numeric
    + GREATEST(COALESCE((${T}.requirements ->> 'minMemoryMiB')::int, 0), ${W}."memoryMiB" / GREATEST(${W}.slots, 1)) / 1024.0 * ${rates.ramGbHourCad.toFixed(8)}::numeric
    + (CASE WHEN ${T}."accelVendor" IS NULL THEN 0 ELSE 1 END) * ${rates.gpuHourCad.toFixed(8)}::numeric)`;
}

/** The torch version of worker row `w` (SQL alias): its task interpreter's (workers/torchVersion.ts chosenPython). */
function torchOf(w: string) {
  const W = P.raw(w);
  return P.sql`(SELECT p -> 'torch' ->> 'version'
    FROM jsonb_array_elements(CASE WHEN jsonb_typeof(${W}.capabilities -> 'pythons') = 'array' THEN ${W}.capabilities -> 'pythons' ELSE '[]'::jsonb END) WITH ORDINALITY AS x(p, i)
    ORDER BY (p ->> 'path') IS NOT DISTINCT FROM (${W}.capabilities ->> 'python') DESC, i
    LIMIT 1)`;
}

/** Task `t` (SQL alias) has no minTorch, or `torch` is at least it by major.minor (workers/torchVersion.ts torchAtLeast). */
function torchFits(t: string, torch: P.Sql) {
  const T = P.raw(t);
  return P.sql`(NOT (${T}.requirements ? 'minTorch') OR (
    COALESCE(${torch}, '') ~ '^[0-9]+[.][0-9]+'
    AND (SELECT ARRAY[h[1]::int, h[2]::int] FROM regexp_match(${torch}, '^([0-9]+)[.]([0-9]+)') AS h)
      >= (SELECT ARRAY[n[1]::int, n[2]::int] FROM regexp_match(${T}.requirements ->> 'minTorch', '^([0-9]+)[.]([0-9]+)') AS n)))`;
}

/**
 * Task `t` (SQL alias) fits the devices of worker row `w` (the claim's \`w\`: its \`accels\` list, its
 * \`accelBusy\` GPUs held by live attempts, \`multiLive\` a live attempt holding several): a task of N > 1
 * devices needs N free — accelerators of its vendor less those live GPU attempts hold (one each, N for
 * a multi-device one) — or on the CPU N cores in one slot (domain/workers/devices.ts devicesOf, in SQL);
 * and no GPU task joins a live multi-device attempt on its worker. (Two picks of one batch claim are
 * not counted against each other.)
 */
function devicesFit(t: string, w: string) {
  const [T, W] = [P.raw(t), P.raw(w)];
  return P.sql`((NOT (${T}.requirements ? 'devices') OR (${T}.requirements ->> 'devices')::int <= 1 OR (${T}.requirements ->> 'devices')::int <= CASE
    WHEN ${T}."accelVendor" IS NULL THEN GREATEST(1, ${W}."cpuCores" / GREATEST(${W}.slots, 1))
    ELSE (SELECT count(*) FROM jsonb_array_elements(${W}.accels) a WHERE a ->> 'vendor' = ${T}."accelVendor") - ${W}."accelBusy" END)
    AND (${T}."accelVendor" IS NULL OR NOT ${W}."multiLive"))`;
}

/**
 * The network policy of worker row `w` (SQL alias): the owner's --allow-network as its capabilities
 * advertise it (capabilities.allowNetwork), else the worker's default, downloads
 * (domain/workers/networkPolicy.ts networkPolicyOf).
 */
function networkPolicyOf(w: string) {
  const W = P.raw(w);
  return P.sql`(CASE WHEN ${W}.capabilities ->> 'allowNetwork' IN ('never', 'downloads', 'always') THEN ${W}.capabilities ->> 'allowNetwork' ELSE 'downloads' END)`;
}

/**
 * Task `t` (SQL alias) asks for no network (requirements.network not true), or `policy` gives it:
 * always, or downloads for a data-download step (requirements.download an object)
 * (domain/workers/networkPolicy.ts networkAllows). The worker refuses the others (NETWORK_REFUSED).
 */
function networkFits(t: string, policy: P.Sql) {
  const T = P.raw(t);
  return P.sql`((${T}.requirements -> 'network') IS DISTINCT FROM 'true'::jsonb OR ${policy} = 'always'
    OR (${policy} = 'downloads' AND jsonb_typeof(${T}.requirements -> 'download') = 'object'))`;
}

/** How long the cap check projects task `t` to (SQL alias): its smoke run's estimate, else its time limit. */
function projectedSec(t: string) {
  const T = P.raw(t);
  return P.sql`COALESCE((${T}.requirements ->> 'estimateSec')::int, (${T}.requirements ->> 'timeoutSec')::int, ${DEFAULT_TIMEOUT_SEC})`;
}

export async function claimTasks(
  prisma: Db,
  workerId: string,
  workerTokenId: string,
  max: number,
  now: Date,
  leaseSec: number,
  rates: Rates,
  minReputation: number,
): Promise<ClaimedRow[]> {
  const leaseUntil = new Date(now.getTime() + leaseSec * 1000);
  const seenSince = new Date(now.getTime() - 3 * leaseSec * 1000);
  const perOwner = Math.max(32, 4 * max);
  const q = P.sql`
    WITH RECURSIVE w AS (
      SELECT id, "ownerId", reputation, workloads, "accelVendor", "accelMemMiB", "memoryMiB", "cpuCores", slots,
             COALESCE((capabilities -> 'install' ->> 'enabled')::boolean, false) AS installs,
             COALESCE((capabilities ->> 'ownJobsOnly')::boolean, false) AS "ownJobsOnly",
             CASE WHEN jsonb_typeof(capabilities -> 'accelerators') = 'array' THEN capabilities -> 'accelerators' ELSE '[]'::jsonb END AS accels,
             (SELECT COALESCE(sum(GREATEST(1, COALESCE((lt.requirements ->> 'devices')::int, 1))), 0) FROM "Attempt" la JOIN "Task" lt ON lt.id = la."taskId"
               WHERE la."workerId" = "Worker".id AND la.status IN ('LEASED', 'RUNNING') AND lt."accelVendor" IS NOT NULL) AS "accelBusy",
             EXISTS (SELECT 1 FROM "Attempt" la JOIN "Task" lt ON lt.id = la."taskId"
               WHERE la."workerId" = "Worker".id AND la.status IN ('LEASED', 'RUNNING') AND lt."accelVendor" IS NOT NULL AND COALESCE((lt.requirements ->> 'devices')::int, 1) > 1) AS "multiLive",
             ${torchOf('"Worker"')} AS torch,
             ${networkPolicyOf('"Worker"')} AS "allowNetwork",
             GREATEST(0, LEAST(${max}::int, slots - (SELECT count(*) FROM "Attempt" a WHERE a."workerId" = "Worker".id AND a.status IN ('LEASED', 'RUNNING')))) AS free
      FROM "Worker" WHERE id = ${workerId}::uuid AND "tokenId" = ${workerTokenId}::uuid AND status IN ('ONLINE', 'OFFLINE')
    ),
    -- Spending caps before the spend: what the live attempts of capped jobs may still cost, each
    -- at its worker's reservation (billing/usage.ts reservationOf, in SQL) until its time limit.
    -- Soft like the tick's check: two claims at the same instant may each see the other's
    -- attempt missing (the tick still stops the job within one interval).
    inflight AS (
      SELECT t2."jobId",
             sum(
               ${hourlyRate('t2', 'aw', rates)}
               * GREATEST(0, EXTRACT(EPOCH FROM (a."createdAt" + make_interval(secs => ${projectedSec('t2')}) - ${now}::timestamp)))::numeric / 3600
             ) AS cost
      FROM "Attempt" a
      JOIN "Task" t2 ON t2.id = a."taskId"
      JOIN "Job" j2 ON j2.id = t2."jobId" AND j2."spendingCapCad" IS NOT NULL
      JOIN "Worker" aw ON aw.id = a."workerId"
      WHERE a.status IN ('LEASED', 'RUNNING')
      GROUP BY t2."jobId"
    ),
    -- The owners with queued work: a skip scan of the (status, ownerId, priority, createdAt, id)
    -- index, one probe per owner, whatever the queue's length.
    owners AS (
      (SELECT "ownerId" FROM "Task" WHERE status = 'QUEUED' ORDER BY "ownerId" LIMIT 1)
      UNION ALL
      SELECT (SELECT t."ownerId" FROM "Task" t WHERE t.status = 'QUEUED' AND t."ownerId" > o."ownerId" ORDER BY t."ownerId" LIMIT 1)
      FROM owners o WHERE o."ownerId" IS NOT NULL
    ),
    -- Each owner's first eligible tasks in its own order (priority, age): the same index, read
    -- in order and stopped after perOwner rows, so a claim reads owners × perOwner rows, not the
    -- queue. A batch takes at most max from one owner; the margin is for the rows concurrent
    -- claimers hold (SKIP LOCKED below).
    heads AS (
      SELECT t.* FROM owners o CROSS JOIN LATERAL (
        SELECT t.* FROM "Task" t CROSS JOIN w
        WHERE t.status = 'QUEUED' AND t."ownerId" = o."ownerId"
          -- A task its job's cap cannot pay for now is no head: it would hide the owner's others.
          -- (Subqueries, not joins: the index scan must feed the LIMIT in its own order.)
          AND COALESCE(
            ${hourlyRate('t', 'w', rates)} * ${projectedSec('t')}::numeric / 3600
              <= (SELECT j."spendingCapCad" - j."costCad" - COALESCE((SELECT f.cost FROM inflight f WHERE f."jobId" = j.id), 0) FROM "Job" j WHERE j.id = t."jobId"),
            true)
            AND t."runAfter" <= ${now}::timestamp
            AND t.workload = ANY (w.workloads)
            AND (t."accelVendor" IS NULL OR t."accelVendor" = w."accelVendor")
            AND t."minMemoryMiB" <= w."memoryMiB"
            AND t."minAccelMemMiB" <= w."accelMemMiB"
            AND (t."pinnedWorkerId" IS NULL OR t."pinnedWorkerId" = w.id)
            -- A worker without a sandbox that did not choose --sandbox none runs its owner's tasks only.
            AND (NOT w."ownJobsOnly" OR t."ownerId" = w."ownerId")
            -- A task with a setup phase (packages to install) only goes to a worker that installs.
            AND (w.installs OR NOT (t.requirements ? 'setup'))
            -- Not on a worker the task's retries must avoid (the run supervisor put it there).
            AND NOT COALESCE((t.requirements -> 'avoidWorkers') ? (w.id::text), false)
            -- Trust: checkable work only above the threshold; a replica on another owner's machine.
            AND (NOT (t.requirements ? 'checkable') OR w.reputation >= ${minReputation})
            AND w.reputation >= COALESCE((t.requirements ->> 'minReputation')::float8, 0)
            AND NOT COALESCE((t.requirements -> 'avoidOwners') ? (w."ownerId"::text), false)
            AND ${torchFits('t', P.sql`w.torch`)}
            AND ${devicesFit('t', 'w')}
            -- The network only where the owner's policy gives it (--allow-network).
            AND ${networkFits('t', P.sql`w."allowNetwork"`)}
            AND NOT (
              w."accelVendor" <> 'none' AND t."accelVendor" IS NULL AND t."pinnedWorkerId" IS NULL
              AND EXISTS (
                SELECT 1 FROM "Worker" c
                WHERE c.status = 'ONLINE' AND c."accelVendor" = 'none' AND c.id <> w.id
                  AND (NOT COALESCE((c.capabilities ->> 'ownJobsOnly')::boolean, false) OR c."ownerId" = t."ownerId")
                  AND c."lastSeenAt" >= ${seenSince}::timestamp
                  AND t.workload = ANY (c.workloads) AND t."minMemoryMiB" <= c."memoryMiB"
                  AND ${torchFits('t', torchOf('c'))}
                  AND ${networkFits('t', networkPolicyOf('c'))}
                  AND (SELECT count(*) FROM "Attempt" a WHERE a."workerId" = c.id AND a.status IN ('LEASED', 'RUNNING')) < c.slots
              )
            )
        ORDER BY t.priority DESC, t."createdAt", t.id
        LIMIT ${perOwner}
      ) t
      WHERE o."ownerId" IS NOT NULL
    ),
    -- Fairness (fix): each candidate gets a turn = its owner's live tasks + its rank among
    -- that owner's eligible tasks, so a batch claim interleaves owners (turn 1 of every
    -- owner before turn 2 of any). Ordering only by the owner's live count, evaluated once
    -- per statement, handed a batch all of one owner's oldest tasks. Only the candidates' owners.
    live AS (
      SELECT "ownerId", count(*) AS n FROM "Task"
      WHERE status IN ('LEASED', 'RUNNING') AND "ownerId" IN (SELECT "ownerId" FROM heads)
      GROUP BY "ownerId"
    ),
    ranked AS (
      SELECT t.id, t.priority, t."createdAt", t."jobId",
             COALESCE(l.n, 0) + row_number() OVER (PARTITION BY t."ownerId" ORDER BY t.priority DESC, t."createdAt", t.id) AS turn,
             -- The cap: what is left of it after the cost so far and the in-flight work, and
             -- this task on this worker to its time limit (NULL: the job has no cap).
             j."spendingCapCad" - j."costCad" - COALESCE(f.cost, 0) AS "capLeft",
             ${hourlyRate('t', 'w', rates)}
              * ${projectedSec('t')}::numeric / 3600 AS projected
      FROM heads t CROSS JOIN w LEFT JOIN live l ON l."ownerId" = t."ownerId"
      JOIN "Job" j ON j.id = t."jobId"
      LEFT JOIN inflight f ON f."jobId" = t."jobId"
    ),
    -- A batch counts its own earlier picks of the same job against the cap (in pick order).
    capped AS (
      SELECT r.*, sum(r.projected) OVER (PARTITION BY r."jobId" ORDER BY r.turn, r.priority DESC, r."createdAt", r.id) AS "batchProjected"
      FROM ranked r
    ),
    picked AS (
      SELECT t.id, t."attemptCount"
      FROM capped r JOIN "Task" t ON t.id = r.id
      WHERE t.status = 'QUEUED' AND (r."capLeft" IS NULL OR r."batchProjected" <= r."capLeft")
      ORDER BY r.turn, r.priority DESC, r."createdAt", r.id
      LIMIT COALESCE((SELECT free FROM w), 0)
      FOR UPDATE OF t SKIP LOCKED
    ),
    att AS (
      -- The worker's simulated-accelerator label goes onto the attempt (it stays with the result).
      INSERT INTO "Attempt" (id, "taskId", number, "workerId", "fencingToken", "leaseExpiresAt", status, "createdAt", "simulatedAccelerator")
      SELECT gen_random_uuid(), p.id, p."attemptCount" + 1, ${workerId}::uuid, gen_random_uuid()::text, ${leaseUntil}::timestamp, 'LEASED', ${now}::timestamp,
             (SELECT w."simulatedAccelerator" FROM "Worker" w WHERE w.id = ${workerId}::uuid)
      FROM picked p
      RETURNING id, "taskId", "fencingToken", "leaseExpiresAt", number
    ),
    upd AS (
      UPDATE "Task" t
      SET status = 'LEASED', "attemptCount" = att.number, "currentAttemptId" = att.id, "statusReason" = NULL, "updatedAt" = ${now}::timestamp
      FROM att
      WHERE t.id = att."taskId" AND t.status = 'QUEUED'
      RETURNING t.id, t."jobId", t.kind::text AS kind, t.name, t.command, t.environment, t.requirements, t.checkpoint, t."codeVersionId"
    ),
    -- The job event of each lease, in the same statement (no round trip per task).
    ev AS (
      INSERT INTO "JobEvent" ("jobId", kind, payload)
      SELECT upd."jobId", 'attempt.status',
             jsonb_build_object('taskId', att."taskId", 'attemptId', att.id, 'number', att.number, 'status', 'LEASED',
                                'worker', (SELECT w.name FROM "Worker" w WHERE w.id = ${workerId}::uuid))
      FROM att JOIN upd ON upd.id = att."taskId"
      ORDER BY att.id
      RETURNING id, (payload ->> 'attemptId')::uuid AS "attemptId"
    )
    SELECT att.id AS "attemptId", att."taskId", upd."jobId", att."fencingToken", att.number, ev.id::text AS "eventId",
           upd.kind, upd.name, upd.command, upd.environment, upd.requirements, upd.checkpoint, cv.manifest
    FROM att JOIN upd ON upd.id = att."taskId" JOIN ev ON ev."attemptId" = att.id
    JOIN "CodeVersion" cv ON cv.id = upd."codeVersionId"`;
  // A named statement (parsed once per pooled connection; its text never changes: every value,
  // the rates included, is a parameter) — ≈ 0.8 ms of its 3.8 ms at 2,000 queued tasks (bench/README.md,
  // hot path). Still planned for its values on every call: a generic plan took 8.5 ms.
  type Row = Omit<ClaimedRow, 'task' | 'leaseExpiresAt'> & Omit<ClaimedTask, 'id' | 'jobId' | 'codeVersion'> & { manifest: unknown };
  const rows = await hotQuery<Row>(prisma, 'claimTasks', q.text, q.values);
  return rows.map(({ kind, name, command, environment, requirements, checkpoint, manifest, ...row }) => ({
    ...row,
    leaseExpiresAt: leaseUntil, // what the statement wrote
    task: { id: row.taskId, jobId: row.jobId, kind, name, command, environment, requirements, checkpoint, codeVersion: { manifest } },
  }));
}

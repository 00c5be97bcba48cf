/**
 * The chaos suite at CI size (issue 18, item 1): 40 tasks, 4 real workers, two API
 * processes, a seeded schedule of SIGKILLs (with replacements), SIGSTOPs past the lease,
 * connections cut past the lease (a TCP proxy per worker), API restarts and PostgreSQL
 * restarts (a cluster of this file's own, never the shared server), and one worker's
 * environment broken while it runs (its Python removed: invariant 13); then every invariant
 * checked from the database (bench/lib/chaos.ts).
 * CHAOS_SEED replays another schedule. The full size is `node --import tsx bench/chaos.ts`.
 * Only outcomes are asserted, never timings.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { CHAOS_DEFAULTS, runChaos, stopAllChaos } from '../../bench/lib/chaos.js';
import { startThrowawayPostgres } from './helpers/throwawayPostgres.js';

const seed = Number(process.env.CHAOS_SEED ?? 18);
const pg = await startThrowawayPostgres();

afterAll(stopAllChaos);

describe("chaos: workers vanish, freeze and lose their connection, an API and PostgreSQL restart, a worker's machine breaks", () => {
  it(`every task succeeds once, results and logs intact, costs exact, nothing stuck (seed ${seed})`, async () => {
    const r = await runChaos(
      pg.url,
      { ...CHAOS_DEFAULTS, tasks: 40, workers: 4, jobs: 3, seed, faultMinSec: 0.5, faultMaxSec: 2.5, timeoutSec: 240 },
      () => {},
      pg,
    );
    console.log(r.line);
    expect(r.violations).toEqual([]);
    expect(r.duplicated).toBe(0);
    expect(r.stuck).toBe(0);
    expect(r.succeeded).toBe(40); // maxAttempts 30: retries never run out at this fault rate
    expect(r.faults.kill).toBeGreaterThan(0);
    expect(r.faults.stop).toBeGreaterThan(0);
    expect(r.faults.restart).toBeGreaterThan(0);
    expect(r.faults.cut).toBeGreaterThan(0);
    expect(r.faults['pg-restart']).toBeGreaterThan(0);
    // The broken worker: no task failed on it, and it stopped taking work (no black hole).
    expect(r.faults['break-env']).toBe(1);
    expect(r.broken).not.toBeNull();
    expect(r.broken!.tasksFailedByIt).toBe(0);
    expect(['UNHEALTHY', 'QUARANTINED']).toContain(r.broken!.status);
    if (r.broken!.status === 'UNHEALTHY')
      expect(r.broken!.statusReason).toMatch(/^the interpreter .*fragile-python\/bin\/python3 is missing/);
    // What it took after the break ended as infrastructure errors, never as the user's failure.
    for (const k of Object.keys(r.broken!.attemptsAfterBreak))
      expect(k).toMatch(/^(FAILED (WORKER_ERROR|SANDBOX_ERROR)|SUCCEEDED|LOST|STALE)$/);
  }, 300_000);
});

/**
 * Chaos: N small Python tasks across W real workers and two API processes while a seeded
 * schedule SIGKILLs workers (and starts replacements), SIGSTOPs them past their lease and
 * resumes them, cuts their connections, restarts an API process and restarts PostgreSQL;
 * then every invariant is checked from the database (bench/lib/chaos.ts says which).
 * Prints one line with the seed, so a failing schedule can be replayed; exits 1 when
 * anything is duplicated, stuck or violated.
 * The run has a PostgreSQL cluster of its own (bench/lib/throwawayPostgres.ts: a temporary
 * folder, a free port, fsync off), so restarting it never touches the machine's shared server.
 */
import { CHAOS_DEFAULTS, runChaos } from './lib/chaos.js';
import { commandFor, isMain, parseOptions, runAsScript, startBench, type BenchResult } from './lib/bench.js';
import { startThrowawayPostgres } from './lib/throwawayPostgres.js';

const DEFAULTS = { ...CHAOS_DEFAULTS };
const USAGE = `usage: node --import tsx bench/chaos.ts [--tasks 1000] [--workers 20] [--seed 1] [--jobs 5]
                 [--lease-sec 4] [--tick-sec 1] [--heartbeat-sec 1] [--offline-sec 4] [--max-attempts 30]
                 [--fault-min-sec 1] [--fault-max-sec 4] [--pg-down-min-sec 1] [--pg-down-max-sec 5]
                 [--timeout-sec 1800] [--python /usr/bin/python3] [--sandbox auto|bwrap|none] [--break-env 1|0]
(PostgreSQL: a cluster of the run's own, started and removed by it; --pg is not taken)`;

export async function chaos(argv: string[]): Promise<BenchResult> {
  if (argv.includes('--pg')) throw new Error(`chaos runs (and restarts) a PostgreSQL cluster of its own; --pg is not taken.\n${USAGE}`);
  const { pg: _shared, ...o } = parseOptions(argv, DEFAULTS, USAGE);
  const pg = await startThrowawayPostgres();
  const onSignal = () => void pg.remove().finally(() => process.exit(130));
  process.once('SIGINT', onSignal);
  try {
    const { machine, startedAt } = await startBench(`chaos (${o.tasks} tasks, ${o.workers} workers, seed ${o.seed})`, pg.url);
    const r = await runChaos(pg.url, o, console.log, pg);
    const command = commandFor('chaos', o, DEFAULTS);
    console.log(r.line);
    console.log(`command: ${command}`);
    if (r.duplicated || r.stuck || r.violations.length)
      throw new Error(`chaos found ${r.violations.length} invariant violations (seed ${o.seed}); replay: ${command}`);
    return {
      name: 'chaos',
      command,
      machine,
      options: o,
      startedAt: startedAt.toISOString(),
      durationSec: r.durationSec,
      headline: r.line.replace(/^chaos: /, ''),
      figures: {
        tasks: r.tasks,
        'faults: SIGKILL + replacement': r.faults.kill,
        'faults: SIGSTOP past the lease': r.faults.stop,
        'faults: connection cut past the lease': r.faults.cut,
        'faults: API process restarts': r.faults.restart,
        'faults: PostgreSQL restarts': r.faults['pg-restart'],
        'faults: environment broken (Python removed)': r.faults['break-env'],
        'broken worker at the end': r.broken
          ? `${r.broken.status}${r.broken.statusReason ? ` (${r.broken.statusReason.slice(0, 120)})` : ''}`
          : null,
        'broken worker: attempts after the break': r.broken ? JSON.stringify(r.broken.attemptsAfterBreak) : null,
        'tasks failed by the broken worker': r.broken?.tasksFailedByIt ?? null,
        'workers quarantined': r.quarantined.length,
        'lost attempts': r.lostAttempts,
        'lost attempts reported late (STALE)': r.reportedLate,
        'stale reports': r.staleReports,
        'duplicated accepted results': r.duplicated,
        stuck: r.stuck,
        'invariant violations': r.violations.length,
        seed: r.seed,
      },
    };
  } finally {
    process.off('SIGINT', onSignal);
    await pg.remove();
  }
}

if (isMain(import.meta)) runAsScript(chaos);

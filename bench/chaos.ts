/**
 * Chaos: N small Python tasks across W real workers and two API processes while a seeded
 * schedule SIGKILLs workers (and starts replacements), SIGSTOPs them past their lease and
 * resumes them, and restarts an API process; then every invariant is checked from the
 * database (bench/lib/chaos.ts says which). Prints one line with the seed, so a failing
 * schedule can be replayed; exits 1 when anything is duplicated, stuck or violated.
 * PostgreSQL itself is not restarted here (the shared server must stay up).
 */
import { CHAOS_DEFAULTS, runChaos } from './lib/chaos.js';
import { commandFor, isMain, parseOptions, runAsScript, startBench, type BenchResult } from './lib/bench.js';
import { createDatabase } from './lib/db.js';

const DEFAULTS = { ...CHAOS_DEFAULTS };
const USAGE = `usage: node --import tsx bench/chaos.ts [--tasks 1000] [--workers 20] [--seed 1] [--jobs 5]
                 [--lease-sec 4] [--tick-sec 1] [--heartbeat-sec 1] [--offline-sec 4] [--max-attempts 30]
                 [--fault-min-sec 1] [--fault-max-sec 4] [--timeout-sec 1800]
                 [--python /usr/bin/python3] [--sandbox auto|bwrap|none] [--pg postgres://postgres@127.0.0.1:5432/postgres]`;

export async function chaos(argv: string[]): Promise<BenchResult> {
  const o = parseOptions(argv, DEFAULTS, USAGE);
  const { machine, startedAt } = await startBench(`chaos (${o.tasks} tasks, ${o.workers} workers, seed ${o.seed})`, o.pg);
  const db = await createDatabase(o.pg, 'chaos');
  const onSignal = () => void db.drop().finally(() => process.exit(130));
  process.once('SIGINT', onSignal);
  try {
    const r = await runChaos(db.url, o);
    const command = commandFor('chaos', o, { ...DEFAULTS, pg: o.pg });
    console.log(r.line);
    console.log(`command: ${command}`);
    if (r.duplicated || r.stuck || r.violations.length) throw new Error(`chaos found ${r.violations.length} invariant violations (seed ${o.seed}); replay: ${command}`);
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
    await db.drop();
  }
}

if (isMain(import.meta)) runAsScript(chaos);

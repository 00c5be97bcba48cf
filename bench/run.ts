/**
 * Runs the benchmarks in sequence — all of them, or one by name — prints a summary table
 * with the command that reproduces each figure, and merges the results into
 * bench/results.json (one entry per benchmark, the latest run).
 *
 *   npm run bench                          # all of them, default sizes (≈ 15 minutes, ≈ 40 with overhead on a busy 2-core machine)
 *   npm run bench -- throughput --tasks 5000 --workers 16
 *   npm run bench -- dispatchLatency | heartbeats | heartbeatsScaleOut | claimScale | fanout | logStream | failover | blobStream | overhead | sandboxCost [flags]
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describeMachine } from './lib/machine.js';
import { printResult, type BenchResult } from './lib/bench.js';
import { blobStream } from './blobStream.js';
import { claimScale } from './claimScale.js';
import { dispatchLatency } from './dispatchLatency.js';
import { failover } from './failover.js';
import { fanout } from './fanout.js';
import { heartbeats } from './heartbeats.js';
import { logStream } from './logStream.js';
import { overhead } from './overhead.js';
import { sandboxCost } from './sandboxCost.js';
import { throughput } from './throughput.js';

// heartbeatsScaleOut: goal (c)'s second half — 2 API processes on one PostgreSQL, 20,000 workers.
const heartbeatsScaleOut = (argv: string[]) => heartbeats(['--apis', '2', '--workers', '20000', '--setup', 'sql', ...argv]);
const BENCHMARKS: Record<string, (argv: string[]) => Promise<BenchResult>> = {
  throughput,
  dispatchLatency,
  heartbeats,
  heartbeatsScaleOut,
  claimScale,
  fanout,
  logStream,
  failover,
  blobStream,
  overhead,
  sandboxCost,
  checkpointCost: (argv) => import('./checkpointCost.js').then((m) => m.checkpointCost(argv)),
};
const ALIASES: Record<string, string> = {
  dispatch: 'dispatchLatency',
  latency: 'dispatchLatency',
  heartbeat: 'heartbeats',
  claim: 'claimScale',
  blobs: 'blobStream',
};
const RESULTS = path.join(import.meta.dirname, 'results.json');

async function main(argv: string[]): Promise<number> {
  const first = argv[0] && !argv[0].startsWith('-') ? argv[0] : undefined;
  const name = first ? (ALIASES[first] ?? first) : undefined;
  if (name && !BENCHMARKS[name]) {
    console.error(`unknown benchmark ${first}; one of: ${Object.keys(BENCHMARKS).join(', ')}`);
    return 2;
  }
  if (!name && argv.length > 0) {
    console.error('flags apply to one benchmark: npm run bench -- <name> [flags]');
    return 2;
  }
  const selected = name ? [name] : Object.keys(BENCHMARKS);
  const results: BenchResult[] = [];
  const failures: string[] = [];
  for (const b of selected) {
    try {
      const r = await BENCHMARKS[b]!(name ? argv.slice(1) : []);
      printResult(r);
      results.push(r);
    } catch (err) {
      console.error(`\n${b} failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
      failures.push(b);
    }
  }

  if (results.length > 0) {
    console.log('\n=== summary ===');
    console.log(describeMachine(results[0]!.machine));
    const w = Math.max(...results.map((r) => r.name.length));
    for (const r of results) console.log(`${r.name.padEnd(w)}  ${r.headline}\n${''.padEnd(w)}  reproduce: ${r.command}`);
    let stored: Record<string, BenchResult> = {};
    try {
      stored = JSON.parse(await readFile(RESULTS, 'utf8')) as Record<string, BenchResult>;
    } catch {
      /* first run */
    }
    for (const r of results) stored[r.name] = r;
    await writeFile(RESULTS, `${JSON.stringify(stored, null, 2)}\n`);
    console.log(`\nwrote ${path.relative(process.cwd(), RESULTS)}`);
  }
  if (failures.length) console.error(`failed: ${failures.join(', ')}`);
  return failures.length ? 1 : 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);

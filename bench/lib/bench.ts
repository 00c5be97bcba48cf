/**
 * What every benchmark shares: its options (`--kebab-case` flags over typed defaults),
 * the command that reproduces a run, and the result shape bench/run.ts collects into
 * bench/results.json.
 */
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { DEFAULT_ADMIN_URL, checkLocal } from './db.js';
import { describeMachine, machineInfo, type Machine } from './machine.js';

export type Options = Record<string, number | string>;

export interface BenchResult {
  name: string;
  /** The exact command that reproduces this run. */
  command: string;
  machine: Machine;
  options: Options;
  figures: Record<string, number | string | null>;
  /** One line for the summary table. */
  headline: string;
  startedAt: string;
  durationSec: number;
}

const kebab = (s: string) => s.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

/** Parses `--flag value` pairs over `defaults` (numbers stay numbers). `--pg URL` is common to all. */
export function parseOptions<T extends Options>(argv: string[], defaults: T, usage: string): T & { pg: string } {
  const all: Options = { pg: DEFAULT_ADMIN_URL, ...defaults };
  const spec: Record<string, { type: 'string' }> = {};
  for (const k of Object.keys(all)) spec[kebab(k)] = { type: 'string' };
  let values: Record<string, string | undefined>;
  try {
    values = parseArgs({ args: argv, options: { ...spec, help: { type: 'boolean' } } as never, strict: true }).values as Record<
      string,
      string | undefined
    >;
  } catch (err) {
    throw new Error(`${(err as Error).message}\n${usage}`);
  }
  if ((values as Record<string, unknown>).help) {
    console.log(usage);
    process.exit(0);
  }
  const out: Options = {};
  for (const [k, def] of Object.entries(all)) {
    const raw = values[kebab(k)];
    if (raw === undefined) out[k] = def;
    else if (typeof def === 'number') {
      const n = Number(raw);
      if (!Number.isFinite(n) || n < 0) throw new Error(`--${kebab(k)} must be a non-negative number\n${usage}`);
      out[k] = n;
    } else out[k] = raw;
  }
  checkLocal(String(out.pg));
  return out as T & { pg: string };
}

/** `node --import tsx bench/<script>.ts --flag value …` with every option that differs from the built-in default. */
export function commandFor(script: string, opts: Options, defaults: Options): string {
  const flags = Object.entries(opts)
    .filter(([k, v]) => (k === 'pg' ? v !== DEFAULT_ADMIN_URL : defaults[k] !== v))
    .map(([k, v]) => `--${kebab(k)} ${v}`);
  return ['node --import tsx', `bench/${script}.ts`, ...flags].join(' ');
}

export async function startBench(name: string, adminUrl: string): Promise<{ machine: Machine; startedAt: Date }> {
  const machine = await machineInfo(adminUrl);
  console.log(`\n=== ${name} ===`);
  console.log(describeMachine(machine));
  return { machine, startedAt: new Date() };
}

export function printResult(r: BenchResult): void {
  console.log(`\n${r.name}: ${r.headline}`);
  for (const [k, v] of Object.entries(r.figures)) console.log(`  ${k.padEnd(34)} ${v ?? '—'}`);
  console.log(`reproduce: ${r.command}`);
}

/** True when this module is the script node was started with. */
export function isMain(meta: ImportMeta): boolean {
  return process.argv[1] !== undefined && meta.url === pathToFileURL(process.argv[1]).href;
}

/** Runs a benchmark as a script: prints its result, exits non-zero on failure. */
export function runAsScript(fn: (argv: string[]) => Promise<BenchResult>): void {
  fn(process.argv.slice(2)).then(
    (r) => {
      printResult(r);
      process.exit(0);
    },
    (err) => {
      console.error(err instanceof Error ? (err.stack ?? err.message) : err);
      process.exit(1);
    },
  );
}

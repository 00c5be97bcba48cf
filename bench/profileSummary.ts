/**
 * Summarizes V8 CPU profiles (`.cpuprofile`, from `node --cpu-prof`): the top functions by
 * self time, and the self time grouped by package / source area, so "where does the API's
 * CPU per task go" has an answer without a browser.
 *
 *   BENCH_API_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" node --import tsx bench/throughput.ts --graphile 0
 *   node --import tsx bench/profileSummary.ts /tmp/prof [--top 30]
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { isMain } from './lib/bench.js';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
}

/** Where a frame's code lives: a package under node_modules, node's own code, or a folder of this repo. */
export function areaOf(url: string): string {
  if (!url) return '(native / idle / gc)';
  if (url.startsWith('node:')) return 'node core';
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + 'node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  const m = /\/(api|worker|bench)\/src\/(.*)$/.exec(url) ?? /\/(api|worker|bench)\/(.*)$/.exec(url);
  if (m) return `${m[1]}/${path.dirname(m[2]!)}`;
  return url;
}

export function summarize(profiles: Profile[], top = 25) {
  const self = new Map<string, number>();
  const areas = new Map<string, number>();
  let total = 0;
  for (const p of profiles) {
    const byId = new Map(p.nodes.map((n) => [n.id, n]));
    p.samples.forEach((id, i) => {
      const dt = p.timeDeltas[i] ?? 0;
      const n = byId.get(id)!;
      const f = n.callFrame;
      if (f.functionName === '(idle)') return;
      total += dt;
      const key = `${f.functionName || '(anonymous)'}  ${f.url ? `${f.url.replace(/^file:\/\//, '').replace(/.*node_modules\//, '')}:${f.lineNumber + 1}` : ''}`;
      self.set(key, (self.get(key) ?? 0) + dt);
      const a = f.functionName === '(garbage collector)' ? 'garbage collector' : areaOf(f.url);
      areas.set(a, (areas.get(a) ?? 0) + dt);
    });
  }
  const sorted = (m: Map<string, number>) => [...m].sort((a, b) => b[1] - a[1]).slice(0, top);
  return { totalMs: total / 1000, functions: sorted(self), areas: sorted(areas) };
}

async function main(argv: string[]) {
  const topAt = argv.indexOf('--top');
  const top = topAt >= 0 ? Number(argv[topAt + 1]) : 25;
  const target = argv.find((a, i) => !a.startsWith('--') && argv[i - 1] !== '--top');
  if (!target) {
    console.error('usage: node --import tsx bench/profileSummary.ts <file.cpuprofile | folder> [--top 25]');
    process.exit(2);
  }
  const files = (await stat(target)).isDirectory()
    ? (await readdir(target)).filter((f) => f.endsWith('.cpuprofile')).map((f) => path.join(target, f))
    : [target];
  const profiles = await Promise.all(files.map(async (f) => JSON.parse(await readFile(f, 'utf8')) as Profile));
  const s = summarize(profiles, top);
  const pct = (v: number) => `${((v / 1000 / s.totalMs) * 100).toFixed(1).padStart(5)} %`;
  console.log(`${files.length} profile(s), ${s.totalMs.toFixed(0)} ms of CPU samples (idle excluded)\n\nby area (self time):`);
  for (const [k, v] of s.areas) console.log(`${pct(v)}  ${k}`);
  console.log('\ntop functions (self time):');
  for (const [k, v] of s.functions) console.log(`${pct(v)}  ${k}`);
}

if (isMain(import.meta)) void main(process.argv.slice(2));

/**
 * `chatgpu migrate DIR --to hip|rocm|cpu|mps|cuda [--out DIR] [--check] [--json] [--optimize] [--apply NAME,…]`
 *
 * Reads the tree under DIR, migrates it for the target (migrateTree), writes the candidate tree to
 * --out (default: DIR-<target>; binary and oversized files are copied unchanged), and prints the
 * report: edits, hazards, unconverted identifiers and, with --check, the static checks (Python
 * byte-compile, hipcc/nvcc compile). With --optimize it also lists the optimization candidates that
 * apply to the migrated code on that target (optimize.ts), with their numerical risk and why the
 * others were not proposed; --apply NAME[,NAME] writes those candidates into the output tree.
 * Exit status: 0 done, 1 a check failed, 2 usage or input error.
 * This module only parses arguments and does file I/O; the work is in migrateTree/runStaticChecks.
 */
import { copyFile, mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { findPython } from './findPython.js';
import { migrateTree } from './migrateTree.js';
import {
  applyOptimizations,
  OPTIMIZATION_NAMES,
  surveyOptimizations,
  type AppliedOptimizations,
  type OptimizationCandidate,
  type OptimizationSurvey,
} from './optimize.js';
import { runStaticChecks, type StaticCheckResult } from './runStaticChecks.js';
import { TARGETS, type Target, type TransformContext, type TransformResult } from './types.js';

const USAGE = `usage: chatgpu migrate DIR --to hip|rocm|cpu|mps|cuda [--out DIR] [--check] [--json]
         [--torch VERSION] [--arch gfx1030] [--python PATH] [--include DIR]...
         [--optimize] [--apply NAME[,NAME]...] [--gpu-arch sm_86|8.6|gfx90a] [--cpus N] [--python-version 3.11]
  optimization candidates: ${OPTIMIZATION_NAMES.join(', ')}`;
const SKIP_DIRS = new Set(['.git', 'node_modules', '__pycache__', '.venv', 'venv', '.mypy_cache', '.pytest_cache']);
const MAX_TEXT_BYTES = 2 * 1024 * 1024;

export async function migrateCommand(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        to: { type: 'string' },
        out: { type: 'string' },
        check: { type: 'boolean', default: false },
        json: { type: 'boolean', default: false },
        torch: { type: 'string' },
        arch: { type: 'string', default: 'gfx1030' },
        python: { type: 'string' },
        include: { type: 'string', multiple: true, default: [] },
        optimize: { type: 'boolean', default: false },
        apply: { type: 'string', multiple: true, default: [] },
        'gpu-arch': { type: 'string' },
        cpus: { type: 'string' },
        'python-version': { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\n${USAGE}\n`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const target = (values.to === 'hip' ? 'rocm' : values.to) as Target | undefined;
  if (positionals.length !== 1 || !target || !TARGETS.includes(target)) {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  const apply = (values.apply ?? [])
    .flatMap((a) => a.split(','))
    .map((a) => a.trim())
    .filter(Boolean);
  const badApply = apply.filter((a) => !(OPTIMIZATION_NAMES as readonly string[]).includes(a));
  const cpus = values.cpus === undefined ? undefined : Number(values.cpus);
  if (badApply.length || (cpus !== undefined && !(Number.isInteger(cpus) && cpus > 0))) {
    process.stderr.write(`${badApply.length ? `unknown optimization(s): ${badApply.join(', ')}\n` : 'bad --cpus\n'}${USAGE}\n`);
    return 2;
  }
  const optimize = values.optimize || apply.length > 0;
  const src = resolve(positionals[0]!);
  const out = resolve(values.out ?? `${src.replace(/\/+$/, '')}-${values.to}`);
  if (!(await stat(src).catch(() => null))?.isDirectory()) {
    process.stderr.write(`not a directory: ${src}\n`);
    return 2;
  }
  const python = values.python ?? (await findPython())?.path;
  if (!python) {
    process.stderr.write('no Python 3 interpreter found (needed to parse Python files); pass --python PATH\n');
    return 2;
  }

  const { text, binary } = await readTree(src);
  const runtime = {
    ...(values.torch ? { torch: values.torch } : {}),
    ...(values['python-version'] ? { python: values['python-version'] } : {}),
    ...(values['gpu-arch'] ? { gpuArch: values['gpu-arch'] } : target === 'rocm' ? { gpuArch: values.arch } : {}),
  };
  const ctx: TransformContext = {
    target,
    runtime: Object.keys(runtime).length ? runtime : undefined,
    hipArch: values.arch,
    ...(cpus ? { cpus } : {}),
  };
  const result = await migrateTree(text, ctx, { python });
  let optimizations: OptimizationReport | null = null;
  let outTree = result.tree;
  if (optimize) {
    // candidates for the migrated code: what will run on the target
    const survey = await surveyOptimizations(result.tree, ctx, { python });
    const applied = apply.length ? await applyOptimizations(result.tree, apply, ctx, { python }) : null;
    if (applied) outTree = applied.tree;
    optimizations = { survey, applied };
  }
  for (const [p, content] of Object.entries(outTree)) {
    await mkdir(dirname(join(out, p)), { recursive: true });
    await writeFile(join(out, p), content);
  }
  for (const p of binary) {
    await mkdir(dirname(join(out, p)), { recursive: true });
    await copyFile(join(src, p), join(out, p));
  }
  let checks: StaticCheckResult | null = null;
  if (values.check) {
    const torchPython = (await findPython({ candidates: [python, '/usr/bin/python3'] }))?.path ?? python;
    checks = await runStaticChecks(outTree, {
      target,
      python: torchPython,
      hipArch: values.arch,
      includeDirs: (values.include ?? []).map((d) => resolve(d)),
    });
  }
  if (values.json) {
    const opt = optimizations ? optimizationsJson(optimizations) : undefined;
    process.stdout.write(
      `${JSON.stringify({ source: src, out, target, ...withoutTree(result), checks, ...(opt ? { optimizations: opt } : {}) }, null, 2)}\n`,
    );
  } else {
    process.stdout.write(renderReport(src, out, target, result, checks));
    if (optimizations) process.stdout.write(renderOptimizations(optimizations));
  }
  return checks && !checks.ok ? 1 : 0;
}

interface OptimizationReport {
  survey: OptimizationSurvey;
  applied: AppliedOptimizations | null;
}

function candidateJson(c: OptimizationCandidate): Record<string, unknown> {
  return { name: c.name, title: c.title, benefit: c.benefit, risk: c.risk, criteria: c.criteria, ...withoutTree(c.result) };
}

function optimizationsJson(o: OptimizationReport): Record<string, unknown> {
  return {
    candidates: o.survey.candidates.map(candidateJson),
    notProposed: o.survey.skipped,
    ...(o.applied ? { applied: o.applied.applied.map(candidateJson), notApplied: o.applied.skipped } : {}),
  };
}

export function renderOptimizations(o: OptimizationReport): string {
  const lines: string[] = ['', `Optimization candidates (${o.survey.candidates.length}):`];
  if (o.survey.candidates.length === 0) lines.push('  none applies to this code on this target');
  for (const c of o.survey.candidates) {
    lines.push(`  ${c.name.padEnd(22)} risk ${c.risk.padEnd(6)} ${c.title}`);
    lines.push(`      ${c.benefit}`);
    for (const e of c.result.edits) {
      lines.push(`      ${e.file}:${e.line}`);
      const all = [...(e.before ? e.before.split('\n') : []), ...e.after.split('\n')].filter((l) => l.trim());
      const cut = Math.min(...all.map((l) => l.length - l.trimStart().length));
      if (e.before) for (const l of e.before.split('\n')) lines.push(`        - ${l.slice(cut).trimEnd()}`);
      for (const l of e.after.split('\n')) lines.push(`        + ${l.slice(cut).trimEnd()}`);
    }
    for (const n of c.result.numericsNotes) lines.push(`      numerics: ${n}`);
    if (c.criteria) lines.push(`      compare with: ${JSON.stringify(c.criteria)}`);
    for (const h of c.result.hazards) lines.push(`      ${h.severity} ${h.file}:${h.line} ${h.what}`);
  }
  if (o.survey.skipped.length) {
    lines.push('', 'Not proposed:');
    for (const s of o.survey.skipped) lines.push(`  ${s.name.padEnd(22)} ${s.reason}`);
  }
  if (o.applied) {
    lines.push('', `Applied to the output tree: ${o.applied.applied.map((c) => c.name).join(', ') || 'nothing'}`);
    for (const s of o.applied.skipped) lines.push(`  not applied: ${s.name} — ${s.reason}`);
  }
  return `${lines.join('\n')}\n`;
}

function withoutTree(r: TransformResult): Omit<TransformResult, 'tree'> & { files: string[] } {
  const { tree, ...rest } = r;
  return { ...rest, files: Object.keys(tree).sort() };
}

async function readTree(root: string): Promise<{ text: Record<string, string>; binary: string[] }> {
  const text: Record<string, string> = {};
  const binary: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    const entries = (await readdir(dir, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : 1));
    for (const e of entries) {
      const full = join(dir, e.name);
      if (e.isDirectory()) {
        if (!SKIP_DIRS.has(e.name)) await walk(full);
        continue;
      }
      if (!e.isFile()) continue;
      const rel = relative(root, full).split('\\').join('/');
      const buf = await readFile(full);
      const sniff = buf.subarray(0, 8192);
      if (buf.length > MAX_TEXT_BYTES || sniff.includes(0)) binary.push(rel);
      else text[rel] = buf.toString('utf8');
    }
  };
  await walk(root);
  return { text, binary };
}

export function renderReport(src: string, out: string, target: Target, r: TransformResult, checks: StaticCheckResult | null): string {
  const lines: string[] = [];
  const changedFiles = Object.keys(r.tree).filter((p) => r.edits.some((e) => e.file === p));
  lines.push(`chatgpu migrate ${src} → ${out} (target ${target})`);
  lines.push(
    r.changed ? `${changedFiles.length} file(s) changed, ${r.edits.length} edit(s)` : 'no change: the code already fits the target',
  );
  if (r.edits.length) {
    lines.push('', 'Edits:');
    for (const e of r.edits) {
      lines.push(`  ${e.file}:${e.line} [${e.rule}]`);
      if (e.before) lines.push(`    - ${e.before.trim()}`);
      lines.push(`    + ${e.after.trim()}`);
    }
  }
  if (r.hazards.length) {
    lines.push('', `Hazards (${r.hazards.length}):`);
    for (const h of r.hazards) {
      lines.push(`  ${h.severity.padEnd(7)} ${h.file}:${h.line} [${h.rule}] ${h.what}`);
      lines.push(`          why: ${h.why}`);
      lines.push(`          fix: ${h.fix}`);
    }
  }
  if (r.unconverted.length) {
    lines.push('', `Left unconverted (${r.unconverted.length}):`);
    for (const u of r.unconverted) lines.push(`  ${u.file}:${u.line} ${u.identifier} — ${u.reason}`);
  }
  if (r.numericsMayChange) {
    lines.push('', 'Numerics may change:');
    for (const n of r.numericsNotes) lines.push(`  - ${n}`);
  }
  if (checks) {
    lines.push('', `Checks: ${checks.ok ? 'passed' : 'FAILED'}`);
    for (const run of checks.runs)
      lines.push(`  ${run.tool}: ${run.ok ? 'ok' : 'failed'} (${run.files.length} file(s), ${(run.durationMs / 1000).toFixed(1)} s)`);
    for (const u of checks.unavailable) lines.push(`  unavailable: ${u}`);
    for (const f of checks.feedback.filter((x) => x.severity === 'error'))
      lines.push(`  ${f.tool} ${f.file}:${f.line}:${f.col}: ${f.message}`);
  }
  return `${lines.join('\n')}\n`;
}

/**
 * The planner's corpus of public projects (api/test/fixtures/corpus/corpus.json, docs/corpus.md),
 * run end to end: lay a project out from its pinned upstream snapshot (materialise.mjs — upstream
 * code is never committed here, so a machine without the snapshots cannot run it), submit it with
 * its request through the real `chatgpu submit`, and judge the job against what the corpus expects.
 * Used by api/test/corpus-e2e.test.ts (a few projects) and scripts/corpus.ts (`npm run corpus`, all).
 *
 * Verdicts: honoured (ran and SUCCEEDED, every ask honoured and done), asked (it stopped with a
 * question), refused (it stopped before anything ran, naming what is missing), failed (anything else,
 * or not what the corpus expects).
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// No test-only imports here (processes.ts registers hooks): scripts/corpus.ts runs this outside Vitest.
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
export const CORPUS_DIR = path.join(repoRoot, 'api/test/fixtures/corpus');

export interface ExpectedAsk {
  text: string;
  kind: string;
  status: 'honoured' | 'asked' | 'refused';
}

export interface CorpusEntry {
  name: string;
  dir: string;
  request: string;
  runtimeSec?: number;
  expect: {
    outcome: 'run' | 'asked' | 'refused';
    command?: string;
    settingsDiff?: { file: string; line: number; from: string; to: string; name: string }[];
    outputs?: string[];
    outputsExclude?: string[];
    setup?: string[];
    service?: { probe?: { method: string; path: string; status: number } };
    sweep?: { setting: string; values: string[] };
    asks: ExpectedAsk[];
  };
}

export type Verdict = 'honoured' | 'asked' | 'refused' | 'failed';

export function loadCorpus(): CorpusEntry[] {
  return JSON.parse(readFileSync(path.join(CORPUS_DIR, 'corpus.json'), 'utf8')) as CorpusEntry[];
}

/** Lays `names` out under a new folder; null (with why) when an upstream snapshot is missing here. */
export function materialise(names: string[]): { root: string } | { missing: string } {
  const root = mkdtempSync(path.join(tmpdir(), 'corpus-'));
  const r = spawnSync(process.execPath, [path.join(CORPUS_DIR, 'materialise.mjs'), root, ...names], { encoding: 'utf8', timeout: 600_000 });
  if (r.status !== 0) return { missing: `${r.stderr || r.stdout}`.trim().split('\n').slice(-3).join(' ') };
  return { root };
}

/** Whether this machine holds the upstream snapshots the corpus is laid out from. */
export function corpusAvailable(): boolean {
  return existsSync(process.env.CORPUS_MIRROR_DIR ?? '/work/.mirror');
}

/** A materialised project as the user would upload it: without the corpus's own data makers. */
export function uploadDir(root: string, entry: CorpusEntry): string {
  const dir = path.join(root, entry.dir);
  for (const f of readdirSync(dir))
    if (f.startsWith('_make_data') && statSync(path.join(dir, f)).isFile()) spawnSync('rm', ['-f', path.join(dir, f)]);
  return dir;
}

const JOB = `query($id: ID!) { job(id: $id) { id status statusReason
  currentPlan { command settings asks { ask kind status detail } environment pipeline }
  askOutcomes { ask kind status outcome line }
  openQuestions { text choices }
  outputs { path }
  tasks { name kind status }
  service { slug status } } }`;

export interface JobState {
  id: string;
  status: string;
  statusReason: string | null;
  currentPlan: {
    command: string;
    settings: { file: string; name: string; line: number; from: string; to: string }[] | null;
    asks: { ask: string; kind: string; status: string; detail: string }[];
    environment: Record<string, string>;
    pipeline: { command: string }[] | null;
  } | null;
  askOutcomes: { ask: string; outcome: string; line: string }[];
  openQuestions: { text: string; choices: string[] }[];
  outputs: { path: string }[];
  tasks: { name: string; kind: string; status: string }[];
  service: { slug: string; status: string } | null;
}

type Gql = (query: string, variables: Record<string, unknown>) => Promise<{ data?: any; errors?: unknown[] }>;

export function gqlClient(url: string, token: string): Gql {
  return async (query, variables) => {
    const res = await fetch(`${url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query, variables }),
    });
    return (await res.json()) as { data?: any; errors?: unknown[] };
  };
}

export interface ProjectRun {
  entry: CorpusEntry;
  job: JobState | null;
  cliCode: number | null;
  cliOut: string;
  probe?: { status: number } | null;
  seconds: number;
}

/**
 * Submits one project through `chatgpu submit` (no terminal: a question ends it with exit 3) and
 * follows it to its end — for a hosted service, until it answers, then its probe, then stop.
 */
export async function runProject(o: {
  url: string;
  token: string;
  root: string;
  entry: CorpusEntry;
  env: Record<string, string>;
  timeoutMs?: number;
}): Promise<ProjectRun> {
  const started = Date.now();
  const dir = uploadDir(o.root, o.entry);
  const gql = gqlClient(o.url, o.token);
  const out = mkdtempSync(path.join(tmpdir(), `corpus-out-${o.entry.name}-`));
  const service = !!o.entry.expect.service;
  const args = ['submit', dir, '-m', o.entry.request, '--server', o.url, '--json', ...(service ? [] : ['--wait', '--out', out])];
  const r = await runCli(args, { env: { ...o.env, CHATGPU_TOKEN: o.token }, timeoutMs: o.timeoutMs ?? 600_000 });
  const idLine = [...r.stdout.trim().split('\n')].reverse().find((l) => l.startsWith('{'));
  const summary = idLine ? (JSON.parse(idLine) as { id?: string; jobId?: string }) : {};
  const id = summary.id ?? summary.jobId ?? /chatgpu (?:watch|answer) (\S+)/.exec(r.stderr + r.stdout)?.[1];
  if (!id)
    return {
      entry: o.entry,
      job: null,
      cliCode: r.code,
      cliOut: (r.stdout + r.stderr).slice(-3000),
      seconds: (Date.now() - started) / 1000,
    };
  let job = (await gql(JOB, { id })).data?.job as JobState;
  let probe: ProjectRun['probe'];
  if (service) {
    const end = Date.now() + (o.timeoutMs ?? 300_000);
    while (
      Date.now() < end &&
      !['FAILED', 'CANCELLED', 'SUCCEEDED', 'NEEDS_INPUT'].includes(job.status) &&
      job.service?.status !== 'READY'
    ) {
      await new Promise((res) => setTimeout(res, 500));
      job = (await gql(JOB, { id })).data?.job as JobState;
    }
    if (job.service?.status === 'READY' && o.entry.expect.service?.probe) {
      const t = (
        await gql(`mutation($id: ID!) { rotateServiceToken(jobId: $id, firstOnly: true) { ... on ServiceToken { token } } }`, { id })
      ).data?.rotateServiceToken?.token as string;
      const probeSpec = o.entry.expect.service.probe as { method?: string; path: string; form?: Record<string, string> };
      const res = await fetch(`${o.url}/svc/${job.service.slug}${probeSpec.path}`, {
        method: probeSpec.method ?? 'GET',
        headers: { authorization: `Bearer ${t}`, ...(probeSpec.form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
        ...(probeSpec.form ? { body: new URLSearchParams(probeSpec.form).toString() } : {}),
      });
      probe = { status: res.status };
      await gql(`mutation($id: ID!) { stopService(jobId: $id) { __typename } }`, { id });
    }
    job = (await gql(JOB, { id })).data?.job as JobState;
  }
  return {
    entry: o.entry,
    job,
    cliCode: r.code,
    cliOut: (r.stdout + r.stderr).slice(-3000),
    probe,
    seconds: (Date.now() - started) / 1000,
  };
}

/** `chatgpu ARGS` with no terminal (stdin closed), as a user's script would run it. */
function runCli(
  args: string[],
  opts: { env: Record<string, string>; timeoutMs: number },
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(repoRoot, 'api/bin/chatgpu.mjs'), ...args], {
      env: { ...process.env, ...opts.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

const norm = (s: string) =>
  s
    .toLowerCase()
    .replace(/[^a-z0-9.=/_-]+/g, ' ')
    .trim();

/** The verdict on one run, and every way it differs from what the corpus expects. */
export function judge(run: ProjectRun): { verdict: Verdict; problems: string[] } {
  const { entry, job } = run;
  const problems: string[] = [];
  if (!job) return { verdict: 'failed', problems: [`no job: ${run.cliOut.slice(-400)}`] };
  const plan = job.currentPlan;
  const refusedBeforeRun = job.status === 'FAILED' && job.tasks.length === 0 && /^Not run: /.test(job.statusReason ?? '');
  const asked = job.status === 'NEEDS_INPUT' && job.openQuestions.length > 0;
  const verdict: Verdict = asked
    ? 'asked'
    : refusedBeforeRun
      ? 'refused'
      : job.status === 'SUCCEEDED' &&
          plan &&
          plan.asks.every((a) => a.status === 'honoured') &&
          job.askOutcomes.every((a) => a.outcome === 'done')
        ? 'honoured'
        : 'failed';
  const wanted: Verdict = entry.expect.outcome === 'run' ? 'honoured' : entry.expect.outcome;
  if (verdict !== wanted) problems.push(`expected ${wanted}, got ${verdict} (${job.status}: ${(job.statusReason ?? '').slice(0, 300)})`);
  if (plan && verdict === 'honoured') {
    for (const e of entry.expect.settingsDiff ?? []) {
      if (!(plan.settings ?? []).some((s) => s.file === e.file && s.from === e.from && s.to === e.to))
        problems.push(`no set-settings edit ${e.file}: ${e.name} ${e.from} → ${e.to}`);
    }
    if (entry.expect.command && !entry.expect.settingsDiff?.length) {
      // The python part of the command (after a `cd DIR &&`, without an environment prefix), any flag order, outputs/ paths as given.
      // Every word of the expected command is in the plan's (any order; outputs/ paths as given; the
      // worker's device for a named CPU device); the plan may add output locations of its own.
      const words = (c: string) =>
        new Set(
          c
            .replace(/(^|\s|=)(\.\.\/)*outputs\//g, '$1')
            .replace(/(--device[= ])(cpu|"\$CHATGPU_DEVICE")/g, '$1DEVICE')
            .split(/\s+/),
        );
      const got = words(
        (plan.command.split(/\s*&&\s*/).find((p) => /(^|\s)python\b/.test(p)) ?? plan.command).replace(/^(\w+=\S+\s+)+/, ''),
      );
      const missing = [...words(entry.expect.command)].filter((w) => !got.has(w));
      if (missing.length)
        problems.push(`command ${JSON.stringify(plan.command)} lacks ${missing.join(' ')} of ${JSON.stringify(entry.expect.command)}`);
    }
    for (const f of entry.expect.outputsExclude ?? [])
      if (job.outputs.some((o) => o.path === f)) problems.push(`${f} is an input, listed as an output`);
    if (entry.expect.service?.probe && run.probe?.status !== entry.expect.service.probe.status)
      problems.push(
        `probe ${entry.expect.service.probe.path}: ${run.probe?.status ?? 'not reached'}, expected ${entry.expect.service.probe.status}`,
      );
  }
  // Every ask the corpus names has a disposition of that status in the plan (or in the refusal).
  const said = [
    ...(plan?.asks ?? []).map((a) => ({ text: a.ask, status: a.status })),
    ...(job.statusReason ?? '').split(/;\s*(?=")/).map((t) => ({ text: t, status: 'refused' })),
  ];
  for (const a of entry.expect.asks) {
    if (a.status === 'asked') continue;
    const hit = said.find((d) => norm(d.text).includes(norm(a.text)) || norm(a.text).includes(norm(d.text).slice(0, 40)));
    if (!hit && verdict !== 'asked') problems.push(`no disposition for "${a.text}"`);
    else if (hit && hit.status !== a.status && verdict === wanted) problems.push(`"${a.text}" ${hit.status}, expected ${a.status}`);
  }
  return { verdict, problems };
}

/**
 * The checkpoint-resume step on public training scripts that have no resume logic of their own
 * (docs/checkpoint-resume.md lists them with their commits): for each, the rewrite
 * (api/src/preparation/python/checkpoint_resume.py), the kill-and-resume check the stage runs
 * (python -m chatgpu.resume_check: SIGKILLed half-way, resumed in a fresh process, compared bitwise),
 * and what checkpointing costs and saves, on this machine's CPU with small settings:
 *
 *   slowdown             the rewritten run checkpointing after every iteration of its loop
 *                        (CHATGPU_RESUME_EVERY_STEPS=1, the worst case) ÷ the unchanged run − 1,
 *                        medians of --trials alternated runs (fresh folders)
 *   bytes / checkpoint   the size of one resume-<step>.pt
 *   saved per lost lease a lease lost half-way: the seconds of a whole run from step 0 less those
 *                        of the resumed process to the end (both checkpointing every iteration),
 *                        i.e. the work the next attempt does not do again; process start-up (Python,
 *                        torch, the data) is paid either way, so small settings show little
 *
 * The scripts are not in this repository: they are read from local git mirrors (--mirrors, a folder
 * of owner+name/repo git directories, as the research tools' `fetch` leaves them) at the pinned
 * commits, else downloaded from raw.githubusercontent.com at those commits.
 *
 *   node --import tsx bench/checkpointCost.ts [--trials 3] [--only name,name] [--mirrors /work/.mirror] [--python /usr/bin/python3]
 */
import { spawn, spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
  cpSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { repoRoot } from './lib/api.js';
import { commandFor, isMain, parseOptions, runAsScript, startBench, type BenchResult } from './lib/bench.js';
import { round } from './lib/stats.js';

const DEFAULTS = { trials: 3, only: '', mirrors: '/work/.mirror', python: '/usr/bin/python3' };
const USAGE =
  'usage: node --import tsx bench/checkpointCost.ts [--trials 3] [--only name,name] [--mirrors /work/.mirror] [--python /usr/bin/python3]';
const REWRITER = path.join(repoRoot, 'api/src/preparation/python/checkpoint_resume.py');
const HELPERS = path.join(repoRoot, 'worker/python');

/** A public script: where it comes from, the small settings it runs with here, and its command. */
export interface Case {
  name: string;
  repo: string;
  commit: string;
  /** Files taken (repository paths), written under `dir` stripped: `{from: to}` or the same path. */
  files: Record<string, string>;
  /** Small settings: literal replacements in the copies ([file, from, to]); each must match once. */
  edits: [string, string, string][];
  /** Data made before the runs (a shell command in the folder), when the script needs it. */
  setup?: string;
  command: string;
}

export const CASES: Case[] = [
  {
    name: 'word_language_model',
    repo: 'pytorch/examples',
    // The last commit of main.py before it needed torch ≥ 2.6 (torch.serialization.safe_globals); this machine has 1.13.
    commit: '47ac714389d5edea0f1cc0bffaac291eb28edc2d',
    files: {
      'word_language_model/main.py': 'main.py',
      'word_language_model/model.py': 'model.py',
      'word_language_model/data.py': 'data.py',
    },
    edits: [],
    // Its data/wikitext-2 text is not in the stored snapshot (too large): lines of the Shakespeare text of
    // karpathy/ng-video-lecture instead (train, valid and test, one sentence a line like wikitext's).
    setup: [
      'mkdir -p data/wikitext-2',
      "sed -n '1,2000p' ../../shakespeare.txt > data/wikitext-2/train.txt",
      "sed -n '2001,2200p' ../../shakespeare.txt > data/wikitext-2/valid.txt",
      "sed -n '2201,2400p' ../../shakespeare.txt > data/wikitext-2/test.txt",
    ].join(' && '),
    command: 'python main.py --epochs 10 --emsize 16 --nhid 16 --nlayers 1 --bptt 20 --log-interval 20',
  },
  {
    name: 'time_sequence_prediction',
    repo: 'pytorch/examples',
    commit: '77f55b912142e11fcfdf5b530231fb9c52f181e8',
    files: { 'time_sequence_prediction/train.py': 'train.py', 'time_sequence_prediction/generate_sine_wave.py': 'generate_sine_wave.py' },
    edits: [
      ['generate_sine_wave.py', 'L = 1000', 'L = 200'],
      ['generate_sine_wave.py', 'N = 100', 'N = 12'],
      ['train.py', 'future = 1000', 'future = 100'],
    ],
    setup: 'python generate_sine_wave.py',
    command: 'python train.py --steps 4',
  },
  {
    name: 'gpt (ng-video-lecture)',
    repo: 'karpathy/ng-video-lecture',
    commit: '52201428ed7b46804849dea0b3ccf0de9df1a5c3',
    files: { 'gpt.py': 'gpt.py', 'input.txt': 'input.txt' },
    edits: [
      ['gpt.py', 'batch_size = 64', 'batch_size = 8'],
      ['gpt.py', 'block_size = 256', 'block_size = 32'],
      ['gpt.py', 'max_iters = 5000', 'max_iters = 200'],
      ['gpt.py', 'eval_interval = 500', 'eval_interval = 50'],
      ['gpt.py', 'eval_iters = 200', 'eval_iters = 5'],
      ['gpt.py', 'n_embd = 384', 'n_embd = 32'],
      ['gpt.py', 'n_head = 6', 'n_head = 2'],
      ['gpt.py', 'n_layer = 6', 'n_layer = 2'],
      ['gpt.py', 'max_new_tokens=500', 'max_new_tokens=50'],
    ],
    command: 'python gpt.py',
  },
  {
    name: 'language_model (pytorch-tutorial)',
    repo: 'yunjey/pytorch-tutorial',
    commit: '0500d3df5a2a8080ccfccbc00aca0eacc21818db',
    files: {
      'tutorials/02-intermediate/language_model/main.py': 'main.py',
      'tutorials/02-intermediate/language_model/data_utils.py': 'data_utils.py',
    },
    edits: [
      ['main.py', 'embed_size = 128', 'embed_size = 16'],
      ['main.py', 'hidden_size = 1024', 'hidden_size = 32'],
      ['main.py', 'num_epochs = 5', 'num_epochs = 6'],
      ['main.py', 'num_samples = 1000', 'num_samples = 100'],
    ],
    // Its data/train.txt (Penn Treebank) is not in the stored snapshot: the first 1500 lines of the
    // Shakespeare text of karpathy/ng-video-lecture instead.
    setup: "mkdir -p data && sed -n '1,1500p' ../../shakespeare.txt > data/train.txt",
    command: 'python main.py',
  },
  {
    name: 'two_layer_net_optim (pytorch-examples)',
    repo: 'jcjohnson/pytorch-examples',
    commit: '0003fcdc606a79951e53bf8f46f8574fa4739f23',
    files: { 'nn/two_layer_net_optim.py': 'two_layer_net_optim.py' },
    edits: [['two_layer_net_optim.py', 'for t in range(500):', 'for t in range(300):']],
    command: 'python two_layer_net_optim.py',
  },
  {
    name: 'regression',
    repo: 'pytorch/examples',
    commit: '77f55b912142e11fcfdf5b530231fb9c52f181e8',
    files: { 'regression/main.py': 'main.py' },
    edits: [],
    command: 'python main.py',
  },
];

/** A file of a repository at a commit: the local mirror's git, else GitHub's raw file. */
async function source(mirrors: string, repo: string, commit: string, file: string): Promise<Buffer> {
  const git = path.join(mirrors, repo.replace('/', '+'), 'repo');
  if (existsSync(git)) {
    const r = spawnSync('git', ['-C', git, 'show', `${commit}:${file}`], { maxBuffer: 1 << 30 });
    if (r.status === 0) return r.stdout;
  }
  const res = await fetch(`https://raw.githubusercontent.com/${repo}/${commit}/${file}`);
  if (!res.ok) throw new Error(`${repo}@${commit}:${file}: not in ${git} and GitHub answered ${res.status}`);
  return Buffer.from(await res.arrayBuffer());
}

interface Run {
  code: number | null;
  ms: number;
  out: string;
}

function env(dir: string, python: string, extra: Record<string, string> = {}) {
  const bin = path.join(dir, '.bin');
  if (!existsSync(bin)) {
    mkdirSync(bin);
    symlinkSync(python, path.join(bin, 'python'));
  }
  return {
    PATH: `${bin}:/usr/bin:/bin`,
    PYTHONPATH: HELPERS,
    HOME: dir,
    OMP_NUM_THREADS: '1',
    MKL_NUM_THREADS: '1',
    MPLBACKEND: 'Agg',
    CHATGPU_CHECKPOINT_DIR: path.join(dir, 'checkpoint'),
    ...extra,
  };
}

/** Runs `command` in `dir`; with `haltFile`, SIGKILLs its process group once the file appears (the halt at a step). */
function run(dir: string, command: string, e: Record<string, string>, haltFile?: string): Promise<Run> {
  return new Promise((resolve) => {
    const t0 = process.hrtime.bigint();
    const child = spawn('sh', ['-c', command], { cwd: dir, env: e, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const poll = haltFile
      ? setInterval(() => {
          if (existsSync(haltFile)) process.kill(-child.pid!, 'SIGKILL');
        }, 20)
      : null;
    child.once('close', (code) => {
      if (poll) clearInterval(poll);
      resolve({ code, ms: Number(process.hrtime.bigint() - t0) / 1e6, out });
    });
  });
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? (s[(s.length - 1) >> 1]! + s[s.length >> 1]!) / 2 : NaN;
};

function copyTree(from: string, to: string) {
  cpSync(from, to, { recursive: true, filter: (p) => !/\/(checkpoint|outputs|\.chatgpu|\.bin|__pycache__)$/.test(p) });
}

export interface CaseResult {
  name: string;
  source: string;
  rewrite: string;
  check: string;
  equal: boolean;
  steps: number | null;
  plainSec: number | null;
  checkpointedSec: number | null;
  slowdownPct: number | null;
  bytesPerCheckpoint: number | null;
  resumedSec: number | null;
  savedPerLostLeaseSec: number | null;
}

async function measure(c: Case, opts: typeof DEFAULTS, root: string): Promise<CaseResult> {
  const res: CaseResult = {
    name: c.name,
    source: `${c.repo}@${c.commit.slice(0, 10)}`,
    rewrite: '',
    check: '',
    equal: false,
    steps: null,
    plainSec: null,
    checkpointedSec: null,
    slowdownPct: null,
    bytesPerCheckpoint: null,
    resumedSec: null,
    savedPerLostLeaseSec: null,
  };
  const base = path.join(root, c.name.replace(/\W+/g, '_'));
  const plain = path.join(base, 'plain');
  mkdirSync(plain, { recursive: true });
  for (const [from, to] of Object.entries(c.files)) {
    mkdirSync(path.dirname(path.join(plain, to)), { recursive: true });
    writeFileSync(path.join(plain, to), await source(opts.mirrors, c.repo, c.commit, from));
  }
  for (const [file, from, to] of c.edits) {
    const p = path.join(plain, file);
    const text = readFileSync(p, 'utf8');
    if (text.split(from).length !== 2) throw new Error(`${c.name}: the setting "${from}" is not once in ${file}`);
    writeFileSync(p, text.replace(from, to));
  }
  if (c.setup) {
    const s = await run(plain, c.setup, env(plain, opts.python));
    if (s.code !== 0) throw new Error(`${c.name}: setup failed: ${s.out.slice(-1500)}`);
  }

  // The rewrite, as the stage makes it.
  const py: Record<string, string> = {};
  for (const to of Object.values(c.files)) if (to.endsWith('.py')) py[to] = readFileSync(path.join(plain, to), 'utf8');
  const rw = spawnSync(opts.python, [REWRITER], { input: JSON.stringify({ files: py }), encoding: 'utf8', maxBuffer: 1 << 28 });
  if (rw.status !== 0) throw new Error(`${c.name}: the rewriter failed: ${rw.stderr}`);
  const out = JSON.parse(rw.stdout) as {
    status: string;
    files: Record<string, string>;
    loop: { file: string; line: number; kind: string; objects: string[]; values: string[] } | null;
    refusals: { file: string; line: number; reason: string }[];
    notes: string[];
  };
  if (out.status !== 'changed') {
    res.rewrite = `${out.status}: ${out.refusals.map((r) => `${r.file}:${r.line}: ${r.reason}`).join('; ') || out.notes.join('; ')}`;
    return res;
  }
  res.rewrite = `changed: ${out.loop!.kind} loop at ${out.loop!.file}:${out.loop!.line}; objects ${out.loop!.objects.join(', ') || '—'}; values ${out.loop!.values.join(', ') || '—'}`;
  const rewritten = path.join(base, 'rewritten');
  copyTree(plain, rewritten);
  for (const [f, text] of Object.entries(out.files)) writeFileSync(path.join(rewritten, f), text);

  // The kill-and-resume check, as the stage runs it.
  const checkDir = path.join(base, 'check');
  copyTree(rewritten, checkDir);
  const check = await run(
    checkDir,
    `python -m chatgpu.resume_check --report .chatgpu/resume-check.json -- '${c.command}'`,
    env(checkDir, opts.python),
  );
  const report = JSON.parse(readFileSync(path.join(checkDir, '.chatgpu/resume-check.json'), 'utf8')) as {
    equal: boolean;
    problem?: string;
    differences?: string[];
    uninterrupted?: { steps?: number };
    killed?: { afterStep: number };
    resumed?: { atStep: number | null };
    notCompared?: string[];
  };
  res.equal = report.equal === true && check.code === 0;
  res.steps = report.uninterrupted?.steps ?? null;
  res.check = res.equal
    ? `equal: killed after step ${report.killed!.afterStep} of ${res.steps}, resumed at step ${report.resumed!.atStep}${report.notCompared?.length ? ` (not compared: ${report.notCompared.join('; ')})` : ''}`
    : `NOT equal: ${report.problem ?? (report.differences ?? []).slice(0, 4).join('; ')}`;
  if (!res.equal) return res;

  // Timings, alternated in each trial (fresh folders): the unchanged run; the rewritten one checkpointing
  // after every iteration; and a lease lost half-way: the rewritten run killed right after the checkpoint
  // of step k, then the resumed process, timed to its end (it checkpoints every iteration too).
  const k = Math.max(1, Math.floor((res.steps ?? 2) / 2));
  const plainMs: number[] = [];
  const cpMs: number[] = [];
  const resumedMs: number[] = [];
  for (let i = 0; i < opts.trials; i++) {
    for (const [from, into] of [
      [plain, plainMs],
      [rewritten, cpMs],
    ] as const) {
      const d = path.join(base, `trial-${i}-${from === plain ? 'plain' : 'cp'}`);
      copyTree(from, d);
      const r = await run(d, c.command, env(d, opts.python, from === plain ? {} : { CHATGPU_RESUME_EVERY_STEPS: '1' }));
      if (r.code !== 0) throw new Error(`${c.name}: a timed run failed: ${r.out.slice(-1500)}`);
      into.push(r.ms);
      if (from === rewritten && res.bytesPerCheckpoint === null) {
        const cps = readdirSync(path.join(d, 'checkpoint')).filter((f) => /^resume-\d+\.pt$/.test(f));
        res.bytesPerCheckpoint = statSync(path.join(d, 'checkpoint', cps.sort().at(-1)!)).size;
      }
      rmSync(d, { recursive: true, force: true });
    }
    const lost = path.join(base, `trial-${i}-lost`);
    copyTree(rewritten, lost);
    const halt = path.join(lost, '.halted');
    const every = { CHATGPU_RESUME_EVERY_STEPS: '1' };
    await run(
      lost,
      c.command,
      env(lost, opts.python, { ...every, CHATGPU_RESUME_HALT_AT: String(k), CHATGPU_RESUME_HALT_FILE: halt }),
      halt,
    );
    const resumed = await run(lost, c.command, env(lost, opts.python, { ...every, CHATGPU_RESUME: '1' }));
    if (resumed.code !== 0 || !/chatgpu\.resume: resumed at step/.test(resumed.out))
      throw new Error(`${c.name}: the resumed run did not resume: ${resumed.out.slice(-1500)}`);
    resumedMs.push(resumed.ms);
    rmSync(lost, { recursive: true, force: true });
  }
  res.plainSec = round(median(plainMs) / 1000, 2);
  res.checkpointedSec = round(median(cpMs) / 1000, 2);
  res.slowdownPct = round((median(cpMs) / median(plainMs) - 1) * 100, 1);
  res.resumedSec = round(median(resumedMs) / 1000, 2);
  // What the next attempt does not do again: a whole run from step 0 less the resumed process's run to the end.
  res.savedPerLostLeaseSec = round((median(cpMs) - median(resumedMs)) / 1000, 2);
  return res;
}

export async function checkpointCost(argv: string[]): Promise<BenchResult> {
  const opts = parseOptions(argv, DEFAULTS, USAGE);
  const { machine, startedAt } = await startBench('checkpointCost', opts.pg);
  const only = String(opts.only).split(',').filter(Boolean);
  const cases = CASES.filter((c) => !only.length || only.some((o) => c.name.startsWith(o)));
  const root = mkdtempSync(path.join(tmpdir(), 'checkpoint-cost-'));
  // The stand-in text of the cases whose own data the snapshots lack (see them).
  writeFileSync(path.join(root, 'shakespeare.txt'), await source(opts.mirrors, 'karpathy/ng-video-lecture', CASES[2]!.commit, 'input.txt'));
  const results: CaseResult[] = [];
  try {
    for (const c of cases) {
      const r = await measure(c, opts, root).catch((err: Error): CaseResult => ({
        name: c.name,
        source: `${c.repo}@${c.commit.slice(0, 10)}`,
        rewrite: '',
        check: `could not be measured: ${err.message.slice(0, 600)}`,
        equal: false,
        steps: null,
        plainSec: null,
        checkpointedSec: null,
        slowdownPct: null,
        bytesPerCheckpoint: null,
        resumedSec: null,
        savedPerLostLeaseSec: null,
      }));
      console.log(
        `${r.name} (${r.source}): ${r.rewrite || '—'}\n  check: ${r.check || '—'}` +
          (r.slowdownPct !== null
            ? `\n  ${r.steps} steps; unchanged ${r.plainSec} s, checkpointing every step ${r.checkpointedSec} s (${r.slowdownPct}%); ${r.bytesPerCheckpoint} bytes a checkpoint; lost half-way: resumed in ${r.resumedSec} s, ${r.savedPerLostLeaseSec} s saved`
            : ''),
      );
      results.push(r);
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  const figures: BenchResult['figures'] = {};
  for (const r of results) {
    const k = r.name.split(' ')[0]!;
    figures[`${k}.check`] = r.equal ? 'equal' : r.check || r.rewrite;
    if (r.slowdownPct !== null) {
      figures[`${k}.slowdownPct`] = r.slowdownPct;
      figures[`${k}.bytesPerCheckpoint`] = r.bytesPerCheckpoint;
      figures[`${k}.savedPerLostLeaseSec`] = r.savedPerLostLeaseSec;
      figures[`${k}.plainSec`] = r.plainSec;
    }
  }
  const passed = results.filter((r) => r.equal).length;
  return {
    name: 'checkpointCost',
    command: commandFor('checkpointCost', opts, DEFAULTS),
    machine,
    options: opts,
    figures,
    headline: `${passed} of ${results.length} public scripts resumable (check equal); slowdown checkpointing every step ${results
      .filter((r) => r.slowdownPct !== null)
      .map((r) => `${r.name.split(' ')[0]} ${r.slowdownPct}%`)
      .join(', ')}`,
    startedAt: startedAt.toISOString(),
    durationSec: round((Date.now() - startedAt.getTime()) / 1000, 1),
  };
}

if (isMain(import.meta)) runAsScript(checkpointCost);

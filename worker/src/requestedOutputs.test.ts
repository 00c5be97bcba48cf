/**
 * Outputs the plan asks the worker to make (requestedOutputs.ts), through the real runner: a Python
 * task in the bubblewrap sandbox (Debian's Python and matplotlib, the helpers bound read-only at
 * /opt/chatgpu/python), a stand-in API that keeps what is uploaded. Figures of a program that only
 * shows them, its stdout as a file, and the rule that an input the program left alone is not an output.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient } from './client.js';
import { AppendLogsDoc, CompleteAttemptDoc } from './documents.js';
import type { Capabilities } from './probe/types.js';
import { requestedOutputs, runPath } from './requestedOutputs.js';
import { Run, type Assignment } from './runner.js';

const PY = '/usr/bin/python3';
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
let root: string;
const log = { info: () => {}, warn: () => {} };
const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'chatgpu-requested-'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const caps: Capabilities = {
  os: 'linux',
  arch: 'x64',
  hostname: 'h',
  cpu: { model: 'cpu', cores: 1 },
  memoryMiB: 1024,
  diskFreeMiB: 1024,
  accelerators: [],
  pythons: [],
  python: PY,
  toolchains: { nvcc: null, hipcc: null },
  workloads: ['shell', 'python'],
  sandbox: 'bwrap',
  install: { enabled: false, index: null },
  probeErrors: [],
} as unknown as Capabilities;

let n = 0;
/**
 * Runs `command` as a task whose code is `files`, with `environment` and `outputs` as a plan gives
 * them; returns the outputs listed in its completion with the bytes uploaded for each, and its logs.
 */
async function runTask(o: {
  files: Record<string, string>;
  command: string;
  environment?: Record<string, string>;
  outputs?: string[];
  outputLimits?: { maxFileBytes?: number };
}) {
  const name = `t${++n}`;
  const blobs = new Map<string, Buffer>();
  const files = Object.entries(o.files).map(([path, text]) => {
    const b = Buffer.from(text);
    blobs.set(sha(b), b);
    return { path, sha256: sha(b), size: b.length, mode: 0o644 };
  });
  const logs: { stream: string; text: string }[] = [];
  let result: { errorClass: string | null; exitCode: number | null; outputs: { path: string; sha256: string }[] } | undefined;
  const uploaded = new Map<string, Buffer>();
  const client = {
    request: async (doc: unknown, vars: { lines?: { stream: string; text: string }[]; result?: typeof result }) => {
      if (doc === AppendLogsDoc) {
        logs.push(...vars.lines!);
        return { appendLogs: { __typename: 'AppendResult' } };
      }
      if (doc === CompleteAttemptDoc) {
        result = vars.result;
        return { completeAttempt: { __typename: 'Attempt', status: result!.errorClass ? 'FAILED' : 'SUCCEEDED' } };
      }
      return { reportMetrics: { __typename: 'MetricsResult' } };
    },
    upload: async (file: string) => {
      const b = readFileSync(file);
      uploaded.set(sha(b), b);
      return { sha256: sha(b), size: b.length };
    },
    download: async (hash: string, dest: string) => {
      mkdirSync(dirname(dest), { recursive: true });
      writeFileSync(dest, blobs.get(hash)!);
    },
  } as unknown as ApiClient;
  const assignment = {
    attemptId: `${name}-attempt`,
    fencingToken: '1',
    number: 1,
    task: {
      id: 't',
      jobId: 'j',
      name,
      command: o.command,
      files,
      inputs: [],
      requirements: { workload: 'python', outputs: o.outputs ?? [] },
      environment: o.environment ?? {},
    },
  } as unknown as Assignment;
  const dataDir = join(root, name);
  const run = new Run(assignment, {
    client,
    dataDir,
    caps,
    sandbox: 'bwrap',
    memoryLimit: () => null,
    log,
    envs: null,
    ...(o.outputLimits ? { outputLimits: o.outputLimits } : {}),
  });
  await run.done;
  const out = Object.fromEntries((result?.outputs ?? []).map((f) => [f.path, uploaded.get(f.sha256)!]));
  const system = logs.filter((l) => l.stream === 'system').map((l) => l.text);
  const stdout = logs.filter((l) => l.stream === 'stdout').map((l) => l.text);
  return { result: result!, out, system, stdout, logs, dataDir };
}

const SHOWS = `
import matplotlib.pyplot as plt
plt.plot([1, 2, 3]); plt.show()
plt.figure(); plt.plot([3, 1]); plt.show()
plt.figure(); plt.bar([1, 2], [3, 4])
print("plotted")
`;

describe('figures of a program that only shows them (CHATGPU_FIGURES)', () => {
  it('two plt.show() and one figure left open: three PNGs among the outputs, in the sandbox', async () => {
    const r = await runTask({
      files: { 'plot.py': SHOWS },
      command: 'python plot.py',
      environment: { CHATGPU_FIGURES: 'outputs/figures' },
    });
    expect(r.result, r.logs.map((l) => l.text).join('\n')).toMatchObject({ errorClass: null, exitCode: 0 });
    expect(Object.keys(r.out).sort()).toEqual([
      'outputs/figures/figure-1.png',
      'outputs/figures/figure-2.png',
      'outputs/figures/figure-3.png',
    ]);
    for (const b of Object.values(r.out)) expect(b.subarray(0, 8).equals(PNG)).toBe(true);
    expect(r.stdout).toEqual(['plotted']);
  });

  it('fig.show() and a backend the program sets before importing pyplot; a folder outside outputs/ is collected too', async () => {
    const script =
      'import matplotlib\nmatplotlib.use("TkAgg")\nimport matplotlib.pyplot as plt\nfig, ax = plt.subplots(); ax.plot([1, 2]); fig.show()\nprint(matplotlib.get_backend())\n';
    const r = await runTask({ files: { 'plot.py': script }, command: 'python plot.py', environment: { CHATGPU_FIGURES: 'plots' } });
    expect(r.result, r.logs.map((l) => l.text).join('\n')).toMatchObject({ errorClass: null, exitCode: 0 });
    expect(Object.keys(r.out)).toEqual(['plots/figure-1.png']);
    expect(r.out['plots/figure-1.png']!.subarray(0, 8).equals(PNG)).toBe(true);
    expect(r.stdout).toEqual(['agg']);
  });

  it('a program that never imports matplotlib: no figures, matplotlib never loaded', async () => {
    const r = await runTask({
      files: { 'calc.py': 'import sys\nprint(sum(range(10)), any(m.startswith("matplotlib") for m in sys.modules))\n' },
      command: 'python calc.py',
      environment: { CHATGPU_FIGURES: 'outputs/figures' },
    });
    expect(r.result).toMatchObject({ errorClass: null, exitCode: 0 });
    expect(r.stdout).toEqual(['45 False']);
    expect(r.out).toEqual({});
  });

  it('without the variable: show saves nothing, no figures folder, the start-up hook is not on PYTHONPATH', async () => {
    const script = `${SHOWS}import os\nprint(os.environ["PYTHONPATH"], "CHATGPU_FIGURES" in os.environ, os.path.exists("outputs/figures"))\n`;
    const r = await runTask({ files: { 'plot.py': script }, command: 'python plot.py', outputs: ['outputs'] });
    expect(r.result).toMatchObject({ errorClass: null, exitCode: 0 });
    expect(r.stdout).toEqual(['plotted', '/opt/chatgpu/python False False']);
    expect(r.out).toEqual({});
  });

  it('a value outside the run folder is refused with a note, and nothing is watched', async () => {
    const r = await runTask({
      files: { 'plot.py': `${SHOWS}import os\nprint("CHATGPU_FIGURES" in os.environ)\n` },
      command: 'python plot.py',
      environment: { CHATGPU_FIGURES: '../elsewhere', CHATGPU_STDOUT_FILE: '/etc/passwd' },
    });
    expect(r.result).toMatchObject({ errorClass: null, exitCode: 0 });
    expect(r.system).toEqual(
      expect.arrayContaining([
        'worker: CHATGPU_FIGURES=../elsewhere ignored: it must be a path inside the run folder (e.g. outputs/…)',
        'worker: CHATGPU_STDOUT_FILE=/etc/passwd ignored: it must be a path inside the run folder (e.g. outputs/…)',
      ]),
    );
    expect(r.stdout).toEqual(['plotted', 'False']);
    expect(r.out).toEqual({});
  });
});

describe("the program's stdout as a file (CHATGPU_STDOUT_FILE)", () => {
  it("holds exactly what the program printed (not stderr, not the worker's lines, not metric lines), and the logs still stream", async () => {
    const script = [
      'import sys, time',
      'from chatgpu.metrics import log',
      'print("epoch 1  loss=0.50")',
      'log(step=1, loss=0.5)',
      'print("résumé ✓\\ttabs", flush=True)',
      'print("to stderr", file=sys.stderr)',
      'sys.stdout.write("part one, "); sys.stdout.flush(); time.sleep(0.2)',
      'sys.stdout.write("part two\\r\\n")',
      'print("   CHATGPU_METRICS is not a metric line")',
      'sys.stdout.write("no newline at the end")',
    ].join('\n');
    const printed =
      'epoch 1  loss=0.50\nrésumé ✓\ttabs\npart one, part two\r\n   CHATGPU_METRICS is not a metric line\nno newline at the end';
    const r = await runTask({
      files: { 'train.py': script },
      command: 'python train.py',
      environment: { CHATGPU_STDOUT_FILE: 'outputs/stdout.txt' },
    });
    expect(r.result, r.logs.map((l) => l.text).join('\n')).toMatchObject({ errorClass: null, exitCode: 0 });
    expect(Object.keys(r.out)).toEqual(['outputs/stdout.txt']);
    expect(r.out['outputs/stdout.txt']!.toString('utf8')).toBe(printed);
    expect(r.stdout).toEqual(
      expect.arrayContaining(['epoch 1  loss=0.50', 'part one, part two', expect.stringMatching(/^CHATGPU_METRIC /)]),
    );
  });

  it('a samples file is the same mechanism under another name; a file the program wrote there is replaced; a failed run keeps its output', async () => {
    const script =
      'import os\nos.makedirs("outputs", exist_ok=True)\nopen("outputs/samples.txt", "w").write("the program\'s own")\nprint("sample 1: hello")\nprint("sample 2: world")\nraise SystemExit(4)\n';
    const r = await runTask({
      files: { 'sample.py': script },
      command: 'python sample.py',
      environment: { CHATGPU_STDOUT_FILE: 'outputs/samples.txt' },
    });
    expect(r.result).toMatchObject({ errorClass: 'EXIT_NONZERO', exitCode: 4 });
    expect(r.out['outputs/samples.txt']!.toString()).toBe('sample 1: hello\nsample 2: world\n');
    expect(r.system).toContain("worker: output outputs/samples.txt: the program's own file at this path is replaced by the worker's");
  });

  it('is cut at the per-file output limit, and says so', async () => {
    const r = await runTask({
      files: { 'loud.py': 'for i in range(1000):\n    print("line %04d" % i)\n' },
      command: 'python loud.py',
      environment: { CHATGPU_STDOUT_FILE: 'out.txt' },
      outputLimits: { maxFileBytes: 100 },
    });
    expect(r.result).toMatchObject({ errorClass: null, exitCode: 0 });
    expect(r.out['out.txt']!.toString()).toBe(Array.from({ length: 10 }, (_, i) => `line ${String(i).padStart(4, '0')}\n`).join(''));
    expect(r.system).toContain("worker: out.txt holds the first 100 bytes of the program's output (the per-file output limit).");
    expect(r.stdout).toHaveLength(1000);
  });
});

describe('an input is not an output', () => {
  it('files of the code matched by the outputs are listed only when the program changed them', async () => {
    const script = [
      'open("data/changed.csv", "a").write("3,c\\n")',
      'open("data/new.csv", "w").write("x\\n")',
      'open("outputs/result.txt", "w").write("42\\n")',
      'same = open("data/rewritten.csv").read()',
      'open("data/rewritten.csv", "w").write(same)  # written again, same bytes',
    ].join('\n');
    const r = await runTask({
      files: {
        'run.py': script,
        'data/input.csv': 'a,b\n1,2\n',
        'data/changed.csv': 'id,v\n1,a\n',
        'data/rewritten.csv': 'k\n1\n',
        'outputs/shipped.txt': 'came with the project\n',
      },
      command: 'python run.py',
      outputs: ['data/*.csv', 'outputs', '*.py'],
    });
    expect(r.result, r.logs.map((l) => l.text).join('\n')).toMatchObject({ errorClass: null, exitCode: 0 });
    expect(Object.keys(r.out).sort()).toEqual(['data/changed.csv', 'data/new.csv', 'outputs/result.txt']);
    expect(r.out['data/changed.csv']!.toString()).toBe('id,v\n1,a\n3,c\n');
    expect(r.system).toContain(
      'worker: 4 input file(s) matched the outputs but were not changed by the program, so they are not outputs: data/input.csv, data/rewritten.csv, outputs/shipped.txt, run.py',
    );
  });
});

describe('requestedOutputs', () => {
  it('reads the two variables as paths inside the run folder', () => {
    expect(requestedOutputs({ CHATGPU_FIGURES: './outputs//figures/', CHATGPU_STDOUT_FILE: 'outputs/stdout.txt', OTHER: 'x' })).toEqual({
      figures: 'outputs/figures',
      stdoutFile: 'outputs/stdout.txt',
      problems: [],
    });
    expect(requestedOutputs({})).toEqual({ figures: null, stdoutFile: null, problems: [] });
    expect(requestedOutputs(null)).toEqual({ figures: null, stdoutFile: null, problems: [] });
    for (const bad of ['/abs', '..', '../x', 'a/../../x', '.', '.chatgpu/bin', '.chatgpu']) expect(runPath(bad)).toBeNull();
    expect(requestedOutputs({ CHATGPU_STDOUT_FILE: 42 }).problems).toEqual([
      'CHATGPU_STDOUT_FILE=42 ignored: it must be a path inside the run folder (e.g. outputs/…)',
    ]);
  });
});

describe('clean-up', () => {
  it('no attempt folder or spool copy of the stdout file is left of a successful run', async () => {
    const r = await runTask({ files: { 'p.py': 'print(1)\n' }, command: 'python p.py', environment: { CHATGPU_STDOUT_FILE: 'o.txt' } });
    expect(r.out['o.txt']!.toString()).toBe('1\n');
    expect(existsSync(join(r.dataDir, 'attempts', `t${n}-attempt`))).toBe(false);
    expect(existsSync(join(r.dataDir, 'spool', `t${n}-attempt.stdout`))).toBe(false);
  });
});

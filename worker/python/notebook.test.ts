/**
 * `python -m chatgpu.notebook`, run as the worker runs a task (the helpers on PYTHONPATH, the
 * figures start-up hook first when CHATGPU_FIGURES is set, MPLBACKEND=Agg) with Debian's
 * python3-nbclient / python3-ipykernel, NumPy and matplotlib on /usr/bin/python3: notebooks made
 * here, executed on a real IPython kernel.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const HELPERS = path.dirname(fileURLToPath(import.meta.url));
const STARTUP = path.join(HELPERS, 'chatgpu', '_startup');
const PY = '/usr/bin/python3';
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

type Cell = { cell_type: 'code' | 'markdown'; source: string; tags?: string[] };
const code = (source: string, tags?: string[]): Cell => ({ cell_type: 'code', source, ...(tags ? { tags } : {}) });
const md = (source: string): Cell => ({ cell_type: 'markdown', source });

/** An nbformat 4.4 notebook, as Jupyter writes one (sources as lists of lines). */
function notebook(cells: Cell[]): string {
  const lines = (s: string) => s.split(/(?<=\n)/);
  return JSON.stringify(
    {
      nbformat: 4,
      nbformat_minor: 4,
      metadata: {
        kernelspec: { name: 'some-other-kernel', display_name: 'Not this one', language: 'python' },
        language_info: { name: 'python' },
      },
      cells: cells.map((c) =>
        c.cell_type === 'code'
          ? { cell_type: 'code', execution_count: null, metadata: c.tags ? { tags: c.tags } : {}, outputs: [], source: lines(c.source) }
          : { cell_type: 'markdown', metadata: {}, source: lines(c.source) },
      ),
    },
    null,
    1,
  );
}

function run(nb: string, args: string[] = [], o: { figures?: boolean; name?: string; python?: string } = {}) {
  const dir = mkdtempSync(path.join(tmpdir(), 'notebook-helper-'));
  const name = o.name ?? 'analysis.ipynb';
  mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
  writeFileSync(path.join(dir, name), nb);
  const figures = o.figures !== false;
  const env: Record<string, string> = {
    PATH: '/usr/bin:/bin',
    HOME: dir,
    MPLBACKEND: 'Agg',
    PYTHONUNBUFFERED: '1',
    PYTHONDONTWRITEBYTECODE: '1',
    PYTHONPATH: (figures ? [STARTUP, HELPERS] : [HELPERS]).join(':'),
    CHATGPU_OUTPUT_DIR: path.join(dir, 'outputs'),
    ...(figures ? { CHATGPU_FIGURES: path.join(dir, 'outputs', 'figures') } : {}),
  };
  const r = spawnSync(o.python ?? PY, ['-m', 'chatgpu.notebook', name, ...args], { cwd: dir, encoding: 'utf8', env, timeout: 120_000 });
  const outDir = path.join(dir, 'outputs');
  const executedPath = path.join(outDir, path.basename(name));
  const executed = existsSync(executedPath)
    ? (JSON.parse(readFileSync(executedPath, 'utf8')) as {
        cells: {
          cell_type: string;
          source: string | string[];
          execution_count?: number | null;
          outputs?: { output_type: string; name?: string; text?: string | string[]; data?: Record<string, unknown>; ename?: string }[];
          metadata: { tags?: string[] };
        }[];
      })
    : null;
  const figDir = path.join(outDir, 'figures');
  const saved = existsSync(figDir) ? readdirSync(figDir).sort() : [];
  return {
    dir,
    code: r.status,
    out: r.stdout,
    err: r.stderr,
    executed,
    saved,
    figure: (f: string) => readFileSync(path.join(figDir, f)),
    original: () => readFileSync(path.join(dir, name), 'utf8'),
  };
}

const text = (s: string | string[] | undefined) => (Array.isArray(s) ? s.join('') : (s ?? ''));
const isPng = (b: Buffer) => b.subarray(0, 8).equals(PNG) && b.length > 1000;

const ANALYSIS = notebook([
  md('# A small analysis\nNumPy and matplotlib, as people write them.'),
  code('%matplotlib inline\nimport numpy as np\nimport matplotlib.pyplot as plt\nlr = 0.1\nsteps = 4\nlabel = "baseline"'),
  code(
    'from chatgpu.metrics import log\nrng = np.random.default_rng(0)\nw = 5.0\nfor step in range(steps):\n    w -= lr * 2 * w\n    log(step=step, loss=w * w)\nprint(f"lr={lr} label={label} final w={w:.4f}")',
  ),
  code(
    'x = np.linspace(0, 1, 50)\nplt.plot(x, x ** 2)\nplt.title("square")\nplt.show()\nfig, ax = plt.subplots()\nax.hist(rng.normal(size=200))',
  ),
  code('print("done")'),
]);

describe('chatgpu.notebook', () => {
  it('runs a NumPy + matplotlib notebook top to bottom: stdout and metric lines pass through, the executed notebook embeds its figures, each figure is a file', () => {
    const r = run(ANALYSIS);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain('lr=0.1 label=baseline final w=2.0480');
    expect(r.out.match(/^CHATGPU_METRIC \{.*"loss".*\}$/gm)).toHaveLength(4);
    expect(r.out.trimEnd().endsWith('done')).toBe(true);
    // the executed notebook: every code cell ran in order, its outputs kept, the two figures embedded
    const cells = r.executed!.cells.filter((c) => c.cell_type === 'code');
    expect(cells.map((c) => c.execution_count)).toEqual([1, 2, 3, 4]);
    expect(
      cells[1]!
        .outputs!.filter((o) => o.output_type === 'stream')
        .map((o) => text(o.text))
        .join(''),
    ).toContain('final w=2.0480');
    const images = cells[2]!.outputs!.filter((o) => o.data?.['image/png']);
    expect(images).toHaveLength(2);
    // the same figures as files, numbered in order (the figures hook does not save them twice)
    expect(r.saved).toEqual(['figure-1.png', 'figure-2.png']);
    for (const f of r.saved) expect(isPng(r.figure(f))).toBe(true);
    expect(r.figure('figure-1.png').toString('base64')).toBe(text(images[0]!.data!['image/png'] as string).replace(/\n/g, ''));
    expect(r.err).toContain('executed notebook written to');
    expect(r.err).not.toMatch(/Traceback|Debugger warning/);
    expect(r.original()).toBe(ANALYSIS); // the uploaded notebook is left as it was
  }, 120_000);

  it('--set rewrites the value in the first code cell that assigns it, and nothing else there', () => {
    const r = run(ANALYSIS, ['--set', 'lr=0.01', '--set', 'label=tuned run']);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain('lr=0.01 label=tuned run final w=4.6118');
    expect(r.err).toContain('lr = 0.01 in cell 2 line 4 (was 0.1)');
    expect(r.err).toContain('label = \'tuned run\' in cell 2 line 6 (was "baseline")');
    const first = text(r.executed!.cells[1]!.source);
    expect(first).toBe(
      "%matplotlib inline\nimport numpy as np\nimport matplotlib.pyplot as plt\nlr = 0.01\nsteps = 4\nlabel = 'tuned run'",
    );
  }, 120_000);

  it('a parameters-tagged cell: the values go into an injected cell right after it (papermill), typed after the parameters', () => {
    const nb = notebook([
      code('epochs = 2\nuse_bias = False\nname = "a"', ['parameters']),
      code('print("epochs", epochs, "bias", use_bias, "name", name, type(name).__name__)'),
    ]);
    const r = run(nb, ['--set', 'epochs=7', '--set', 'use_bias=true', '--set', 'name=42']);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain('epochs 7 bias True name 42 str');
    const cells = r.executed!.cells;
    expect(cells).toHaveLength(3);
    expect(cells[1]!.metadata.tags).toEqual(['injected-parameters']);
    expect(text(cells[1]!.source)).toBe("# Parameters\nepochs = 7\nuse_bias = True\nname = '42'\n");
    expect(text(cells[0]!.source)).toBe('epochs = 2\nuse_bias = False\nname = "a"'); // the parameters cell itself is unchanged
    expect(r.err).toContain('epochs set in the injected parameters cell 2, after the parameters cell 1');
  }, 120_000);

  it('a failing cell: exit 1 naming the cell, its line and the traceback; later cells do not run; the executed notebook keeps the error', () => {
    const nb = notebook([
      md('intro'),
      code('import numpy as np\nvalues = np.arange(3)'),
      code('total = values.sum()\nratio = total / 0\nbad = values[10]\nprint("never")'),
      code('print("after")'),
    ]);
    const r = run(nb);
    expect(r.code).toBe(1);
    expect(r.err).toContain('cell 3 (In [2]) failed at line 3: bad = values[10]\n');
    // the last line of stderr (what the worker's failure reason quotes) says it all
    expect(r.err.trimEnd().split('\n').pop()).toBe(
      'chatgpu.notebook: cell 3 (In [2]) failed at line 3 (bad = values[10]): IndexError: index 10 is out of bounds for axis 0 with size 3',
    );
    expect(r.err).toContain('IndexError: index 10 is out of bounds');
    expect(r.err).toMatch(/----> 3 bad = values\[10\]/);
    expect(r.out).not.toContain('never');
    expect(r.out).not.toContain('after');
    const failed = r.executed!.cells[2]!;
    expect(failed.outputs!.some((o) => o.output_type === 'error' && o.ename === 'IndexError')).toBe(true);
    expect(r.executed!.cells[3]!.execution_count ?? null).toBeNull();
  }, 120_000);

  it('a cell over --timeout-per-cell is stopped and named; without CHATGPU_FIGURES figures go to outputs/figures', () => {
    const slow = run(notebook([code('print("started", flush=True)'), code('import time\ntime.sleep(60)')]), ['--timeout-per-cell', '2']);
    expect(slow.code).toBe(1);
    expect(slow.out).toContain('started');
    expect(slow.err).toContain('cell 2 (In [2]) did not finish within 2s (--timeout-per-cell); stopped');
    const plain = run(notebook([code('import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])')]), [], { figures: false });
    expect(plain.code, plain.err).toBe(0);
    expect(plain.saved).toEqual(['figure-1.png']);
  }, 120_000);

  it("the kernel runs on the runner's own interpreter (a setup phase's virtualenv), in the notebook's folder, not on the notebook's kernelspec", () => {
    const venv = path.join(mkdtempSync(path.join(tmpdir(), 'notebook-venv-')), 'v');
    const made = spawnSync(PY, ['-m', 'venv', '--system-site-packages', '--without-pip', venv], { encoding: 'utf8' });
    expect(made.status, made.stderr).toBe(0);
    const r = run(notebook([code('import sys, os\nprint(sys.executable)\nprint(sys.prefix)\nprint(os.path.basename(os.getcwd()))')]), [], {
      python: path.join(venv, 'bin', 'python3'),
      name: 'sub/where.ipynb',
    });
    expect(r.code, r.err).toBe(0);
    const [executable, prefix, cwd] = r.out.trim().split('\n');
    expect(executable).toBe(path.join(venv, 'bin', 'python3'));
    expect(prefix).toBe(venv);
    expect(cwd).toBe('sub');
    expect(r.executed).not.toBeNull();
  }, 120_000);

  it('refuses a --set no code cell assigns, one assigned together with another name, one a later cell assigns again, and a malformed one, before anything runs', () => {
    const nb = notebook([code('lr = 0.1\na = b = 2\nsteps = 10'), code('print("ran")'), code('steps += 1')]);
    const unknown = run(nb, ['--set', 'momentum=0.9']);
    expect(unknown.code).toBe(2);
    expect(unknown.err).toContain(
      '--set momentum: no code cell of the notebook assigns momentum at its top level; the first code cell sets lr',
    );
    expect(unknown.out).toBe('');
    expect(unknown.executed).toBeNull();
    const chained = run(nb, ['--set', 'a=3']);
    expect(chained.code).toBe(2);
    expect(chained.err).toContain('cell 1 assigns a together with another name');
    const again = run(nb, ['--set', 'steps=3']);
    expect(again.code).toBe(2);
    expect(again.err).toContain('--set steps: cells 1 and 3 both assign steps at their top level; the second would undo the first');
    expect(again.executed).toBeNull();
    const malformed = run(nb, ['--set', 'lr']);
    expect(malformed.code).toBe(2);
    expect(malformed.err).toContain("--set 'lr': expected NAME=VALUE");
    const missing = run(nb, ['--set', 'lr=1'], { name: 'x.ipynb' });
    expect(missing.code).toBe(0);
    const notebookless = spawnSync(PY, ['-m', 'chatgpu.notebook', 'nothing.ipynb'], {
      cwd: missing.dir,
      encoding: 'utf8',
      env: { PATH: '/usr/bin:/bin', PYTHONPATH: HELPERS },
    });
    expect(notebookless.status).toBe(2);
    expect(notebookless.stderr).toContain('no notebook at nothing.ipynb');
  }, 120_000);
});

/**
 * chatgpu.figures, loaded the way the worker loads it (chatgpu/_startup first on PYTHONPATH and
 * CHATGPU_FIGURES set), with Debian's matplotlib and /usr/bin/python3: what a program that only
 * shows its figures leaves in the folder, and that nothing changes for a program that does not plot,
 * has no matplotlib, or runs without the variable.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const HELPERS = path.dirname(fileURLToPath(import.meta.url));
const STARTUP = path.join(HELPERS, 'chatgpu', '_startup');
const PY = '/usr/bin/python3';
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function run(
  script: string,
  o: { figures?: string | null; pythonPath?: string[]; files?: Record<string, string>; command?: string[] } = {},
) {
  const dir = mkdtempSync(path.join(tmpdir(), 'figures-helper-'));
  writeFileSync(path.join(dir, 'prog.py'), script);
  for (const [p, text] of Object.entries(o.files ?? {})) {
    mkdirSync(path.dirname(path.join(dir, p)), { recursive: true });
    writeFileSync(path.join(dir, p), text);
  }
  const figures = o.figures === undefined ? 'outputs/figures' : o.figures;
  const env: Record<string, string> = {
    PATH: '/usr/bin:/bin',
    HOME: dir,
    MPLBACKEND: 'Agg',
    PYTHONDONTWRITEBYTECODE: '1',
    PYTHONPATH: (o.pythonPath ?? (figures ? [STARTUP, HELPERS] : [HELPERS])).join(':'),
    ...(figures ? { CHATGPU_FIGURES: figures } : {}),
  };
  const r = spawnSync(o.command?.[0] ?? PY, o.command?.slice(1) ?? ['prog.py'], { cwd: dir, encoding: 'utf8', env });
  const folder = path.join(dir, 'outputs', 'figures');
  const saved = existsSync(folder) ? readdirSync(folder).sort() : null;
  const png = (name: string) => readFileSync(path.join(folder, name));
  return { dir, code: r.status, out: r.stdout, err: r.stderr, saved, png };
}

const isPng = (b: Buffer) => b.subarray(0, 8).equals(PNG) && b.length > 1000;

describe('chatgpu.figures', () => {
  it('plt.show() twice and one figure left open: three PNG files, numbered in order, and the output unchanged', () => {
    const r = run(`
import matplotlib.pyplot as plt
plt.plot([1, 2, 3]); plt.title("one")
plt.show()
plt.figure(); plt.plot([3, 1]); plt.title("two")
plt.show()
print("open after show:", plt.get_fignums())
plt.figure(); plt.bar([1, 2], [3, 4]); plt.title("three, never shown")
print("done")
`);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toBe('open after show: []\ndone\n');
    expect(r.err).toBe('');
    expect(r.saved).toEqual(['figure-1.png', 'figure-2.png', 'figure-3.png']);
    for (const f of r.saved!) expect(isPng(r.png(f))).toBe(true);
    // three different figures, not one saved three times
    expect(new Set(r.saved!.map((f) => r.png(f).toString('base64'))).size).toBe(3);
  });

  it('one show saves every open figure by number; from matplotlib import pyplot, and pylab, are the same show', () => {
    const many = run(
      'from matplotlib import pyplot\nfor i in range(3):\n    pyplot.figure(); pyplot.plot([i, i + 1])\npyplot.show()\nprint(len(pyplot.get_fignums()))\n',
    );
    expect(many.code, many.err).toBe(0);
    expect(many.out).toBe('0\n');
    expect(many.saved).toEqual(['figure-1.png', 'figure-2.png', 'figure-3.png']);
    const pylab = run(
      'import pylab\npylab.plot([1, 2])\npylab.show()\nfrom matplotlib.pyplot import show\nimport matplotlib.pyplot as plt\nprint(pylab.show is plt.show, show is plt.show)\n',
    );
    expect(pylab.code, pylab.err).toBe(0);
    expect(pylab.out).toBe('True True\n');
    expect(pylab.saved).toEqual(['figure-1.png']);
  });

  it('fig.show() saves that figure; not again at exit unless it changed after', () => {
    const r = run(`
import matplotlib.pyplot as plt
a = plt.figure(); a.gca().plot([1, 2]); a.show()
b = plt.figure(); b.gca().plot([2, 1]); b.show()
b.gca().set_title("changed after show")
`);
    expect(r.code, r.err).toBe(0);
    // a once (at its show), b at its show and again at exit, changed
    expect(r.saved).toEqual(['figure-1.png', 'figure-2.png', 'figure-3.png']);
    expect(r.png('figure-2.png').equals(r.png('figure-3.png'))).toBe(false);
  });

  it('a non-blocking show (plt.pause in a loop) writes nothing per frame; the last frame is saved at exit', () => {
    const r = run('import matplotlib.pyplot as plt\nfor i in range(5):\n    plt.plot([0, i]); plt.pause(0.001)\nplt.show(block=False)\n');
    expect(r.code, r.err).toBe(0);
    expect(r.saved).toEqual(['figure-1.png']);
  });

  it('figures still open are saved after an uncaught exception and after sys.exit', () => {
    const crash = run('import matplotlib.pyplot as plt\nplt.plot([1, 2])\nraise RuntimeError("boom")\n');
    expect(crash.code).toBe(1);
    expect(crash.err).toMatch(/RuntimeError: boom/);
    expect(crash.saved).toEqual(['figure-1.png']);
    const exit = run('import sys\nimport matplotlib.pyplot as plt\nplt.plot([1, 2])\nsys.exit(3)\n');
    expect(exit.code).toBe(3);
    expect(exit.saved).toEqual(['figure-1.png']);
  });

  it('numbers go on across the programs of one run (two scripts into one folder)', () => {
    const script = 'import matplotlib.pyplot as plt\nplt.plot([1, 2]); plt.show()\n';
    const r = run(script, { files: { 'second.py': script }, command: ['sh', '-c', `${PY} prog.py && ${PY} second.py`] });
    expect(r.code, r.err).toBe(0);
    expect(r.saved).toEqual(['figure-1.png', 'figure-2.png']);
  });

  it('a backend set before pyplot is imported: a file backend stays and still gives PNGs; an interactive one becomes Agg', () => {
    const svg = run(
      'import matplotlib\nmatplotlib.use("svg")\nimport matplotlib.pyplot as plt\nplt.plot([1, 2]); plt.show()\nprint(matplotlib.get_backend())\n',
    );
    expect(svg.code, svg.err).toBe(0);
    expect(svg.out).toBe('svg\n');
    expect(svg.saved).toEqual(['figure-1.png']);
    expect(isPng(svg.png('figure-1.png'))).toBe(true);
    // TkAgg without a display stops matplotlib with an ImportError (headless); with figures asked for, Agg is used
    const tk = run(
      'import matplotlib\nmatplotlib.use("TkAgg")\nimport matplotlib.pyplot as plt\nplt.plot([1, 2]); plt.show()\nprint(matplotlib.get_backend())\n',
    );
    expect(tk.code, tk.err).toBe(0);
    expect(tk.out).toBe('agg\n');
    expect(tk.err).toMatch(/^chatgpu\.figures: backend TkAgg replaced by Agg/);
    expect(tk.saved).toEqual(['figure-1.png']);
  });

  it('a program that does not import matplotlib: nothing imported, no folder', () => {
    const r = run('import sys\nprint(sorted(m for m in sys.modules if m.startswith("matplotlib")), "chatgpu.figures" in sys.modules)\n');
    expect(r.code, r.err).toBe(0);
    expect(r.out).toBe('[] True\n');
    expect(r.saved).toBeNull();
  });

  it('matplotlib missing: the program gets the usual ModuleNotFoundError and carries on', () => {
    const r = run(`
import sys
sys.path[:] = [p for p in sys.path if "-packages" not in p]
try:
    import matplotlib.pyplot as plt
except ModuleNotFoundError as e:
    print("no plotting:", e)
`);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toBe("no plotting: No module named 'matplotlib'\n");
    expect(r.saved).toBeNull();
  });

  it("without the variable: no hook, show is matplotlib's own, no folder (also with the start-up folder on the path)", () => {
    const script =
      'import matplotlib.pyplot as plt, sys\nplt.plot([1, 2]); plt.show()\nprint(hasattr(plt.show, "_chatgpu_figures"), "chatgpu.figures" in sys.modules)\n';
    for (const pythonPath of [[HELPERS], [STARTUP, HELPERS]]) {
      const r = run(script, { figures: null, pythonPath });
      expect(r.code, r.err).toBe(0);
      expect(r.out).toBe('False False\n');
      expect(r.saved).toBeNull();
    }
  });

  it('the sitecustomize it hides still runs; a figure that cannot be drawn is reported and the program goes on', () => {
    const r = run(
      `
import matplotlib.pyplot as plt
bad = plt.figure(); bad.text(0.5, 0.5, r"$\\notacommand{x}$")
plt.show()
plt.plot([1, 2]); plt.show()
print("after")
`,
      {
        files: { 'site2/sitecustomize.py': 'import os\nos.environ["HIDDEN_SITECUSTOMIZE"] = "ran"\nprint("hidden sitecustomize ran")\n' },
        pythonPath: [STARTUP, HELPERS, 'site2'],
      },
    );
    expect(r.code, r.err).toBe(0);
    expect(r.out).toBe('hidden sitecustomize ran\nafter\n');
    expect(r.err).toMatch(/^chatgpu\.figures: could not save a figure: ValueError/);
    expect(r.saved).toEqual(['figure-1.png']);
  });

  it('the helpers left off PYTHONPATH by the task: the hook loads figures.py from beside its folder', () => {
    const r = run('import matplotlib.pyplot as plt\nplt.plot([1, 2]); plt.show()\n', { pythonPath: [STARTUP] });
    expect(r.code, r.err).toBe(0);
    expect(r.saved).toEqual(['figure-1.png']);
  });
});

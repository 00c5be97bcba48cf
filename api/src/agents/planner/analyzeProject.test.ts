import { describe, expect, it } from 'vitest';
import { analyzeProject, reportedMetrics } from './analyzeProject.js';
import { readPythonFacts } from './readPythonFacts.js';
import { resolveImports } from './resolveImports.js';

describe('reportedMetrics', () => {
  it('names the keywords passed to the metrics helper, not step/ts, in order of first appearance', () => {
    const text = 'from chatgpu.metrics import log\nlog(step=s, loss=l, accuracy=a)\nlog(val_loss=v, loss=l2)\n';
    expect(reportedMetrics(text)).toEqual(['loss', 'accuracy', 'val_loss']);
  });

  it('reads chatgpu.metrics.log(...) and ignores an unrelated log() when the helper is not imported', () => {
    expect(reportedMetrics('import chatgpu.metrics\nchatgpu.metrics.log(eval_accuracy=acc)\n')).toEqual(['eval_accuracy']);
    expect(reportedMetrics('import logging\nlog = logging.info\nlog(msg="x")\nmath.log(x)\n')).toEqual([]);
    expect(reportedMetrics('from chatgpu.metrics import log\nmath.log(x)\nnp.log(y)\n')).toEqual([]);
  });

  it('is recorded for each entry point', () => {
    const facts = analyzeProject(
      new Map([
        [
          'evaluate.py',
          'import argparse\nfrom chatgpu.metrics import log\nif __name__ == "__main__":\n    log(eval_accuracy=1.0, eval_loss=0.1)\n',
        ],
      ]),
    );
    expect(facts.entryPoints[0]!.reportsMetrics).toEqual(['eval_accuracy', 'eval_loss']);
  });
});

const nb = (...cells: string[]) =>
  JSON.stringify({
    nbformat: 4,
    nbformat_minor: 4,
    metadata: {},
    cells: [
      { cell_type: 'markdown', metadata: {}, source: ['import pandas # prose'] },
      ...cells.map((c) => ({ cell_type: 'code', metadata: {}, outputs: [], execution_count: null, source: c.split(/(?<=\n)/) })),
    ],
  });

describe('notebooks', () => {
  it("a project of only a notebook: the notebook is its entry point, its imports (magics left out) and the runner's needs are its dependencies", () => {
    const facts = analyzeProject(
      new Map([
        [
          'analysis.ipynb',
          nb(
            '%matplotlib inline\n!pip install foo\nimport numpy as np, torch\nfrom sklearn.linear_model import Ridge\nimport helpers',
            'from chatgpu.metrics import log\nlog(step=1, r2=0.5)\ntorch.save(model, "m.pt")',
            '%%bash\nimport notpython',
          ),
        ],
        ['helpers.py', 'def f():\n    return 1\n'],
        ['.ipynb_checkpoints/analysis-checkpoint.ipynb', nb('import numpy')],
      ]),
    );
    expect(facts.entryPoints).toEqual([
      { path: 'analysis.ipynb', kind: 'notebook', cli: null, flags: [], savesCheckpoint: true, hardwiredCuda: [], reportsMetrics: ['r2'] },
    ]);
    expect(facts.importsByFile['analysis.ipynb']).toEqual({
      thirdParty: ['ipykernel', 'nbclient', 'numpy', 'sklearn', 'torch'],
      local: ['helpers'],
    });
    expect(facts.imports).toEqual(['numpy', 'sklearn', 'torch']);
    expect(facts.usesTorch).toBe(true);
    expect(facts.pins.map((p) => [p.name, p.line, p.file])).toEqual([
      ['ipykernel', 'ipykernel', 'analysis.ipynb'],
      ['nbclient', 'nbclient', 'analysis.ipynb'],
    ]);
    expect(facts.notes.join(' ')).toContain('python -m chatgpu.notebook X.ipynb');
  });

  it('a project with a Python entry point keeps it as its only entry point; a notebook that is not JSON has no imports', () => {
    const facts = analyzeProject(
      new Map([
        ['train.py', 'import torch\nif __name__ == "__main__":\n    print(1)\n'],
        ['explore.ipynb', nb('import seaborn')],
        ['requirements.txt', 'nbclient==0.7.2\n'],
      ]),
    );
    expect(facts.entryPoints.map((e) => e.path)).toEqual(['train.py']);
    expect(facts.imports).toEqual(['torch']);
    expect(facts.importsByFile['explore.ipynb']).toEqual({ thirdParty: ['seaborn'], local: [] });
    const broken = analyzeProject(
      new Map([
        ['x.ipynb', '{ not json'],
        ['requirements.txt', 'nbclient==0.7.2\n'],
      ]),
    );
    expect(broken.entryPoints.map((e) => e.kind)).toEqual(['notebook']);
    expect(broken.importsByFile['x.ipynb']!.thirdParty).toEqual(['ipykernel', 'nbclient']);
    // a requirement the project already gives is kept as it is
    expect(broken.pins.map((p) => p.line)).toEqual(['nbclient==0.7.2', 'ipykernel']);
  });
});

describe('a package with a demo notebook (karpathy/micrograd: setup.py, the package, demo.ipynb)', () => {
  it('the notebook is an entry point: setup.py runs setup() at its top level but is packaging, not a script', async () => {
    const files = new Map([
      ['setup.py', 'import setuptools\n\nsetuptools.setup(name="micrograd", version="0.1.0", packages=setuptools.find_packages())\n'],
      ['micrograd/__init__.py', ''],
      ['micrograd/engine.py', 'class Value:\n    def __init__(self, data):\n        self.data = data\n'],
      ['demo.ipynb', nb('import numpy as np\nfrom micrograd.engine import Value')],
    ]);
    const facts = analyzeProject(files, (await readPythonFacts(files)) ?? {});
    expect(facts.entryPoints.map((e) => [e.path, e.kind])).toEqual([
      ['setup.py', 'top-level'],
      ['demo.ipynb', 'notebook'],
    ]);
    expect(facts.importsByFile['demo.ipynb']).toEqual({ thirdParty: ['ipykernel', 'nbclient', 'numpy'], local: ['micrograd'] });
    // With a script beside them, a notebook is still not run (a demo next to train.py).
    files.set('train.py', 'print("training")\n');
    const withScript = analyzeProject(files, (await readPythonFacts(files)) ?? {});
    expect(withScript.entryPoints.map((e) => e.path)).toEqual(['setup.py', 'train.py']);
  });
});

describe("a notebook's dependencies on the workers (resolveImports)", () => {
  const cls = (modules: string[] | null, installers: number) => ({
    accelVendor: 'none',
    count: 1,
    workloads: ['python', 'shell'],
    pythonVersions: ['3.11.2'],
    torchVersions: [],
    numpyVersions: ['1.24.2'],
    maxMemoryMiB: 16000,
    maxAccelMemoryMiB: 0,
    accelerators: [],
    modules,
    installers,
  });
  const facts = analyzeProject(
    new Map([['a.ipynb', JSON.stringify({ cells: [{ cell_type: 'code', source: 'import numpy as np\nprint(np.pi)' }] })]]),
  );

  it('present where the workers have nbclient and ipykernel (Debian packages); installed in a setup phase where they do not; explained where none installs', () => {
    expect(resolveImports(facts, ['a.ipynb'], [cls(['ipykernel', 'nbclient', 'numpy'], 0)]).install).toEqual([]);
    const installed = resolveImports(facts, ['a.ipynb'], [cls(['numpy'], 1)]);
    expect(installed.install).toEqual(['ipykernel', 'nbclient']);
    expect(installed.summary).toBe(
      "A setup phase installs ipykernel, nbclient on the worker before the run (the worker's own packages stay as they are).",
    );
    const refused = resolveImports(facts, ['a.ipynb'], [cls(['numpy'], 0)]);
    expect(refused.unavailable).toEqual(['ipykernel', 'nbclient']);
    expect(refused.summary).toContain('no online worker installs packages');
  });
});

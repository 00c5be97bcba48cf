/**
 * A Jupyter notebook's settings surface: its settings cell (the `parameters`-tagged cell, else the
 * first code cell) read with the real Python reader, each name its top level assigns a literal to as
 * a `--set NAME=` override of the notebook (what `python -m chatgpu.notebook` changes), matched
 * against a request and turned into the command's arguments as any override is.
 */
import { describe, expect, it } from 'vitest';
import { applySetting } from '../../builtin/planner/disposeAsks.js';
import { matchSetting } from '../asks/matchAsks.js';
import { parseAsks } from '../asks/parseAsks.js';
import { listSettings } from './listSettings.js';

type Cell = { cell_type: 'code' | 'markdown'; source: string | string[]; tags?: string[] };
function notebook(cells: Cell[]): string {
  return JSON.stringify({
    nbformat: 4,
    nbformat_minor: 5,
    metadata: {},
    cells: cells.map((c, i) => ({
      id: `c${i}`,
      cell_type: c.cell_type,
      metadata: c.tags ? { tags: c.tags } : {},
      source: c.source,
      ...(c.cell_type === 'code' ? { outputs: [], execution_count: null } : {}),
    })),
  });
}

const TRAIN = notebook([
  { cell_type: 'markdown', source: '# Training\nlr = 5 here is prose, not code' },
  {
    cell_type: 'code',
    source: [
      '%matplotlib inline\n',
      '!nvidia-smi\n',
      'import numpy as np\n',
      'lr = 0.1  # learning rate of the optimizer\n',
      'epochs: int = 20\n',
      'width, depth = 64, 3\n',
      'a = b = 2\n',
      'scale = np.sqrt(2.0)\n',
      'for t in range(5):\n',
      '    pass\n',
      'label = "run"\n',
    ],
  },
  { cell_type: 'code', source: 'momentum = 0.9\nsteps = 10\nprint(lr)' },
  // a cell IPython alone can read: skipped (hidden is no setting), the others still count
  { cell_type: 'code', source: 'x = np.zeros(3)\nx?\nhidden = 7' },
  { cell_type: 'code', source: 'steps = 100\nlabel = label.upper()' },
  { cell_type: 'code', source: 'dropout = 0.2\nfor epoch in range(epochs):\n    pass' },
]);

describe('notebook settings', () => {
  it("every code cell's literal assignments, as --set overrides of the notebook, each with its cell; not names another cell assigns again, chained names, loop counts or computed values", async () => {
    const s = await listSettings(
      new Map([
        ['train.ipynb', TRAIN],
        ['other.py', 'x = 1\n'],
      ]),
    );
    const nb = s.settings.filter((x) => x.file === 'train.ipynb');
    expect(nb.map((x) => [x.name, x.kind, x.type, x.default, x.override])).toEqual([
      ['lr', 'config-key', 'float', '0.1', '--set lr='],
      ['epochs', 'config-key', 'int', '20', '--set epochs='],
      ['width', 'config-key', 'int', '64', '--set width='],
      ['depth', 'config-key', 'int', '3', '--set depth='],
      ['momentum', 'config-key', 'float', '0.9', '--set momentum='],
      ['dropout', 'config-key', 'float', '0.2', '--set dropout='],
    ]);
    // label is assigned again (computed) in a later cell, steps in two cells: the runner's change would be undone
    expect(nb.find((x) => x.name === 'lr')).toMatchObject({
      id: 'train.ipynb#lr',
      help: 'learning rate of the optimizer',
      readBy: ['train.ipynb'],
    });
    expect(nb.find((x) => x.name === 'epochs')!.help).toBe('set in cell 2 of the notebook');
    expect(nb.find((x) => x.name === 'momentum')!.help).toBe('set in cell 3 of the notebook');
    expect(nb.find((x) => x.name === 'dropout')!.help).toBe('set in cell 6 of the notebook');
    expect(nb.every((x) => x.span === undefined)).toBe(true); // the runner finds the assignment; the JSON file is never rewritten by span
    expect(s.settings.some((x) => x.id === 'other.py#x')).toBe(true);
    expect(s.problems).toEqual([]);
  });

  it('a parameters-tagged cell is the settings cell (papermill), wherever it is', async () => {
    const nb = notebook([
      { cell_type: 'code', source: 'import numpy as np\nseed = 0' },
      { cell_type: 'code', source: 'alpha = 0.5\nn_samples = 1000', tags: ['parameters'] },
    ]);
    const s = await listSettings(new Map([['sim.ipynb', nb]]), { entry: 'sim.ipynb' });
    expect(s.settings.map((x) => [x.name, x.override])).toEqual([
      ['alpha', '--set alpha='],
      ['n_samples', '--set n_samples='],
    ]);
    expect(s.settings[0]!.help).toBe('set in cell 2 of the notebook');
  });

  it('"run the notebook with lr 0.01" matches the notebook\'s lr and becomes `--set lr=0.01` on the command line', async () => {
    const s = await listSettings(new Map([['train.ipynb', TRAIN]]), { entry: 'train.ipynb' });
    const asks = parseAsks('run the notebook with lr 0.01 for 5 epochs').filter((a) => a.kind === 'setting');
    const matched = asks.map((a) => [a.text, matchSetting(a, s.settings, { entry: 'train.ipynb' })] as const);
    expect(matched.map(([t, m]) => [t, m.status === 'matched' ? m.setting.id : m.status])).toEqual([
      ['lr 0.01', 'train.ipynb#lr'],
      ['5 epochs', 'train.ipynb#epochs'],
    ]);
    const plan = { args: [] as string[], edits: [], environment: [] };
    for (const [, m] of matched)
      if (m.status === 'matched') applySetting({ positionals: 0, read: () => undefined, entry: 'train.ipynb' }, plan, m.setting, m.value);
    expect(plan.args).toEqual(['--set lr=0.01', '--set epochs=5']);
    expect(plan.edits).toEqual([]);
  });

  it('a notebook that is not JSON, has no code cell, or whose first cell is %%bash: a problem line or no settings, the other files still read', async () => {
    const s = await listSettings(
      new Map([
        ['broken.ipynb', '{"cells": [ not json'],
        ['empty.ipynb', notebook([{ cell_type: 'markdown', source: 'just text' }])],
        ['shell.ipynb', notebook([{ cell_type: 'code', source: '%%bash\nLR=3\necho $LR' }])],
        ['noshape.ipynb', '{"cells": 3}'],
        ['large.ipynb', ''],
        ['train.py', 'steps = 10\n'],
      ]),
    );
    expect(s.settings.map((x) => x.id)).toEqual(['train.py#steps']);
    expect(s.problems.map((p) => p.file).sort()).toEqual(['broken.ipynb', 'large.ipynb', 'noshape.ipynb']);
    expect(s.problems.filter((p) => p.file !== 'large.ipynb').every((p) => p.error.startsWith('not a notebook that can be read'))).toBe(
      true,
    );
    expect(s.problems.find((p) => p.file === 'large.ipynb')!.error).toContain('too large to read');
  });
});

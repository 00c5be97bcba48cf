/**
 * The builtin planner's asks rule on hand-made surfaces (what list_settings returns) and the
 * request's asks as parseAsks reads them: each ask honoured by the right change, asked about, or
 * refused naming what the project has.
 */
import { describe, expect, it } from 'vitest';
import type { Setting } from '../../planner/contract.js';
import { parseAsks } from '../../planner/asks/parseAsks.js';
import { disposeAsks, type AskContext, type AskPlan } from './disposeAsks.js';
import { sweepRuns } from './sweepRuns.js';

const TRAIN = ['batch_size = 64', 'max_iters = 5000', 'n_embd = 384  # width', 'dt = 0.1*dx*dx', ''].join('\n');
const constant = (name: string, line: number, col: number, text: string, type: Setting['type'], expression?: string): Setting => ({
  id: `train.py#${name}`,
  name,
  kind: 'constant',
  file: 'train.py',
  type,
  default: text,
  help: null,
  span: { line, col, endLine: line, endCol: col + text.length },
  ...(expression ? { expression } : {}),
});
const flag = (name: string, type: Setting['type'], extra: Partial<Setting> = {}): Setting => ({
  id: `main.py#${name}`,
  name,
  kind: 'flag',
  file: 'main.py',
  type,
  default: null,
  help: null,
  flag: `--${name.replace(/_/g, '-')}`,
  ...extra,
});

const SURFACE: Setting[] = [
  constant('batch_size', 1, 13, '64', 'int'),
  constant('max_iters', 2, 12, '5000', 'int'),
  constant('n_embd', 3, 9, '384', 'int'),
  constant('dt', 4, 5, '0.1', 'float', 'dt = 0.1*dx*dx'),
];

function ctx(request: string, over: Partial<AskContext> = {}): AskContext {
  return {
    request,
    asks: parseAsks(request),
    surface: { entry: 'train.py', settings: SURFACE, problems: [] },
    entry: 'train.py',
    keyValue: false,
    args: [],
    positionals: 0,
    read: (p) => (p === 'train.py' ? TRAIN : undefined),
    uploaded: new Set(['train.py', 'data.csv']),
    runSource: `${TRAIN}\nimport torch\ntorch.save(m, 'outputs/model.pt')\n`,
    checkpoint: 'outputs/model.pt',
    saveFlags: [],
    writes: [],
    thresholds: [],
    hardware: { workload: 'torch-cpu' },
    onlineSummary: '1 CPU worker(s) (python, torch-cpu)',
    capCad: null,
    targets: ['train.py'],
    setupSteps: [],
    answerTo: () => undefined,
    ...over,
  };
}

function planOf(c: AskContext): AskPlan {
  const step = disposeAsks(c);
  if (step.need !== 'none') throw new Error(`expected a plan, got ${JSON.stringify(step)}`);
  return step.plan;
}

describe('disposeAsks', () => {
  it('constants with no flag: one set-settings edit per literal, exactly its span and its old text', () => {
    const p = planOf(ctx('train it for 200 iterations with n_embd 64 and batch size 32'));
    expect(p.edits.map((e) => [e.name, e.line, e.col, e.endCol, e.from, e.to])).toEqual([
      ['max_iters', 2, 12, 16, '5000', '200'],
      ['n_embd', 3, 9, 12, '384', '64'],
      ['batch_size', 1, 13, 15, '64', '32'],
    ]);
    expect(p.dispositions.every((d) => d.status === 'honoured')).toBe(true);
    expect(p.dispositions[0]!.detail).toBe('set-settings: max_iters = 200 in train.py line 2 (was 5000)');
  });

  it('a literal inside an expression says so; a value already there is honoured with no edit', () => {
    const p = planOf(ctx('use dt 0.1'));
    expect(p.edits).toEqual([]);
    expect(p.dispositions).toEqual([expect.objectContaining({ status: 'honoured', detail: 'dt is already 0.1 in train.py' })]);
  });

  it('flags: set in the form the command already has, a switch passed or left out, a list as the option takes it', () => {
    const surface = {
      entry: 'main.py',
      settings: [
        flag('epochs', 'int'),
        flag('lr', 'float'),
        flag('cuda', 'bool', { action: 'store_true' }),
        flag('seeds', 'list', { nargs: '+' }),
        flag('number', 'list', { action: 'append' }),
      ],
      problems: [],
    };
    const p = planOf(ctx('train for 3 epochs with lr 0.01', { surface, entry: 'main.py', args: ['--epochs', '10', '--cuda'] }));
    expect(p.args).toEqual(['--epochs', '3', '--cuda', '--lr', '0.01']);
    const off = {
      ...ctx('cuda off', { surface, entry: 'main.py', args: ['--cuda'] }),
      asks: [{ id: 'a1', kind: 'setting' as const, text: 'cuda off', phrase: 'cuda', value: 'off' }],
    };
    expect(planOf(off).args).toEqual([]);
    const list = {
      ...ctx('seeds 1 2 3', { surface, entry: 'main.py' }),
      asks: [{ id: 'a1', kind: 'setting' as const, text: 'seeds 1 2 3', phrase: 'seeds', values: ['1', '2', '3'] }],
    };
    expect(planOf(list).args).toEqual(['--seeds', '1', '2', '3']);
    const repeated = {
      ...list,
      asks: [{ id: 'a1', kind: 'setting' as const, text: 'numbers 1.5, 2 and 3', phrase: 'number', values: ['1.5', '2', '3'] }],
      args: ['--number', '1.5', '-v'],
    };
    expect(planOf(repeated).args).toEqual(['-v', '--number', '1.5', '--number', '2', '--number', '3']);
    expect(planOf({ ...list, args: ['--seeds', '7', '8', '--lr', '1'] }).args).toEqual(['--lr', '1', '--seeds', '1', '2', '3']);
  });

  it('a configurator takes --name=value; an environment variable goes in the plan', () => {
    const surface = {
      entry: 'train.py',
      settings: [
        {
          id: 'train.py#n_layer',
          name: 'n_layer',
          kind: 'configurator' as const,
          file: 'train.py',
          type: 'int' as const,
          default: '12',
          help: null,
          flag: '--n_layer',
        },
        {
          id: 'train.py#env:LR',
          name: 'LR',
          kind: 'env' as const,
          file: 'train.py',
          type: 'float' as const,
          default: '3e-4',
          help: null,
          env: 'LR',
        },
      ],
      problems: [],
    };
    const p = planOf(ctx('n_layer 2 and LR 0.001', { surface, keyValue: true, args: ['config/x.py', '--n_layer=6'] }));
    expect(p.args).toEqual(['config/x.py', '--n_layer=2']);
    expect(p.environment).toEqual([{ name: 'LR', value: '0.001' }]);
  });

  it('refuses a setting the project does not have, naming the ones it does', () => {
    const p = planOf(ctx('train with weight decay 0.1'));
    expect(p.dispositions).toEqual([expect.objectContaining({ status: 'refused', kind: 'setting' })]);
    expect(p.dispositions[0]!.detail).toMatch(/^train\.py has no setting for "weight decay"; its settings are: .*batch_size=64/);
  });

  it('asks which one when two places fit, with where each is; the answer picks it; "for both" sets both', () => {
    const two = [constant('max_depth', 1, 12, '5', 'int'), { ...constant('max_depth', 2, 12, '5', 'int'), id: 'train.py#max_depth@2:12' }];
    const surface = { entry: 'train.py', settings: two, problems: [] };
    const text = 'max_depth = 5\nmax_depth = 5\n';
    const asked = disposeAsks(ctx('set max_depth to 3', { surface, read: () => text }));
    expect(asked).toMatchObject({ need: 'ask', question: expect.stringContaining('By "max_depth to 3", which setting do you mean?') });
    const choices = (asked as { choices: string[] }).choices;
    expect(choices).toEqual(['max_depth (constant in train.py line 1)', 'max_depth (constant in train.py line 2)']);
    const answered = planOf(
      ctx('set max_depth to 3', {
        surface,
        read: () => text,
        answerTo: (m) => (m.startsWith('By "max_depth') ? `Q: ${choices[1]}` : undefined),
      }),
    );
    expect(answered.edits.map((e) => e.line)).toEqual([2]);
    const both = planOf(ctx('set max_depth to 3 for both models', { surface, read: () => text }));
    expect(both.edits.map((e) => e.line)).toEqual([1, 2]);
  });

  it('reads a file it needs before rewriting a literal in it', () => {
    expect(disposeAsks(ctx('batch size 32', { read: () => undefined }))).toEqual({ need: 'read', path: 'train.py' });
  });

  it('outputs: figures of a plt.show() program, what it prints, the model, a file it never writes, an input', () => {
    const shows = { runSource: 'import matplotlib.pyplot as plt\nplt.plot([1])\nplt.show()\n' };
    const figs = planOf(ctx('give me the figures', shows));
    expect(figs.environment).toEqual([{ name: 'CHATGPU_FIGURES', value: 'outputs/figures' }]);
    expect(figs.required).toEqual(['outputs/figures/']);
    expect(planOf(ctx('give me the figures')).dispositions[0]).toMatchObject({
      status: 'refused',
      detail: 'train.py draws no figures (it does not use matplotlib)',
    });
    const printed = planOf(ctx("give me each run's output"));
    expect(printed.environment).toEqual([{ name: 'CHATGPU_STDOUT_FILE', value: 'outputs/stdout.txt' }]);
    expect(planOf(ctx('give me the model')).dispositions[0]).toMatchObject({
      status: 'honoured',
      detail: expect.stringContaining('outputs/model.pt is collected'),
    });
    expect(planOf(ctx('give me the model', { checkpoint: null, runSource: 'print(1)' })).dispositions[0]).toMatchObject({
      status: 'refused',
    });
    expect(planOf(ctx('give me data.csv', { runSource: 'print(1)' })).dispositions[0]).toMatchObject({
      status: 'refused',
      detail: "data.csv is one of the project's inputs, not something the run makes",
    });
  });

  it('"save the model as X": the save flag points into outputs/ and that is the checkpoint', () => {
    const p = planOf(
      ctx('save the model as lm-small.pt', { saveFlags: [{ flag: '--save', default: 'model.pt' }], args: ['--save', 'outputs/model.pt'] }),
    );
    expect(p.args).toEqual(['--save', 'outputs/lm-small.pt']);
    expect(p.checkpoint).toBe('outputs/lm-small.pt');
  });

  it('thresholds, hardware, limits and setup', () => {
    const p = planOf(ctx('accuracy above 0.9 on CPU within 30 minutes'));
    expect(p.metrics).toEqual([{ name: 'accuracy', op: '>', value: 0.9 }]);
    expect(p.timeoutSec).toBe(1800);
    expect(p.dispositions.map((d) => d.status)).toEqual(['honoured', 'honoured', 'honoured']);
    expect(planOf(ctx('on an NVIDIA GPU')).dispositions[0]).toMatchObject({
      status: 'refused',
      detail: expect.stringContaining('--hardware nvidia'),
    });
    expect(planOf(ctx('under $2', { capCad: 2 })).dispositions[0]).toMatchObject({ status: 'honoured' });
    expect(planOf(ctx('under $2')).dispositions[0]).toMatchObject({ status: 'refused', detail: expect.stringContaining('--cap 2') });
  });

  it('"run the sweep" with no setting named is the project\'s own sweep, handed to the caller', () => {
    const p = planOf(ctx('run the sweep'));
    expect(p.ownSweep.map((a) => a.text)).toEqual(['sweep']);
    expect(p.dispositions).toEqual([]);
  });

  it('a sweep is handed to the caller with its values; one without values asks for them', () => {
    const p = planOf(ctx('sweep dt over 0.1, 0.05 and 0.025'));
    expect(p.sweeps.map((w) => [w.setting.name, w.values])).toEqual([['dt', ['0.1', '0.05', '0.025']]]);
    const noValues = { ...ctx('sweep dt'), asks: [{ id: 'a1', kind: 'sweep' as const, text: 'sweep dt', phrase: 'dt' }] };
    expect(disposeAsks(noValues)).toMatchObject({
      need: 'ask',
      question: expect.stringContaining('Which values of dt should the sweep run?'),
    });
  });
});

describe('sweepRuns', () => {
  const base = {
    runner: 'python train.py',
    args: ['--steps', '100'],
    boundedArgs: ['--steps', '20'],
    ctx: { positionals: 0, read: (p: string) => (p === 'train.py' ? TRAIN : undefined), entry: 'train.py' },
  };

  it('a literal: each run sets it through chatgpu.sweep --set (its span and old text), one after another on one worker, then the table', () => {
    const r = sweepRuns({ ...base, setting: SURFACE[3]!, values: ['0.1', '0.05'], workers: 1, shardable: true });
    if (!('command' in r)) throw new Error(JSON.stringify(r));
    const from = Buffer.from('0.1').toString('base64url');
    expect(r.command).toBe(
      `python -m chatgpu.sweep run --name dt --value 0.1 --set train.py:4:5:4:8:${from} -- python train.py --steps 100 && python -m chatgpu.sweep run --name dt --value 0.05 --set train.py:4:5:4:8:${from} -- python train.py --steps 100 && python -m chatgpu.sweep table . outputs/sweep.csv`,
    );
    expect(r.shards).toBeNull();
  });

  it('a flag over several workers: contiguous groups in value order, rows merged, checked on one value per shard with the bounded workload', () => {
    const r = sweepRuns({ ...base, setting: flag('lr', 'float'), values: ['0.3', '0.1', '0.2', '0.4'], workers: 2, shardable: true });
    if (!('command' in r) || !r.shards) throw new Error(JSON.stringify(r));
    expect(r.shards.shards.map((s) => s.command)).toEqual([
      'python -m chatgpu.sweep run --name lr --value 0.1 -- python train.py --steps 100 --lr 0.1 && python -m chatgpu.sweep run --name lr --value 0.2 -- python train.py --steps 100 --lr 0.2 && python -m chatgpu.sweep table . outputs/sweep.csv',
      'python -m chatgpu.sweep run --name lr --value 0.3 -- python train.py --steps 100 --lr 0.3 && python -m chatgpu.sweep run --name lr --value 0.4 -- python train.py --steps 100 --lr 0.4 && python -m chatgpu.sweep table . outputs/sweep.csv',
    ]);
    expect(r.shards.check.shards).toEqual([
      'python -m chatgpu.sweep run --name lr --value 0.1 -- python train.py --steps 20 --lr 0.1 && python -m chatgpu.sweep table . outputs/sweep.csv',
      'python -m chatgpu.sweep run --name lr --value 0.3 -- python train.py --steps 20 --lr 0.3 && python -m chatgpu.sweep table . outputs/sweep.csv',
    ]);
    expect(r.shards.merge).toEqual({ kind: 'rows', file: 'outputs/sweep.csv', fields: [] });
    expect(r.shards.total).toBe(4);
  });

  it('refuses an environment variable (the same for a whole task) and reads the file of a literal first', () => {
    expect(
      sweepRuns({ ...base, setting: { ...flag('LR', 'float'), kind: 'env', env: 'LR' }, values: ['1', '2'], workers: 1, shardable: true }),
    ).toMatchObject({ refused: expect.stringContaining('environment variable') });
    expect(
      sweepRuns({
        ...base,
        ctx: { ...base.ctx, read: () => undefined },
        setting: SURFACE[3]!,
        values: ['1', '2'],
        workers: 1,
        shardable: true,
      }),
    ).toEqual({ need: 'read', path: 'train.py' });
  });
});

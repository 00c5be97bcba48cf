/**
 * The settings surface on hand-made sources in every supported form, and on bad input: each
 * unreadable file is one problem line, the others are still read, nothing crashes or hangs.
 * Real Python (the API machine's), real parsers; no fixtures but the texts below.
 */
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Setting, SettingsSurface, Span } from '../contract.js';
import { matchSetting } from '../asks/matchAsks.js';
import { parseAsks } from '../asks/parseAsks.js';
import { listSettings, MAX_CONFIG_KEYS, MAX_PY_CHARS } from './listSettings.js';

const lines = (...l: string[]) => `${l.join('\n')}\n`;

/** The text a span covers (columns are UTF-8 bytes, as Python's ast gives them). */
function spanText(text: string, s: Span): string {
  const ls = text.split('\n').map((l) => Buffer.from(l, 'utf8'));
  if (s.line === s.endLine) return ls[s.line - 1]!.subarray(s.col, s.endCol).toString('utf8');
  const parts = [ls[s.line - 1]!.subarray(s.col).toString('utf8')];
  for (let i = s.line; i < s.endLine - 1; i++) parts.push(ls[i]!.toString('utf8'));
  parts.push(ls[s.endLine - 1]!.subarray(0, s.endCol).toString('utf8'));
  return parts.join('\n');
}

function byId(surface: SettingsSurface, id: string): Setting {
  const s = surface.settings.find((x) => x.id === id);
  if (!s) throw new Error(`no setting ${id}; have ${surface.settings.map((x) => x.id).join(', ')}`);
  return s;
}

const ids = (surface: SettingsSurface) => surface.settings.map((s) => s.id).sort();

describe('command-line parsers', () => {
  it('argparse: flags with every field, positionals in order', async () => {
    const files = new Map([
      [
        'train.py',
        lines(
          'import argparse',
          'def get_parser():',
          '    p = argparse.ArgumentParser()',
          '    p.add_argument("data", help="the corpus folder")',
          '    p.add_argument("--epochs", "-e", type=int, default=10, help="passes (over the data)")',
          '    p.add_argument("--lr", type=float, default=3e-4)',
          '    p.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])',
          '    p.add_argument("--opt", choices=["sgd", "adam"], default="adam")',
          '    p.add_argument("--cuda", action="store_true", help="use CUDA")',
          '    p.add_argument("--no-save", dest="save", action="store_false")',
          '    p.add_argument("out", nargs="?", default="model.pt")',
          '    return p',
          'if __name__ == "__main__":',
          '    args = get_parser().parse_args()',
        ),
      ],
    ]);
    const s = await listSettings(files);
    expect(s.problems).toEqual([]);
    expect(byId(s, 'train.py#epochs')).toMatchObject({
      kind: 'flag',
      flag: '--epochs',
      aliases: ['-e'],
      type: 'int',
      default: '10',
      help: 'passes (over the data)',
      file: 'train.py',
    });
    expect(byId(s, 'train.py#lr')).toMatchObject({ type: 'float', default: '3e-4' });
    expect(byId(s, 'train.py#seeds')).toMatchObject({ type: 'list', nargs: '+', default: '[1, 2, 3]' });
    expect(byId(s, 'train.py#opt')).toMatchObject({ type: 'str', choices: ['sgd', 'adam'], default: 'adam' });
    expect(byId(s, 'train.py#cuda')).toMatchObject({ type: 'bool', action: 'store_true', default: 'False', help: 'use CUDA' });
    expect(byId(s, 'train.py#save')).toMatchObject({ flag: '--no-save', action: 'store_false', default: 'True' });
    expect(byId(s, 'train.py#data')).toMatchObject({ kind: 'positional', position: 0, help: 'the corpus folder' });
    expect(byId(s, 'train.py#out')).toMatchObject({ kind: 'positional', position: 1, nargs: '?', default: 'model.pt' });
  });

  it('click options and arguments, typer signatures (Annotated too), fire functions and classes, absl flags', async () => {
    const files = new Map([
      [
        'cli.py',
        lines(
          'import click',
          '@click.command()',
          '@click.argument("src")',
          '@click.option("--epochs", "-n", default=3, help="passes")',
          '@click.option("--opt", type=click.Choice(["sgd", "adam"]), default="adam")',
          '@click.option("--verbose/--quiet", default=False)',
          '@click.option("--tag", multiple=True)',
          'def main(src, epochs, opt, verbose, tag):',
          '    pass',
        ),
      ],
      [
        'ty.py',
        lines(
          'import typer',
          'from typing import Annotated',
          'app = typer.Typer()',
          '@app.command()',
          'def train(data: str, epochs: int = 3, learning_rate: float = typer.Option(0.1, "--lr", help="step size"),',
          '          batch: Annotated[int, typer.Option(help="batch size")] = 32, fast: bool = False):',
          '    pass',
        ),
      ],
      [
        'fi.py',
        lines('import fire', 'def run(steps=100, lr=0.01, name="x"):', '    pass', 'if __name__ == "__main__":', '    fire.Fire(run)'),
      ],
      ['fc.py', lines('from fire import Fire', 'class Sim:', '    def __init__(self, n, dt=0.1):', '        pass', 'Fire(Sim)')],
      [
        'tl.py',
        lines(
          'import typer',
          'from typing import List',
          'def main(number: List[float] = typer.Option([])):',
          '    pass',
          'typer.run(main)',
        ),
      ],
      [
        'ab.py',
        lines(
          'from absl import app, flags',
          'FLAGS = flags.FLAGS',
          'flags.DEFINE_integer("epochs", 10, "passes over the data")',
          'flags.DEFINE_float("lr", 1e-3, help="step size")',
          'flags.DEFINE_boolean("fast", False, "skip evaluation")',
          'flags.DEFINE_enum("opt", "adam", ["sgd", "adam"], "optimizer")',
          'flags.DEFINE_list("layers", ["64", "64"], "widths")',
        ),
      ],
    ]);
    const s = await listSettings(files);
    expect(s.problems).toEqual([]);
    expect(byId(s, 'cli.py#src')).toMatchObject({ kind: 'positional', position: 0 });
    expect(byId(s, 'cli.py#epochs')).toMatchObject({
      kind: 'flag',
      flag: '--epochs',
      aliases: ['-n'],
      type: 'int',
      default: '3',
      help: 'passes',
    });
    expect(byId(s, 'cli.py#opt')).toMatchObject({ choices: ['sgd', 'adam'], type: 'str' });
    expect(byId(s, 'cli.py#verbose')).toMatchObject({ type: 'bool', default: 'False' });
    expect(byId(s, 'cli.py#tag')).toMatchObject({ type: 'list' });
    expect(byId(s, 'ty.py#data')).toMatchObject({ kind: 'positional', type: 'str' });
    expect(byId(s, 'ty.py#epochs')).toMatchObject({ kind: 'flag', flag: '--epochs', type: 'int', default: '3' });
    expect(byId(s, 'ty.py#learning_rate')).toMatchObject({ flag: '--lr', type: 'float', default: '0.1', help: 'step size' });
    expect(byId(s, 'ty.py#batch')).toMatchObject({ flag: '--batch', type: 'int', default: '32', help: 'batch size' });
    expect(byId(s, 'ty.py#fast')).toMatchObject({ type: 'bool', default: 'False' });
    expect(byId(s, 'fi.py#steps')).toMatchObject({ kind: 'flag', flag: '--steps', type: 'int', default: '100' });
    expect(byId(s, 'fi.py#name')).toMatchObject({ type: 'str', default: 'x' });
    expect(byId(s, 'fc.py#n')).toMatchObject({ kind: 'positional' });
    expect(byId(s, 'fc.py#dt')).toMatchObject({ kind: 'flag', default: '0.1' });
    expect(byId(s, 'tl.py#number')).toMatchObject({ kind: 'flag', flag: '--number', type: 'list' });
    expect(byId(s, 'ab.py#epochs')).toMatchObject({
      kind: 'flag',
      flag: '--epochs',
      type: 'int',
      default: '10',
      help: 'passes over the data',
    });
    expect(byId(s, 'ab.py#lr')).toMatchObject({ type: 'float', default: '1e-3', help: 'step size' });
    expect(byId(s, 'ab.py#fast')).toMatchObject({ type: 'bool', default: 'False' });
    expect(byId(s, 'ab.py#opt')).toMatchObject({ type: 'str', default: 'adam', choices: ['sgd', 'adam'], help: 'optimizer' });
    expect(byId(s, 'ab.py#layers')).toMatchObject({ type: 'list', default: '["64", "64"]' });
  });
});

describe('sys.argv', () => {
  it("a script's own arguments are positionals named for their variables, typed and defaulted where the code says", async () => {
    const text = lines(
      'import sys',
      'n = int(sys.argv[1]) if len(sys.argv) > 1 else 100',
      'def main():',
      '    out = sys.argv[2]',
      '    scale = float(sys.argv[3])',
      '    rest = sys.argv[1:]',
      'print(sys.argv[1])',
    );
    const s = await listSettings(new Map([['run.py', text]]));
    expect(s.settings.filter((x) => x.kind === 'positional')).toEqual([
      expect.objectContaining({ id: 'run.py#n', position: 0, type: 'int', default: '100' }),
      expect.objectContaining({ id: 'run.py#out', position: 1, type: null, default: null, scope: 'main()' }),
      expect.objectContaining({ id: 'run.py#scale', position: 2, type: 'float' }),
    ]);
  });
});

describe('settings classes', () => {
  it('dataclass fields are constants with spans; read by tyro or HfArgumentParser they are flags', async () => {
    const text = lines(
      'from dataclasses import dataclass, field',
      'import tyro',
      'from transformers import HfArgumentParser',
      '@dataclass',
      'class GPTConfig:',
      '    n_layer: int = 12  # layers',
      '    dropout: float = field(default=0.1)',
      '    tags: list = field(default_factory=list)',
      '@dataclass',
      'class Args:',
      '    learning_rate: float = 2.5e-4',
      '@dataclass',
      'class DataArguments:',
      '    max_seq_length: int = 128',
      'class Helper:',
      '    x = 3',
      'if __name__ == "__main__":',
      '    args = tyro.cli(Args)',
      '    data, = HfArgumentParser((DataArguments,)).parse_args_into_dataclasses()',
    );
    const s = await listSettings(new Map([['t.py', text]]));
    expect(byId(s, 't.py#GPTConfig.n_layer')).toMatchObject({
      kind: 'constant',
      type: 'int',
      default: '12',
      help: 'layers',
      scope: 'class GPTConfig',
    });
    expect(spanText(text, byId(s, 't.py#GPTConfig.dropout').span!)).toBe('0.1');
    expect(byId(s, 't.py#learning_rate')).toMatchObject({ kind: 'flag', flag: '--learning-rate', type: 'float', default: '2.5e-4' });
    expect(byId(s, 't.py#max_seq_length')).toMatchObject({ kind: 'flag', flag: '--max_seq_length', type: 'int', default: '128' });
    expect(ids(s).some((i) => i.includes('tags') || i.includes('Helper'))).toBe(false);
  });
});

describe('configs built in code (CfgNode, ConfigDict)', () => {
  const trainer = lines(
    'from utils import CfgNode as CN',
    'class Trainer:',
    '    @staticmethod',
    '    def get_default_config():',
    '        C = CN()',
    '        C.max_iters = None',
    '        C.batch_size = 64  # per step',
    '        C.learning_rate = 3e-4',
    '        return C',
  );
  const files = new Map([
    ['lib/trainer.py', trainer],
    [
      'projects/run.py',
      lines(
        'import sys',
        'from lib.trainer import Trainer',
        'def get_config():',
        '    C = CN()',
        '    C.system = CN()',
        '    C.system.seed = 3407',
        '    C.trainer = Trainer.get_default_config()',
        '    C.trainer.learning_rate = 5e-4',
        '    return C',
        'if __name__ == "__main__":',
        '    config = get_config()',
        '    config.merge_from_args(sys.argv[1:])',
      ),
    ],
    ['other.py', lines('def get_config():', '    c = ConfigDict()', '    c.lr = 0.1', '    return c')],
  ]);

  it('the root config follows its includes into other files; a later literal wins; merge_from_args makes them --path=value settings', async () => {
    const s = await listSettings(files);
    expect(s.problems).toEqual([]);
    expect(byId(s, 'projects/run.py#system.seed')).toMatchObject({
      kind: 'configurator',
      flag: '--system.seed',
      default: '3407',
      scope: 'get_config()',
    });
    const iters = byId(s, 'lib/trainer.py#trainer.max_iters');
    expect(iters).toMatchObject({
      kind: 'configurator',
      flag: '--trainer.max_iters',
      default: null,
      scope: 'Trainer.get_default_config()',
    });
    expect(spanText(trainer, iters.span!)).toBe('None');
    expect(byId(s, 'lib/trainer.py#trainer.batch_size')).toMatchObject({ type: 'int', default: '64', help: 'per step' });
    expect(byId(s, 'projects/run.py#trainer.learning_rate').default).toBe('5e-4');
    expect(s.settings.some((x) => x.id === 'lib/trainer.py#trainer.learning_rate')).toBe(false);
    expect(byId(s, 'other.py#lr')).toMatchObject({ kind: 'constant', default: '0.1' }); // no merge_from_args: a rewrite
    expect(s.settings.some((x) => x.name.startsWith('C.'))).toBe(false);
  });

  it("narrowed to the entry point, its config's settings are there wherever they are written", async () => {
    const s = await listSettings(files, { entry: 'projects/run.py' });
    expect(ids(s)).toEqual([
      'lib/trainer.py#trainer.batch_size',
      'lib/trainer.py#trainer.max_iters',
      'projects/run.py#system.seed',
      'projects/run.py#trainer.learning_rate',
    ]);
  });
});

describe('configurator globals and their config modules', () => {
  const train = lines(
    'import torch',
    "out_dir = 'out'",
    "device = 'cuda'",
    'max_iters = 5000  # total iterations',
    'n_layer = 6',
    'learning_rate = 1e-3',
    'gradient_accumulation_steps = 5 * 8',
    "dtype = 'bfloat16' if torch.cuda.is_available() else 'float32'",
    '_private = 3',
    'config_keys = [k for k in globals()]',
    "exec(open('configurator.py').read())",
    'tokens = batch * 2',
    'after = 7',
    'best = 1e9',
    'if ddp:',
    "    device = 'cuda:0'",
    'for step in range(max_iters):',
    '    best = min(best, step)',
  );
  const files = new Map([
    ['train.py', train],
    ['configurator.py', lines('import sys', 'for arg in sys.argv[1:]:', '    pass')],
    [
      'config/train_small.py',
      lines(
        'import time',
        "out_dir = 'out-small'",
        'max_iters = 200',
        'n_layer = 2',
        'gradient_accumulation_steps = 4 * 8',
        'new_key = 5',
        "wandb_run_name = 'run' + str(time.time())",
      ),
    ],
    ['config/other.py', lines('unrelated = 1')],
  ]);

  it('globals before the exec line are --name=value settings with their spans; config modules are config-keys read by the script', async () => {
    const s = await listSettings(files);
    expect(s.problems).toEqual([]);
    const iters = byId(s, 'train.py#max_iters');
    expect(iters).toMatchObject({
      kind: 'configurator',
      flag: '--max_iters',
      type: 'int',
      default: '5000',
      help: 'total iterations',
      scope: 'module',
    });
    expect(spanText(train, iters.span!)).toBe('5000');
    expect(byId(s, 'train.py#gradient_accumulation_steps')).toMatchObject({ kind: 'configurator', type: 'int', default: '5 * 8' });
    expect(spanText(train, byId(s, 'train.py#gradient_accumulation_steps').span!)).toBe('5 * 8');
    expect(byId(s, 'train.py#dtype')).toMatchObject({ kind: 'configurator', type: 'str' });
    expect(s.settings.some((x) => x.name === '_private' || x.name === 'config_keys')).toBe(false);
    expect(byId(s, 'train.py#after')).toMatchObject({ kind: 'constant', default: '7' });
    expect(byId(s, 'config/train_small.py#max_iters')).toMatchObject({
      kind: 'config-key',
      format: 'python',
      default: '200',
      readBy: ['train.py'],
      override: '--max_iters=',
    });
    expect(byId(s, 'config/train_small.py#gradient_accumulation_steps')).toMatchObject({ kind: 'config-key', default: '4 * 8' });
    expect(byId(s, 'config/train_small.py#new_key')).toMatchObject({ kind: 'config-key', default: '5' });
    expect(byId(s, 'config/train_small.py#new_key').override).toBeUndefined(); // not a global of train.py: --new_key=… would be refused
    expect(s.settings.some((x) => x.id === 'config/train_small.py#wandb_run_name')).toBe(false);
    // changed by the program later (a block), still a global the command line sets
    expect(byId(s, 'train.py#device')).toMatchObject({ kind: 'configurator', default: 'cuda' });
    expect(s.settings.some((x) => x.name === 'best')).toBe(false); // state after the exec line
    // a module of assignments that sets none of the script's globals is not its config
    expect(byId(s, 'config/other.py#unrelated').kind).toBe('constant');
  });

  it('narrowed to the script: its globals and its config modules, not the unrelated module', async () => {
    const s = await listSettings(files, { entry: 'train.py' });
    expect(s.entry).toBe('train.py');
    expect(ids(s)).toContain('config/train_small.py#n_layer');
    expect(ids(s)).toContain('train.py#n_layer');
    expect(ids(s).some((i) => i.startsWith('config/other.py'))).toBe(false);
  });
});

describe('module constants', () => {
  const src = lines(
    'import numpy as np',
    'LR = 3e-4  # learning rate',
    'EPOCHS = 10',
    'layers = [64, 64]',
    'a, b = 1, -2.5',
    'lr2: float = 3e-4',
    'dx = 0.5',
    'dt = 0.1*dx*dx',
    'counter = 0',
    'counter += 1',
    'history = []',
    'cfg = {"model": {"hidden": 128}, "lr": 0.01, "lr": 0.02}',
    'opt = make(params, lr=1e-3)',
    'x = data[:, 3]',
    'label = "a" + name',
    'grid = np.linspace(0, 1, 100)',
    'SIZE = 2**10',
    'EPOCHS = 12',
    'def helper():',
    '    inner = 5',
    'def main():',
    '    steps = 100',
    '    estimate = 4 * share',
    '    w = np.zeros(256)',
    '    for i in range(steps): pass',
    'if __name__ == "__main__":',
    '    warmup = 50',
    '    main()',
  );
  const files = new Map([['sim.py', src]]);

  it('literals (unpacked, annotated, lists, dict keys), the last assignment winning, with exact spans', async () => {
    const s = await listSettings(files);
    expect(s.problems).toEqual([]);
    expect(byId(s, 'sim.py#LR')).toMatchObject({
      kind: 'constant',
      type: 'float',
      default: '3e-4',
      help: 'learning rate',
      scope: 'module',
    });
    expect(byId(s, 'sim.py#EPOCHS')).toMatchObject({ default: '12', span: { line: 18 } });
    expect(byId(s, 'sim.py#SIZE')).toMatchObject({ type: 'int', default: '2**10' }); // numbers and operators only: one setting
    expect(byId(s, 'sim.py#layers')).toMatchObject({ type: 'list', default: '[64, 64]' });
    expect(byId(s, 'sim.py#a').default).toBe('1');
    expect(byId(s, 'sim.py#b')).toMatchObject({ type: 'float', default: '-2.5' });
    expect(byId(s, 'sim.py#lr2')).toMatchObject({ type: 'float', default: '3e-4' });
    expect(byId(s, 'sim.py#cfg.model.hidden')).toMatchObject({ type: 'int', default: '128' });
    expect(byId(s, 'sim.py#cfg.lr').default).toBe('0.02');
    for (const st of s.settings.filter((x) => x.span)) expect(spanText(src, st.span!)).toBe(st.default);
  });

  it('a number inside an expression is one constant at its literal, with the statement', async () => {
    const s = await listSettings(files);
    const dt = byId(s, 'sim.py#dt@8:5');
    expect(dt).toMatchObject({
      name: 'dt',
      kind: 'constant',
      type: 'float',
      default: '0.1',
      expression: 'dt = 0.1*dx*dx',
      span: { line: 8, col: 5, endLine: 8, endCol: 8 },
    });
    expect(byId(s, 'sim.py#lr@13:22')).toMatchObject({
      name: 'lr',
      default: '1e-3',
      help: 'lr= of make in opt',
      expression: 'opt = make(params, lr=1e-3)',
    });
    expect(s.settings.filter((x) => x.name === 'grid').map((x) => x.default)).toEqual(['100']); // 0 and 1 are not settings
  });

  it('no state, no strings inside expressions, no subscripts; main() and the main guard are read, other functions are not', async () => {
    const s = await listSettings(files);
    const names = new Set(s.settings.map((x) => x.name));
    for (const n of ['counter', 'history', 'x', 'label', 'inner', 'estimate', 'i']) expect(names.has(n), n).toBe(false);
    expect(byId(s, 'sim.py#steps')).toMatchObject({ scope: 'main()', default: '100' }); // read by the loop, not changed by it
    expect(byId(s, 'sim.py#warmup')).toMatchObject({ scope: 'main-guard', default: '50' });
    expect(byId(s, 'sim.py#w@24:17')).toMatchObject({ scope: 'main()', default: '256' });
  });

  it('spans are UTF-8 byte columns: exact on a line with non-ASCII text before the literal', async () => {
    const text = lines('α = 0.25; name = "héllo"; β = 2 * α * 0.5', 'label = "naïve"  # é');
    const s = await listSettings(new Map([['u.py', text]]));
    expect(byId(s, 'u.py#α').span).toEqual({ line: 1, col: 5, endLine: 1, endCol: 9 });
    expect(spanText(text, byId(s, 'u.py#name').span!)).toBe('"héllo"');
    expect(byId(s, 'u.py#name').default).toBe('héllo');
    const beta = s.settings.filter((x) => x.name === 'β').map((x) => spanText(text, x.span!));
    expect(beta).toEqual(['2', '0.5']);
    expect(spanText(text, byId(s, 'u.py#label').span!)).toBe('"naïve"');
    expect(byId(s, 'u.py#label').help).toBe('é');
  });

  it('every literal of every expression counts; a literal is replaced by a later literal or a value computed without it', async () => {
    const text = lines(
      'net = GCN(nclass=labels.max() + 1, nhid=2 * 8)',
      'km = KMeans(n_init=4)',
      'km = KMeans(n_init=10, init="random")',
      'X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.5)',
      'lr = 0.1',
      'lr = lr * 0.5',
      'model = None',
      'model = Net()',
    );
    const s = await listSettings(new Map([['e.py', text]]));
    expect(s.settings.filter((x) => x.name === 'n_init').map((x) => [x.id, x.default])).toEqual([
      ['e.py#n_init@2:19', '4'],
      ['e.py#n_init@3:19', '10'],
    ]);
    // a number in arithmetic passed by keyword is not named by it; 1 there is structure
    expect(s.settings.filter((x) => x.name === 'net').map((x) => [x.default, x.help])).toEqual([
      ['2', null],
      ['8', null],
    ]);
    expect(byId(s, 'e.py#test_size@4:68')).toMatchObject({
      default: '0.5',
      help: 'test_size= of train_test_split in X_train, X_test, y_train, y_test',
    });
    expect(s.settings.filter((x) => x.name === 'lr').map((x) => x.default)).toEqual(['0.1', '0.5']);
    expect(s.settings.some((x) => x.name === 'model')).toBe(false);
  });

  it("a file that starts with a byte-order mark is read, its first line's spans counting the mark", async () => {
    const text = '\ufeffLR = 0.1\nN = 3\n';
    const s = await listSettings(new Map([['bom.py', text]]));
    expect(s.problems).toEqual([]);
    expect(byId(s, 'bom.py#LR').span).toEqual({ line: 1, col: 8, endLine: 1, endCol: 11 });
    expect(spanText(text, byId(s, 'bom.py#LR').span!)).toBe('0.1');
    expect(spanText(text, byId(s, 'bom.py#N').span!)).toBe('3');
  });

  it('a constant named like a flag of its file gets a positional id', async () => {
    const text = lines('import argparse', 'lr = 0.1', 'p = argparse.ArgumentParser()', 'p.add_argument("--lr", type=float, default=lr)');
    const s = await listSettings(new Map([['t.py', text]]));
    expect(ids(s)).toEqual(['t.py#lr', 't.py#lr@2:5']);
    expect(byId(s, 't.py#lr').kind).toBe('flag');
  });
});

describe('the names and help a user would use', () => {
  it('a literal passed by keyword is named by its keyword, the call and the variable in its help; every place its own id', async () => {
    const text = lines(
      'from sklearn import svm',
      'clf = svm.SVC(gamma=0.001)  # a support vector classifier',
      'X_train, X_test, y_train, y_test = train_test_split(data, digits.target, test_size=0.5, shuffle=False)',
      'kmeans = KMeans(init="k-means++", n_clusters=n_digits, n_init=4, random_state=0)',
      'kmeans = KMeans(init="random", n_clusters=n_digits, n_init=4, random_state=0)',
      'kmeans = KMeans(init="k-means++", n_clusters=n_digits, n_init=4)',
      'classifiers = [',
      '    KNeighborsClassifier(3),',
      '    DecisionTreeClassifier(max_depth=5),',
      '    RandomForestClassifier(max_depth=5, n_estimators=10, max_features=1),',
      ']',
      'def main():',
      '    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)',
    );
    const s = await listSettings(new Map([['k.py', text]]));
    expect(s.problems).toEqual([]);
    expect(byId(s, 'k.py#gamma@2:20')).toMatchObject({
      name: 'gamma',
      kind: 'constant',
      type: 'float',
      default: '0.001',
      expression: 'clf = svm.SVC(gamma=0.001)',
      help: 'gamma= of svm.SVC in clf; a support vector classifier',
    });
    expect(byId(s, 'k.py#test_size@3:83')).toMatchObject({
      name: 'test_size',
      default: '0.5',
      help: 'test_size= of train_test_split in X_train, X_test, y_train, y_test',
    });
    expect(s.settings.some((x) => x.name === 'shuffle')).toBe(false); // a boolean inside an expression is not a setting
    expect(s.settings.filter((x) => x.name === 'n_init').map((x) => [x.id, x.default])).toEqual([
      ['k.py#n_init@4:62', '4'],
      ['k.py#n_init@5:59', '4'],
      ['k.py#n_init@6:62', '4'],
    ]);
    expect(s.settings.filter((x) => x.name === 'random_state')).toHaveLength(2);
    expect(s.settings.filter((x) => x.name === 'max_depth').map((x) => [x.id, x.help])).toEqual([
      ['k.py#max_depth@9:37', 'max_depth= of DecisionTreeClassifier in classifiers'],
      ['k.py#max_depth@10:37', 'max_depth= of RandomForestClassifier in classifiers'],
    ]);
    expect(byId(s, 'k.py#n_estimators@10:53').default).toBe('10');
    // a statement over several lines: the part around each literal tells them apart
    expect(s.settings.filter((x) => x.name === 'max_depth').map((x) => x.expression)).toEqual([
      'classifiers = … DecisionTreeClassifier(max_depth=5) …',
      'classifiers = … RandomForestClassifier(max_depth=5, n_estimators=10, max_features=1) …',
    ]);
    // a positional literal keeps the variable's name; its help says which argument of which call it is
    expect(byId(s, 'k.py#classifiers@8:25')).toMatchObject({ default: '3', help: 'argument 1 of KNeighborsClassifier in classifiers' });
    expect(byId(s, 'k.py#momentum@13:64')).toMatchObject({ scope: 'main()', default: '0.9', help: 'momentum= of torch.optim.SGD in opt' });
    expect(s.settings.some((x) => ['clf', 'kmeans', 'X_train, X_test, y_train, y_test'].includes(x.name))).toBe(false);
    for (const st of s.settings) expect(spanText(text, st.span!)).toBe(st.default);
  });

  it('a call made for its effect gives its literals (by keyword, else by the function); output, plotting and exit calls do not', async () => {
    const text = lines(
      'import torch, sys',
      'import matplotlib.pyplot as plt',
      'torch.manual_seed(1337)',
      'model.fit(X, y, epochs=10, batch_size=32)',
      'train(model, 5, 0.01)',
      'plt.figure(figsize=(8, 6))',
      'plt.scatter(x, y, s=20, alpha=0.5)',
      'ax.set_xlim(0, 10)',
      'print(3.5)',
      'sys.exit(2)',
      'def main():',
      '    np.random.seed(7)',
      'main()',
    );
    const s = await listSettings(new Map([['fx.py', text]]));
    expect(s.problems).toEqual([]);
    expect(s.settings.map((x) => [x.id, x.default, x.help])).toEqual([
      ['fx.py#manual_seed@3:18', '1337', 'argument 1 of torch.manual_seed (line 3)'],
      ['fx.py#epochs@4:23', '10', 'epochs= of model.fit (line 4)'],
      ['fx.py#batch_size@4:38', '32', 'batch_size= of model.fit (line 4)'],
      ['fx.py#train@5:13', '5', 'argument 2 of train (line 5)'],
      ['fx.py#train@5:16', '0.01', 'argument 3 of train (line 5)'],
      ['fx.py#seed@12:19', '7', 'argument 1 of np.random.seed (line 12)'],
    ]);
    expect(byId(s, 'fx.py#epochs@4:23')).toMatchObject({
      kind: 'constant',
      scope: 'module',
      expression: 'model.fit(X, y, epochs=10, batch_size=32)',
    });
    for (const st of s.settings) expect(spanText(text, st.span!)).toBe(st.default);
  });

  it("a dict's value inside an expression is named by its string key, in a function too; the keys are not settings", async () => {
    const text = lines(
      'datasets = [(noisy_circles, {"damping": 0.77, "preference": -240, 2: "x"}), (blobs, {"eps": 0.18, "sizes": [3, 4]})]',
      'search = GridSearchCV(model, {"C": [10, 100]}, cv=cv)',
      'def main():',
      '    params = {"lr": 0.01, "model": make()}',
    );
    const s = await listSettings(new Map([['d.py', text]]));
    expect(s.settings.map((x) => [x.name, x.default, x.help])).toEqual([
      ['damping', '0.77', '"damping" of a dict in datasets'],
      ['preference', '-240', '"preference" of a dict in datasets'],
      ['eps', '0.18', '"eps" of a dict in datasets'],
      ['sizes', '3', '"sizes" of a dict in datasets'],
      ['sizes', '4', '"sizes" of a dict in datasets'],
      ['C', '10', '"C" of a dict in search'],
      ['C', '100', '"C" of a dict in search'],
      ['lr', '0.01', '"lr" of a dict in params'],
    ]);
    for (const st of s.settings) expect(spanText(text, st.span!)).toBe(st.default);
  });

  it("a literal assigned in a loop's or a with's body, its name's only binding, is a constant; under an if, or bound again, it is not", async () => {
    const text = lines(
      'if __name__ == "__main__":',
      '    for i in range(steps):',
      '        with torch.no_grad():',
      '            future = 1000  # steps to predict',
      '        if i > 2:',
      '            lr = 0.5',
      '        best = 0.3',
      '        best = loss',
      '        count = 4',
      '        count += 1',
    );
    const s = await listSettings(new Map([['l.py', text]]));
    expect(s.settings.map((x) => [x.id, x.default, x.scope, x.help])).toEqual([['l.py#future', '1000', 'main-guard', 'steps to predict']]);
  });

  it('in arithmetic, a power and 0.0/1.0 are the formula, an axis is the shape, a plotting argument the look: not settings; an item of a list argument says so', async () => {
    const text = lines(
      'dx = 1.0 / (nx - 1)',
      'r = dt / dx**2',
      'k = 0.4 * dx**2',
      'w = np.array([1.5, -2.0])',
      'g = RBF(1.0)',
      's = torch.sum(x, dim=1)',
      'm = np.mean(x, axis=0)',
      'fig, ax = plt.subplots(1, 2, figsize=(10, 6))',
      'cax = plt.imshow(y, alpha=0.8)',
      'line = ax.plot(x, y, lw=0.5)',
    );
    const s = await listSettings(new Map([['f.py', text]]));
    expect(s.settings.map((x) => [x.name, x.default, x.help])).toEqual([
      ['k', '0.4', null],
      ['w', '1.5', 'an item of argument 1 of np.array in w'],
      ['w', '-2.0', 'an item of argument 1 of np.array in w'],
      ['g', '1.0', 'argument 1 of RBF in g'],
    ]);
  });

  it("a constant's comments are its help: the lines right above it and its trailing comment; of several names bound together, each its clause", async () => {
    const text = lines(
      '#!/usr/bin/env python',
      '# -*- coding: utf-8 -*-',
      'import torch',
      'device = torch.device("cpu")',
      '# device = torch.device("cuda")  # Uncomment this to run on GPU',
      '',
      '# N is batch size; D_in is input dimension;',
      '# H is hidden dimension; D_out is output dimension.',
      'N, D_in, H, D_out = 64, 1000, 100, 10',
      '',
      '# Step size of the mesh.',
      'h = 0.02  # point in the mesh',
      '',
      'learning_rate = 1e-4  # step size',
      '# ---------------------------------',
      '# model',
      'n_layer = 4',
      "# the model (a title over a group of assignments is not the first one's help)",
      'n_head = 4',
      'n_embd = 64  # width',
      '# (a comment that is separated from the next constant by a blank line)',
      '',
      'epochs = 3',
      '# width, then depth',
      'width, depth = 64, 2',
      '# seeds for the two generators',
      'seed_a, seed_b = 1, 2',
      '# Use the optim package to define an Optimizer that will update the weights of',
      '# the model for us. Here we will use Adam; the optim package contains many other',
      '# optimization algorithms. The first argument to the Adam constructor tells the',
      '# optimizer which Tensors it should update.',
      'lr = 1e-4',
    );
    const s = await listSettings(new Map([['c.py', text]]));
    expect(s.problems).toEqual([]);
    expect(Object.fromEntries(s.settings.map((x) => [x.name, x.help]))).toEqual({
      N: 'N is batch size',
      D_in: 'D_in is input dimension',
      H: 'H is hidden dimension',
      D_out: 'D_out is output dimension',
      h: 'Step size of the mesh. point in the mesh',
      learning_rate: 'step size',
      n_layer: 'model',
      n_head: null,
      n_embd: 'width',
      epochs: null,
      width: 'width',
      depth: 'then depth',
      seed_a: 'seeds for the two generators',
      seed_b: 'seeds for the two generators',
      lr: null, // a paragraph narrating the code below is not a label of the constant
    });
  });

  it('comments above the fields of a settings class and the steps of a config function are their help too', async () => {
    const text = lines(
      'from dataclasses import dataclass',
      '@dataclass',
      'class TrainConfig:',
      '    # hidden units per layer',
      '    hidden: int = 128',
      'def get_config():',
      '    C = CN()',
      '    # total optimisation steps',
      '    C.max_iters = 1000',
      '    return C',
    );
    const s = await listSettings(new Map([['cfg.py', text]]));
    expect(byId(s, 'cfg.py#TrainConfig.hidden').help).toBe('hidden units per layer');
    expect(byId(s, 'cfg.py#max_iters').help).toBe('total optimisation steps');
  });

  it('a loop count is a constant: for … in range(N) named for its variable (`loop_count` for _), while v < N; not in other functions', async () => {
    const text = lines(
      'import sys',
      'learning_rate = 1e-4',
      'for t in range(500):',
      '    for j in range(20):',
      '        pass',
      'for _ in range(1, 301):',
      '    pass',
      'for k in range(n):',
      '    pass',
      'for one in range(1):',
      '    pass',
      'step = 0',
      'while step < 250:',
      '    step += 1',
      'x = 1.0',
      'while x > 0.001:',
      '    x = x / 2',
      'def helper():',
      '    for i in range(99):',
      '        pass',
      'def main():',
      '    # the training loop',
      '    for epoch in range(10):',
      '        pass',
      'if __name__ == "__main__":',
      '    for _ in range(3):',
      '        main()',
    );
    const s = await listSettings(new Map([['loop.py', text]]));
    expect(s.problems).toEqual([]);
    const loops = s.settings.filter((x) => x.expression?.startsWith('for ') || x.expression?.startsWith('while '));
    expect(loops.map((x) => [x.id, x.default, x.scope, x.expression, x.help])).toEqual([
      ['loop.py#t@3:15', '500', 'module', 'for t in range(500):', 'number of iterations of the loop at line 3'],
      ['loop.py#j@4:19', '20', 'module', 'for j in range(20):', 'number of iterations of the loop at line 4'],
      [
        'loop.py#loop_count@6:18',
        '301',
        'module',
        'for _ in range(1, 301):',
        'end of the range of the loop at line 6 (its iterations run from 1)',
      ],
      ['loop.py#step@13:13', '250', 'module', 'while step < 250:', 'number of iterations of the loop at line 13 (while step < 250:)'],
      ['loop.py#x@16:10', '0.001', 'module', 'while x > 0.001:', 'bound of the loop at line 16 (while x > 0.001:)'],
      ['loop.py#loop_count@26:19', '3', 'main-guard', 'for _ in range(3):', 'number of iterations of the loop at line 26'],
      ['loop.py#epoch@23:23', '10', 'main()', 'for epoch in range(10):', 'number of iterations of the loop at line 23; the training loop'],
    ]);
    for (const st of loops) expect(spanText(text, st.span!)).toBe(st.default);
    expect(s.settings.filter((x) => x.kind === 'constant').every((x) => x.type !== null)).toBe(true);
  });
});

describe('what the settings let a request name (asks matched against the surface)', () => {
  const match = async (files: Map<string, string>, entry: string, request: string) => {
    const s = await listSettings(files, { entry });
    return parseAsks(request)
      .filter((a) => a.kind === 'setting' || a.kind === 'sweep')
      .map((a) => {
        const m = matchSetting(a, s.settings, { entry });
        return [a.text, m.status === 'matched' ? m.setting.id : m.status === 'ambiguous' ? m.candidates.map((c) => c.id) : m.status];
      });
  };

  it('hidden size through a tuple comment, iterations through a loop, gamma by keyword, several n_init asked', async () => {
    const nn = lines(
      'import torch',
      '# N is batch size; D_in is input dimension;',
      '# H is hidden dimension; D_out is output dimension.',
      'N, D_in, H, D_out = 64, 1000, 100, 10',
      'learning_rate = 1e-4',
      'for t in range(500):',
      '    pass',
    );
    expect(
      await match(new Map([['nn.py', nn]]), 'nn.py', 'Train it with hidden size 200 for 1000 iterations at learning rate 5e-5.'),
    ).toEqual([
      ['hidden size 200', 'nn.py#H'],
      ['1000 iterations', 'nn.py#t@6:15'],
      ['learning rate 5e-5', 'nn.py#learning_rate'],
    ]);
    // a loop of `_` is found by its help when nothing else fits, never over the script's own max_iters
    const warm = lines('max_iters = 5000', 'for _ in range(5):', '    warmup()', 'for it in range(max_iters):', '    step()');
    expect(await match(new Map([['w.py', warm]]), 'w.py', 'train for 200 iterations')).toEqual([['200 iterations', 'w.py#max_iters']]);
    const bare = lines('for _ in range(500):', '    step()');
    expect(await match(new Map([['b.py', bare]]), 'b.py', 'train for 1000 iterations')).toEqual([
      ['1000 iterations', 'b.py#loop_count@1:15'],
    ]);
    const sk = lines('clf = svm.SVC(gamma=0.001)', 'a = KMeans(n_init=4)', 'b = KMeans(n_init=4)');
    expect(await match(new Map([['sk.py', sk]]), 'sk.py', 'Use gamma 0.0005 and n_init 10.')).toEqual([
      ['gamma 0.0005', 'sk.py#gamma@1:20'],
      ['n_init 10', ['sk.py#n_init@2:18', 'sk.py#n_init@3:18']],
    ]);
  });
});

describe('environment variables and config files', () => {
  it('env reads with literal names, typed by their wrapping call or default', async () => {
    const text = lines(
      'import os',
      'DEV = os.environ.get("DEVICE", "cpu")',
      'N = int(os.getenv("N_WORKERS", "4"))',
      'def f():',
      '    return os.environ["DATA_DIR"]',
      'name = os.environ.get(key)',
    );
    const s = await listSettings(new Map([['e.py', text]]));
    expect(byId(s, 'e.py#env:DEVICE')).toMatchObject({ kind: 'env', env: 'DEVICE', type: 'str', default: 'cpu' });
    expect(byId(s, 'e.py#env:N_WORKERS')).toMatchObject({ type: 'int', default: '4' });
    expect(byId(s, 'e.py#env:DATA_DIR')).toMatchObject({ default: null });
    expect(s.settings.filter((x) => x.kind === 'env')).toHaveLength(3);
  });

  const yamlText = lines(
    'model:',
    '  hidden: 128   # units',
    '  layers: [64, 64]',
    'lr: 3.0e-4',
    'name: "héllo"',
    'lr: 0.001',
    'base: &b {x: 1}',
    'copy: *b',
  );
  const project = new Map([
    [
      'train.py',
      lines(
        'import json, os, yaml, configparser, tomllib',
        'from omegaconf import OmegaConf',
        'import helpers',
        'cfg = yaml.safe_load(open("config.yaml"))',
        'with open(os.path.join("conf", "opt.json")) as f:',
        '    opt = json.load(f)',
        'json.dump({}, open("results.json", "w"))',
        'ini = configparser.ConfigParser(); ini.read("setup/run.ini")',
        'with open("params.toml", "rb") as f:',
        '    params = tomllib.load(f)',
      ),
    ],
    [
      'helpers.py',
      lines(
        'from omegaconf import OmegaConf',
        'WIDTH = 32',
        'conf = OmegaConf.load("conf/model.yaml")',
        'if __name__ == "__main__":',
        '    debug = 1',
      ),
    ],
    ['other.py', lines('ALPHA = 0.5')],
    ['app.py', lines('import hydra', '@hydra.main(config_path="hconf", config_name="config")', 'def main(cfg):', '    pass')],
    ['config.yaml', yamlText],
    ['conf/opt.json', '{\n  "optimizer": {"name": "adam", "betas": [0.9, 0.99]},\n  "steps": 100, "steps": 200\n}\n'],
    ['conf/model.yaml', 'depth: 4\n'],
    ['results.json', '{"acc": 0.9}\n'],
    ['setup/run.ini', lines('[train]', 'Epochs = 5', 'lr: 0.01', 'note = a long', '  second line', '; comment', '[DEFAULT]', 'seed = 1')],
    ['params.toml', lines('title = "x"', '[solver]', 'dt = 0.01', 'steps = 1_000')],
    ['hconf/config.yaml', lines('trainer:', '  max_epochs: 3')],
    ['unread.yaml', 'k: v\n'],
    ['pyproject.toml', lines('[project]', 'name = "x"')],
    ['setup.py', lines('VERSION = "1.0"')],
    ['docs/conf.py', lines('release = "1.0"')],
    ['.github/workflows/ci.yml', 'on: push\n'],
    ['venv/lib/python3.11/site-packages/pkg/mod.py', 'X = 1\n'],
    ['env/gridworld.py', 'SIZE = 5\n'],
  ]);

  it('JSON, YAML, TOML and INI keys flattened, with spans where the format gives them; readBy from literal paths', async () => {
    const s = await listSettings(project);
    expect(s.problems).toEqual([]);
    const hidden = byId(s, 'config.yaml#model.hidden');
    expect(hidden).toMatchObject({ kind: 'config-key', format: 'yaml', type: 'int', default: '128', readBy: ['train.py'] });
    expect(spanText(yamlText, hidden.span!)).toBe('128');
    expect(byId(s, 'config.yaml#model.layers')).toMatchObject({ type: 'list', default: '[64,64]' });
    expect(byId(s, 'config.yaml#lr')).toMatchObject({ type: 'float', default: '0.001' }); // the last of two wins
    expect(spanText(yamlText, byId(s, 'config.yaml#name').span!)).toBe('"héllo"');
    expect(byId(s, 'config.yaml#copy.x')).toMatchObject({ default: '1' });
    expect(byId(s, 'config.yaml#copy.x').span).toBeUndefined(); // an alias: rewriting it would change the anchor
    expect(byId(s, 'conf/opt.json#optimizer.name')).toMatchObject({ format: 'json', default: 'adam', readBy: ['train.py'] });
    expect(byId(s, 'conf/opt.json#steps').default).toBe('200');
    expect(byId(s, 'conf/opt.json#optimizer.betas')).toMatchObject({ type: 'list' });
    expect(byId(s, 'setup/run.ini#train.epochs')).toMatchObject({ format: 'ini', type: 'int', default: '5', readBy: ['train.py'] });
    expect(byId(s, 'setup/run.ini#train.lr')).toMatchObject({ type: 'float', default: '0.01' });
    expect(byId(s, 'setup/run.ini#train.note').default).toBe('a long\nsecond line');
    expect(byId(s, 'setup/run.ini#DEFAULT.seed').default).toBe('1');
    expect(byId(s, 'params.toml#solver.dt')).toMatchObject({ format: 'toml', type: 'float', default: '0.01', readBy: ['train.py'] });
    expect(byId(s, 'params.toml#solver.steps')).toMatchObject({ type: 'int', default: '1000' });
    expect(byId(s, 'conf/model.yaml#depth').readBy).toEqual(['helpers.py']);
    expect(byId(s, 'hconf/config.yaml#trainer.max_epochs')).toMatchObject({ readBy: ['app.py'], override: 'trainer.max_epochs=' });
    expect(byId(s, 'unread.yaml#k').readBy).toEqual([]);
    expect(byId(s, 'results.json#acc').readBy).toEqual([]); // written, not read
    expect(ids(s).some((i) => /^(pyproject\.toml|\.github|setup\.py|docs\/|venv\/)/.test(i))).toBe(false); // tooling and installed packages, not the program's settings
    expect(byId(s, 'env/gridworld.py#SIZE').default).toBe('5'); // a project's own env/ folder is read
    const ini = project.get('setup/run.ini')!;
    expect(spanText(ini, byId(s, 'setup/run.ini#train.lr').span!)).toBe('0.01');
  });

  it('narrowed to an entry: its settings, its imports (one level, module level only), the configs they read', async () => {
    const s = await listSettings(project, { entry: 'train.py' });
    const got = ids(s);
    expect(got).toContain('helpers.py#WIDTH');
    expect(got).not.toContain('helpers.py#debug'); // the imported module's __main__ block does not run
    expect(got).toContain('config.yaml#model.hidden');
    expect(byId(s, 'conf/model.yaml#depth').readBy).toEqual(['helpers.py', 'train.py']);
    expect(
      got.some((i) => i.startsWith('other.py') || i.startsWith('hconf/') || i.startsWith('unread.yaml') || i.startsWith('results.json')),
    ).toBe(false);
  });

  it('a README command relates a config to the script it is passed to', async () => {
    const s = await listSettings(
      new Map([
        ['README.md', lines('Train:', '', '    python train.py --config configs/small.yaml', '')],
        ['train.py', lines('import argparse, yaml', 'p = argparse.ArgumentParser()', 'p.add_argument("--config")')],
        ['configs/small.yaml', 'width: 8\n'],
      ]),
    );
    expect(byId(s, 'configs/small.yaml#width').readBy).toEqual(['train.py']);
  });

  it('an entry that is not a file of the project is a problem, not a crash', async () => {
    const s = await listSettings(project, { entry: 'nope.py' });
    expect(s).toEqual({ entry: 'nope.py', settings: [], problems: [{ file: 'nope.py', error: 'no file nope.py in the project' }] });
  });
});

describe('bad input', () => {
  const tmp: string[] = [];
  afterAll(async () => {
    for (const d of tmp) await rm(d, { recursive: true, force: true });
  });

  it('a syntax error is a problem with its line; the other files are still read', async () => {
    const s = await listSettings(
      new Map([
        ['broken.py', 'x = 1\ndef f(:\n'],
        ['ok.py', 'N = 3\n'],
      ]),
    );
    expect(s.problems).toEqual([{ file: 'broken.py', error: expect.stringMatching(/^SyntaxError: .*\(line 2\)$/) }]);
    expect(byId(s, 'ok.py#N').default).toBe('3');
  });

  it('binary files, a 5 MB Python file, configs that do not parse and data-sized configs are problems', async () => {
    const huge = `X = 1\n${'y = [1, 2, 3]\n'.repeat(Math.ceil(5_000_000 / 14))}`;
    expect(huge.length).toBeGreaterThan(MAX_PY_CHARS);
    const many = JSON.stringify(Object.fromEntries(Array.from({ length: MAX_CONFIG_KEYS + 1 }, (_, i) => [`k${i}`, i])));
    const started = Date.now();
    const s = await listSettings(
      new Map([
        ['blob.py', 'a = 1\0\0\0'],
        ['weights.json', '\0\0binary'],
        ['big.py', huge],
        ['bad.json', '{\n  "a": 1,\n  "b" 2\n}\n'],
        ['bad2.json', '{\n  "a": 1,\n  "b": \n}\n'],
        ['bad.yaml', 'a: [1, 2\nb: 3\n'],
        ['bad.toml', 'a = \n'],
        ['bad.ini', 'no section = 1\n'],
        ['vocab.json', many],
        ['good.yaml', 'lr: 0.1\n'],
      ]),
    );
    expect(Date.now() - started).toBeLessThan(15_000);
    const problem = (f: string) => s.problems.find((p) => p.file === f)?.error;
    expect(problem('blob.py')).toMatch(/binary/);
    expect(problem('weights.json')).toMatch(/binary/);
    expect(problem('big.py')).toMatch(/too large.*limit is 500000/);
    expect(problem('bad.json')).toMatch(/^JSON that does not parse: .*\(line 3\)$/);
    expect(problem('bad2.json')).toMatch(/^JSON that does not parse: Unexpected token/); // V8 gives no position for this one
    expect(problem('bad.yaml')).toMatch(/^YAML that does not parse: .* at line 2, column 1$/);
    expect(problem('bad.toml')).toMatch(/^TOML that does not parse/);
    expect(problem('bad.ini')).toMatch(/^INI that does not parse: line 1: a key before any \[section\]/);
    expect(problem('vocab.json')).toMatch(/keys: a data file, not settings/);
    expect(s.problems).toHaveLength(9);
    expect(ids(s)).toEqual(['good.yaml#lr']);
  });

  it('deep nesting in Python, JSON and YAML is bounded', async () => {
    const deepPy = `x = ${'('.repeat(5000)}1${')'.repeat(5000)}\nY = 2\n`;
    const deepList = `x = ${'['.repeat(300)}${']'.repeat(300)}\n`;
    const deepJson = `${'{"a":'.repeat(50)}1${'}'.repeat(50)}`;
    const deeperJson = `${'{"a":'.repeat(40_000)}1${'}'.repeat(40_000)}`;
    const deepYaml = `${Array.from({ length: 40 }, (_, i) => `${'  '.repeat(i)}k${i}:`).join('\n')} 1\n`;
    const s = await listSettings(
      new Map([
        ['deep.py', deepPy],
        ['list.py', deepList],
        ['ok.py', 'Z = 3\n'],
        ['deep.json', deepJson],
        ['deeper.json', deeperJson],
        ['deep.yaml', deepYaml],
      ]),
    );
    expect(s.problems.find((p) => p.file === 'deep.py')?.error).toBeTruthy();
    expect(byId(s, 'ok.py#Z').default).toBe('3');
    const j = s.settings.filter((x) => x.file === 'deep.json');
    expect(j).toHaveLength(1);
    expect(j[0]!.name.split('.')).toHaveLength(12); // flattened to 12 levels, the rest one value
    expect(s.settings.filter((x) => x.file === 'deep.yaml')).toHaveLength(1);
    expect(s.settings.filter((x) => x.file === 'deeper.json').map((x) => x.name.split('.').length)).toEqual([12]);
  });

  it('without a Python interpreter: config files still read, one problem line, no pattern parsing', async () => {
    const s = await listSettings(
      new Map([
        ['train.py', 'LR = 0.1\n'],
        ['c.yaml', 'lr: 0.1\n'],
      ]),
      { python: '/nonexistent/python3' },
    );
    expect(ids(s)).toEqual(['c.yaml#lr']);
    expect(s.problems).toEqual([{ file: 'train.py', error: expect.stringMatching(/Python sources could not be parsed/) }]);
  });

  it('past its time budget the reader answers the files it read and names the others', async () => {
    const files = new Map<string, string>([['entry.py', 'E = 1\n']]);
    for (let i = 0; i < 20; i++) files.set(`gen${String(i).padStart(2, '0')}.py`, `G${i} = ${i}\n${'y = [1, 2, 3]\n'.repeat(1_000)}`);
    const s = await listSettings(files, { timeoutMs: 60_000, budgetMs: 1 });
    expect(byId(s, 'entry.py#E').default).toBe('1'); // the smallest is read first (and the first file always is)
    const skipped = s.problems.filter((p) => /^not read: the reader's time budget \(0.001 s\) was spent on other files$/.test(p.error));
    expect(skipped).toHaveLength(20);
    expect(s.settings.map((x) => x.id)).toEqual(['entry.py#E']);
    // with an entry point, it is the one read first, whatever its size
    const narrowed = await listSettings(files, { timeoutMs: 60_000, budgetMs: 1, entry: 'gen19.py' });
    expect(narrowed.settings.map((x) => x.id)).toEqual(['gen19.py#G19', 'gen19.py#y']);
  });

  it('an interpreter that is not the reader (exits non-zero, or answers something else) is one problem line', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'settings-'));
    tmp.push(dir);
    const failing = path.join(dir, 'failing');
    await writeFile(failing, '#!/bin/sh\necho "SyntaxError: Missing parentheses in call to print" >&2\nexit 1\n');
    const chatty = path.join(dir, 'chatty');
    await writeFile(chatty, '#!/bin/sh\ncat >/dev/null\necho hello\n');
    await chmod(failing, 0o755);
    await chmod(chatty, 0o755);
    const files = new Map([
      ['a.py', 'A = 1\n'],
      ['c.json', '{"k": 1}'],
    ]);
    const a = await listSettings(files, { python: failing });
    expect(a.problems).toEqual([{ file: 'a.py', error: 'the Python reader failed: SyntaxError: Missing parentheses in call to print' }]);
    expect(ids(a)).toEqual(['c.json#k']);
    const b = await listSettings(files, { python: chatty });
    expect(b.problems).toEqual([{ file: 'a.py', error: "the Python reader's answer was not JSON: hello\n" }]);
  });

  it('a Python process past its time limit is stopped and reported', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'settings-'));
    tmp.push(dir);
    const slow = path.join(dir, 'python3');
    await writeFile(slow, '#!/bin/sh\nexec sleep 30\n');
    await chmod(slow, 0o755);
    const started = Date.now();
    const s = await listSettings(
      new Map([
        ['a.py', 'A = 1\n'],
        ['b.py', 'B = 2\n'],
      ]),
      { python: slow, timeoutMs: 500 },
    );
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(s.settings).toEqual([]);
    expect(s.problems).toEqual([{ file: '2 Python files', error: 'reading the Python sources took longer than 500 ms: stopped' }]);
  });
});

/**
 * Asks matched against hand-made settings surfaces of every kind: argparse flags (pytorch's
 * word_language_model), nanoGPT's configurator globals with a config file that sets the same
 * names, module constants (one inside an expression), positionals, YAML config keys and
 * environment variables. The asks come from parseAsks on the user's words, as the planner gets them.
 */
import { describe, expect, it } from 'vitest';
import type { Ask, Setting, SettingMatch } from '../contract.js';
import { coerceValue, matchAsks, matchSetting } from './matchAsks.js';
import { parseAsks } from './parseAsks.js';

function st(s: Partial<Setting> & Pick<Setting, 'name' | 'kind' | 'file'>): Setting {
  const id = s.id ?? `${s.file}#${s.name}`;
  return { type: null, default: null, help: null, ...s, id };
}
const flag = (name: string, extra: Partial<Setting> = {}, file = 'main.py') =>
  st({ name: name.replace(/^-+/, '').replace(/-/g, '_'), flag: name, kind: 'flag', file, ...extra });

/** The one ask of `request` (a test fails when the parser reads it otherwise). */
function ask(request: string): Ask {
  const asks = parseAsks(request);
  expect(asks, request).toHaveLength(1);
  return asks[0]!;
}
const matchedId = (m: SettingMatch) => (m.status === 'matched' ? m.setting.id : `${m.status}`);

// pytorch/examples word_language_model/main.py, as list_settings would read its argparse flags.
const WLM: Setting[] = [
  flag('--data', { type: 'str', default: './data/wikitext-2', help: 'location of the data corpus' }),
  flag('--model', {
    type: 'str',
    default: 'LSTM',
    help: 'type of network',
    choices: ['RNN_TANH', 'RNN_RELU', 'LSTM', 'GRU', 'Transformer'],
  }),
  flag('--emsize', { type: 'int', default: '200', help: 'size of word embeddings' }),
  flag('--nhid', { type: 'int', default: '200', help: 'number of hidden units per layer' }),
  flag('--nlayers', { type: 'int', default: '2', help: 'number of layers' }),
  flag('--lr', { type: 'float', default: '20', help: 'initial learning rate' }),
  flag('--clip', { type: 'float', default: '0.25', help: 'gradient clipping' }),
  flag('--epochs', { type: 'int', default: '40', help: 'upper epoch limit' }),
  flag('--batch_size', { type: 'int', default: '20', help: 'batch size' }),
  flag('--bptt', { type: 'int', default: '35', help: 'sequence length' }),
  flag('--dropout', { type: 'float', default: '0.2', help: 'dropout applied to layers (0 = no dropout)' }),
  flag('--tied', { action: 'store_true', default: 'False', help: 'tie the word embedding and softmax weights' }),
  flag('--seed', { type: 'int', default: '1111', help: 'random seed' }),
  flag('--cuda', { action: 'store_true', default: 'False', help: 'use CUDA' }),
  flag('--mps', { action: 'store_true', default: 'False', help: 'enables macOS GPU training' }),
  flag('--log-interval', { type: 'int', default: '200', help: 'report interval' }),
  flag('--save', { type: 'str', default: 'model.pt', help: 'path to save the final model' }),
  flag('--nhead', { type: 'int', default: '2', help: 'the number of heads in the encoder/decoder of the transformer model' }),
  flag('--dry-run', { action: 'store_true', help: 'verify the code and the model' }),
];

// nanoGPT: train.py's configurator globals, and config/train_shakespeare_char.py setting the same names.
const cfgr = (name: string, type: Setting['type'], def: string) =>
  st({ name, kind: 'configurator', file: 'train.py', flag: `--${name}`, type, default: def });
const cfgKey = (name: string, type: Setting['type'], def: string) =>
  st({ name, kind: 'config-key', file: 'config/train_shakespeare_char.py', format: 'python', readBy: ['train.py'], type, default: def });
const NANOGPT: Setting[] = [
  cfgr('out_dir', 'str', 'out'),
  cfgr('eval_interval', 'int', '2000'),
  cfgr('log_interval', 'int', '1'),
  cfgr('eval_iters', 'int', '200'),
  cfgr('init_from', 'str', 'scratch'),
  cfgr('wandb_log', 'bool', 'False'),
  cfgr('dataset', 'str', 'openwebtext'),
  cfgr('gradient_accumulation_steps', 'int', '40'),
  cfgr('batch_size', 'int', '12'),
  cfgr('block_size', 'int', '1024'),
  cfgr('n_layer', 'int', '12'),
  cfgr('n_head', 'int', '12'),
  cfgr('n_embd', 'int', '768'),
  cfgr('dropout', 'float', '0.0'),
  cfgr('learning_rate', 'float', '6e-4'),
  cfgr('max_iters', 'int', '600000'),
  cfgr('weight_decay', 'float', '1e-1'),
  cfgr('grad_clip', 'float', '1.0'),
  cfgr('warmup_iters', 'int', '2000'),
  cfgr('lr_decay_iters', 'int', '600000'),
  cfgr('min_lr', 'float', '6e-5'),
  cfgr('device', 'str', 'cuda'),
  cfgr('dtype', 'str', 'bfloat16'),
  cfgr('compile', 'bool', 'True'),
  cfgKey('out_dir', 'str', 'out-shakespeare-char'),
  cfgKey('eval_interval', 'int', '250'),
  cfgKey('dataset', 'str', 'shakespeare_char'),
  cfgKey('batch_size', 'int', '64'),
  cfgKey('block_size', 'int', '256'),
  cfgKey('n_layer', 'int', '6'),
  cfgKey('n_head', 'int', '6'),
  cfgKey('n_embd', 'int', '384'),
  cfgKey('dropout', 'float', '0.2'),
  cfgKey('learning_rate', 'float', '1e-3'),
  cfgKey('max_iters', 'int', '5000'),
  cfgKey('lr_decay_iters', 'int', '5000'),
  cfgKey('warmup_iters', 'int', '100'),
];

// A finite-difference script whose settings are module constants, one a literal inside an expression.
const SIM: Setting[] = [
  st({ name: 'nx', kind: 'constant', file: 'sim.py', type: 'int', default: '41', span: { line: 3, col: 5, endLine: 3, endCol: 7 } }),
  st({
    name: 'dx',
    kind: 'constant',
    file: 'sim.py',
    type: 'float',
    default: '2 / (nx - 1)',
    span: { line: 4, col: 5, endLine: 4, endCol: 16 },
  }),
  st({
    id: 'sim.py#dt@6:5',
    name: 'dt',
    kind: 'constant',
    file: 'sim.py',
    type: 'float',
    default: '0.1',
    expression: 'dt = 0.1*dx*dx',
    span: { line: 6, col: 5, endLine: 6, endCol: 8 },
  }),
  st({ name: 'nt', kind: 'constant', file: 'sim.py', type: 'int', default: '500', span: { line: 7, col: 5, endLine: 7, endCol: 8 } }),
  st({ name: 'OUTPUT_DIR', kind: 'constant', file: 'sim.py', type: 'str', default: 'results' }),
];

// A script reading sys.argv: `python scale.py N STEPS`.
const POS: Setting[] = [
  st({ name: 'n', kind: 'positional', file: 'scale.py', position: 0, type: 'int', default: null, help: 'problem size' }),
  st({ name: 'steps', kind: 'positional', file: 'scale.py', position: 1, type: 'int', default: '10' }),
  flag('--verbose', { action: 'store_true' }, 'scale.py'),
];

// A Hydra/OmegaConf project: conf/config.yaml read by train.py.
const key = (name: string, type: Setting['type'], def: string, extra: Partial<Setting> = {}) =>
  st({ name, kind: 'config-key', file: 'conf/config.yaml', format: 'yaml', readBy: ['train.py'], type, default: def, ...extra });
const YAML: Setting[] = [
  key('model.hidden_size', 'int', '128'),
  key('model.num_layers', 'int', '2'),
  key('trainer.max_epochs', 'int', '10'),
  key('optimizer.lr', 'float', '0.001'),
  key('optimizer.name', 'str', 'adam', { choices: ['adam', 'sgd'] }),
  key('data.batch_size', 'int', '32'),
  key('paths.output_dir', 'str', 'outputs'),
];

// A script configured by the environment.
const ENV: Setting[] = [
  st({ name: 'LR', env: 'LR', kind: 'env', file: 'app.py', type: 'float', default: '3e-4' }),
  st({ name: 'EPOCHS', env: 'EPOCHS', kind: 'env', file: 'app.py', type: 'int', default: '1' }),
  st({ name: 'DATA_DIR', env: 'DATA_DIR', kind: 'env', file: 'app.py', type: 'str', default: 'data' }),
  st({ name: 'USE_CUDA', env: 'USE_CUDA', kind: 'env', file: 'app.py', type: 'bool', default: 'False' }),
];

describe('matchSetting: argparse flags (word_language_model)', () => {
  it.each([
    ['Train for 1 epoch', 'main.py#epochs', '1'],
    ['--emsize 64', 'main.py#emsize', '64'],
    ['n_embd 64', 'main.py#emsize', '64'],
    ['a 64-dim embedding', 'main.py#emsize', '64'],
    ['2 layers', 'main.py#nlayers', '2'],
    ['with 4 heads', 'main.py#nhead', '4'],
    ['128 hidden units', 'main.py#nhid', '128'],
    ['context length of 64', 'main.py#bptt', '64'],
    ['block size 32', 'main.py#bptt', '32'],
    ['lr 3e-4', 'main.py#lr', '3e-4'],
    ['learning rate of 0.001', 'main.py#lr', '0.001'],
    ['seed 42', 'main.py#seed', '42'],
    ['dropout 0', 'main.py#dropout', '0'],
    ['no dropout', 'main.py#dropout', '0'],
    ['batch size 1e3', 'main.py#batch_size', '1000'],
    ['batch_size=16', 'main.py#batch_size', '16'],
    ['log every 10 iterations', 'main.py#log_interval', '10'],
    ['--log-interval 5', 'main.py#log_interval', '5'],
    ['gradient clipping 0.5', 'main.py#clip', '0.5'],
    ['--model lstm', 'main.py#model', 'LSTM'],
    ['--model=Transformer', 'main.py#model', 'Transformer'],
    ['--tied', 'main.py#tied', 'True'],
    ['--dry-run', 'main.py#dry_run', 'True'],
  ])('%s → %s = %s', (request, id, value) => {
    expect(matchSetting(ask(request), WLM)).toEqual({ status: 'matched', setting: WLM.find((s) => s.id === id), value });
  });

  it('sweeps a flag over the values the user gave, coerced to its type', () => {
    expect(matchSetting(ask('for seeds 1 2 3'), WLM)).toMatchObject({
      status: 'matched',
      setting: { id: 'main.py#seed' },
      values: ['1', '2', '3'],
    });
    expect(matchSetting(ask('learning rates 1e-3, 3e-4, 1e-4'), WLM)).toMatchObject({
      status: 'matched',
      setting: { id: 'main.py#lr' },
      values: ['1e-3', '3e-4', '1e-4'],
    });
    expect(matchSetting(ask('batch sizes 1e1 and 2e1'), WLM)).toMatchObject({ values: ['10', '20'] });
  });

  it('refuses a value that does not fit the type or the choices, saying why', () => {
    expect(matchSetting(ask('layers 2.5'), WLM)).toEqual({
      status: 'bad-value',
      setting: WLM.find((s) => s.id === 'main.py#nlayers'),
      reason: '--nlayers takes a whole number; 2.5 is not one',
    });
    const gpt = matchSetting(ask('--model GPT'), WLM);
    expect(gpt.status).toBe('bad-value');
    expect(gpt.status === 'bad-value' && gpt.reason).toBe(
      '"GPT" is not one of --model\'s choices: RNN_TANH, RNN_RELU, LSTM, GRU, Transformer',
    );
    expect(matchSetting(ask('--epochs many'), WLM)).toMatchObject({
      status: 'bad-value',
      reason: '--epochs takes a whole number; "many" is not a number',
    });
    expect(matchSetting(ask('--epochs'), WLM)).toMatchObject({ status: 'bad-value', reason: '--epochs needs a value (a whole number)' });
    expect(matchSetting(ask('seeds 1, 2.5 and 3'), WLM)).toMatchObject({ status: 'bad-value', setting: { id: 'main.py#seed' } });
    expect(matchSetting(ask('--tied maybe'), WLM)).toMatchObject({
      status: 'bad-value',
      reason: '--tied is true or false; "maybe" is neither',
    });
  });

  it('names the closest settings when none fits', () => {
    // The parser reads no value in "a cosine dropout schedule": the planner gets the ask as a phrase.
    const m = matchSetting(
      { id: 'a1', kind: 'setting', text: 'dropout schedule cosine', phrase: 'dropout schedule', value: 'cosine' },
      WLM,
    );
    expect(m.status).toBe('none');
    expect(m.status === 'none' && m.closest.map((s) => s.name)[0]).toBe('dropout');
    expect(m.status === 'none' && m.closest.length).toBe(5);
    const w = matchSetting(ask('weight decay 0.1'), WLM);
    expect(w.status).toBe('none');
  });

  it('never matches where outputs go with a quantity', () => {
    // "save every 500 steps" is an interval; --save is a path: no match, and --save is not named.
    const m = matchSetting(ask('save every 500 steps'), WLM);
    expect(m.status).toBe('none');
    expect(m.status === 'none' && m.closest.some((s) => s.name === 'save')).toBe(false);
    // A path for it is fine.
    expect(matchSetting(ask('--save=out/model.pt'), WLM)).toMatchObject({
      status: 'matched',
      setting: { id: 'main.py#save' },
      value: 'out/model.pt',
    });
  });

  it('matches hardware to the device switches', () => {
    expect(matchSetting(ask('on CPU'), WLM)).toMatchObject({ status: 'matched', setting: { id: 'main.py#cuda' }, value: 'False' });
    expect(matchSetting(ask('on an NVIDIA GPU'), WLM)).toMatchObject({ status: 'matched', setting: { id: 'main.py#cuda' }, value: 'True' });
    expect(matchSetting(ask('on AMD'), WLM)).toMatchObject({ status: 'matched', setting: { id: 'main.py#cuda' }, value: 'True' });
    expect(matchSetting(ask('on an Apple M2'), WLM)).toMatchObject({ status: 'matched', setting: { id: 'main.py#mps' }, value: 'True' });
  });
});

describe('matchSetting: configurator globals and a config file that sets the same names (nanoGPT)', () => {
  const id = (request: string, entry?: string) => matchedId(matchSetting(ask(request), NANOGPT, { entry }));

  it('takes the command-line override over the config file: --n_layer=2 wins after the config', () => {
    expect(id('train it for 200 iterations')).toBe('train.py#max_iters');
    expect(id('2 layers')).toBe('train.py#n_layer');
    expect(id('n_embd 64')).toBe('train.py#n_embd');
    expect(id('with 4 heads')).toBe('train.py#n_head');
    expect(id('block size 32')).toBe('train.py#block_size');
    expect(id('2 layers', 'train.py')).toBe('train.py#n_layer');
  });

  it('tells the lexicon word from names that only contain it', () => {
    // iterations ≈ max_iters, not lr_decay_iters, eval_iters or warmup_iters.
    expect(id('5k iters')).toBe('train.py#max_iters');
    // learning rate ≈ learning_rate, not min_lr.
    expect(id('lr 3e-4')).toBe('train.py#learning_rate');
    expect(id('warmup 100 steps')).toBe('train.py#warmup_iters');
    expect(id('eval every 50 steps')).toBe('train.py#eval_interval');
    expect(id('gradient accumulation steps 1')).toBe('train.py#gradient_accumulation_steps');
  });

  it('coerces words for bools and strings', () => {
    expect(matchSetting(ask('compile=False'), NANOGPT)).toMatchObject({
      status: 'matched',
      setting: { id: 'train.py#compile' },
      value: 'False',
    });
    expect(matchSetting(ask('turn off compile'), NANOGPT)).toMatchObject({ status: 'matched', value: 'False' });
    expect(matchSetting(ask('wandb_log=yes'), NANOGPT)).toMatchObject({ status: 'matched', value: 'True' });
    expect(matchSetting(ask('on the shakespeare_char dataset'), NANOGPT)).toMatchObject({
      status: 'matched',
      setting: { id: 'train.py#dataset' },
      value: 'shakespeare_char',
    });
    expect(matchSetting(ask('device=cpu'), NANOGPT)).toMatchObject({ status: 'matched', setting: { id: 'train.py#device' }, value: 'cpu' });
  });

  it('sets the device string for hardware', () => {
    expect(matchSetting(ask('on CPU'), NANOGPT)).toMatchObject({ status: 'matched', setting: { id: 'train.py#device' }, value: 'cpu' });
    expect(matchSetting(ask('on an NVIDIA GPU'), NANOGPT)).toMatchObject({ value: 'cuda' });
    expect(matchSetting(ask('on Apple silicon'), NANOGPT)).toMatchObject({ value: 'mps' });
  });

  it('refuses a fraction for a count even without a flag parser, and keeps out_dir out of quantities', () => {
    expect(matchSetting(ask('n_layer=2.5'), NANOGPT)).toMatchObject({ status: 'bad-value', setting: { id: 'train.py#n_layer' } });
    expect(matchSetting({ id: 'a1', kind: 'setting', text: 'output dir 3', phrase: 'output dir', value: '3' }, NANOGPT).status).toBe(
      'none',
    );
    expect(matchSetting(ask('out_dir=out-small'), NANOGPT)).toMatchObject({ status: 'matched', setting: { id: 'train.py#out_dir' } });
  });

  it('is ambiguous when the same kind of setting sits in two entry points and no entry is given', () => {
    const two = [flag('--epochs', { type: 'int' }, 'train.py'), flag('--epochs', { type: 'int' }, 'eval.py')];
    const m = matchSetting(ask('3 epochs'), two);
    expect(m.status).toBe('ambiguous');
    expect(m.status === 'ambiguous' && m.candidates.map((s) => s.file)).toEqual(['train.py', 'eval.py']);
    expect(matchSetting(ask('3 epochs'), two, { entry: 'eval.py' })).toMatchObject({
      status: 'matched',
      setting: { file: 'eval.py' },
      value: '3',
    });
  });

  it('is ambiguous when two different settings fit one word equally', () => {
    const both = [flag('--n_embd', { type: 'int' }), flag('--d_model', { type: 'int' })];
    const m = matchSetting(ask('embedding size 64'), both);
    expect(m.status).toBe('ambiguous');
    expect(m.status === 'ambiguous' && m.candidates.map((s) => s.name)).toEqual(['n_embd', 'd_model']);
    // The exact name settles it.
    expect(matchSetting(ask('d_model 64'), both)).toMatchObject({ status: 'matched', setting: { name: 'd_model' } });
  });

  it('prefers the list-valued flag for a sweep and the scalar one for a value', () => {
    const seeds = [flag('--seed', { type: 'int' }), flag('--seeds', { type: 'int', nargs: '+' })];
    expect(matchSetting(ask('for seeds 1 2 3'), seeds)).toMatchObject({
      status: 'matched',
      setting: { name: 'seeds' },
      values: ['1', '2', '3'],
    });
    expect(matchSetting(ask('seed 7'), seeds)).toMatchObject({ status: 'matched', setting: { name: 'seed' }, value: '7' });
    expect(matchSetting(ask('--seeds 4 5'), seeds)).toMatchObject({ setting: { name: 'seeds' }, values: ['4', '5'] });
  });
});

describe('matchSetting: module constants, one inside an expression', () => {
  it('matches the literal in `dt = 0.1*dx*dx` by its name, for a sweep with and without values', () => {
    const dt = SIM.find((s) => s.name === 'dt');
    expect(matchSetting(ask('a parameter sweep of dt = 0.1*dx*dx at six values'), SIM)).toEqual({ status: 'matched', setting: dt });
    expect(matchSetting(ask('sweep dt over 0.1, 0.05 and 0.01'), SIM)).toEqual({
      status: 'matched',
      setting: dt,
      values: ['0.1', '0.05', '0.01'],
    });
    expect(matchSetting(ask('time step 0.01'), SIM)).toEqual({ status: 'matched', setting: dt, value: '0.01' });
    expect(matchSetting(ask('set nx to 81'), SIM)).toMatchObject({ status: 'matched', setting: { name: 'nx' }, value: '81' });
  });

  it('refuses what the script does not have, naming what it has', () => {
    const m = matchSetting(ask('200 iterations'), SIM);
    expect(m.status).toBe('none');
    // OUTPUT_DIR is where outputs go: not offered for a number.
    expect(m.status === 'none' && m.closest.map((s) => s.name).sort()).toEqual(['dt', 'dx', 'nt', 'nx']);
  });

  it('accepts a fraction for a rate written as an integer literal, not for a count', () => {
    const wd = st({ name: 'weight_decay', kind: 'constant', file: 'fit.py', type: 'int', default: '0' });
    const epochs = st({ name: 'EPOCHS', kind: 'constant', file: 'fit.py', type: 'int', default: '10' });
    expect(matchSetting(ask('weight decay 0.1'), [wd, epochs])).toMatchObject({ status: 'matched', value: '0.1' });
    expect(matchSetting(ask('epochs 1.5'), [wd, epochs])).toMatchObject({ status: 'bad-value', setting: { name: 'EPOCHS' } });
  });
});

describe('matchSetting: positionals', () => {
  it('finds a positional by its place', () => {
    expect(matchSetting(ask('each of the first argument values 10, 20, 40, 80, 160'), POS)).toMatchObject({
      status: 'matched',
      setting: { name: 'n', position: 0 },
      values: ['10', '20', '40', '80', '160'],
    });
    expect(matchSetting(ask('the second argument = 3'), POS)).toMatchObject({ status: 'matched', setting: { name: 'steps' }, value: '3' });
    expect(matchSetting(ask('the last argument 7'), POS)).toMatchObject({ status: 'matched', setting: { name: 'steps' } });
    expect(matchSetting(ask('n from 1 to 5'), POS)).toMatchObject({
      status: 'matched',
      setting: { name: 'n' },
      values: ['1', '2', '3', '4', '5'],
    });
  });

  it('refuses a place the script does not have, naming its positionals; and a bad value', () => {
    expect(matchSetting(ask('third argument 5'), POS)).toEqual({ status: 'none', closest: POS.filter((s) => s.kind === 'positional') });
    expect(matchSetting(ask('first argument 2.5'), POS)).toMatchObject({
      status: 'bad-value',
      reason: 'n takes a whole number; 2.5 is not one',
    });
  });
});

describe('matchSetting: config-file keys (YAML) and environment variables', () => {
  it('matches a dotted key by its last part and by the lexicon', () => {
    expect(matchSetting(ask('hidden size 64'), YAML)).toMatchObject({
      status: 'matched',
      setting: { name: 'model.hidden_size' },
      value: '64',
    });
    expect(matchSetting(ask('3 epochs'), YAML)).toMatchObject({ status: 'matched', setting: { name: 'trainer.max_epochs' }, value: '3' });
    expect(matchSetting(ask('lr 3e-4'), YAML)).toMatchObject({ status: 'matched', setting: { name: 'optimizer.lr' } });
    expect(matchSetting(ask('2 layers'), YAML)).toMatchObject({ status: 'matched', setting: { name: 'model.num_layers' } });
    expect(matchSetting(ask('model.hidden_size=256'), YAML)).toMatchObject({
      status: 'matched',
      setting: { name: 'model.hidden_size' },
      value: '256',
    });
    expect(matchSetting(ask('batch size 8'), YAML)).toMatchObject({ status: 'matched', setting: { name: 'data.batch_size' } });
    expect(matchSetting(ask('optimizer.name=SGD'), YAML)).toMatchObject({ status: 'matched', value: 'sgd' });
    expect(matchSetting(ask('use the adam optimizer'), YAML)).toMatchObject({
      status: 'matched',
      setting: { name: 'optimizer.name' },
      value: 'adam',
    });
    expect(matchSetting(ask('use the lion optimizer'), YAML)).toMatchObject({ status: 'bad-value', setting: { name: 'optimizer.name' } });
  });

  it('matches an environment variable by name and by the lexicon, and a switch for hardware', () => {
    expect(matchSetting(ask('learning rate 0.01'), ENV)).toMatchObject({ status: 'matched', setting: { env: 'LR' }, value: '0.01' });
    expect(matchSetting(ask('2 epochs'), ENV)).toMatchObject({ status: 'matched', setting: { env: 'EPOCHS' }, value: '2' });
    expect(matchSetting(ask('on CPU'), ENV)).toMatchObject({ status: 'matched', setting: { env: 'USE_CUDA' }, value: 'False' });
    expect(matchSetting(ask('DATA_DIR=/tmp/x'), ENV)).toMatchObject({ status: 'matched', value: '/tmp/x' });
  });
});

describe('matchSetting: help texts, and what is not about a setting', () => {
  it('reads the help text when the name says nothing', () => {
    const odd = [
      flag('--wu', { type: 'int', help: 'number of linear warmup steps' }),
      flag('--ne', { type: 'int', help: 'Number of training epochs' }),
      flag('--k', { type: 'int', help: 'neighbours to consider' }),
    ];
    expect(matchSetting(ask('warmup 100'), odd)).toMatchObject({ status: 'matched', setting: { flag: '--wu' } });
    expect(matchSetting(ask('3 epochs'), odd)).toMatchObject({ status: 'matched', setting: { flag: '--ne' } });
    expect(matchSetting(ask('3 layers'), odd).status).toBe('none');
  });

  it('gives none without candidates for outputs, scale, limits and the like, and never throws on empty surfaces', () => {
    for (const request of ['give me the figures', 'across all available workers', 'under $2', 'run main.py', 'accuracy above 0.9']) {
      expect(matchSetting(ask(request), WLM)).toEqual({ status: 'none', closest: [] });
    }
    expect(matchSetting(ask('2 layers'), [])).toEqual({ status: 'none', closest: [] });
    expect(matchSetting(ask('on CPU'), [])).toEqual({ status: 'none', closest: [] });
    expect(matchSetting({ id: 'a1', kind: 'sweep', text: 'a parameter sweep' }, SIM)).toMatchObject({ status: 'none' });
    expect(matchSetting({ id: 'a1', kind: 'setting', text: '', phrase: '   ', value: '3' }, WLM).status).toBe('none');
  });

  it('matches every setting ask of a request at once', () => {
    const asks = parseAsks('Train for 1 epoch with --emsize 64 --nhid 64 --nlayers 2 on CPU and give me the generated text');
    const m = matchAsks(asks, WLM);
    expect([...m.entries()].map(([k, v]) => [k, matchedId(v), v.status === 'matched' ? v.value : null])).toEqual([
      ['a1', 'main.py#epochs', '1'],
      ['a2', 'main.py#emsize', '64'],
      ['a3', 'main.py#nhid', '64'],
      ['a4', 'main.py#nlayers', '2'],
      ['a5', 'main.py#cuda', 'False'],
    ]);
  });
});

describe('matchSetting: qualified words and script arguments', () => {
  const MNIST = [
    flag('--batch-size', { type: 'int', default: '64' }),
    flag('--test-batch-size', { type: 'int', default: '1000' }),
    flag('--latent-dim', { type: 'int', default: '20' }),
    flag('--hidden-dim', { type: 'int', default: '400' }),
  ];
  it('tells "test batch size" from "batch size" and "latent dim" from an embedding', () => {
    const [train, test] = parseAsks('batch size 32 and test batch size 500');
    expect(matchSetting(train!, MNIST)).toMatchObject({ status: 'matched', setting: { flag: '--batch-size' }, value: '32' });
    expect(matchSetting(test!, MNIST)).toMatchObject({ status: 'matched', setting: { flag: '--test-batch-size' }, value: '500' });
    expect(matchSetting(ask('latent dim 2'), MNIST)).toMatchObject({ status: 'matched', setting: { flag: '--latent-dim' }, value: '2' });
  });
  it('gives numbers after a script to its positionals in order', () => {
    const asks = parseAsks('python scale.py 40 7').filter((a) => a.kind === 'setting');
    expect(asks.map((a) => matchedId(matchSetting(a, POS)))).toEqual(['scale.py#n', 'scale.py#steps']);
  });
});

describe('matchSetting: bad surfaces', () => {
  it('never throws on odd settings: empty or unicode names, empty choices, no help', () => {
    const odd = [
      st({ name: '', kind: 'constant', file: 'x.py' }),
      st({ name: 'δt', kind: 'constant', file: 'x.py', type: 'float' }),
      st({ name: 'mode', kind: 'flag', file: 'x.py', flag: '--mode', choices: [] }),
      st({ name: '__', kind: 'env', file: 'x.py', env: '__' }),
    ];
    for (const request of ['2 layers', 'δt = 0.1', '--mode fast', 'sweep dt over 1, 2', 'on CPU', 'first argument 3']) {
      expect(() => matchSetting(ask(request), odd), request).not.toThrow();
    }
    expect(matchSetting(ask('δt = 0.1'), odd)).toMatchObject({ status: 'matched', setting: { name: 'δt' }, value: '0.1' });
    expect(matchSetting(ask('--mode fast'), odd)).toMatchObject({ status: 'matched', value: 'fast' });
  });

  it('reads a surface of thousands of settings (a correctness check, not a timing)', () => {
    const many = Array.from({ length: 5000 }, (_, k) =>
      st({ name: `param_${k}`, kind: 'config-key', file: 'big.yaml', type: 'int', default: String(k) }),
    );
    many.push(flag('--epochs', { type: 'int' }));
    expect(matchSetting(ask('3 epochs'), many)).toMatchObject({ status: 'matched', setting: { flag: '--epochs' } });
    const none = matchSetting(ask('2 layers'), many);
    expect(none.status === 'none' && none.closest).toHaveLength(5);
  });
});

describe('matchSetting: a count by its noun', () => {
  it('matches "number of particles" and "particles" to n_particles, not max_particles', () => {
    const sim = [
      st({ name: 'n_particles', kind: 'constant', file: 'nbody.py', type: 'int', default: '100' }),
      st({ name: 'max_particles', kind: 'constant', file: 'nbody.py', type: 'int', default: '1000' }),
    ];
    expect(matchSetting(ask('set the number of particles to 1000'), sim)).toMatchObject({
      status: 'matched',
      setting: { name: 'n_particles' },
      value: '1000',
    });
    expect(matchSetting(ask('particles=50'), sim)).toMatchObject({ status: 'matched', setting: { name: 'n_particles' } });
  });
});

describe('coerceValue', () => {
  const int = flag('--n', { type: 'int' });
  const float = flag('--x', { type: 'float' });
  const bool = flag('--b', { type: 'bool' });
  it.each([
    [int, '1e3', '1000'],
    [int, '1_000', '1000'],
    [int, '64.0', '64'],
    [float, '3e-4', '3e-4'],
    [float, "'0.5'", '0.5'],
    [bool, 'True', 'True'],
    [bool, 'yes', 'True'],
    [bool, 'off', 'False'],
    [bool, '0', 'False'],
  ])('%#: %s', (s, value, expected) => {
    expect(coerceValue(value, s)).toEqual({ ok: true, value: expected });
  });
  it('refuses what does not fit', () => {
    expect(coerceValue('1e400', int).ok).toBe(false);
    expect(coerceValue('abc', float).ok).toBe(false);
    expect(coerceValue('2', bool).ok).toBe(false);
    expect(coerceValue('99999999999999999999', int).ok).toBe(false);
  });
});

// csc-training/hpc-python heat_main.py (single-dash argparse flags), scikit-learn's k-means example
// (module constants, a comment read as help), DVC's get-started params.yaml beside another script's
// seed flag, click's hello (--count, --name) and a typer command with a list argument.
const HEAT: Setting[] = [
  st({ name: 'a', flag: '-a', kind: 'flag', file: 'heat_main.py', type: 'float', default: '0.5', help: 'diffusion constant' }),
  st({ name: 'n', flag: '-n', kind: 'flag', file: 'heat_main.py', type: 'int', default: '200', help: 'number of time steps' }),
  st({ name: 'i', flag: '-i', kind: 'flag', file: 'heat_main.py', type: 'int', default: '500', help: 'image interval' }),
  st({ name: 'f', flag: '-f', kind: 'flag', file: 'heat_main.py', type: 'str', default: 'bottle.dat', help: 'input file' }),
];
const KMEANS: Setting[] = [
  st({
    name: 'h',
    kind: 'constant',
    file: 'plot_kmeans_digits.py',
    type: 'float',
    default: '0.02',
    help: 'Step size of the mesh. Decrease to increase the quality of the VQ.',
  }),
  st({ name: 'max_iter', kind: 'constant', file: 'plot_kmeans_digits.py', type: 'int', default: '300', help: null }),
];
const DVC: Setting[] = [
  st({ name: 'seed', flag: '--seed', kind: 'flag', file: 'src/evaluate.py', type: 'int', default: '0' }),
  st({ name: 'train.seed', kind: 'config-key', file: 'params.yaml', format: 'yaml', type: 'int', default: '20170428' }),
  st({ name: 'train.n_est', kind: 'config-key', file: 'params.yaml', format: 'yaml', type: 'int', default: '50' }),
];
const CLICK_HELLO: Setting[] = [
  st({ name: 'count', flag: '--count', kind: 'flag', file: 'hello.py', type: 'int', default: '1', help: 'Number of greetings.' }),
  st({ name: 'name', flag: '--name', kind: 'flag', file: 'hello.py', type: 'str', default: null, help: 'The person to greet.' }),
];

describe('matchSetting: the corpus forms', () => {
  it('matches a described symbol by its name, and the rest by help texts', () => {
    const [sweepA, steps, image] = parseAsks(
      'Sweep the diffusion constant a over 0.1, 0.2 and 0.4, 300 time steps each with an image every 100 steps',
    );
    expect(matchSetting(sweepA!, HEAT)).toEqual({ status: 'matched', setting: HEAT[0], values: ['0.1', '0.2', '0.4'] });
    expect(matchSetting(steps!, HEAT)).toEqual({ status: 'matched', setting: HEAT[1], value: '300' });
    expect(matchSetting(image!, HEAT)).toEqual({ status: 'matched', setting: HEAT[2], value: '100' });
  });

  it("lets a constant's comment that has every word of the ask win over a lexicon word", () => {
    const a: Ask = { id: 'a1', kind: 'setting', text: 'the mesh step 0.05', phrase: 'mesh step', value: '0.05' };
    expect(matchedId(matchSetting(a, KMEANS))).toBe('plot_kmeans_digits.py#h');
    expect(matchedId(matchSetting(ask('a mesh step h of 0.05'), KMEANS))).toBe('plot_kmeans_digits.py#h');
    // One word of the phrase in the comment is not enough: "steps" still means the iterations.
    expect(matchedId(matchSetting(ask('300 steps'), KMEANS))).toBe('plot_kmeans_digits.py#max_iter');
  });

  it('takes the setting of the config file the request names', () => {
    const [trees, seed] = parseAsks('with 100 trees and training seed 7 in params.yaml');
    expect(matchedId(matchSetting(seed!, DVC))).toBe('params.yaml#train.seed');
    expect(matchedId(matchSetting(trees!, DVC))).toBe('params.yaml#train.n_est');
    // Without the file, the seed a command line changes wins the tie (the file is what decides here).
    expect(matchedId(matchSetting(ask('training seed 7'), DVC))).toBe('src/evaluate.py#seed');
  });

  it('reads "N times" as the count and a proper name as the name', () => {
    const [name, times] = parseAsks('for the name Ada Lovelace, 3 times');
    expect(matchSetting(name!, CLICK_HELLO)).toEqual({ status: 'matched', setting: CLICK_HELLO[1], value: 'Ada Lovelace' });
    expect(matchSetting(times!, CLICK_HELLO)).toEqual({ status: 'matched', setting: CLICK_HELLO[0], value: '3' });
  });

  it('gives a list for one run to a list-valued setting item by item, and refuses it for a scalar one', () => {
    const numbers = ask('Sum the numbers 1.5, 2 and 3');
    const list = st({ name: 'numbers', kind: 'positional', file: 'main.py', type: 'list', position: 0 });
    expect(matchSetting(numbers, [list])).toEqual({ status: 'matched', setting: list, values: ['1.5', '2', '3'] });
    const scalar = st({ name: 'numbers', kind: 'positional', file: 'main.py', type: 'float', position: 0 });
    const m = matchSetting(numbers, [scalar]);
    expect(m.status).toBe('bad-value');
    expect(m.status === 'bad-value' && m.reason).toMatch(/takes one value; the request gives 3 .*one run per value/);
  });
});

import { describe, expect, it } from 'vitest';
import { NVIDIA_WORKER, entry, runRules } from '../../../../test/helpers/plannerConversation.js';
import { commandArgs } from './commandArgs.js';

const flag = (f: string, type: string | null, def: string | null = null, action: string | null = null) => ({
  flag: f,
  default: def,
  type,
  help: null,
  action,
});
const MNIST = entry('main.py', {
  savesCheckpoint: true,
  flags: [
    flag('--epochs', 'int', '14'),
    flag('--lr', 'float', '1.0'),
    flag('--seed', 'int', '1'),
    flag('--no-cuda', 'bool', 'False', 'store_true'),
    flag('--save-model', 'bool', 'False', 'store_true'),
    flag('--batch-size', 'int', '64'),
  ],
});
const args = (r: Parameters<typeof runRules>[0]) =>
  runRules({ ...r, reads: { [r.facts!.entryPoints![0]!.path]: r.reads?.src ?? '' } }, commandArgs);

describe('commandArgs', () => {
  it('the request’s run length, seed and numbers for numeric flags; device switches from the worker; the model saved when asked for', () => {
    const { planning } = args({
      request: 'train for 3 epochs with seed 7 and batch size 32, give me the model',
      facts: { usesTorch: true, entryPoints: [MNIST] },
    });
    expect(planning.args).toEqual(['--epochs', '3', '--seed', '7', '--no-cuda', '--save-model', '--batch-size', '32']);
    const gpu = args({
      request: 'train for 3 epochs',
      facts: { usesTorch: true, entryPoints: [MNIST] },
      classes: [NVIDIA_WORKER],
    }).planning;
    expect(gpu.args).toEqual(['--epochs', '3']);
  });

  it('flags the user wrote win; an output flag goes under outputs/ (a model file is the checkpoint); a checkpoint folder is the worker’s', () => {
    const e = entry('train.py', {
      flags: [
        flag('--lr', 'float', '0.1'),
        flag('--save', 'str', 'model.pt'),
        flag('--results', 'str'),
        flag('--out-dir', 'str'),
        flag('--checkpoint-dir', 'str'),
      ],
    });
    const { planning } = args({ request: 'train with --lr 0.5', facts: { entryPoints: [e] } });
    expect(planning.args).toEqual(['--lr', '0.5', '--save', 'outputs/model.pt', '--out-dir', 'outputs', '--checkpoint-dir', 'checkpoint']);
    expect(planning.checkpoint).toBe('outputs/model.pt');
    expect(planning.resumable).toEqual({ path: 'checkpoint', flag: '--checkpoint-dir' });
  });

  it('a required positional takes the request’s number for it, else the job stops naming it; a configurator gets --key=value overrides (an interval no longer than the run, out_dir under outputs/)', () => {
    const pi = entry('pi.py', { positionals: [{ name: 'samples', type: 'int', required: true, help: 'how many draws' }] });
    expect(args({ request: 'estimate pi with 1000000 samples', facts: { entryPoints: [pi] } }).planning).toMatchObject({
      args: ['1000000'],
      positionals: 1,
    });
    expect(args({ request: 'estimate pi', facts: { entryPoints: [pi] } }).answer).toEqual({
      name: 'give_up',
      args: {
        reason:
          'pi.py needs its positional argument `samples` (how many draws), and the request does not give it: say its value, e.g. "with 1000000 samples".',
      },
    });
    const nano = entry('train.py', {
      cli: 'configurator',
      flags: [
        flag('--max_iters', 'int', '5000'),
        flag('--eval_interval', 'int', '250'),
        flag('--out_dir', 'str', 'out'),
        flag('--device', 'str', 'cuda'),
      ],
    });
    const src = "torch.save(checkpoint, os.path.join(out_dir, 'ckpt.pt'))\n";
    const c = args({ request: 'train for 200 iterations', facts: { entryPoints: [nano] }, reads: { src } }).planning;
    expect(c.args).toEqual(['--max_iters=200', '--eval_interval=200', '--out_dir=outputs/out', '--device="$CHATGPU_DEVICE"']);
    expect(c.checkpoint).toBe('outputs/out/ckpt.pt');
  });
});

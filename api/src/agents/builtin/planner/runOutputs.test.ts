import { describe, expect, it } from 'vitest';
import { entry, runRules } from '../../../../test/helpers/plannerConversation.js';
import { literalWrites, runOutputs } from './runOutputs.js';

describe('runOutputs', () => {
  const outs = (src: string, request = 'run it', flags: { flag: string; default: string | null; type: string | null; help: null }[] = []) =>
    runRules({ request, facts: { entryPoints: [entry('train.py', { flags })] }, reads: { 'train.py': src } }, runOutputs).planning;

  it('a literal torch.save path is the checkpoint; files written at literal paths are collected', () => {
    const p = outs("torch.save(model.state_dict(), './model.pt')\nplt.savefig('loss.png')\n");
    expect(p.checkpoint).toBe('model.pt');
    expect([...p.outputs]).toEqual(['outputs', 'model.pt', 'loss.png']);
    expect(p.writes).toEqual(['loss.png', 'model.pt']);
  });

  it('a model path the user gives for a save flag is the checkpoint; ChatGPU’s checkpoint helper makes the run resumable', () => {
    const p = outs('from chatgpu import checkpoint\n', 'train it with --save runs/lm.pt', [
      { flag: '--save', default: 'model.pt', type: 'str', help: null },
    ]);
    expect(p.checkpoint).toBe('runs/lm.pt');
    expect([...p.outputs]).toEqual(['outputs', 'runs/lm.pt']);
    expect(p.resumable).toEqual({ path: 'checkpoint' });
  });

  it('literalWrites: what a script writes at literal paths beside itself, a format field as *; never absolute, outside, under outputs/ or a bare *.ext', () => {
    const source = `
np.save('predict%d.npy' % i, y)
plt.savefig("figs/loss_{}.png".format(epoch))
df.to_csv(f'results_{name}.csv')
torch.save(model.state_dict(), "./model.pt")
with open('log.txt', 'w') as f: pass
open('summary.json', 'wb')
open('data.txt')              # read, not written
np.save('/tmp/x.npy', y)
np.save('../elsewhere.npy', y)
np.save('outputs/already.npy', y)
np.save('%s.npy' % name, y)
np.save(os.path.join(out, 'joined.npy'), y)
`;
    expect(literalWrites(source)).toEqual(['figs/loss_*.png', 'log.txt', 'model.pt', 'predict*.npy', 'results_*.csv', 'summary.json']);
  });
});

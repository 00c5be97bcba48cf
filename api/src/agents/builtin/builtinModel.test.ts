import { describe, expect, it } from 'vitest';
import { literalWrites, requestFlags } from './builtinModel.js';

describe('requestFlags', () => {
  it('reads --name value, --name=value and bare switches the user wrote', () => {
    expect(requestFlags('train it for 1 epoch with --emsize 64, --lr=0.5 and --dry-run')).toEqual(
      new Map<string, string | true>([
        ['emsize', '64'],
        ['lr', '0.5'],
        ['dry-run', true],
      ]),
    );
  });

  it('does not take a following word or flag as a value, strips sentence punctuation and quotes', () => {
    expect(requestFlags('use --cuda and --save "out.pt". Then --epochs 3.')).toEqual(
      new Map<string, string | true>([
        ['cuda', true],
        ['save', 'out.pt'],
        ['epochs', '3'],
      ]),
    );
    expect(requestFlags('--tiny --batch_size 8')).toEqual(new Map<string, string | true>([['tiny', true], ['batch-size', '8']]));
  });
});

describe('literalWrites', () => {
  it('names what a script writes at literal paths beside itself, a format field as *; never absolute, outside, under outputs/ or a bare *.ext', () => {
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

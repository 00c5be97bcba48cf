import { describe, expect, it } from 'vitest';
import { requestFlags } from './builtinModel.js';

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

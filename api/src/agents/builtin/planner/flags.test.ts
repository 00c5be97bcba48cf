import { describe, expect, it } from 'vitest';
import { flagValue, numberBefore, requestFlags, setFlag, shellWord } from './flags.js';

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
    expect(requestFlags('--tiny --batch_size 8')).toEqual(
      new Map<string, string | true>([
        ['tiny', true],
        ['batch-size', '8'],
      ]),
    );
  });
});

describe('setFlag', () => {
  it('sets a flag in the form the command has (`--k v`, `--k=v`, an alias), or adds it as the script takes it', () => {
    expect(setFlag(['--epochs', '10', '--lr=0.1'], ['--epochs'], '2', false)).toEqual(['--epochs', '2', '--lr=0.1']);
    expect(setFlag(['--epochs', '10', '--lr=0.1'], ['--lr'], '0.5', false)).toEqual(['--epochs', '10', '--lr=0.5']);
    expect(setFlag(['-e', '10'], ['--epochs', '-e'], '3', false)).toEqual(['-e', '3']);
    expect(setFlag([], ['--max_iters'], '20', true)).toEqual(['--max_iters=20']);
    expect(setFlag([], ['--name'], 'a b', false)).toEqual(['--name', "'a b'"]);
  });
  it('a switch is removed, then passed again when it is on', () => {
    expect(setFlag(['--cuda', '--x', '1'], ['--cuda'], undefined, false, true)).toEqual(['--x', '1']);
    expect(setFlag(['--x', '1'], ['--cuda'], '', false, true)).toEqual(['--x', '1', '--cuda']);
  });
  it('flagValue, numberBefore, shellWord', () => {
    expect(flagValue(['--a', '1', '--b=2'], '--b')).toBe('2');
    expect(flagValue(['--a', '1'], '--a')).toBe('1');
    expect(numberBefore('with 50_000 samples', 'samples')).toBe('50000');
    expect(numberBefore('batch size 64', 'batch-size')).toBe('64');
    expect(shellWord("it's")).toBe(`'it'\\''s'`);
  });
});

import { describe, expect, it } from 'vitest';
import { tokenizeRequest } from './tokenizeRequest.js';

const shape = (text: string) =>
  tokenizeRequest(text).map((t) => `${t.type}:${t.text}${t.value !== undefined && t.value !== t.text ? `=${t.value}` : ''}`);

describe('tokenizeRequest', () => {
  it('reads numbers as users write them', () => {
    expect(shape('3e-4 1_000 1,000 10k 2.5M 0.5 .5 90% -1 +2')).toEqual([
      'num:3e-4',
      'num:1_000=1000',
      'num:1,000=1000',
      'num:10k=10000',
      'num:2.5M=2500000',
      'num:0.5',
      'num:.5=0.5',
      'num:90%=0.9',
      'num:-1',
      'num:+2=2',
    ]);
  });

  it('keeps names, paths and flags whole', () => {
    expect(shape("run config/train_shakespeare_char.py --max_iters=200 -n 5 n_embd gpt2 init-db run's ./prepare.py")).toEqual([
      'word:run',
      'word:config/train_shakespeare_char.py',
      'flag:--max_iters',
      'punct:=',
      'num:200',
      'flag:-n',
      'num:5',
      'word:n_embd',
      'word:gpt2',
      'word:init-db',
      "word:run's",
      'word:./prepare.py',
    ]);
  });

  it('splits lists, ranges and sentence ends', () => {
    expect(shape('1,2,3 1..5 1-5 end. 0.1*dx')).toEqual([
      'num:1',
      'punct:,',
      'num:2',
      'punct:,',
      'num:3',
      'num:1',
      'punct:..',
      'num:5',
      'num:1',
      'punct:-',
      'num:5',
      'word:end',
      'punct:.',
      'num:0.1',
      'punct:*',
      'word:dx',
    ]);
  });

  it('keeps offsets into the text, for any characters', () => {
    const text = '😀 lr 3e-4\n训练 ＣＰＵ \ud800';
    for (const t of tokenizeRequest(text)) expect(text.slice(t.start, t.end)).toBe(t.text);
    expect(shape('a\nb')).toEqual(['word:a', 'punct:\n', 'word:b']);
  });
});

import { describe, expect, it } from 'vitest';
import { choiceNamed } from './choiceNamed.js';

const scripts = ['main.py', 'train.py'];
const pins = ['Migrate those calls to torch 1.13.0 (checked by a bounded run first)', 'Stop the job'];
const versions = ["Run with the workers' versions", 'Stop the job'];

describe('choiceNamed', () => {
  it('names a choice by its text, whatever the case, spacing and final punctuation', () => {
    expect(choiceNamed('train.py', scripts)).toEqual({ kind: 'named', index: 1, choice: 'train.py', stored: 'train.py' });
    expect(choiceNamed('  STOP   the job. ', versions)).toEqual({
      kind: 'named',
      index: 1,
      choice: 'Stop the job',
      stored: 'Stop the job',
    });
  });

  it('names a choice by its number as shown (1 is the first)', () => {
    for (const said of ['2', '2.', '2)', '#2', 'option 2', 'Choice 2'])
      expect(choiceNamed(said, scripts), said).toMatchObject({ kind: 'named', index: 1, stored: 'train.py' });
    expect(choiceNamed('3', scripts)).toEqual({ kind: 'none' });
    expect(choiceNamed('0', scripts)).toEqual({ kind: 'none' });
  });

  it('a choice whose text is a number is named by that text before any numbering', () => {
    expect(choiceNamed('4', ['1', '4', '8'])).toMatchObject({ kind: 'named', index: 1, choice: '4' });
    expect(choiceNamed('3', ['1', '4', '8'])).toMatchObject({ kind: 'named', index: 2, choice: '8' }); // the third choice
  });

  it('an answer that contains a whole choice keeps the user’s words', () => {
    expect(choiceNamed('train.py please, with the defaults', scripts)).toEqual({
      kind: 'named',
      index: 1,
      choice: 'train.py',
      stored: 'train.py please, with the defaults',
    });
  });

  it('words that belong to one choice only name it (stored as the choice’s text)', () => {
    expect(choiceNamed('train', scripts)).toEqual({ kind: 'named', index: 1, choice: 'train.py', stored: 'train.py' });
    expect(choiceNamed('migrate them', pins)).toMatchObject({ kind: 'named', index: 0 });
    expect(choiceNamed('migrat', pins)).toMatchObject({ kind: 'named', index: 0 });
    expect(choiceNamed('stop', versions)).toMatchObject({ kind: 'named', index: 1, stored: 'Stop the job' });
    expect(choiceNamed("the workers' versions are fine", versions)).toMatchObject({ kind: 'named', index: 0 });
    expect(choiceNamed('run it anyway', versions)).toMatchObject({ kind: 'named', index: 0 });
  });

  it('names none: garbage, little words, words every choice shares, empty answers', () => {
    for (const said of ['%%% garbage', 'yes', 'ok', 'the', 'py', '', '   ', '?!', 'whatever you think'])
      expect(choiceNamed(said, scripts), JSON.stringify(said)).toEqual({ kind: 'none' });
  });

  it('naming several is not naming one', () => {
    expect(choiceNamed('main.py or train.py', scripts)).toEqual({ kind: 'several', choices: ['main.py', 'train.py'] });
    expect(choiceNamed('run it, then stop', versions)).toEqual({
      kind: 'several',
      choices: ["Run with the workers' versions", 'Stop the job'],
    });
  });

  it('the longest choice wins when one choice’s text is inside another’s', () => {
    expect(choiceNamed('python train.py --fast', ['train.py', 'train.py --fast'])).toMatchObject({ kind: 'named', index: 1 });
  });
});

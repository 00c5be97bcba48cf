/**
 * The lexicon: one key for the spellings of a name, the field's synonyms in one group, and names
 * read through their words.
 */
import { describe, expect, it } from 'vitest';
import { LEXICON, compactName, isOutputLocation, lexiconGroups, lexiconGroupsByWords, metricOf, normalizeName } from './lexicon.js';

const ids = (phrase: string) => lexiconGroups(phrase).map((g) => g.id);

describe('normalizeName / compactName', () => {
  it.each([
    ['Learning-Rates', 'learning_rate'],
    ['--n-layers', 'n_layer'],
    ['learningRate', 'learning_rate'],
    ['model.hidden_size', 'model_hidden_size'],
    ['BATCH SIZE', 'batch_size'],
    ['max_iters', 'max_iter'],
    ['bias', 'bias'],
    ['loss', 'loss'],
    ['entries', 'entry'],
    ['', ''],
  ])('normalizeName(%j) = %j', (input, expected) => {
    expect(normalizeName(input)).toBe(expected);
  });

  it('makes case, plural, -, _ and spaces equivalent', () => {
    for (const same of [
      ['n_layers', 'nlayers', 'N-Layer', 'n layer'],
      ['block size', 'block_size', 'blockSize', 'Block-Sizes'],
    ]) {
      expect(new Set(same.map(compactName)).size).toBe(1);
    }
    expect(compactName('n_layer')).not.toBe(compactName('n_head'));
  });
});

describe('lexiconGroups', () => {
  it.each([
    ['iterations', 'iterations'],
    ['iters', 'iterations'],
    ['max_iters', 'iterations'],
    ['MAX_STEPS', 'iterations'],
    ['num-steps', 'iterations'],
    ['total_steps', 'iterations'],
    ['epochs', 'epochs'],
    ['n_epochs', 'epochs'],
    ['max_epochs', 'epochs'],
    ['layers', 'layers'],
    ['n_layer', 'layers'],
    ['nlayers', 'layers'],
    ['depth', 'layers'],
    ['emsize', 'embedding size'],
    ['n_embd', 'embedding size'],
    ['d_model', 'embedding size'],
    ['embed_dim', 'embedding size'],
    ['nhead', 'heads'],
    ['num_heads', 'heads'],
    ['bsz', 'batch size'],
    ['Batch Size', 'batch size'],
    ['bptt', 'block size'],
    ['seq_len', 'block size'],
    ['context length', 'block size'],
    ['lr', 'learning rate'],
    ['eta', 'learning rate'],
    ['wd', 'weight decay'],
    ['random_state', 'seed'],
    ['nhid', 'hidden units'],
    ['num_samples', 'samples'],
    ['warmup_iters', 'warmup'],
    ['temperature', 'temperature'],
    ['top_k', 'top_k'],
    ['eval_interval', 'eval interval'],
    ['log_interval', 'log interval'],
    ['dt', 'time step'],
  ])('%s → %s', (word, group) => {
    expect(ids(word)).toContain(group);
  });

  it('puts hidden_size in both the embedding and the hidden-units groups, and knows nothing of plain words', () => {
    expect(ids('hidden_size').sort()).toEqual(['embedding size', 'hidden units']);
    expect(ids('banana')).toEqual([]);
    expect(ids('')).toEqual([]);
  });

  it('finds every word of a group in that group, however it is spelled', () => {
    for (const g of LEXICON) {
      expect(g.id).not.toBe('');
      for (const w of g.words) {
        expect(lexiconGroups(w), w).toContain(g);
        expect(lexiconGroups(w.toUpperCase().replace(/_/g, '-')), w).toContain(g);
      }
    }
  });
});

describe('lexiconGroupsByWords', () => {
  it('reads a name through its words when every word belongs to the group', () => {
    expect(lexiconGroupsByWords('num_train_epochs').map((g) => g.id)).toEqual(['epochs']);
    expect(lexiconGroupsByWords('total_training_steps').map((g) => g.id)).toEqual(['iterations']);
    expect(lexiconGroupsByWords('min_lr').map((g) => g.id)).toEqual(['learning rate']);
  });
  it('reads nothing from names that mix meanings', () => {
    expect(lexiconGroupsByWords('lr_decay_iters')).toEqual([]);
    expect(lexiconGroupsByWords('eval_iters').map((g) => g.id)).toEqual(['eval iterations']);
    expect(lexiconGroupsByWords('num')).toEqual([]);
  });
});

describe('metricOf and isOutputLocation', () => {
  it('knows which metrics go down', () => {
    expect(metricOf('val loss')).toEqual(expect.objectContaining({ lowerIsBetter: true }));
    expect(metricOf('Perplexity')).toEqual(expect.objectContaining({ lowerIsBetter: true }));
    expect(metricOf('test accuracy')).toEqual(expect.objectContaining({ lowerIsBetter: false }));
    expect(metricOf('banana')).toBeNull();
  });
  it.each([
    'out_dir',
    'output_dir',
    'OUTPUT_DIR',
    '--save-path',
    'checkpoint_dir',
    'log_dir',
    'results_file',
    'outdir',
    'save',
    'model_path',
    'paths.output_dir',
  ])('%s is where outputs go', (name) => {
    expect(isOutputLocation(name)).toBe(true);
  });
  it.each(['max_iters', 'n_layer', 'lr', 'dropout', 'save_interval', 'log_interval', 'eval_interval', 'output_size', 'out_features'])(
    '%s is not',
    (name) => {
      expect(isOutputLocation(name)).toBe(false);
    },
  );
});

describe('short plurals', () => {
  it('"IDs" is the plural of id; three-letter words without a vowel before the s stay (mps, lrs)', () => {
    expect(normalizeName('IDs')).toBe(normalizeName('id'));
    expect(normalizeName('mps')).toBe('mps');
    expect(normalizeName('gas')).toBe('gas');
  });
});

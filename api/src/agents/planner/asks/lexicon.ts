/**
 * The field's words for the same setting, as data: a user says "iterations", a project calls it
 * `max_iters`, `num_steps` or `--iters`. Each group is one meaning; a word may sit in two groups
 * (then a project with both settings is ambiguous, which is the truth). These are the words of
 * the field — never one project's own names — and the only place the parser and the matcher look
 * them up.
 *
 * Equivalence (`compactName`): case, singular/plural, camelCase and the separators `-`, `_`, `.`
 * and spaces do not matter: "Learning-Rates", "learning_rate", "learningRate" and "learning rate"
 * are one key; so are "n_layers", "nlayers" and "n-layer".
 */

export type LexiconValueType = 'int' | 'float' | 'str' | 'bool';

export interface LexiconGroup {
  /** The group's name, used in messages ("the learning rate"). */
  id: string;
  /** What a value of this setting is when the project does not say (a literal `0` for weight decay is still a float). */
  valueType: LexiconValueType;
  words: string[];
}

export const LEXICON: readonly LexiconGroup[] = [
  {
    id: 'iterations',
    valueType: 'int',
    words: [
      'iterations',
      'iters',
      'iter',
      'steps',
      'max_iters',
      'max_iter',
      'max_steps',
      'num_steps',
      'n_steps',
      'train_steps',
      'total_steps',
      'training steps',
      'training iterations',
      'num_iterations',
      'n_iter',
      'n_iters',
      'num_iters',
      'niter',
      'updates',
      'num_updates',
      'max_updates',
      'optimization steps',
      'gradient steps',
      'num_train_steps',
      'total_iters',
    ],
  },
  {
    id: 'epochs',
    valueType: 'int',
    words: ['epochs', 'n_epochs', 'num_epochs', 'max_epochs', 'nepochs', 'training epochs', 'num_train_epochs', 'total_epochs'],
  },
  {
    id: 'layers',
    valueType: 'int',
    words: [
      'layers',
      'n_layer',
      'n_layers',
      'num_layers',
      'nlayers',
      'depth',
      'num_hidden_layers',
      'transformer layers',
      'blocks',
      'n_blocks',
      'num_blocks',
    ],
  },
  {
    id: 'embedding size',
    valueType: 'int',
    words: [
      'embedding',
      'embeddings',
      'embedding size',
      'embedding dim',
      'embedding dimension',
      'embedding_dim',
      'emsize',
      'n_embd',
      'n_embed',
      'd_model',
      'hidden_size',
      'embed_dim',
      'emb_dim',
      'dim',
      'model dim',
      'model dimension',
      'model width',
      'width',
      'dim embedding',
      'dimensional embedding',
      'n_embedding',
      'emb',
      'embd',
      'emb_size',
      'embed_size',
    ],
  },
  {
    id: 'heads',
    valueType: 'int',
    words: ['heads', 'n_head', 'n_heads', 'num_heads', 'nhead', 'nheads', 'attention heads', 'num_attention_heads'],
  },
  {
    id: 'batch size',
    valueType: 'int',
    words: [
      'batch',
      'batch size',
      'batch_size',
      'bs',
      'bsz',
      'minibatch',
      'minibatch size',
      'mini batch size',
      'train_batch_size',
      'per_device_train_batch_size',
    ],
  },
  {
    id: 'block size',
    valueType: 'int',
    words: [
      'block size',
      'block_size',
      'context',
      'context length',
      'context size',
      'context window',
      'context len',
      'seq_len',
      'sequence length',
      'seq_length',
      'sequence len',
      'bptt',
      'max_len',
      'max_seq_len',
      'max_seq_length',
      'max_length',
      'ctx_len',
      'n_ctx',
      'window size',
    ],
  },
  {
    id: 'learning rate',
    valueType: 'float',
    words: ['learning rate', 'lr', 'learning_rate', 'eta', 'base_lr', 'max_lr', 'init_lr', 'initial learning rate', 'peak learning rate'],
  },
  {
    id: 'dropout',
    valueType: 'float',
    words: ['dropout', 'dropout rate', 'drop_rate', 'dropout_p', 'p_dropout', 'dropout_prob', 'drop_prob'],
  },
  { id: 'weight decay', valueType: 'float', words: ['weight decay', 'wd', 'weight_decay', 'l2', 'l2 regularization', 'l2 penalty'] },
  { id: 'seed', valueType: 'int', words: ['seed', 'random seed', 'random_state', 'rng seed', 'manual_seed', 'seeds', 'random_seed'] },
  {
    id: 'hidden units',
    valueType: 'int',
    words: [
      'hidden units',
      'hidden',
      'hidden_dim',
      'nhid',
      'hidden_units',
      'n_hidden',
      'num_hidden',
      'hidden layer size',
      'hidden size',
      'hidden_size',
      'units',
    ],
  },
  { id: 'samples', valueType: 'int', words: ['samples', 'n_samples', 'num_samples', 'sample count', 'nsamples'] },
  {
    id: 'device',
    valueType: 'str',
    words: [
      'device',
      'cpu',
      'cuda',
      'gpu',
      'use_cuda',
      'use_gpu',
      'no_cuda',
      'no_gpu',
      'force_cpu',
      'use_cpu',
      'mps',
      'use_mps',
      'no_mps',
      'accelerator',
    ],
  },
  { id: 'warmup', valueType: 'int', words: ['warmup', 'warmup steps', 'warmup_iters', 'warmup_steps', 'warmup iterations', 'lr warmup'] },
  { id: 'temperature', valueType: 'float', words: ['temperature', 'temp', 'sampling temperature'] },
  { id: 'top_k', valueType: 'int', words: ['top_k', 'topk'] },
  { id: 'top_p', valueType: 'float', words: ['top_p', 'topp', 'nucleus'] },
  {
    id: 'eval interval',
    valueType: 'int',
    words: ['eval interval', 'eval_interval', 'evaluation interval', 'eval_every', 'eval_freq', 'val_interval', 'eval_steps'],
  },
  { id: 'eval iterations', valueType: 'int', words: ['eval_iters', 'eval iterations', 'evaluation iterations', 'eval batches'] },
  {
    id: 'log interval',
    valueType: 'int',
    words: [
      'log interval',
      'log_interval',
      'log_every',
      'logging interval',
      'logging_steps',
      'print_every',
      'print_freq',
      'log_freq',
      'report interval',
    ],
  },
  {
    id: 'save interval',
    valueType: 'int',
    words: [
      'save interval',
      'save_interval',
      'save_every',
      'save_steps',
      'checkpoint interval',
      'ckpt_interval',
      'checkpoint_every',
      'save_freq',
    ],
  },
  {
    id: 'new tokens',
    valueType: 'int',
    words: [
      'max_new_tokens',
      'new tokens',
      'tokens',
      'num_tokens',
      'generation length',
      'gen_len',
      'max_gen_len',
      'characters',
      'chars',
      'words',
    ],
  },
  {
    id: 'gradient accumulation',
    valueType: 'int',
    words: [
      'gradient accumulation steps',
      'gradient_accumulation_steps',
      'grad_accum',
      'grad_accum_steps',
      'accumulation steps',
      'accum_steps',
    ],
  },
  {
    id: 'gradient clipping',
    valueType: 'float',
    words: ['grad_clip', 'gradient clipping', 'clip', 'max_grad_norm', 'clip_grad_norm', 'grad clip', 'clip_norm'],
  },
  { id: 'momentum', valueType: 'float', words: ['momentum'] },
  { id: 'optimizer', valueType: 'str', words: ['optimizer', 'optimiser', 'optim', 'opt'] },
  {
    id: 'dataloader workers',
    valueType: 'int',
    words: ['num_workers', 'dataloader workers', 'data loader workers', 'loader workers', 'data workers'],
  },
  { id: 'compile', valueType: 'bool', words: ['compile', 'torch.compile', 'torch compile', 'use_compile'] },
  { id: 'precision', valueType: 'str', words: ['dtype', 'precision', 'mixed precision', 'amp', 'use_amp'] },
  { id: 'classes', valueType: 'int', words: ['num_classes', 'n_classes', 'classes', 'nclasses'] },
  { id: 'vocabulary size', valueType: 'int', words: ['vocab size', 'vocab_size', 'vocabulary size', 'n_vocab', 'ntokens', 'ntoken'] },
  { id: 'dataset', valueType: 'str', words: ['dataset', 'dataset_name', 'data_name'] },
  { id: 'time step', valueType: 'float', words: ['dt', 'time step', 'delta t', 'delta_t', 'time_step'] },
  { id: 'port', valueType: 'int', words: ['port', 'http port', 'server port', 'listen port'] },
  { id: 'patience', valueType: 'int', words: ['patience', 'early stopping patience'] },
  { id: 'gamma', valueType: 'float', words: ['gamma', 'lr decay', 'lr_decay', 'decay rate'] },
  { id: 'count', valueType: 'int', words: ['count', 'times', 'repeat', 'repeats', 'repetitions', 'n_times', 'num_times', 'repeat count'] },
  {
    id: 'test size',
    valueType: 'float',
    words: [
      'test size',
      'test_size',
      'test split',
      'test_split',
      'test fraction',
      'test_frac',
      'validation split',
      'validation_split',
      'val split',
      'val_split',
      'val_size',
      'holdout',
      'holdout fraction',
    ],
  },
  { id: 'name', valueType: 'str', words: ['name', 'username', 'user name', 'user_name'] },
  {
    id: 'trees',
    valueType: 'int',
    words: ['trees', 'n_estimators', 'estimators', 'num_trees', 'n_trees', 'ntrees', 'n_est', 'num_estimators'],
  },
  { id: 'host', valueType: 'str', words: ['host', 'hostname', 'bind address', 'listen address', 'host address'] },
  {
    id: 'model type',
    valueType: 'str',
    words: ['model type', 'model_type', 'model name', 'model_name', 'arch', 'architecture', 'model architecture'],
  },
];

/** Metrics a request names for an output ("the final loss") or a threshold ("accuracy above 0.9"). */
export const METRICS: readonly { words: string[]; lowerIsBetter: boolean }[] = [
  { words: ['loss', 'val loss', 'validation loss', 'train loss', 'training loss', 'test loss', 'eval loss', 'nll'], lowerIsBetter: true },
  { words: ['perplexity', 'ppl', 'val perplexity', 'test perplexity', 'validation perplexity'], lowerIsBetter: true },
  { words: ['error', 'error rate', 'test error', 'mse', 'rmse', 'mae', 'bpc', 'wer', 'cer'], lowerIsBetter: true },
  {
    words: [
      'accuracy',
      'acc',
      'test accuracy',
      'val accuracy',
      'validation accuracy',
      'train accuracy',
      'top1',
      'top-1 accuracy',
      'f1',
      'f1 score',
      'auc',
      'roc auc',
      'bleu',
      'r2',
      'r2 score',
      'precision',
      'recall',
      'score',
      'reward',
      'mean reward',
      'map',
      'iou',
      'miou',
      'dice',
    ],
    lowerIsBetter: false,
  },
];

/** A setting that says where outputs go (never matched by an ask for a quantity). */
export function isOutputLocation(name: string): boolean {
  const n = normalizeName(name);
  return (
    /(^|_)(out|output|save|checkpoint|ckpt|log|result|export|dest|destination|target)_?(dir|directory|path|file|folder|name|prefix|root|loc)$/.test(
      n,
    ) ||
    /^(out|output|outdir|outfile|save|save_to|savedir|logdir|output_dir|out_dir|save_model|model_path|save_path|checkpoint)$/.test(n) ||
    /_(dir|directory|folder|path|file|filename)$/.test(n)
  );
}

const KEEP_S = new Set([
  'bias',
  'alias',
  'gas',
  'canvas',
  'atlas',
  'series',
  'species',
  'axis',
  'news',
  'its',
  'has',
  'was',
  'this',
  'plus',
  'minus',
  'corpus',
  'status',
  'focus',
]);

function singular(word: string): string {
  // Three letters: only the plural of a two-letter word with a vowel ("ids" → "id"; not "mps", "gas", "its", "has").
  if (word.length < 3 || KEEP_S.has(word) || !word.endsWith('s') || (word.length === 3 && !/^(?=[a-z]*[aeiou])[a-z]{2}s$/.test(word)))
    return word;
  if (word.endsWith('ss') || word.endsWith('us') || word.endsWith('is')) return word;
  if (word.endsWith('ies') && word.length > 4) return `${word.slice(0, -3)}y`;
  return word.slice(0, -1);
}

/** 'Learning-Rates' → 'learning_rate', '--n-layers' → 'n_layer', 'learningRate' → 'learning_rate', 'model.hidden_size' → 'model_hidden_size'. */
export function normalizeName(s: string): string {
  return s
    .replace(/^-+/, '')
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase()
    .split(/[\s_\-.]+/u)
    .filter(Boolean)
    .map(singular)
    .join('_');
}

const COMPACT = new Map<string, string>();

/** normalizeName without separators: 'n_layers', 'nlayers' and 'n layer' are one key ('nlayer'). */
export function compactName(s: string): string {
  let hit = COMPACT.get(s);
  if (hit === undefined) {
    hit = normalizeName(s).replace(/_/g, '');
    // The parser asks for the same few words again and again; bounded so a huge request cannot grow it.
    if (COMPACT.size >= 20_000) COMPACT.clear();
    COMPACT.set(s, hit);
  }
  return hit;
}

const BY_KEY = new Map<string, LexiconGroup[]>();
for (const g of LEXICON) {
  for (const w of g.words) {
    const k = compactName(w);
    const list = BY_KEY.get(k) ?? [];
    if (!list.includes(g)) list.push(g);
    BY_KEY.set(k, list);
  }
}

/** The groups a word or phrase belongs to ([] when the lexicon does not know it). */
export function lexiconGroups(phrase: string): LexiconGroup[] {
  return BY_KEY.get(compactName(phrase)) ?? [];
}

/** Prefixes that only say "how many" or "for training": `num_train_epochs` is about epochs. */
const COUNT_PREFIXES = new Set([
  'num',
  'n',
  'nb',
  'number',
  'of',
  'max',
  'total',
  'train',
  'training',
  'min',
  'init',
  'initial',
  'default',
]);

/** Words that only say "how many": `n_`, `num_`, "number of". */
const COUNT_WORDS = new Set(['num', 'n', 'nb', 'number', 'of', 'no']);

/** A name without its count prefixes, compacted: `n_particles`, `num_particles` and "particles" → 'particle'. */
export function coreName(name: string): string {
  const words = normalizeName(name).split('_').filter(Boolean);
  const core = words.filter((w, k) => !(COUNT_WORDS.has(w) && k < words.length - 1));
  return core.join('');
}

/**
 * The groups a setting's name belongs to through its words, when the whole name is not in the
 * lexicon: `num_train_epochs` → epochs. Every word left after the count prefixes must belong to
 * the group, so `lr_decay_iters` (learning rate + iterations) and `eval_iters` belong to none.
 */
export function lexiconGroupsByWords(name: string): LexiconGroup[] {
  const words = normalizeName(name)
    .split('_')
    .filter((w) => !COUNT_PREFIXES.has(w));
  if (words.length === 0) return [];
  const whole = lexiconGroups(words.join('_'));
  if (whole.length > 0) return whole;
  let common: LexiconGroup[] | null = null;
  for (const w of words) {
    const gs = lexiconGroups(w);
    common = common === null ? gs : common.filter((g) => gs.includes(g));
    if (common.length === 0) return [];
  }
  return common ?? [];
}

const METRIC_BY_KEY = new Map<string, { lowerIsBetter: boolean }>();
for (const m of METRICS) for (const w of m.words) METRIC_BY_KEY.set(compactName(w), m);

export function metricOf(phrase: string): { lowerIsBetter: boolean } | null {
  return METRIC_BY_KEY.get(compactName(phrase)) ?? null;
}

/**
 * The request split into asks (contract.ts): each span of the user's words that asks for
 * something — a setting's value, a sweep, an output, a scale, a threshold, hardware, a cap, a
 * target, a setup step — with the exact words it came from (`text`), in the request's order.
 *
 * How: the request is tokenized (tokenizeRequest.ts); at each token every recognizer below may
 * propose an ask that starts there; the longest wins (ties: the recognizer listed first), and
 * the scan goes on after it. Leftmost-longest keeps "2 layers 4 heads" as two asks rather than
 * "layers 4", and lets "seeds 1 2 3" (a sweep) win over "seeds 1". Every recognizer looks ahead
 * a bounded number of tokens, so the parse is linear in the request's length.
 *
 * Values: `value` is the number as written without separators or suffixes ("1,000" and "1_000"
 * → "1000", "10k" → "10000", "two" → "2", "90%" → "0.9"; "3e-4" stays "3e-4"); a word value is
 * as written ("cpu", "AdamW", "False").
 *
 * Lists: several values for a lexicon word ("seeds 1 2 3", "learning rates 1e-3, 3e-4") or a range
 * for any noun ("IDs 1 to 5") are a sweep. Other nouns with a list ("the numbers 1.5, 2 and 3", "the
 * users alice, bob and carol") are one setting with the items in `values` (and `value` the items
 * joined by spaces), for a list-valued option of one run — unless the request asks for "one run per
 * …" that noun (or per value), which makes them a sweep. A bare flag named like the list ("with
 * --user") names it.
 *
 * Words that ask for nothing ("please", "give me", "train it") produce nothing.
 */
import type { Ask, OutputWanted } from '../contract.js';
import { compactName, lexiconGroups, metricOf, type LexiconGroup } from './lexicon.js';
import { tokenizeRequest, type Token } from './tokenizeRequest.js';

type Draft = Omit<Ask, 'id' | 'text'>;
/** A proposed ask over tokens first..last (inclusive). */
interface Found {
  first: number;
  last: number;
  ask: Draft;
}

/** Sweeps longer than this keep no values (the planner asks) rather than a truncated list. */
const MAX_SWEEP_VALUES = 64;

const NUMBER_WORDS: Record<string, number> = {
  zero: 0,
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  eleven: 11,
  twelve: 12,
  thirteen: 13,
  fourteen: 14,
  fifteen: 15,
  sixteen: 16,
  seventeen: 17,
  eighteen: 18,
  nineteen: 19,
  twenty: 20,
  thirty: 30,
  forty: 40,
  fifty: 50,
  sixty: 60,
  seventy: 70,
  eighty: 80,
  ninety: 90,
  single: 1,
  dozen: 12,
  once: 1,
  twice: 2,
};

/** Words that are never a setting's name or a word value. */
const STOP = new Set([
  'a',
  'an',
  'the',
  'and',
  'or',
  'with',
  'without',
  'for',
  'on',
  'in',
  'at',
  'to',
  'of',
  'by',
  'from',
  'into',
  'over',
  'across',
  'using',
  'use',
  'then',
  'it',
  'its',
  "it's",
  'this',
  'that',
  'these',
  'those',
  'me',
  'my',
  'i',
  'we',
  'you',
  'your',
  'please',
  'run',
  'train',
  'is',
  'are',
  'be',
  'as',
  'each',
  'every',
  'all',
  'some',
  'also',
  'just',
  'only',
  'than',
  'per',
  'via',
  'so',
  'but',
  'not',
  'no',
  'yes',
  'if',
  'when',
  'while',
  'after',
  'before',
  'first',
  'then',
  'give',
  'get',
  'set',
  'make',
  'let',
  'can',
  'could',
  'would',
  'should',
  'will',
  'do',
  'does',
  'did',
  'have',
  'has',
  'them',
  'they',
  'there',
  'here',
  'what',
  'which',
  'how',
  'values',
  'value',
  'times',
  'runs',
  'both',
  'either',
  'try',
  'until',
  'up',
  'down',
  'out',
  'about',
  'around',
  'like',
  'want',
  'need',
  'go',
  'sweep',
  'between',
  'through',
  'under',
  'above',
  'below',
  'within',
  'thanks',
  'thank',
  'again',
  'too',
  'very',
  'much',
  'more',
  'less',
  'same',
]);

/** Units that end a list of numbers: in "seeds 1, 2 and 3 workers" the 3 belongs to the workers. */
const OTHER_UNITS = new Set([
  'workers',
  'worker',
  'machines',
  'machine',
  'nodes',
  'node',
  'gpus',
  'gpu',
  'hosts',
  'minutes',
  'minute',
  'mins',
  'min',
  'hours',
  'hour',
  'hrs',
  'hr',
  'seconds',
  'second',
  'secs',
  'sec',
  'days',
  'values',
  'value',
  'times',
  'runs',
  'dollars',
  'dollar',
  'usd',
  'bucks',
  'cents',
  'euros',
  'shards',
  'copies',
  'replicas',
  'trials',
  'x',
  // "--score 99.5, one run per ID": the count of runs is not one more value.
  'run',
  'job',
  'jobs',
  'shard',
  'process',
  'processes',
]);

const OUTPUT_VERBS = new Set([
  'give',
  'return',
  'send',
  'save',
  'saving',
  'keep',
  'store',
  'write',
  'export',
  'download',
  'collect',
  'hand',
  'get',
  'want',
  'need',
  'produce',
  'include',
  'attach',
  'show',
  'print',
  'upload',
  'deliver',
  'share',
  'dump',
  'bring',
  'provide',
  'plot',
  'output',
  'report',
  'display',
  'fetch',
  'like',
  'returns',
  'gives',
  'saves',
  'outputs',
  'see',
  'expect',
  'receive',
  'grab',
  'pull',
  'copy',
  'generate',
  'emit',
  'record',
  'log',
  'tell',
]);
/** Verbs after which a noun is what is acted on, not what is handed back ("train the model"). */
const ACTION_VERBS = new Set([
  'train',
  'trains',
  'run',
  'runs',
  'use',
  'using',
  'execute',
  'launch',
  'start',
  'fine-tune',
  'finetune',
  'evaluate',
  'test',
  'load',
  'resume',
  'initialise',
  'initialize',
  'init',
  'prepare',
  'fit',
  'build',
  'serve',
  'deploy',
  'from',
  'benchmark',
  'profile',
  'debug',
  'fix',
  'port',
  'migrate',
  'compile',
  'tune',
  'finetuning',
  'retrain',
]);
/** Words before "dataset" that say which part or whose, not which one. */
const DATASET_ADJ =
  /^(included|default|same|full|whole|entire|small|tiny|training|train|test|validation|val|my|your|our|this|that|new|own|provided|bundled|given|sample|toy|local|real|synthetic|original|whole|input|example|demo|custom|bigger|smaller|larger|large|big|other|following|above|existing|downloaded|prepared|raw|processed|clean)$/;
const INPUT_WORDS = new Set([
  'from',
  'load',
  'loading',
  'loads',
  'resume',
  'resuming',
  'pretrained',
  'pre-trained',
  'initial',
  'init',
  'using',
  'on',
  'read',
  'reading',
  'with',
  'restore',
  'restoring',
]);
/** The words a limit can start with (besides a price). */
const LIMIT_START = new Set([
  'a',
  'in',
  'no',
  'less',
  'at',
  'up',
  'time',
  'budget',
  'cap',
  'limit',
  'timeout',
  'deadline',
  'within',
  'under',
  'below',
  'max',
  'maximum',
  'for',
  'costing',
  'cost',
  'spend',
  'spending',
  'before',
  'takes',
  'take',
  'taking',
  'more',
  '$',
  '€',
  '£',
]);
/** Words that make a lexicon word another setting's name: "test batch size", "latent dim", "max sequence length". */
const QUALIFIERS = new Set([
  'test',
  'eval',
  'val',
  'valid',
  'validation',
  'train',
  'training',
  'latent',
  'max',
  'min',
  'maximum',
  'minimum',
  'input',
  'encoder',
  'decoder',
  'discriminator',
  'generator',
  'critic',
  'actor',
  'policy',
  'target',
  'teacher',
  'student',
  'inner',
  'outer',
  'local',
  'global',
  'generation',
  'sampling',
  'embedding',
  'attention',
  'projection',
  'ffn',
  'mlp',
  'head',
  'image',
  'patch',
  'text',
  'vision',
  'noise',
  'prompt',
  'sample',
  'inference',
  'predict',
  'prediction',
  'query',
  'key',
]);
const BOOL_WORDS = new Set(['yes', 'no', 'true', 'false', 'on', 'off', 'none']);
const EVERY_VERBS =
  /^(eval|evaluate|evaluating|validate|validating|log|logging|print|printing|report|reporting|save|saving|checkpoint|checkpointing|test|testing)$/;
const BOUNDARY = new Set(['.', '!', '?', ';', '\n']);

const DETERMINERS = new Set(['the', 'a', 'an', 'my', 'your', 'its', 'all', 'any', 'some', 'our', 'their', 'his', 'her']);
const OUTPUT_ADJ = new Set([
  'trained',
  'final',
  'resulting',
  'best',
  'saved',
  'fine-tuned',
  'finetuned',
  'learned',
  'last',
  'generated',
  'new',
]);

const SCRIPT_EXT = /\.(py|sh|bash|ipynb|r|jl|js|mjs|ts|pl|rb|lua)$/i;
const CONFIG_EXT = /\.(ya?ml|json|toml|cfg|ini|conf)$/i;
const OUTPUT_EXT =
  /\.(csv|tsv|json|jsonl|png|jpe?g|svg|pdf|gif|mp4|wav|txt|pt|pth|ckpt|bin|safetensors|onnx|npy|npz|h5|hdf5|pkl|pickle|joblib|log|md|html|parquet|xlsx|tar|zip|gz)$/i;

const HARDWARE: Record<string, string> = {
  cpu: 'cpu',
  cpus: 'cpu',
  'cpu-only': 'cpu',
  nvidia: 'nvidia',
  cuda: 'nvidia',
  h100: 'nvidia',
  h200: 'nvidia',
  a100: 'nvidia',
  v100: 'nvidia',
  t4: 'nvidia',
  l4: 'nvidia',
  a10: 'nvidia',
  a10g: 'nvidia',
  rtx: 'nvidia',
  geforce: 'nvidia',
  tesla: 'nvidia',
  'nvidia-gpu': 'nvidia',
  amd: 'amd',
  rocm: 'amd',
  radeon: 'amd',
  mi300: 'amd',
  mi300x: 'amd',
  mi250: 'amd',
  mi250x: 'amd',
  instinct: 'amd',
  hip: 'amd',
  mps: 'apple',
  apple: 'apple',
  m1: 'apple',
  m2: 'apple',
  m3: 'apple',
  m4: 'apple',
  mac: 'apple',
  macbook: 'apple',
  gpu: 'gpu',
  gpus: 'gpu',
  accelerator: 'gpu',
};
const HARDWARE_TAIL = new Set([
  'gpu',
  'gpus',
  'card',
  'cards',
  'machine',
  'machines',
  'worker',
  'workers',
  'only',
  'silicon',
  'box',
  'device',
  'chip',
]);

/** Words that count or group rather than name a quantity: "a total of 5", "a batch of 32", "a couple of runs". */
const QUANTIFIERS =
  /^(total|maximum|minimum|max|min|number|lot|lots|couple|set|group|list|series|sequence|range|sweep|subset|fraction|percentage|bunch|few|handful|multiple|factor|minimum|sample|copy|version|run|runs|part|piece|budget|cap|limit|deadline|timeout|cost|price|time|duration|length)$/;
const FIGURE_WORDS = /^(figures?|plots?|charts?|graphs?|visuali[sz]ations?|pngs|diagrams?|heatmaps?|histograms?)$/;
const FRAMEWORKS =
  /^(flask|fastapi|django|streamlit|gradio|express|node|node\.js|python|javascript|js|typescript|react|vue|uvicorn|gunicorn|jupyter|dash|bokeh|tornado|starlette|sanic|aiohttp|web|http|https|rest|json|html|api|wsgi|asgi)$/;

const OPTIMIZERS = new Set([
  'adam',
  'adamw',
  'sgd',
  'rmsprop',
  'adagrad',
  'adadelta',
  'lamb',
  'lion',
  'adafactor',
  'nadam',
  'radam',
  'lbfgs',
  'l-bfgs',
  'adamax',
  'sophia',
  'muon',
]);

const ORDINALS: Record<string, number> = {
  first: 1,
  second: 2,
  third: 3,
  fourth: 4,
  fifth: 5,
  sixth: 6,
  '1st': 1,
  '2nd': 2,
  '3rd': 3,
  '4th': 4,
  '5th': 5,
  '6th': 6,
  last: -1,
};

const POSITION_NAMES = ['first', 'second', 'third', 'fourth', 'fifth', 'sixth'];
const SETUP_VERBS = new Set([
  'initialise',
  'initialize',
  'init',
  'setup',
  'create',
  'prepare',
  'download',
  'migrate',
  'populate',
  'install',
  'fetch',
  'preprocess',
  'tokenize',
  'tokenise',
  'build',
  'seed',
  'bootstrap',
  'generate',
]);
const SETUP_OBJECTS = new Set([
  'database',
  'db',
  'data',
  'dataset',
  'datasets',
  'schema',
  'tables',
  'table',
  'vocab',
  'vocabulary',
  'tokenizer',
  'environment',
  'env',
  'requirements',
  'dependencies',
  'deps',
  'corpus',
  'migrations',
  'index',
  'cache',
  'sqlite',
  'postgres',
  'weights',
  'embeddings',
  'splits',
  'shards',
  'files',
]);

const TIME_UNITS: Record<string, number> = {
  s: 1,
  sec: 1,
  secs: 1,
  second: 1,
  seconds: 1,
  m: 60,
  min: 60,
  mins: 60,
  minute: 60,
  minutes: 60,
  h: 3600,
  hr: 3600,
  hrs: 3600,
  hour: 3600,
  hours: 3600,
  d: 86400,
  day: 86400,
  days: 86400,
};

const THRESHOLD_OPS: { words: string[]; op: '<' | '<=' | '>' | '>=' }[] = [
  { words: ['greater', 'than', 'or', 'equal', 'to'], op: '>=' },
  { words: ['less', 'than', 'or', 'equal', 'to'], op: '<=' },
  { words: ['of', 'at', 'least'], op: '>=' },
  { words: ['of', 'at', 'most'], op: '<=' },
  { words: ['no', 'less', 'than'], op: '>=' },
  { words: ['no', 'more', 'than'], op: '<=' },
  { words: ['at', 'least'], op: '>=' },
  { words: ['at', 'most'], op: '<=' },
  { words: ['greater', 'than'], op: '>' },
  { words: ['more', 'than'], op: '>' },
  { words: ['higher', 'than'], op: '>' },
  { words: ['better', 'than'], op: '>' },
  { words: ['less', 'than'], op: '<' },
  { words: ['lower', 'than'], op: '<' },
  { words: ['smaller', 'than'], op: '<' },
  { words: ['above'], op: '>' },
  { words: ['over'], op: '>' },
  { words: ['exceeds'], op: '>' },
  { words: ['exceed'], op: '>' },
  { words: ['exceeding'], op: '>' },
  { words: ['beyond'], op: '>' },
  { words: ['below'], op: '<' },
  { words: ['under'], op: '<' },
  { words: ['>='], op: '>=' },
  { words: ['<='], op: '<=' },
  { words: ['≥'], op: '>=' },
  { words: ['≤'], op: '<=' },
  { words: ['>'], op: '>' },
  { words: ['<'], op: '<' },
];

class Parser {
  private readonly ctx: boolean[];
  /** After a negated output verb ("I don't need plots"): what follows is not wanted. */
  private readonly unwanted: boolean[] = [];

  constructor(
    private readonly text: string,
    private readonly t: Token[],
  ) {
    this.ctx = this.outputContext();
  }

  // ---- token helpers ----

  w(i: number): string {
    const tok = this.t[i];
    return tok && (tok.type === 'word' || tok.type === 'punct' || tok.type === 'flag') ? tok.lower : '';
  }
  isWord(i: number): boolean {
    return this.t[i]?.type === 'word';
  }
  isBoundary(i: number): boolean {
    const tok = this.t[i];
    return !tok || (tok.type === 'punct' && BOUNDARY.has(tok.text));
  }
  /** The words at i.. equal `words` (lower case)? */
  seq(i: number, words: readonly string[]): boolean {
    return words.every((word, k) => this.w(i + k) === word);
  }
  /** Tokens i and i+1 are written together ("1-5", "=64"). */
  glued(i: number): boolean {
    const a = this.t[i];
    const b = this.t[i + 1];
    return !!a && !!b && a.end === b.start;
  }
  isIdentifier(i: number): boolean {
    const tok = this.t[i];
    return !!tok && tok.type === 'word' && /^[\p{L}_][\p{L}\p{N}_.]*$/u.test(tok.text) && !STOP.has(tok.lower) && !tok.text.endsWith('.');
  }
  /** snake_case, camelCase or a name with digits: a setting's name, not an English word. */
  isCodeName(i: number): boolean {
    const tok = this.t[i];
    if (!tok || !this.isIdentifier(i)) return false;
    // n_embd, batchSize, LR_2 — not "Adam", "MNIST" or "I".
    return /_/.test(tok.text) || /[a-z][A-Z]/.test(tok.text);
  }

  /** A number at i: digits, or words ("two", "a single", "a hundred", "twenty-five"). */
  num(i: number): { value: string; n: number; last: number } | null {
    const tok = this.t[i];
    if (!tok) return null;
    if (tok.type === 'num') return { value: tok.value!, n: Number(tok.value), last: i };
    if (tok.type !== 'word') return null;
    if (!(tok.lower in NUMBER_WORDS) && tok.lower !== 'a' && tok.lower !== 'an' && !tok.lower.includes('-')) return null;
    let k = i;
    let base: number | undefined;
    if ((tok.lower === 'a' || tok.lower === 'an') && this.isWord(i + 1)) {
      const next = this.w(i + 1);
      if (next === 'single') return { value: '1', n: 1, last: i + 1 };
      if (next === 'hundred' || next === 'thousand' || next === 'dozen') {
        base = 1;
        k = i;
      } else return null;
    } else {
      const parts = tok.lower.split('-');
      if (parts.length > 2 || !parts.every((p) => p in NUMBER_WORDS)) return null;
      base = parts.reduce((s, p) => s + NUMBER_WORDS[p]!, 0);
    }
    const mult = this.w(k + 1);
    if (mult === 'hundred') return { value: String(base * 100), n: base * 100, last: k + 1 };
    if (mult === 'thousand') return { value: String(base * 1000), n: base * 1000, last: k + 1 };
    if (mult === 'dozen' && tok.lower !== 'dozen') return { value: String(base * 12), n: base * 12, last: k + 1 };
    if (k !== i) return null;
    return { value: String(base), n: base, last: i };
  }

  /** The longest lexicon term at i (up to 4 words; "number of" before it is part of it). */
  private readonly terms = new Map<number, { phrase: string; groups: LexiconGroup[]; last: number } | null>();

  term(i: number): { phrase: string; groups: LexiconGroup[]; last: number } | null {
    let hit = this.terms.get(i);
    if (hit === undefined) {
      hit = this.readTerm(i);
      this.terms.set(i, hit);
    }
    return hit;
  }

  private readTerm(i: number): { phrase: string; groups: LexiconGroup[]; last: number } | null {
    let start = i;
    if (this.w(i) === 'number' && this.w(i + 1) === 'of') start = i + 2;
    else if (this.w(i) === 'num' || this.w(i) === 'no.') start = i + 1;
    for (let n = 4; n >= 1; n--) {
      let ok = true;
      for (let k = start; k < start + n; k++) if (!this.isWord(k) && this.t[k]?.type !== 'flag') ok = false;
      if (!ok) continue;
      const phrase = this.span(start, start + n - 1);
      const groups = lexiconGroups(phrase);
      if (groups.length > 0) return { phrase, groups, last: start + n - 1 };
    }
    return null;
  }

  span(first: number, last: number): string {
    return this.text.slice(this.t[first]!.start, this.t[last]!.end);
  }

  /** Is the token at i a unit that takes the number before it? */
  isUnitAt(i: number): boolean {
    if (this.t[i]?.type === 'punct' && this.t[i]?.text === '%') return true;
    const w = this.w(i);
    if (OTHER_UNITS.has(w)) return true;
    if (this.t[i]?.type === 'punct' && this.t[i]?.text === '-' && this.glued(i - 1)) return !!this.term(i + 1);
    return !!this.term(i) && !STOP.has(w);
  }

  /**
   * Values at i: one number, a list ("0.1, 0.05 and 0.01", "1 2 3", "[1, 2, 4]"), or a range
   * ("1 to 5", "from 1 to 5", "between 1 and 5", "1..5", "1-5", with "step 2"). A list's last
   * number followed by a unit is left to the unit ("n_embd 64, 2 layers").
   */
  values(
    i: number,
    opts: { spaces?: boolean; words?: boolean } = {},
  ): { values: string[] | null; last: number; range?: [string, string]; fromTo?: boolean } | null {
    let j = i;
    let close: string | null = null;
    const open = this.t[j];
    if (open?.type === 'punct' && (open.text === '[' || open.text === '{' || open.text === '(')) {
      close = open.text === '[' ? ']' : open.text === '{' ? '}' : ')';
      j++;
    }
    let fromTo = false;
    let between = false;
    if (this.w(j) === 'from' && !close) {
      fromTo = true;
      j++;
    } else if (this.w(j) === 'between' && !close) {
      between = true;
      j++;
    }
    const first = this.num(j);
    if (!first) {
      if (opts.words && !fromTo && !between) return this.wordValues(j, close);
      return null;
    }
    // A range.
    const sepAt = first.last + 1;
    const sep = this.w(sepAt);
    const rangeSep = between
      ? sep === 'and'
      : sep === 'to' ||
        sep === 'through' ||
        sep === 'thru' ||
        sep === 'until' ||
        sep === '..' ||
        sep === '–' ||
        sep === '—' ||
        (sep === '-' && this.glued(first.last) && this.glued(sepAt));
    if (rangeSep) {
      const second = this.num(sepAt + 1);
      if (second) {
        let last = second.last;
        let step = 1;
        if ((this.w(last + 1) === 'step' || this.w(last + 1) === 'by') && this.num(last + 2)) {
          step = Math.abs(this.num(last + 2)!.n);
          last = this.num(last + 2)!.last;
        } else if (this.seq(last + 1, ['in', 'steps', 'of']) && this.num(last + 4)) {
          step = Math.abs(this.num(last + 4)!.n);
          last = this.num(last + 4)!.last;
        }
        if (close && this.w(last + 1) === close) last++;
        const a = first.n;
        const b = second.n;
        let values: string[] | null = null;
        if (Number.isInteger(a) && Number.isInteger(b) && Number.isInteger(step) && step > 0) {
          const count = Math.floor(Math.abs(b - a) / step) + 1;
          if (count <= MAX_SWEEP_VALUES) {
            values = [];
            const dir = b >= a ? 1 : -1;
            for (let k = 0; k < count; k++) values.push(String(a + dir * k * step));
          }
        }
        return { values, last, range: [first.value, second.value], fromTo };
      }
    }
    if (fromTo || between) return null;
    // A list.
    const vals = [first.value];
    const lasts = [first.last];
    let last = first.last;
    for (let guard = 0; guard < MAX_SWEEP_VALUES * 3; guard++) {
      let k = last + 1;
      const s = this.w(k);
      if (s === ',' || s === '/' || s === '|') {
        k++;
        if (this.w(k) === 'and' || this.w(k) === 'or') k++;
      } else if (s === 'and' || s === 'or') k++;
      else if (!(opts.spaces || close) || this.t[k]?.type !== 'num') break;
      const next = this.num(k);
      if (!next) break;
      vals.push(next.value);
      lasts.push(next.last);
      last = next.last;
    }
    // The last number of a list may belong to the unit after it.
    while (vals.length > 1 && this.isUnitAt(last + 1)) {
      vals.pop();
      lasts.pop();
      last = lasts[lasts.length - 1]!;
    }
    if (close) {
      if (this.w(last + 1) === close) last++;
      else if (vals.length === 1) return { values: vals, last: first.last };
    }
    return { values: vals.length > MAX_SWEEP_VALUES ? null : vals, last };
  }

  /** A list of word values ("adam, sgd and rmsprop"): two or more. */
  private wordValues(i: number, close: string | null): { values: string[]; last: number } | null {
    const vals: string[] = [];
    let k = i;
    let last = i - 1;
    while (this.isIdentifier(k) && vals.length < MAX_SWEEP_VALUES) {
      vals.push(this.t[k]!.text);
      last = k;
      const s = this.w(k + 1);
      if (s === ',') k = this.w(k + 2) === 'and' || this.w(k + 2) === 'or' ? k + 3 : k + 2;
      else if (s === 'and' || s === 'or') k += 2;
      else break;
    }
    if (vals.length < 2) return null;
    if (close && this.w(last + 1) === close) last++;
    return { values: vals, last };
  }

  /** A setting ask or, with several values, a sweep. */
  settingOrSweep(first: number, phrase: string, v: NonNullable<ReturnType<Parser['values']>>): Found {
    if (v.range) {
      // "change the learning rate from 1e-3 to 1e-4" sets it; "n from 1 to 5" sweeps it.
      if (v.fromTo && this.changeVerbBefore(first)) return { first, last: v.last, ask: { kind: 'setting', phrase, value: v.range[1] } };
      return { first, last: v.last, ask: { kind: 'sweep', phrase, ...(v.values ? { values: v.values } : {}) } };
    }
    if (v.values && v.values.length === 1) return { first, last: v.last, ask: { kind: 'setting', phrase, value: v.values[0]! } };
    return { first, last: v.last, ask: { kind: 'sweep', phrase, ...(v.values ? { values: v.values } : {}) } };
  }

  changeVerbBefore(i: number): boolean {
    for (let k = i - 1; k >= Math.max(0, i - 3); k--) {
      if (
        /^(change|changing|increase|increasing|decrease|decreasing|reduce|reducing|lower|lowering|raise|raising|bump|drop|move|switch|set|go|goes)$/.test(
          this.w(k),
        )
      )
        return true;
      if (this.isBoundary(k)) return false;
    }
    return false;
  }

  /** Output context: after an output verb ("give me", "save", "I want") and before a boundary or an action verb. */
  private outputContext(): boolean[] {
    const ctx: boolean[] = new Array(this.t.length).fill(false);
    let on = false;
    let neg = false;
    for (let i = 0; i < this.t.length; i++) {
      const w = this.w(i);
      if (this.isBoundary(i) || w === 'but' || w === 'just') neg = false;
      if (this.isBoundary(i)) on = false;
      else if (ACTION_VERBS.has(w) && !(w === 'from' && on)) on = false;
      else if (OUTPUT_VERBS.has(w)) {
        // "the report" is a noun, "report the loss" a verb; "I don't need plots" wants none.
        if (w === 'report' && DETERMINERS.has(this.w(i - 1))) {
          /* a noun */
        } else {
          neg = /^(don't|not|never|no|dont|doesn't|won't)$/.test(this.w(i - 1));
          on = !neg;
        }
      }
      ctx[i] = on;
      this.unwanted[i] = neg;
    }
    return ctx;
  }

  /** The output verb whose context covers token i ("" when none). */
  outputVerb(i: number): string {
    for (let k = i - 1; k >= 0 && !this.isBoundary(k); k--)
      if (OUTPUT_VERBS.has(this.w(k)) || /^(tell|show)$/.test(this.w(k))) return this.w(k);
    return '';
  }

  // ---- recognizers: each proposes the ask that starts at token i, or null ----

  /** `--emsize 64`, `--epochs=3`, `--seeds 1 2 3`, `--device cpu`, `--cuda`. */
  flag(i: number): Found | null {
    const tok = this.t[i];
    if (tok?.type !== 'flag') return null;
    const phrase = tok.text;
    if (this.w(i + 1) === '=' && this.glued(i)) {
      const v = this.values(i + 2, { spaces: false });
      if (v) return this.settingOrSweep(i, phrase, v);
      const val = this.rawValue(i + 2);
      if (val) return { first: i, last: val.last, ask: { kind: 'setting', phrase, value: val.value } };
      return { first: i, last: i, ask: { kind: 'setting', phrase } };
    }
    const v = this.values(i + 1, { spaces: true });
    if (v) return this.settingOrSweep(i, phrase, v);
    const next = this.t[i + 1];
    // "--device cuda:0", "--data ./data/wikitext-2", "--model LSTM" — but in "--cuda dropout 0.1" the word is the next ask's.
    const nt = next?.type === 'word' ? this.term(i + 1) : null;
    const nextStartsAsk =
      !!nt &&
      ((this.num(nt.last + 1) !== null && !this.glued(nt.last)) ||
        this.w(nt.last + 1) === '=' ||
        (this.w(nt.last + 1) === ':' && !this.glued(nt.last)));
    if (next && (next.type === 'word' || next.type === 'punct') && !nextStartsAsk && !(next.type === 'word' && STOP.has(next.lower))) {
      const raw = this.rawValue(i + 1);
      if (raw) return { first: i, last: raw.last, ask: { kind: 'setting', phrase, value: raw.value } };
    }
    return { first: i, last: i, ask: { kind: 'setting', phrase } };
  }

  /** A word value or a quoted one at i: cpu, 'cpu', "gpt2", True. */
  rawValue(i: number): { value: string; last: number } | null {
    const tok = this.t[i];
    if (!tok) return null;
    if (tok.type === 'punct' && (tok.text === '"' || tok.text === "'" || tok.text === '`')) {
      for (let k = i + 1; k < Math.min(this.t.length, i + 12); k++) {
        if (this.t[k]!.text === tok.text)
          return k > i + 1 ? { value: this.text.slice(this.t[i + 1]!.start, this.t[k - 1]!.end), last: k } : null;
      }
      return null;
    }
    // A path or a value written without spaces: "/tmp/x", "cuda:0", "./data/wikitext-2".
    let last = i;
    while (this.t[last + 1] && this.glued(last) && !this.isBoundary(last + 1) && !/^[,)\]}"'`]$/.test(this.t[last + 1]!.text)) last++;
    while (last > i && /^[.:;!?]$/.test(this.t[last]!.text)) last--;
    if (last > i) return { value: this.span(i, last), last };
    if (tok.type === 'word' && (!STOP.has(tok.lower) || BOOL_WORDS.has(tok.lower))) return { value: tok.text, last: i };
    return null;
  }

  /** `n_embd=64`, `dt = 0.1*dx*dx`, `device=cpu`, `seeds = 1, 2, 3`, `lr: 3e-4`. */
  assign(i: number): Found | null {
    if (!this.isIdentifier(i)) return null;
    const op = this.w(i + 1);
    const code = this.isCodeName(i) || !!this.term(i);
    if (!(op === '=' || (op === ':' && code))) return null;
    const phrase = this.t[i]!.text;
    const v = this.values(i + 2, { spaces: false });
    if (v) {
      // An expression: "dt = 0.1*dx*dx" — its text is the value.
      const after = this.w(v.last + 1);
      if (v.values?.length === 1 && !v.range && /^[*/+^]$/.test(after)) {
        let last = v.last;
        while (this.t[last + 1] && this.glued(last) && !this.isBoundary(last + 1) && this.w(last + 1) !== ',') last++;
        return { first: i, last, ask: { kind: 'setting', phrase, value: this.span(i + 2, last) } };
      }
      return this.settingOrSweep(i, phrase, v);
    }
    const raw = this.rawValue(i + 2);
    if (raw) return { first: i, last: raw.last, ask: { kind: 'setting', phrase, value: raw.value } };
    return null;
  }

  /** `lr 3e-4`, `block size 32`, `learning rate of 0.001`, `seeds 1 2 3`, `learning rates 1e-3, 3e-4, 1e-4`, `device cpu`. */
  termValue(i: number): Found | null {
    let term = this.term(i);
    // "test batch size 1000", "latent dim 2": a qualifier names another setting than the bare word.
    if (!term && QUALIFIERS.has(this.w(i)) && this.term(i + 1)) {
      const t = this.term(i + 1)!;
      term = { ...t, phrase: this.span(i, t.last) };
    }
    if (!term || this.w(term.last) === 'every') return null;
    let j = term.last + 1;
    const c = this.w(j);
    let connector = false;
    if (
      c === 'of' ||
      c === '=' ||
      c === ':' ||
      c === 'to' ||
      c === 'is' ||
      c === 'at' ||
      c === 'as' ||
      c === '->' ||
      c === '→' ||
      c === 'equals' ||
      c === 'be'
    ) {
      j++;
      connector = true;
    } else if (
      ((c === 'equal' || c === 'set') && this.w(j + 1) === 'to') ||
      (/^(should|must|will|would|shall)$/.test(c) && this.w(j + 1) === 'be')
    ) {
      j += 2;
      connector = true;
    } else if (c === 'in' || c === 'values' || c === 'value' || c === 'over') {
      // "seeds in 1..5", "seed values 1, 2, 3": only as a sweep.
      const v = this.values(j + 1, { spaces: true, words: true });
      if (v && (v.range || (v.values?.length ?? 0) > 1)) return this.settingOrSweep(i, term.phrase, v);
      return null;
    }
    if (this.w(j) === 'of' && c === 'values') j++;
    // "step 3 of the README", "after epoch 5": a singular count word with a bare number is a place, not a setting.
    if (!connector && /^(step|epoch|iteration|iter|update|layer|sample)$/.test(term.phrase.toLowerCase())) return null;
    const wordy = term.groups.some((g) => g.valueType === 'str' || g.valueType === 'bool');
    const v = this.values(j, { spaces: true, words: wordy });
    if (v) {
      // "warmup 100 steps": the unit after the value is part of the ask.
      const unit = !v.range && v.values?.length === 1 ? this.term(v.last + 1) : null;
      if (unit && unit.groups.some((g) => g.id === 'iterations' || g.id === 'epochs' || term.groups.includes(g))) v.last = unit.last;
      else if (
        term.groups.some((g) => g.id === 'samples') &&
        /^(outputs|texts|completions|sequences|examples|generations|images)$/.test(this.w(v.last + 1))
      )
        v.last++;
      return this.settingOrSweep(i, term.phrase, v);
    }
    if (wordy) {
      const raw = this.rawValue(j);
      if (raw && (connector || !this.term(j)) && !OUTPUT_VERBS.has(this.w(j)) && !ACTION_VERBS.has(this.w(j))) {
        // "the name Ada Lovelace": a proper name runs over its capitalised words.
        if (raw.last === j && /^\p{Lu}/u.test(this.t[j]!.text)) {
          while (
            raw.last < j + 5 &&
            this.isWord(raw.last + 1) &&
            /^\p{Lu}\p{Ll}/u.test(this.t[raw.last + 1]!.text) &&
            !this.term(raw.last + 1)
          )
            raw.last++;
          raw.value = this.span(j, raw.last);
        }
        return { first: i, last: raw.last, ask: { kind: 'setting', phrase: term.phrase, value: raw.value } };
      }
    }
    return null;
  }

  /** `grid_size 64`, `max_iters 200`: a code name (snake_case) and a number. */
  codeNameValue(i: number): Found | null {
    if (!this.isCodeName(i)) return null;
    let j = i + 1;
    if (['of', 'to', 'at', 'is', 'as'].includes(this.w(j))) j++;
    const v = this.values(j, { spaces: true });
    return v ? this.settingOrSweep(i, this.t[i]!.text, v) : null;
  }

  /** `n from 1 to 5`, `n in 1..5`, `alpha in {0.1, 0.2}`: any name with a range or a list. */
  nameRange(i: number): Found | null {
    if (!this.isIdentifier(i) || this.term(i) || NUMBER_WORDS[this.w(i)] !== undefined) return null;
    const c = this.w(i + 1);
    if (c !== 'from' && c !== 'in' && c !== 'between' && c !== '∈') return null;
    const v = this.values(c === 'from' || c === 'between' ? i + 1 : i + 2, { spaces: true });
    if (!v || !(v.range || (v.values?.length ?? 0) > 1)) return null;
    return this.settingOrSweep(i, this.t[i]!.text, v);
  }

  /**
   * `IDs 1 to 5` (a range: a sweep), `the numbers 1.5, 2 and 3`, `the users alice, bob and carol`
   * (a list for one run: a setting with `values`, made a sweep by "one run per …" in parseAsks).
   */
  nounList(i: number): Found | null {
    let j = i;
    if (this.w(j) === 'the') j++;
    const tok = this.t[j];
    if (
      tok?.type !== 'word' ||
      !this.isIdentifier(j) ||
      this.term(j) ||
      !/[^s]s$/i.test(tok.text) ||
      tok.lower in NUMBER_WORDS ||
      OTHER_UNITS.has(tok.lower)
    )
      return null;
    if (
      /^(plus|minus|thus|has|was|is|as|us|yes|less|unless|always|perhaps|besides|towards|afterwards|sometimes|otherwise|whereas|sometimes)$/.test(
        tok.lower,
      )
    )
      return null;
    const v = this.values(j + 1, { spaces: false, words: true });
    // "… plus loss.png and metrics.json": files are outputs or inputs, never a list's items.
    if (!v?.values || v.values.some((x) => OUTPUT_EXT.test(x) || SCRIPT_EXT.test(x) || CONFIG_EXT.test(x))) return null;
    if (v.range) return { first: i, last: v.last, ask: { kind: 'sweep', phrase: tok.text, values: v.values } };
    if (v.values.length < 2) return null;
    return { first: i, last: v.last, ask: { kind: 'setting', phrase: tok.text, value: v.values.join(' '), values: v.values } };
  }

  /**
   * A short symbol after the words that describe it: in "the time step dt over …", "a mesh step h
   * of 0.05", "the diffusion constant a over …" the symbol (dt, h, a) is the setting's name and the
   * words before it say what it is. Returns the symbol's token, or null.
   */
  describedSymbol(k: number): number | null {
    for (let s = k + 1; s <= k + 3; s++) {
      const d = s - 1;
      if (!this.isIdentifier(d) || ACTION_VERBS.has(this.w(d)) || OUTPUT_VERBS.has(this.w(d))) return null;
      if (this.isSymbolAt(s)) return s;
    }
    return null;
  }

  private isSymbolAt(s: number): boolean {
    const tok = this.t[s];
    if (tok?.type !== 'word' || !/^[\p{L}][\p{L}\p{N}_]?$/u.test(tok.text)) return false;
    const next = this.w(s + 1);
    const connector = /^(over|of|=|:|in|from|between|is|at|to)$/.test(next);
    // "a" and "I" are words unless a value follows through a connector ("constant a over 0.1").
    if (STOP.has(tok.lower) && !(tok.text.length === 1 && connector && next !== 'to' && next !== 'at')) return false;
    return connector ? !!this.num(s + 2) || next === 'from' || next === 'between' : !!this.num(s + 1);
  }

  /** `a mesh step size of 0.05`, `the diffusion constant of 0.3`: any named quantity and its value. */
  phraseOf(i: number): Found | null {
    if (!/^(a|an|the)$/.test(this.w(i))) return null;
    let m = i + 1;
    while (m < i + 4 && this.isIdentifier(m) && this.w(m + 1) !== 'of') m++;
    if (m === i + 1 && this.w(m + 1) !== 'of') return null;
    if (!this.isIdentifier(m) || this.w(m + 1) !== 'of') return null;
    for (let k = i + 1; k <= m; k++) {
      const w = this.w(k);
      if (ACTION_VERBS.has(w) || OUTPUT_VERBS.has(w) || QUANTIFIERS.test(w)) return null;
    }
    if (this.term(i + 1) || this.metricAt(i + 1)) return null;
    const v = this.values(m + 2, { spaces: false });
    // "a total of 5 epochs": the number belongs to its unit.
    if (!v || this.isUnitAt(v.last + 1)) return null;
    return this.settingOrSweep(i, this.span(i + 1, m), v);
  }

  /** `a mesh step h of 0.05`, `the time step dt = 0.01`: a described symbol and its value. */
  symbolValue(i: number): Found | null {
    const k = /^(a|an|the)$/.test(this.w(i)) ? i + 1 : i;
    const s = this.describedSymbol(k);
    if (s === null) return null;
    let j = s + 1;
    if (/^(of|=|:|is|at|to)$/.test(this.w(j))) j++;
    else if (/^(over|in)$/.test(this.w(j))) {
      const v = this.values(j + 1, { spaces: false });
      return v && (v.range || (v.values?.length ?? 0) > 1) ? this.settingOrSweep(i, this.t[s]!.text, v) : null;
    }
    const v = this.values(j, { spaces: false });
    if (!v) return null;
    const f = this.settingOrSweep(i, this.t[s]!.text, v);
    return { ...f, first: i };
  }

  /** `on 127.0.0.1`, `host 0.0.0.0`, `at localhost`: the address a service listens on. */
  host(i: number): Found | null {
    let j = i;
    const lead = /^(on|at|to|bind|host|hostname|listen|listening)$/.test(this.w(j));
    if (lead) j++;
    if (this.w(j) === 'on' || this.w(j) === 'to') j++;
    const tok = this.t[j];
    if (!tok) return null;
    const m = /^(?:localhost|\d{1,3}(?:\.\d{1,3}){3})(?![\w.]*\w)/i.exec(this.text.slice(tok.start, tok.start + 40));
    if (!m) return null;
    const end = tok.start + m[0].length;
    let last = j;
    while (this.t[last + 1] && this.t[last + 1]!.end <= end) last++;
    if (this.t[last]!.end !== end) return null;
    // "version 1.2.3.4" is no address: one needs a word that places it or a port after it.
    if (!lead && !/^(port|:)$/.test(this.w(last + 1))) return null;
    return { first: i, last, ask: { kind: 'setting', phrase: 'host', value: m[0] } };
  }

  /** `the gpt-nano model`, `the resnet18 model`, `an LSTM model`: which model (architecture) to build. */
  modelName(i: number): Found | null {
    if (!/^(the|a|an)$/.test(this.w(i))) return null;
    const tok = this.t[i + 1];
    if (tok?.type !== 'word' || !/^(model|network|net|architecture|variant)$/.test(this.w(i + 2)) || this.ctx[i + 1]) return null;
    const x = tok.text;
    const named =
      /\d/.test(x) ||
      (/-/.test(x) &&
        !/-(level|layer|layers|based|like|sized?|scale|trained|tuned|wise|style|char|character|word|bit|step|shot|dimensional|dim|d)$/i.test(
          x,
        ) &&
        !(x.toLowerCase().split('-')[0]! in NUMBER_WORDS)) ||
      /^[A-Z][A-Z0-9_]+$/.test(x) ||
      this.isCodeName(i + 1);
    if (!named || this.term(i + 1)) return null;
    return { first: i, last: i + 2, ask: { kind: 'setting', phrase: 'model type', value: x } };
  }

  /** `serve the Flaskr blog`: which app to serve, when the request names one. */
  served(i: number): Found | null {
    if (!/^(serve|host|launch|start)$/.test(this.w(i))) return null;
    let j = i + 1;
    if (/^(the|my|our|this)$/.test(this.w(j))) j++;
    let last = j - 1;
    let proper = false;
    for (let k = j; k < j + 4 && this.isIdentifier(k); k++) {
      last = k;
      // A name of its own ("Flaskr"), not the framework's or the language's ("the Flask app", "the JavaScript example app").
      if (k > i + 1 && /^\p{Lu}/u.test(this.t[k]!.text) && !FRAMEWORKS.test(this.w(k))) proper = true;
      if (/^(app|application|server|service|site|website|blog|api|dashboard|demo)$/.test(this.w(k))) break;
    }
    if (last < j || !proper || !/^(app|application|server|service|site|website|blog|api|dashboard|demo)$/.test(this.w(last))) return null;
    return { first: i, last, ask: { kind: 'other', phrase: this.span(j, last) } };
  }

  /**
   * `the address of its jQuery page`, `the URL of the login page`: where one page of the
   * service can be reached. A bare "the URL" or "an endpoint" asks for the service itself, which
   * every service plan gives: no ask.
   */
  address(i: number): Found | null {
    let j = i;
    while (j < i + 2 && DETERMINERS.has(this.w(j))) j++;
    if (!/^(address|url|urls|link|links)$/.test(this.w(j)) || !this.ctx[j]) return null;
    let last = j;
    if (this.w(j + 1) === 'of' || this.w(j + 1) === 'for' || this.w(j + 1) === 'to') {
      let k = j + 2;
      while (k < j + 6 && (DETERMINERS.has(this.w(k)) || this.isIdentifier(k))) {
        if (/^(page|endpoint|route|app|site|server|service|api|view|form)$/.test(this.w(k))) last = k;
        k++;
      }
    }
    if (last === j) return null;
    return { first: i, last, ask: { kind: 'other', phrase: this.span(j, last) } };
  }

  /** `on the features in data/features`, `from ./data`: a folder the run reads. */
  inputPath(i: number): Found | null {
    if (!/^(on|from|using|with|in)$/.test(this.w(i)) || this.ctx[i]) return null;
    let j = i + 1;
    if (DETERMINERS.has(this.w(j)) && this.isIdentifier(j + 1) && /^(in|at|from|under)$/.test(this.w(j + 2))) j += 3;
    const tok = this.t[j];
    if (
      tok?.type !== 'word' ||
      !/\//.test(tok.text) ||
      /^[a-z]+:\/\//i.test(tok.text) ||
      SCRIPT_EXT.test(tok.text) ||
      CONFIG_EXT.test(tok.text) ||
      OUTPUT_EXT.test(tok.text)
    )
      return null;
    return { first: i, last: j, ask: { kind: 'other', file: tok.text.replace(/\/$/, '') } };
  }

  /** `number of particles 1000`, `the number of walkers = 64`: any count by its noun. */
  numberOf(i: number): Found | null {
    let j = i;
    if (this.w(j) === 'the') j++;
    if (!(this.w(j) === 'number' && this.w(j + 1) === 'of')) return null;
    const noun = j + 2;
    if (!this.isIdentifier(noun) || this.term(noun)) return null;
    let k = noun + 1;
    if (['of', '=', ':', 'to', 'is', 'at', 'as'].includes(this.w(k))) k++;
    else if (
      (/^(should|must|will)$/.test(this.w(k)) && this.w(k + 1) === 'be') ||
      (/^(set|equal)$/.test(this.w(k)) && this.w(k + 1) === 'to')
    )
      k += 2;
    const v = this.values(k, { spaces: true });
    return v ? this.settingOrSweep(j, this.span(j, noun), v) : null;
  }

  /** `set dt to 0.05`, `change alpha to 0.3`: a plain word becomes a name after "set". */
  setName(i: number): Found | null {
    if (!/^(set|change|make)$/.test(this.w(i))) return null;
    let j = i + 1;
    if (this.w(j) === 'the') j++;
    if (!this.isIdentifier(j) || this.term(j) || this.isCodeName(j)) return null;
    if (!['to', '=', 'as', 'at'].includes(this.w(j + 1))) return null;
    const v = this.values(j + 2, { spaces: false });
    if (!v) return null;
    const f = this.settingOrSweep(i, this.t[j]!.text, v);
    return f;
  }

  /** `200 iterations`, `2 layers`, `two layers`, `a single epoch`, `64-dim embeddings`, `3 seeds` (a sweep of 3 seeds). */
  numTerm(i: number): Found | null {
    const n = this.num(i);
    if (!n) return null;
    let j = n.last + 1;
    if (this.w(j) === '-' && this.glued(n.last)) j++;
    let countOnly = false;
    if (/^(random|different|distinct|separate)$/.test(this.w(j))) {
      countOnly = true;
      j++;
    }
    const term = this.term(j);
    if (!term) return null;
    if (term.groups.some((g) => g.id === 'seed') && (countOnly || /s$/i.test(term.phrase))) {
      return { first: i, last: term.last, ask: { kind: 'sweep', phrase: term.phrase } };
    }
    if (countOnly) return null;
    // "2 layers of 64" is about the layers; the 64 is read on its own.
    return { first: i, last: term.last, ask: { kind: 'setting', phrase: term.phrase, value: n.value } };
  }

  /** `every 100 steps` (after "evaluate", "log", "save"): an interval, not the run's length. */
  every(i: number): Found | null {
    let e = i;
    let noun: string | null = null;
    if (this.w(i) !== 'every') {
      // "an image every 100 steps", "a checkpoint every 500 iterations": what is made that often.
      const d = /^(a|an|one)$/.test(this.w(i)) ? i + 1 : i;
      const made = /^(images?|plots?|figures?|frames?|snapshots?|pictures?|samples?|checkpoints?|ckpts?)$/.exec(this.w(d));
      if (made && this.w(d + 1) === 'every') {
        e = d + 1;
        const n = made[1]!.replace(/s$/, '');
        noun = /^(checkpoint|ckpt)$/.test(n) ? 'save interval' : `${n} interval`;
      } else if (!(EVERY_VERBS.test(this.w(i)) && this.w(i + 1) === 'every')) return null;
      else e = i + 1;
    }
    const n = this.num(e + 1);
    if (!n) return null;
    const term = this.term(n.last + 1);
    if (!term || !term.groups.some((g) => g.id === 'iterations' || g.id === 'epochs')) return null;
    if (noun) return { first: i, last: term.last, ask: { kind: 'setting', phrase: noun, value: n.value } };
    let which = 'interval';
    for (let k = e - 1; k >= Math.max(0, e - 5) && !this.isBoundary(k); k--) {
      const w = this.w(k);
      if (/^(eval|evaluate|evaluating|evaluation|validate|validation|val|test)$/.test(w)) which = 'eval interval';
      else if (/^(log|logging|print|printing|report|reporting)$/.test(w)) which = 'log interval';
      else if (/^(save|saving|checkpoint|checkpointing|ckpt)$/.test(w)) which = 'save interval';
      if (which !== 'interval') break;
    }
    return { first: i, last: term.last, ask: { kind: 'setting', phrase: which, value: n.value } };
  }

  /** `evaluating every 10 iterations on 5 batches`: how many batches an evaluation averages over. */
  evalBatches(i: number): Found | null {
    if (!/^(on|over|using|with|across)$/.test(this.w(i))) return null;
    const n = this.num(i + 1);
    if (!n || !/^(batches|batch|iterations|iters|minibatches|mini-batches)$/.test(this.w(n.last + 1))) return null;
    for (let k = i - 1; k >= Math.max(0, i - 8) && !this.isBoundary(k); k--) {
      if (/^(eval|evaluate|evaluating|evaluation|evaluations|validate|validating|validation|estimate|estimating)$/.test(this.w(k))) {
        return { first: i, last: n.last + 1, ask: { kind: 'setting', phrase: 'eval batches', value: n.value } };
      }
    }
    return null;
  }

  /** `first argument values 10, 20, 40`, `the second positional argument = 3`. */
  positional(i: number): Found | null {
    if (!(this.w(i) in ORDINALS)) return null;
    let j = i + 1;
    if (this.w(j) === 'positional' || this.w(j) === 'command-line' || this.w(j) === 'cli' || this.w(j) === 'script') j++;
    if (!/^(argument|arg|parameter|param|positional|input|argument's)$/.test(this.w(j))) return null;
    const phraseLast = j;
    j++;
    if (this.w(j) === 'values' || this.w(j) === 'value') j++;
    if (['of', '=', ':', 'to', 'at', 'as', 'in', 'over', 'across'].includes(this.w(j))) j++;
    const v = this.values(j, { spaces: true });
    if (!v) return null;
    return this.settingOrSweep(i, this.span(i, phraseLast), v);
  }

  /** `python main.py 10 20 40`: numbers after a script are its positional arguments, in order. */
  scriptArgument(i: number): Found | null {
    if (this.t[i]?.type !== 'num') return null;
    let k = i - 1;
    while (k >= 0 && this.t[k]!.type === 'num') k--;
    const script = this.t[k];
    if (script?.type !== 'word' || !SCRIPT_EXT.test(script.text) || i - k > POSITION_NAMES.length) return null;
    return { first: i, last: i, ask: { kind: 'setting', phrase: `${POSITION_NAMES[i - k - 1]} argument`, value: this.t[i]!.value! } };
  }

  /** `sweep dt over 0.1, 0.05 and 0.01`, `a parameter sweep of dt = 0.1*dx*dx at six values`, `a learning rate sweep`. */
  sweep(i: number): Found | null {
    let j = i;
    let nameFirst = -1;
    let nameLast = -1;
    let symbol: string | undefined;
    // "<name> sweep": a term or a code name right before the word.
    const term = this.term(i);
    if (term && /^(sweep|sweeps|scan|search)$/.test(this.w(term.last + 1))) {
      nameFirst = i;
      nameLast = term.last;
      j = term.last + 1;
    } else if (this.isCodeName(i) && /^(sweep|sweeps|scan)$/.test(this.w(i + 1))) {
      nameFirst = i;
      nameLast = i;
      j = i + 1;
    } else if (
      /^(parameter|hyperparameter|hyper-parameter|param|grid)$/.test(this.w(i)) &&
      /^(sweep|sweeps|search|scan)$/.test(this.w(i + 1))
    ) {
      j = i + 1;
    } else if (!/^(sweep|sweeps|sweeping|scan|vary|varying)$/.test(this.w(i))) return null;
    let last = j;
    let k = j + 1;
    if (nameFirst < 0) {
      if (/^(of|over|across|on|for|through)$/.test(this.w(k))) k++;
      if (this.w(k) === 'the') k++;
      if (this.w(k) === 'values' && this.w(k + 1) === 'of') k += 2;
      const pos = this.positionalName(k);
      const t = this.term(k);
      const sym = this.describedSymbol(k);
      if (sym !== null) {
        nameFirst = k;
        nameLast = sym;
        symbol = this.t[sym]!.text;
      } else if (pos) {
        nameFirst = k;
        nameLast = pos;
      } else if (t) {
        nameFirst = k;
        nameLast = t.last;
      } else if (
        this.t[k]?.type === 'flag' ||
        (this.isIdentifier(k) &&
          !/^(all|available|workers|machines|nodes|gpus|values|parameters|hyperparameters|settings|grid)$/.test(this.w(k)) &&
          !this.hardwareWord(k))
      ) {
        nameFirst = k;
        nameLast = k;
      }
      if (nameFirst >= 0) {
        last = nameLast;
        k = nameLast + 1;
      }
    }
    // "dt = 0.1*dx*dx": the expression the name stands in, skipped.
    if (nameFirst >= 0 && this.w(k) === '=') {
      let e = k + 1;
      while (
        this.t[e] &&
        !this.isBoundary(e) &&
        !/^(at|over|across|with|from|in|for|,|between|through|using|on)$/.test(this.w(e)) &&
        e < k + 20
      )
        e++;
      if (e > k + 1) {
        last = e - 1;
        k = e;
      }
    }
    const phrase = symbol ?? (nameFirst >= 0 ? this.span(nameFirst, nameLast) : undefined);
    const ask = (values?: string[] | null): Draft => ({ kind: 'sweep', ...(phrase ? { phrase } : {}), ...(values ? { values } : {}) });
    let c = k;
    if (/^(over|across|through|with|in|at|from|between|:|=|on|using|of|for)$/.test(this.w(c))) c++;
    if (this.w(c) === 'the') c++;
    if (this.w(c) === 'values' || this.w(c) === 'value') c++;
    if (this.w(c) === 'of' || this.w(c) === ':') c++;
    const count = this.countValues(c);
    if (count) return { first: i, last: count, ask: ask() };
    const from = this.w(c - 1) === 'from' || this.w(c - 1) === 'between' ? c - 1 : c;
    const v = this.values(from, { spaces: true, words: true });
    if (v) return { first: i, last: v.last, ask: ask(v.values) };
    return { first: i, last, ask: ask() };
  }

  /** `six values`, `5 different values`: a count of values without the values. Returns its last token. */
  countValues(i: number): number | null {
    const n = this.num(i);
    if (!n) return null;
    let j = n.last + 1;
    if (/^(different|distinct|evenly-spaced|equally-spaced|log-spaced|random)$/.test(this.w(j))) j++;
    return this.w(j) === 'values' || this.w(j) === 'points' || this.w(j) === 'settings' ? j : null;
  }

  /** `different seeds`, `several learning rates`: a sweep whose values are still to be chosen. */
  vagueSweep(i: number): Found | null {
    let j = i;
    if (this.w(j) === 'a' && /^(few|couple)$/.test(this.w(j + 1))) j += this.w(j + 2) === 'of' ? 3 : 2;
    else if (/^(different|several|multiple|various|many|some|a-few)$/.test(this.w(j))) j++;
    else return null;
    if (/^(random|different)$/.test(this.w(j))) j++;
    const term = this.term(j);
    if (!term || !/s$/i.test(term.phrase)) return null;
    return { first: i, last: term.last, ask: { kind: 'sweep', phrase: term.phrase } };
  }

  /** `sample 3 outputs`, `generate 5 completions`: how many samples (the number of samples setting). */
  sampleCount(i: number): Found | null {
    if (!/^(sample|generate|produce|print|write|show)$/.test(this.w(i))) return null;
    const n = this.num(i + 1);
    if (!n || !/^(samples|outputs|completions|texts|sequences|examples|stories|poems|generations|images|lines)$/.test(this.w(n.last + 1)))
      return null;
    return { first: i, last: n.last + 1, ask: { kind: 'setting', phrase: 'samples', value: n.value } };
  }

  /** `use float16`, `bf16 precision`, `in half precision`: the number format. */
  dtype(i: number): Found | null {
    let j = i;
    const lead = /^(use|with|using|in)$/.test(this.w(i));
    if (lead) j++;
    const m = /^(fp16|float16|half|bf16|bfloat16|fp32|float32|full|fp64|float64|double|tf32|fp8)$/.exec(this.w(j));
    if (!m) return null;
    const tail = this.w(j + 1) === 'precision';
    if (!tail && !lead) return null;
    if ((m[1] === 'half' || m[1] === 'full' || m[1] === 'double') && !tail) return null;
    return { first: j, last: tail ? j + 1 : j, ask: { kind: 'setting', phrase: 'dtype', value: this.t[j]!.text } };
  }

  /** `set n to 10, m to 20`: the next name of a "set" list. */
  setMore(i: number): Found | null {
    if (!this.isIdentifier(i) || this.w(i + 1) !== 'to' || this.w(i - 1) !== ',') return null;
    for (let k = i - 2; k >= Math.max(0, i - 12) && !this.isBoundary(k); k--) {
      if (/^(set|change)$/.test(this.w(k))) {
        const v = this.values(i + 2, { spaces: false });
        return v ? this.settingOrSweep(i, this.t[i]!.text, v) : null;
      }
    }
    return null;
  }

  /** `six values of dt`: a count sweep of a name. */
  countOf(i: number): Found | null {
    const end = this.countValues(i);
    if (end === null || this.w(end + 1) !== 'of') return null;
    let k = end + 2;
    if (this.w(k) === 'the') k++;
    const t = this.term(k);
    const last = t ? t.last : this.isIdentifier(k) ? k : null;
    if (last === null) return null;
    return { first: i, last, ask: { kind: 'sweep', phrase: this.span(k, last) } };
  }

  positionalName(i: number): number | null {
    if (!(this.w(i) in ORDINALS)) return null;
    let j = i + 1;
    if (this.w(j) === 'positional' || this.w(j) === 'command-line' || this.w(j) === 'cli' || this.w(j) === 'script') j++;
    return /^(argument|arg|parameter|param|positional|input)$/.test(this.w(j)) ? j : null;
  }

  hardwareWord(i: number): string | null {
    const w = this.w(i);
    if (w === 'apple' && this.w(i + 1) === 'silicon') return 'apple';
    return HARDWARE[w] ?? null;
  }

  /** `on CPU`, `on an NVIDIA GPU`, `on AMD`, `with CUDA`, `CPU-only`, `without a GPU`. */
  hardware(i: number): Found | null {
    const w = this.w(i);
    if (w === 'no' || w === 'without') {
      let j = i + 1;
      if (/^(a|the|any)$/.test(this.w(j))) j++;
      if (/^(gpu|gpus|cuda|accelerator)$/.test(this.w(j))) return { first: i, last: j, ask: { kind: 'hardware', hardware: 'cpu' } };
      return null;
    }
    let j = i;
    const lead = /^(on|using|with|via|use|onto)$/.test(w);
    if (lead) j++;
    if (/^(the|a|an|my|one|1|some|any|single)$/.test(this.w(j))) j++;
    const hw = this.hardwareWord(j);
    if (!hw) return null;
    let last = j;
    if (this.w(j) === 'apple' && /^(silicon|m1|m2|m3|m4|mac|macbook)$/.test(this.w(j + 1))) last++;
    if (HARDWARE_TAIL.has(this.w(last + 1))) last++;
    if (this.w(last) === 'only' || this.w(j) === 'cpu-only') return { first: i, last, ask: { kind: 'hardware', hardware: hw } };
    if (!lead) {
      if (this.w(j + 1) === 'only') return { first: i, last: j + 1, ask: { kind: 'hardware', hardware: hw } };
      return null;
    }
    return { first: i, last, ask: { kind: 'hardware', hardware: hw } };
  }

  /** `across all available workers`, `on 4 workers`, `on every machine`, `in parallel`, `on 4 GPUs`. */
  scale(i: number): Found | null {
    // "one run per user across all available workers": the whole phrase is the scale.
    const per = this.perRun(i);
    if (per !== null) {
      const s = this.scaleAt(per + 1);
      return s ? { ...s, first: i } : null;
    }
    return this.scaleAt(i);
  }

  /** `one run per user`, `a separate run for each value`: returns its last token. */
  perRun(i: number): number | null {
    let j = i;
    if (!/^(one|a|1)$/.test(this.w(j))) return null;
    j++;
    if (/^(separate|single)$/.test(this.w(j))) j++;
    if (!/^(run|job|shard)$/.test(this.w(j))) return null;
    j++;
    if (this.w(j) === 'per') j++;
    else if (this.w(j) === 'for' && /^(each|every)$/.test(this.w(j + 1))) j += 2;
    else return null;
    return this.isWord(j) ? j : null;
  }

  private scaleAt(i: number): Found | null {
    const w = this.w(i);
    if (w === 'in' && this.w(i + 1) === 'parallel') return { first: i, last: i + 1, ask: { kind: 'scale', workers: 'all' } };
    if (w === 'parallel' || w === 'concurrently' || w === 'simultaneously')
      return { first: i, last: i, ask: { kind: 'scale', workers: 'all' } };
    if (this.seq(i, ['at', 'the', 'same', 'time'])) return { first: i, last: i + 3, ask: { kind: 'scale', workers: 'all' } };
    if (this.seq(i, ['as', 'many']) && /^(workers|machines|nodes|gpus)$/.test(this.w(i + 2)) && this.w(i + 3) === 'as') {
      let last = i + 4;
      while (
        last < i + 7 &&
        this.t[last] &&
        !this.isBoundary(last) &&
        /^(possible|you|can|are|available|there|we|have|i)$/.test(this.w(last))
      )
        last++;
      return { first: i, last: last - 1, ask: { kind: 'scale', workers: 'all' } };
    }
    let j = i;
    const lead = /^(across|on|over|using|with|to|onto|among|between|use)$/.test(w);
    if (lead) j++;
    const n = this.num(j);
    // "on 4 workers" asks for four; "I have 2 GPUs" says what there is.
    if (lead && n && /^(workers|worker|machines|machine|nodes|node|gpus|hosts|computers|boxes)$/.test(this.w(n.last + 1))) {
      const gpu = /^gpus?$/.test(this.w(n.last + 1));
      return {
        first: i,
        last: n.last + 1,
        ask: { kind: 'scale', workers: Math.max(1, Math.round(n.n)), ...(gpu ? { hardware: 'gpu' } : {}) },
      };
    }
    let all = false;
    if (/^(all|every|each)$/.test(this.w(j))) {
      all = true;
      j++;
      if (this.w(j) === 'of') j++;
    }
    if (this.w(j) === 'the') j++;
    if (/^(available|idle|free|online|connected|my|our|eligible)$/.test(this.w(j))) {
      all = true;
      j++;
    }
    if (!all && !(lead && (w === 'across' || w === 'over'))) return null;
    const unit = this.w(j);
    if (/^(workers|worker|machines|machine|nodes|node|gpus|gpu|hosts|computers|devices|boxes|network|cluster)$/.test(unit)) {
      const gpu = /^gpus?$/.test(unit);
      return { first: i, last: j, ask: { kind: 'scale', workers: 'all', ...(gpu ? { hardware: 'gpu' } : {}) } };
    }
    return null;
  }

  /** `accuracy above 0.9`, `the final loss below 0.5`, `reach 90% accuracy`, `until val loss < 1.5`. */
  threshold(i: number): Found | null {
    let j = i;
    if (/^(the|a|an|my|its)$/.test(this.w(j))) j++;
    const metric = this.metricAt(j);
    if (metric) {
      let k = metric.last + 1;
      if (/^(is|stays|gets|goes|drops|falls|reaches|remains|of|be|to)$/.test(this.w(k)) && !THRESHOLD_OPS.some((o) => this.seq(k, o.words)))
        k++;
      const op = THRESHOLD_OPS.find((o) => this.seq(k, o.words));
      if (op) {
        const n = this.num(k + op.words.length);
        if (n) return { first: i, last: n.last, ask: { kind: 'threshold', metric: metric.name, op: op.op, threshold: n.n } };
      }
    }
    // "reach 90% accuracy", "achieve an accuracy of 0.9", "until the loss is 0.5".
    if (
      !/^(reach|reaches|reaching|achieve|achieves|achieving|hit|hits|attain|until|till|target)$/.test(this.w(i)) &&
      !this.seq(i, ['get', 'to'])
    )
      return null;
    j = this.w(i) === 'get' ? i + 2 : i + 1;
    if (/^(a|an|the)$/.test(this.w(j))) j++;
    const n = this.num(j);
    if (n) {
      let k = n.last + 1;
      if (this.w(k) === '%') k++;
      const m = this.metricAt(k);
      if (m) {
        const dir = metricOf(m.name);
        return { first: i, last: m.last, ask: { kind: 'threshold', metric: m.name, op: dir?.lowerIsBetter ? '<=' : '>=', threshold: n.n } };
      }
      return null;
    }
    const m = this.metricAt(j);
    if (!m) return null;
    let k = m.last + 1;
    if (/^(of|=|:|is|at)$/.test(this.w(k))) k++;
    const op = THRESHOLD_OPS.find((o) => this.seq(k, o.words));
    if (op) k += op.words.length;
    const v = this.num(k);
    if (!v) return null;
    const dir = metricOf(m.name);
    return {
      first: i,
      last: v.last,
      ask: { kind: 'threshold', metric: m.name, op: op?.op ?? (dir?.lowerIsBetter ? '<=' : '>='), threshold: v.n },
    };
  }

  /** A metric name at i (up to 3 words), "final"/"best" before it dropped from the name. */
  private readonly metrics = new Map<number, { name: string; last: number } | null>();

  metricAt(i: number): { name: string; last: number } | null {
    let hit = this.metrics.get(i);
    if (hit === undefined) {
      hit = this.readMetric(i);
      this.metrics.set(i, hit);
    }
    return hit;
  }

  private readMetric(i: number): { name: string; last: number } | null {
    let j = i;
    if (/^(final|best|last|lowest|highest|average|mean)$/.test(this.w(j))) j++;
    for (let n = 3; n >= 1; n--) {
      let ok = true;
      for (let k = j; k < j + n; k++) if (!this.isWord(k)) ok = false;
      if (!ok) continue;
      const name = this.span(j, j + n - 1);
      if (metricOf(name)) return { name: name.toLowerCase(), last: j + n - 1 };
    }
    return null;
  }

  /** `under $2`, `within 30 minutes`, `in less than an hour`, `a 5 dollar budget`, `for 10 min`. */
  limit(i: number): Found | null {
    if (!LIMIT_START.has(this.w(i)) && this.t[i]?.type !== 'num') return null;
    let j = i;
    let lead = false;
    const leads: string[][] = [
      ['in', 'less', 'than'],
      ['in', 'under'],
      ['no', 'more', 'than'],
      ['less', 'than'],
      ['at', 'most'],
      ['up', 'to'],
      ['spend', 'more', 'than'],
      ['more', 'than'],
      ['for', 'a', 'maximum', 'of'],
      ['for', 'at', 'most'],
      ['a', 'maximum', 'of'],
      ['maximum', 'of'],
      ['max', 'of'],
      ['time', 'limit', 'of'],
      ['budget', 'of'],
      ['cap', 'of'],
      ['limit', 'of'],
      ['timeout', 'of'],
      ['deadline', 'of'],
      ['within'],
      ['under'],
      ['below'],
      ['max'],
      ['maximum'],
      ['for'],
      ['in'],
      ['budget'],
      ['cap'],
      ['costing'],
      ['cost'],
      ['spend'],
      ['spending'],
      ['before'],
      ['timeout'],
      ['deadline'],
      ['takes'],
      ['take'],
      ['taking'],
      ['at', 'a', 'cost', 'of'],
    ];
    for (const l of leads) {
      if (this.seq(i, l)) {
        j = i + l.length;
        lead = true;
        break;
      }
    }
    // Money: "$2", "2 dollars", "€5", "50 cents".
    const sym = this.w(j);
    if (sym === '$' || sym === '€' || sym === '£') {
      const n = this.num(j + 1);
      if (n) return { first: i, last: n.last, ask: { kind: 'limit', maxCost: n.n } };
    }
    if (this.w(j) === 'a' || this.w(j) === 'an') {
      // "an hour", "half an hour"
      const unit = TIME_UNITS[this.w(j + 1)];
      if (lead && unit && unit >= 60) return { first: i, last: j + 1, ask: { kind: 'limit', maxSeconds: unit } };
    }
    if (this.seq(j, ['half', 'an', 'hour'])) return lead ? { first: i, last: j + 2, ask: { kind: 'limit', maxSeconds: 1800 } } : null;
    const n = this.num(j);
    if (n) {
      const unit = this.w(n.last + 1);
      if (/^(dollars?|usd|bucks|\$)$/.test(unit)) return { first: i, last: n.last + 1, ask: { kind: 'limit', maxCost: n.n } };
      if (/^cents?$/.test(unit)) return { first: i, last: n.last + 1, ask: { kind: 'limit', maxCost: n.n / 100 } };
      if (/^euros?$/.test(unit)) return { first: i, last: n.last + 1, ask: { kind: 'limit', maxCost: n.n } };
      const secs = TIME_UNITS[unit];
      if (lead && secs && unit.length > 1) return { first: i, last: n.last + 1, ask: { kind: 'limit', maxSeconds: n.n * secs } };
      return null;
    }
    // "30min", "2h", "90s", "1h30m"
    const compact = /^(\d+(?:\.\d+)?)(s|sec|secs|m|min|mins|h|hr|hrs)(?:(\d+)(m|min))?$/.exec(this.w(j));
    if (lead && compact) {
      const secs = Number(compact[1]) * TIME_UNITS[compact[2]!]! + (compact[3] ? Number(compact[3]) * 60 : 0);
      return { first: i, last: j, ask: { kind: 'limit', maxSeconds: secs } };
    }
    return null;
  }

  /** `run config/train_shakespeare_char.py`, `with main.py`, `using the shakespeare_char config`, `the generate script`. */
  target(i: number): Found | null {
    let j = i;
    const lead = /^(run|with|using|use|execute|launch|start|via|python|python3|call|invoke|through|bash|sh)$/.test(this.w(i));
    if (lead) j++;
    if (this.w(j) === 'the') j++;
    const tok = this.t[j];
    if (tok?.type !== 'word') return null;
    const file = tok.text.replace(/\/$/, '');
    if (SCRIPT_EXT.test(file) || (CONFIG_EXT.test(file) && !(this.ctx[j] && !lead))) {
      let last = j;
      if (/^(script|file|config|configuration|module)$/.test(this.w(j + 1))) last++;
      return { first: i, last, ask: { kind: 'target', target: file } };
    }
    // "the shakespeare_char config", "config train_gpt2"
    const named =
      this.isIdentifier(j) || (this.w(j + 1) === 'script' && /^[\p{L}_][\p{L}\p{N}_]*$/u.test(tok.text) && !DETERMINERS.has(tok.lower));
    if (
      named &&
      /^(config|configuration|preset|cfg|script)$/.test(this.w(j + 1)) &&
      !/^(default|same|this|that|given|base|whole|right|current|new|existing|following|other|training|model|python|shell|bash|whole|main|entire|my|your)$/.test(
        tok.lower,
      )
    ) {
      return { first: i, last: j + 1, ask: { kind: 'target', target: tok.text } };
    }
    if (
      /^(config|configuration|preset)$/.test(tok.lower) &&
      this.t[j + 1]?.type === 'word' &&
      (this.isCodeName(j + 1) || /[/.]/.test(this.t[j + 1]!.text))
    ) {
      return { first: i, last: j + 1, ask: { kind: 'target', target: this.t[j + 1]!.text } };
    }
    return null;
  }

  /** `initialise the database first`, `run prepare.py first`, `before training, run prepare.py`, `make data first`. */
  setup(i: number): Found | null {
    let j = i;
    let marked = false;
    if (this.w(j) === 'first' || this.w(j) === 'firstly') {
      j++;
      if (this.w(j) === ',') j++;
      marked = true;
    } else if (this.w(j) === 'before') {
      j++;
      if (!/^(training|running|starting|serving|it|that|anything|launching|the|you)$/.test(this.w(j))) return null;
      while (
        j < i + 5 &&
        !this.isBoundary(j) &&
        this.w(j) !== ',' &&
        !/^(run|execute|make)$/.test(this.w(j)) &&
        !SETUP_VERBS.has(this.w(j))
      )
        j++;
      if (this.w(j) === ',') j++;
      marked = true;
    }
    let v = j;
    const verb = this.w(v);
    let object: { first: number; last: number; file?: string } | null = null;
    if (verb === 'set' && this.w(v + 1) === 'up') v++;
    if (SETUP_VERBS.has(verb) || (verb === 'set' && this.w(j + 1) === 'up')) {
      let k = v + 1;
      if (/^(the|a|an|its|my|their|our)$/.test(this.w(k))) k++;
      let last = k - 1;
      for (let n = 0; n < 3 && this.isWord(k + n) && !STOP.has(this.w(k + n)); n++) {
        last = k + n;
        if (SETUP_OBJECTS.has(this.w(k + n))) {
          object = { first: k, last };
          break;
        }
      }
      // "generate shorter sine waves first": any object, when the words say it comes first.
      if (!object && last >= k && (marked || /^(first|beforehand)$/.test(this.w(last + 1)))) object = { first: k, last };
      if (!object) return null;
    } else if (/^(run|execute)$/.test(verb)) {
      const tok = this.t[v + 1];
      if (tok?.type !== 'word' || !(SCRIPT_EXT.test(tok.text) || /^(init-db|initdb|migrate|setup)$/.test(tok.lower))) return null;
      object = { first: v + 1, last: v + 1, file: tok.text };
    } else if (verb === 'make' && this.isIdentifier(v + 1) && !/^(sure|it|a|the)$/.test(this.w(v + 1))) {
      object = { first: v + 1, last: v + 1, file: `make ${this.t[v + 1]!.text}` };
    } else if (/^(init-db|initdb)$/.test(verb)) {
      object = { first: v, last: v };
    } else return null;
    let last = object.last;
    // "first", "beforehand", "before training": the words that make it a step before the run.
    if (this.w(last + 1) === 'first' || this.w(last + 1) === 'beforehand') {
      last++;
      marked = true;
    } else if (
      this.w(last + 1) === 'before' &&
      /^(training|running|starting|serving|it|that|anything|launching|the|you)$/.test(this.w(last + 2))
    ) {
      last += 2;
      // "before it starts", "before the app serves", "before training begins"
      for (
        let n = 0;
        n < 3 && /^(the|app|server|service|run|training|it|starts|start|runs|serves|launches|begins|is|up|else)$/.test(this.w(last + 1));
        n++
      )
        last++;
      marked = true;
    }
    if (!marked && !(SETUP_VERBS.has(verb) || verb === 'set') && !/^(init-db|initdb)$/.test(verb)) return null;
    if (!marked && object.file && !/^(init-db|initdb)$/.test(verb)) return null;
    const phrase = this.span(object.first, object.last);
    return { first: i, last, ask: { kind: 'setup', phrase, ...(object.file ? { target: object.file } : {}) } };
  }

  /** `on the shakespeare_char dataset`, `the MNIST dataset`: which data set to use. */
  dataset(i: number): Found | null {
    let j = i;
    if (/^(on|with|using|use|from)$/.test(this.w(j))) j++;
    if (this.w(j) === 'the') j++;
    const tok = this.t[j];
    if (tok?.type !== 'word' || !this.isIdentifier(j) || !/^(dataset|data|corpus)$/.test(this.w(j + 1))) return null;
    if (DATASET_ADJ.test(tok.lower) || this.term(j)) return null;
    return { first: j, last: j + 1, ask: { kind: 'setting', phrase: 'dataset', value: tok.text } };
  }

  /** `use the adam optimizer`, `with AdamW`, `SGD optimizer`. */
  optimizer(i: number): Found | null {
    let j = i;
    const lead = /^(use|with|using|switch|try)$/.test(this.w(i));
    if (lead) j++;
    if (this.w(j) === 'to' && this.w(i) === 'switch') j++;
    if (/^(the|an|a)$/.test(this.w(j))) j++;
    const name = this.w(j);
    if (!OPTIMIZERS.has(name)) return null;
    const tail = /^(optimizer|optimiser)$/.test(this.w(j + 1));
    if (!tail && !lead) return null;
    return { first: j, last: tail ? j + 1 : j, ask: { kind: 'setting', phrase: 'optimizer', value: this.t[j]!.text } };
  }

  /** `no dropout`, `without torch.compile`, `disable compile`, `with mixed precision`. */
  toggle(i: number): Found | null {
    let j = i;
    let on: boolean;
    if (/^(no|without|disable|disabling|w\/o|skip)$/.test(this.w(i))) on = false;
    else if (this.seq(i, ['turn', 'off']) || this.seq(i, ['switch', 'off'])) {
      on = false;
      j++;
    } else if (this.seq(i, ["don't", 'use']) || this.seq(i, ['do', 'not'])) {
      on = false;
      j += this.w(i) === 'do' ? (this.w(i + 2) === 'use' ? 2 : 1) : 1;
    } else if (this.w(i) === "don't") on = false;
    else if (/^(enable|enabling|with|use|using)$/.test(this.w(i))) on = true;
    else if (this.seq(i, ['turn', 'on']) || this.seq(i, ['switch', 'on'])) {
      on = true;
      j++;
    } else return null;
    j++;
    if (/^(the|any)$/.test(this.w(j))) j++;
    const term = this.term(j);
    let phrase: string;
    let last: number;
    let groups: LexiconGroup[] = [];
    if (term) {
      phrase = term.phrase;
      last = term.last;
      groups = term.groups;
    } else if (this.isCodeName(j) || this.t[j]?.type === 'flag') {
      phrase = this.t[j]!.text;
      last = j;
    } else return null;
    const bool = groups.length === 0 || groups.some((g) => g.valueType === 'bool' || (g.id === 'precision' && /mixed|amp/i.test(phrase)));
    if (on && !bool) return null;
    if (
      !on &&
      !bool &&
      !groups.some(
        (g) => g.id === 'dropout' || g.id === 'weight decay' || g.id === 'warmup' || g.id === 'gradient clipping' || g.id === 'momentum',
      )
    )
      return null;
    // A following value belongs to the setting ("with dropout 0.1" is a value, read by termValue).
    if (this.num(last + 1) || this.w(last + 1) === '=') return null;
    const value = on ? 'True' : bool ? 'False' : '0';
    return { first: i, last, ask: { kind: 'setting', phrase, value } };
  }

  /** `a tiny model`, `a quick run`: a wish about size with no numbers (none when the numbers follow in brackets). */
  vague(i: number): Found | null {
    let j = i;
    if (/^(a|an|the)$/.test(this.w(j))) j++;
    if (
      !/^(tiny|small|smaller|little|mini|toy|quick|short|shorter|fast|faster|lightweight|minimal|big|bigger|large|larger|huge|smallest|tiniest)$/.test(
        this.w(j),
      )
    )
      return null;
    let k = j + 1;
    if (this.w(k) === 'training') k++;
    if (!/^(model|run|version|network|net|test|experiment|config|configuration|gpt|transformer|training|llm|lm)$/.test(this.w(k)))
      return null;
    const next = this.w(k + 1);
    if (next === '(' || next === ':' || next === '—' || next === '-' || (next === 'with' && (this.num(k + 2) || this.term(k + 2))))
      return null;
    return { first: i, last: k, ask: { kind: 'other', phrase: this.span(j, k) } };
  }

  /** What to hand back: the model, figures, samples, the report, stdout, logs, metrics, data, a file by name. */
  output(i: number): Found | null {
    let j = i;
    // "the", "all the", "all of the"
    while (j < i + 3 && (DETERMINERS.has(this.w(j)) || (this.w(j) === 'of' && j > i))) j++;
    // "no plots", "without the figures": not wanted.
    if (/^(no|without|not|skip)$/.test(this.w(i - 1)) || this.unwanted[i]) return null;
    const ctx = this.ctx[i] ?? false;
    const det = j > i;
    const found = (last: number, output: OutputWanted, extra: Partial<Draft> = {}): Found => ({
      first: i,
      last,
      ask: { kind: 'output', output, ...extra },
    });
    // "each run's output", "the output of each run", "every run's stdout"
    if (/^(each|every)$/.test(this.w(i)) && /^(run's|shard's|job's|seed's|task's|experiment's|value's)$/.test(this.w(i + 1))) {
      if (/^(output|outputs|stdout|log|logs)$/.test(this.w(i + 2))) return found(i + 2, /^logs?$/.test(this.w(i + 2)) ? 'logs' : 'stdout');
      // "each run's images", "each run's final loss"
      if (FIGURE_WORDS.test(this.w(i + 2)) || /^images?$/.test(this.w(i + 2))) return found(i + 2, 'figures');
      const em = this.metricAt(i + 2);
      if (em) return found(em.last, 'metrics', { metric: em.name });
    }
    let k = j;
    while (k < j + 2 && OUTPUT_ADJ.has(this.w(k))) k++;
    const adj = k > j;
    const head = this.w(k);
    const tok = this.t[k];
    if (tok?.type !== 'word') return null;
    const prev = this.w(i - 1);
    // "resume from the checkpoint", "load the pretrained weights": what the run reads, not what it gives back.
    const readsIt = (): boolean => {
      for (let b = k - 1; b >= Math.max(0, k - 4) && !this.isBoundary(b); b--) {
        if (INPUT_WORDS.has(this.w(b))) return true;
        if (b < i && OUTPUT_VERBS.has(this.w(b))) return false;
      }
      return false;
    };
    if (tok?.type === 'word' && OUTPUT_EXT.test(tok.text) && !SCRIPT_EXT.test(tok.text)) {
      if (!ctx && readsIt()) return { first: i, last: k, ask: { kind: 'other', file: tok.text } };
      if (ctx || /^(to|into|as)$/.test(prev)) return found(k, 'file', { file: tok.text });
      return { first: i, last: k, ask: { kind: 'other', file: tok.text } };
    }
    if (head === 'output' || head === 'outputs' || head === 'stdout') {
      const next = this.w(k + 1);
      if (/^(dir|directory|folder|path|root)$/.test(next)) return null;
      if (head === 'stdout' || (head === 'output' && det)) {
        if (this.w(k + 1) === 'of' && /^(each|every|all|the)$/.test(this.w(k + 2)) && this.isWord(k + 3)) {
          let last = k + 3;
          if (this.w(k + 2) === 'the' && /^(runs|shards)$/.test(this.w(k + 3))) last = k + 3;
          return found(last, 'stdout');
        }
        if (/^(files|file)$/.test(next)) return found(k + 1, 'data');
        if (ctx || head === 'stdout' || adj) return found(k, 'stdout');
        return null;
      }
      if (head === 'outputs' && (det || ctx)) return found(k, 'data');
      return null;
    }
    if (/^(loss|training|learning|accuracy)$/.test(head) && /^(curves?|plots?|graphs?)$/.test(this.w(k + 1)))
      return found(k + 1, 'figures');
    if (/^images?$/.test(head) && ctx) return found(k, 'figures');
    if ((head === 'plot' && !det && !adj) || head === 'visualize' || head === 'visualise' || head === 'chart') {
      // "plot the loss curves", "plot accuracy": the object is part of the ask.
      let last = k;
      let m = k + 1;
      if (this.w(m) === 'the') m++;
      const metric = this.metricAt(m);
      if (metric) last = metric.last;
      if (/^(curves?|plots?|history|over|vs)$/.test(this.w(last + 1)) && last > k) last++;
      return found(last, 'figures');
    }
    if (FIGURE_WORDS.test(head)) return found(k, 'figures');
    // "the prediction plot", "the decision-surface figure": a figure named by what it shows.
    if (
      (det || ctx) &&
      FIGURE_WORDS.test(this.w(k + 1)) &&
      /^[\p{L}][\p{L}\p{N}_-]*$/u.test(tok.text) &&
      !STOP.has(head) &&
      !this.metricAt(k)
    )
      return found(k + 1, 'figures');
    if (/^(weights|checkpoints?|ckpts?|state_dict)$/.test(head) && !readsIt()) return found(k, 'model');
    if (head === 'state' && this.w(k + 1) === 'dict' && !readsIt()) return found(k + 1, 'model');
    if (/^(model|models|network|net)$/.test(head) && !readsIt()) {
      // "save the model as lm-small.pt": the model, under that name.
      const named = this.t[k + 2];
      if (
        /^(as|to|into|in)$/.test(this.w(k + 1)) &&
        named?.type === 'word' &&
        OUTPUT_EXT.test(named.text) &&
        !SCRIPT_EXT.test(named.text)
      ) {
        return found(k + 2, 'model', { file: named.text });
      }
      if (/^(weights|checkpoints?|file|files|artifacts?)$/.test(this.w(k + 1))) return found(k + 1, 'model');
      if (ctx && (det || adj) && !/^(card|config|configuration|size|type|architecture)$/.test(this.w(k + 1))) return found(k, 'model');
      if (adj && /^(trained|final|resulting|saved|fine-tuned|finetuned|learned)$/.test(this.w(j)) && det) return found(k, 'model');
      return null;
    }
    if (/^(samples|completions|generations)$/.test(head) && (ctx || adj || det)) return found(k, 'samples');
    if (/^(sample|completion|generation)$/.test(head) && ctx && det && !/^(of|from|size|rate|count)$/.test(this.w(k + 1)))
      return found(k, 'samples');
    if (/^(sample)$/.test(head) && /^(text|texts|outputs|output|generations|completions)$/.test(this.w(k + 1)))
      return found(k + 1, 'samples');
    if (head === 'text' && (adj || (ctx && det))) return found(k, 'samples');
    if (head === 'generate' && /^(text|samples|some|a)$/.test(this.w(k + 1))) {
      let last = k + 1;
      if (/^(some|a)$/.test(this.w(last)) && this.isWord(last + 1)) last++;
      if (this.w(last) === 'few' && this.isWord(last + 1)) last++;
      if (/^(text|samples|sample|completions|stories|poems|poetry|shakespeare)$/.test(this.w(last))) return found(last, 'samples');
      return null;
    }
    if (head === 'sample' && this.w(k + 1) === 'from' && i === k) return found(k, 'samples');
    if (
      (head === 'report' || head === 'summary' || head === 'writeup' || head === 'write-up') &&
      (det || adj || (ctx && head !== 'report'))
    )
      return found(k, 'report');
    if (/^(logs|log)$/.test(head) && (det || adj || /^(training|run|console)$/.test(this.w(k - 1)))) return found(k, 'logs');
    if ((head === 'training' || head === 'run' || head === 'console') && /^(logs?)$/.test(this.w(k + 1))) return found(k + 1, 'logs');
    if (head === 'log' && /^(files?)$/.test(this.w(k + 1))) return found(k + 1, 'logs');
    if (/^(results|predictions|embeddings|dataset|data|numbers|csv|table|tables)$/.test(head) && ctx && (det || adj))
      return found(k, 'data');
    if (/^(metrics|scores|stats|statistics)$/.test(head) && (ctx || det)) return found(k, 'metrics');
    // "the classification report", "the benchmark table": what the program prints as its report.
    if (det && /^(report|summary|table)$/.test(this.w(k + 1)) && !STOP.has(head) && (ctx || this.w(k + 1) === 'report'))
      return found(k + 1, 'report');
    const m = this.metricAt(j);
    // "the loss log", "the loss history": the run's log, not one number.
    if (m && /^(log|logs|history)$/.test(this.w(m.last + 1)) && (ctx || det)) return found(m.last + 1, 'logs');
    if (m && (ctx || /^(final|best|last|test|val|validation)$/.test(this.w(j)))) return found(m.last, 'metrics', { metric: m.name });
    // "its config", "the config": the settings the run used, as it writes them.
    if (ctx && det && /^(config|configuration|hyperparameters|params|parameters)$/.test(head) && !/^(file|files)$/.test(this.w(k + 1)))
      return found(k, 'data');
    // "show me the result", "tell me the answer", "print the learned function": what the program prints.
    if (
      ctx &&
      (det || adj) &&
      tok.type === 'word' &&
      !STOP.has(head) &&
      !this.term(k) &&
      !/s$/.test(head) &&
      /^(show|tell|print|display)$/.test(this.outputVerb(i))
    ) {
      return found(k, 'stdout');
    }
    if (ctx && det && /^(result|answer)$/.test(head)) return found(k, 'stdout');
    if (
      ctx &&
      (det || adj) &&
      /^(mean|average|std|median|throughput|latency|speed|runtime|time|timings?|tokens\/s|it\/s|samples\/s)$/.test(head)
    ) {
      return found(k, 'metrics', { metric: tok.text.toLowerCase() });
    }
    // Something else handed back by name: "give me the reconstructions".
    if (
      ctx &&
      det &&
      tok.type === 'word' &&
      /^[\p{L}][\p{L}-]*s$/u.test(tok.text) &&
      !STOP.has(head) &&
      !this.term(k) &&
      !/(ss|us|is)$/.test(head)
    )
      return found(k, 'data');
    return null;
  }

  // ---- the scan ----

  private readonly recognizers: ((i: number) => Found | null)[] = [
    (i) => this.setup(i),
    (i) => this.sweep(i),
    (i) => this.positional(i),
    (i) => this.countOf(i),
    (i) => this.vagueSweep(i),
    (i) => this.sampleCount(i),
    (i) => this.dtype(i),
    (i) => this.setMore(i),
    (i) => this.flag(i),
    (i) => this.threshold(i),
    (i) => this.every(i),
    (i) => this.evalBatches(i),
    (i) => this.scale(i),
    (i) => this.limit(i),
    (i) => this.hardware(i),
    (i) => this.scriptArgument(i),
    (i) => this.numTerm(i),
    (i) => this.host(i),
    (i) => this.termValue(i),
    (i) => this.assign(i),
    (i) => this.codeNameValue(i),
    (i) => this.nameRange(i),
    (i) => this.setName(i),
    (i) => this.numberOf(i),
    (i) => this.nounList(i),
    (i) => this.symbolValue(i),
    (i) => this.phraseOf(i),
    (i) => this.modelName(i),
    (i) => this.served(i),
    (i) => this.address(i),
    (i) => this.inputPath(i),
    (i) => this.optimizer(i),
    (i) => this.dataset(i),
    (i) => this.toggle(i),
    (i) => this.target(i),
    (i) => this.output(i),
    (i) => this.vague(i),
  ];

  parse(): Found[] {
    const out: Found[] = [];
    let i = 0;
    while (i < this.t.length) {
      // Punctuation starts no ask but a price ("$2").
      const tok = this.t[i]!;
      if (tok.type === 'punct' && tok.text !== '$' && tok.text !== '€' && tok.text !== '£') {
        i++;
        continue;
      }
      let best: Found | null = null;
      for (const r of this.recognizers) {
        const f = r(i);
        if (f && f.last >= i && f.first >= i && (!best || f.last > best.last)) best = f;
      }
      if (best) {
        // "training seed 7 in params.yaml": the config file the setting lives in.
        if ((best.ask.kind === 'setting' || best.ask.kind === 'sweep') && /^(in|from|of)$/.test(this.w(best.last + 1))) {
          const f = this.t[best.last + 2];
          if (f?.type === 'word' && CONFIG_EXT.test(f.text)) best = { ...best, last: best.last + 2, ask: { ...best.ask, file: f.text } };
        }
        out.push(best);
        i = best.last + 1;
      } else i++;
    }
    return out;
  }
}

/** The noun of "one run per user", "a separate run for each value" (lower case), or null. */
function oneRunPer(request: string): string | null {
  const m = /\b(?:one|a|1)\s+(?:separate\s+|single\s+)?(?:run|job|shard)\s+(?:per|for\s+each|for\s+every)\s+([\p{L}\p{N}_-]+)/iu.exec(
    request,
  );
  return m ? m[1]!.toLowerCase() : null;
}

/**
 * Asks that say one thing together: a list for one run becomes a sweep when the request asks for
 * one run per item ("the users alice, bob and carol …, one run per user"), and a bare flag that
 * names the option a list goes to ("… with --user") becomes that list's name.
 */
function joinAsks(found: Found[], per: string | null, between: (last: number, first: number) => boolean): Found[] {
  const lists = found.filter((f) => f.ask.values && (f.ask.kind === 'setting' || f.ask.kind === 'sweep'));
  if (per && lists.length > 0) {
    const perKey = compactName(per);
    const named = lists.filter((f) => f.ask.phrase && compactName(f.ask.phrase).replace(/^-+/, '') === perKey);
    const listsForOne = lists.filter((f) => f.ask.kind === 'setting');
    // "one run per value" (or any noun when one list is there to split).
    const split = named.length > 0 ? named : /^values?$/.test(per) || listsForOne.length === 1 ? listsForOne : [];
    for (const f of split) {
      if (f.ask.kind !== 'setting') continue;
      const { value: _value, ...rest } = f.ask;
      f.ask = { ...rest, kind: 'sweep' };
    }
  }
  // "100 trees, min_split 0.02 and training seed 7 in params.yaml": the file is every listed setting's.
  for (let k = found.length - 1; k > 0; k--) {
    const file = found[k]!.ask.file;
    const prev = found[k - 1]!;
    if (!file || found[k]!.ask.kind !== 'setting' || prev.ask.kind !== 'setting' || prev.ask.file || !between(prev.last, found[k]!.first))
      continue;
    prev.ask = { ...prev.ask, file };
  }
  const drop = new Set<Found>();
  for (const flag of found) {
    const phrase = flag.ask.phrase ?? '';
    if (flag.ask.kind !== 'setting' || !phrase.startsWith('-') || (flag.ask.value !== undefined && flag.ask.value !== 'True')) continue;
    const list = lists.find((f) => f.ask.phrase && !f.ask.phrase.startsWith('-') && compactName(f.ask.phrase) === compactName(phrase));
    if (!list) continue;
    list.ask = { ...list.ask, phrase };
    drop.add(flag);
  }
  return drop.size ? found.filter((f) => !drop.has(f)) : found;
}

/**
 * The request's asks, in the order of the request. Never throws: any text gives a list (empty
 * when nothing in it asks for anything).
 */
export function parseAsks(request: string): Ask[] {
  if (typeof request !== 'string' || request.trim() === '') return [];
  const tokens = tokenizeRequest(request);
  // Two asks are one list when only commas and "and" stand between them.
  const listed = (last: number, first: number): boolean => tokens.slice(last + 1, first).every((t) => t.text === ',' || t.lower === 'and');
  const found = joinAsks(new Parser(request, tokens).parse(), oneRunPer(request), listed);
  const namedSweep = found.some((f) => f.ask.kind === 'sweep' && (f.ask.phrase || f.ask.values));
  const seenOutputs = new Set<string>();
  const asks: Ask[] = [];
  for (const f of found) {
    // "a parameter sweep" says nothing more when the request names what to sweep elsewhere.
    if (f.ask.kind === 'sweep' && !f.ask.phrase && !f.ask.values && namedSweep) continue;
    if (f.ask.kind === 'output') {
      const key = `${f.ask.output}:${f.ask.file ?? ''}:${f.ask.metric ?? ''}`;
      if (seenOutputs.has(key)) continue;
      seenOutputs.add(key);
    }
    const text = request.slice(tokens[f.first]!.start, tokens[f.last]!.end);
    asks.push({ id: `a${asks.length + 1}`, text, ...f.ask } as Ask);
  }
  return asks;
}

/**
 * A request as tokens with their offsets, so the asks parser works on words and numbers instead
 * of regexes over the whole text (one linear pass: a 100 KB request costs milliseconds, and no
 * pattern can backtrack).
 *
 *   num    a number as users write it: 200, 3e-4, 1_000, 1,000, 10k, 2.5M, 0.5, .5, 90%, -1
 *   word   letters, digits and `_`, joined by `.`, `/` or `-` inside: n_embd, results.csv,
 *          config/train_shakespeare_char.py, init-db, CPU-only, run's
 *   flag   `--emsize`, `-e` (a dash that starts a token, then a letter)
 *   punct  one character (`..` and `->` as one), and a line break as '\n'
 */

export type TokenType = 'num' | 'word' | 'flag' | 'punct';

export interface Token {
  type: TokenType;
  text: string;
  /** text in lower case. */
  lower: string;
  start: number;
  end: number;
  /** num: the value without separators, suffixes or percent ("10k" → "10000", "90%" → "0.9", "1_000" → "1000", "3e-4" stays). */
  value?: string;
}

const NUMBER_RE =
  /[-+]?(?:\d{1,3}(?:,\d{3}(?!,?\d)|(?:,000)+(?!,?\d))|\d+(?:_\d+)*)(?:\.\d+)?(?:[eE][-+]?\d+)?|[-+]?\.\d+(?:[eE][-+]?\d+)?/y;
const SUFFIX_RE = /[kKM](?![\p{L}\p{N}_])/uy;
const WORD_RE = /(?:\.{1,2}\/)?[\p{L}\p{N}_]+(?:'[\p{L}]+)?(?:[./-][\p{L}\p{N}_]+)*\/?/uy;
const FLAG_RE = /--?[\p{L}][\p{L}\p{N}_]*(?:[-.][\p{L}\p{N}_]+)*/uy;
const WORD_CHAR = /[\p{L}\p{N}_]/u;

function plainNumber(raw: string, suffix: string, percent: boolean): string {
  let s = raw.replace(/[_,]/g, '').replace(/^\+/, '');
  if (s.startsWith('.')) s = `0${s}`;
  else if (s.startsWith('-.')) s = `-0${s.slice(1)}`;
  if (!suffix && !percent) return s;
  let n = Number(s);
  if (suffix === 'k' || suffix === 'K') n *= 1e3;
  if (suffix === 'M') n *= 1e6;
  if (percent) n /= 100;
  // Round away binary noise (0.07 stays 0.07, not 0.07000000000000001).
  return String(Number(n.toPrecision(12)));
}

export function tokenizeRequest(text: string): Token[] {
  const tokens: Token[] = [];
  const push = (type: TokenType, start: number, end: number, value?: string) => {
    const t = text.slice(start, end);
    tokens.push({ type, text: t, lower: t.toLowerCase(), start, end, ...(value !== undefined ? { value } : {}) });
  };
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text[i]!;
    if (c === '\n') {
      push('punct', i, i + 1);
      i++;
      continue;
    }
    if (/\s/u.test(c)) {
      i++;
      continue;
    }
    const prev = i > 0 ? text[i - 1]! : ' ';
    // After "..": the end of a range ("1..5"); after one dot the digits belong to a name ("v1.2").
    const atTokenStart = !WORD_CHAR.test(prev) && (prev !== '.' || text[i - 2] === '.');
    // A number, unless it is glued to a word before it ("gpt2") or after it ("2x", "h100" is a word).
    if (atTokenStart && /[\d.+-]/.test(c)) {
      NUMBER_RE.lastIndex = i;
      const m = NUMBER_RE.exec(text);
      if (m && (/\d/.test(c) || ((c === '-' || c === '+' || c === '.') && !WORD_CHAR.test(prev)))) {
        let end = i + m[0].length;
        SUFFIX_RE.lastIndex = end;
        const sm = SUFFIX_RE.exec(text);
        const suffix = sm ? sm[0] : '';
        end += suffix.length;
        const percent = text[end] === '%';
        if (percent) end++;
        const next = text[end];
        if (next === undefined || !WORD_CHAR.test(next)) {
          push('num', i, end, plainNumber(m[0], suffix, percent));
          i = end;
          continue;
        }
      }
    }
    if (c === '-' && atTokenStart && /[\p{L}-]/u.test(text[i + 1] ?? '')) {
      FLAG_RE.lastIndex = i;
      const m = FLAG_RE.exec(text);
      if (m) {
        push('flag', i, i + m[0].length);
        i += m[0].length;
        continue;
      }
    }
    if (WORD_CHAR.test(c) || (c === '.' && text[i + 1] === '/') || (c === '.' && text[i + 1] === '.' && text[i + 2] === '/')) {
      WORD_RE.lastIndex = i;
      const m = WORD_RE.exec(text);
      if (m && m[0].length > 0) {
        push('word', i, i + m[0].length);
        i += m[0].length;
        continue;
      }
    }
    if (
      (c === '.' && text[i + 1] === '.') ||
      (c === '-' && text[i + 1] === '>') ||
      (c === '>' && text[i + 1] === '=') ||
      (c === '<' && text[i + 1] === '=')
    ) {
      push('punct', i, i + 2);
      i += 2;
      continue;
    }
    // One code point (an emoji or astral character is one punct token, never half of one).
    const cp = text.codePointAt(i)!;
    const len = cp > 0xffff ? 2 : 1;
    push('punct', i, i + len);
    i += len;
  }
  return tokens;
}

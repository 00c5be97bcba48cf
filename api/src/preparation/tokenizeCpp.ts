/**
 * A lossless tokenizer for C, C++ and CUDA sources: joining every token's `text` gives the input
 * back byte for byte, so a translation can replace identifier tokens and leave comments, string
 * literals and layout exactly as they were. It is not a parser; it knows just enough (comments,
 * raw strings, character literals, pp-numbers, `#include` header names, line continuations) that
 * no identifier is ever found inside a comment or a literal.
 */

export type CppTokenKind =
  | 'ident'
  | 'number'
  | 'string'
  | 'char'
  | 'comment'
  | 'header' // the <...> or "..." operand of #include
  | 'punct'
  | 'space' // spaces, tabs, line continuations
  | 'newline';

export interface CppToken {
  kind: CppTokenKind;
  text: string;
  /** 1-based line where the token starts. */
  line: number;
  /** True for tokens on a preprocessor directive line (after `#`). */
  directive: boolean;
}

const PUNCT3 = ['<<<', '>>>', '<<=', '>>=', '...', '->*', '<=>'];
const PUNCT2 = [
  '::',
  '->',
  '++',
  '--',
  '<<',
  '>>',
  '<=',
  '>=',
  '==',
  '!=',
  '&&',
  '||',
  '+=',
  '-=',
  '*=',
  '/=',
  '%=',
  '&=',
  '|=',
  '^=',
  '##',
  '.*',
];

function isIdentStart(c: string): boolean {
  return /[A-Za-z_$]/.test(c) || c.charCodeAt(0) > 127;
}
function isIdentPart(c: string): boolean {
  return /[A-Za-z0-9_$]/.test(c) || c.charCodeAt(0) > 127;
}

export function tokenizeCpp(src: string): CppToken[] {
  const out: CppToken[] = [];
  let i = 0;
  let line = 1;
  let atLineStart = true; // only whitespace seen since the last newline
  let directive = false;
  let includeState = 0; // 1 after '#', 2 after '#include'
  const push = (kind: CppTokenKind, text: string): void => {
    out.push({ kind, text, line, directive });
    for (const ch of text) if (ch === '\n') line++;
  };
  while (i < src.length) {
    const c = src[i]!;
    const n = src[i + 1] ?? '';
    if (c === '\n') {
      push('newline', '\n');
      i++;
      atLineStart = true;
      directive = false;
      includeState = 0;
      continue;
    }
    if (c === '\\' && (n === '\n' || (n === '\r' && src[i + 2] === '\n'))) {
      const text = n === '\n' ? '\\\n' : '\\\r\n';
      push('space', text); // a continuation keeps the directive going
      i += text.length;
      continue;
    }
    if (c === ' ' || c === '\t' || c === '\r' || c === '\f' || c === '\v') {
      let j = i + 1;
      while (j < src.length && /[ \t\r\f\v]/.test(src[j]!)) j++;
      push('space', src.slice(i, j));
      i = j;
      continue;
    }
    if (c === '/' && n === '/') {
      let j = i + 2;
      // a line comment continues over backslash-newline
      while (j < src.length && src[j] !== '\n') {
        if (src[j] === '\\' && src[j + 1] === '\n') j += 2;
        else j++;
      }
      push('comment', src.slice(i, j));
      i = j;
      continue;
    }
    if (c === '/' && n === '*') {
      const end = src.indexOf('*/', i + 2);
      const j = end < 0 ? src.length : end + 2;
      push('comment', src.slice(i, j));
      i = j;
      continue;
    }
    if (c === '#' && atLineStart) {
      directive = true;
      includeState = 1;
      atLineStart = false;
      push('punct', '#');
      i++;
      continue;
    }
    atLineStart = false;
    if (includeState === 2 && (c === '<' || c === '"')) {
      const close = c === '<' ? '>' : '"';
      let j = i + 1;
      while (j < src.length && src[j] !== close && src[j] !== '\n') j++;
      push('header', src.slice(i, Math.min(j + 1, src.length)));
      i = j + 1;
      includeState = 0;
      continue;
    }
    // raw string literal: R"delim( ... )delim" with an optional encoding prefix
    const raw = /^(?:u8|u|U|L)?R"([^()\\\s]{0,16})\(/.exec(src.slice(i, i + 24));
    if (raw) {
      const endMark = `)${raw[1]}"`;
      const end = src.indexOf(endMark, i + raw[0].length);
      const j = end < 0 ? src.length : end + endMark.length;
      push('string', src.slice(i, j));
      i = j;
      continue;
    }
    const prefixed = /^(?:u8|u|U|L)(?=["'])/.exec(src.slice(i, i + 3));
    if (c === '"' || c === "'" || prefixed) {
      const start = i;
      let j = i + (prefixed ? prefixed[0].length : 0);
      const quote = src[j]!;
      j++;
      while (j < src.length && src[j] !== quote && src[j] !== '\n') {
        if (src[j] === '\\') j += 2;
        else j++;
      }
      j = Math.min(j + 1, src.length);
      push(quote === '"' ? 'string' : 'char', src.slice(start, j));
      i = j;
      continue;
    }
    if (/[0-9]/.test(c) || (c === '.' && /[0-9]/.test(n))) {
      let j = i + 1;
      while (j < src.length) {
        const d = src[j]!;
        if (/[eEpP]/.test(d) && /[+-]/.test(src[j + 1] ?? '')) j += 2;
        else if (/[0-9A-Za-z_.]/.test(d)) j++;
        else if (d === "'" && /[0-9A-Za-z]/.test(src[j + 1] ?? '')) j += 2;
        else break;
      }
      push('number', src.slice(i, j));
      i = j;
      continue;
    }
    if (isIdentStart(c)) {
      let j = i + 1;
      while (j < src.length && isIdentPart(src[j]!)) j++;
      const word = src.slice(i, j);
      push('ident', word);
      if (includeState === 1) includeState = word === 'include' || word === 'include_next' ? 2 : 0;
      i = j;
      continue;
    }
    const three = src.slice(i, i + 3);
    const two = src.slice(i, i + 2);
    const p = PUNCT3.includes(three) ? three : PUNCT2.includes(two) ? two : c;
    push('punct', p);
    i += p.length;
  }
  return out;
}

/** Indices of the non-trivia tokens (not space, newline or comment), for lookahead/lookbehind. */
export function significant(tokens: readonly CppToken[]): number[] {
  const idx: number[] = [];
  tokens.forEach((t, k) => {
    if (t.kind !== 'space' && t.kind !== 'newline' && t.kind !== 'comment') idx.push(k);
  });
  return idx;
}

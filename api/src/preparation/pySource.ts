/**
 * A parsed Python file with what source-level rewrites need: import aliases (`import torch as T`,
 * `from torch.utils.data import DataLoader`) resolved to qualified names, parent links, the
 * statement list each statement sits in, and a splicer that applies text replacements at exact AST
 * offsets and reports them as edits in the input's line coordinates. Used by the optimization
 * candidates (optimizeRules.ts); the migration (migratePytorch.ts) predates it and keeps its own.
 */
import { isNode, pyChildren, type PyNode } from './pythonAst.js';
import type { Edit } from './types.js';

export interface Splice {
  /** Offsets in the input (JavaScript string indices); s === e inserts. */
  s: number;
  e: number;
  text: string;
  rule: string;
}

/** Where a statement sits: its parent's statement list and its index there. */
export interface StatementSlot {
  parent: PyNode;
  list: PyNode[];
  index: number;
}

export interface PyFile {
  path: string;
  src: string;
  module: PyNode;
  parents: Map<PyNode, PyNode>;
  slots: Map<PyNode, StatementSlot>;
  /** Local name → qualified name, from the file's absolute imports. */
  aliases: Map<string, string>;
  /** Every node, in source order (depth-first, fields in order). */
  nodes: PyNode[];
}

const STATEMENT_LISTS = ['body', 'orelse', 'finalbody', 'handlers'];

export function analyzePyFile(path: string, src: string, module: PyNode): PyFile {
  const f: PyFile = { path, src, module, parents: new Map(), slots: new Map(), aliases: new Map(), nodes: [] };
  const walk = (n: PyNode): void => {
    f.nodes.push(n);
    for (const field of STATEMENT_LISTS) {
      const list = n[field];
      if (Array.isArray(list)) list.forEach((st, index) => isNode(st) && f.slots.set(st, { parent: n, list: list as PyNode[], index }));
    }
    if (n._t === 'Import') {
      for (const a of n.names as PyNode[]) {
        const name = a.name as string;
        const asname = a.asname as string | null;
        if (asname) f.aliases.set(asname, name);
        else f.aliases.set(name.split('.')[0]!, name.split('.')[0]!);
      }
    } else if (n._t === 'ImportFrom' && typeof n.module === 'string' && (n.level as number) === 0) {
      for (const a of n.names as PyNode[]) {
        const name = a.name as string;
        if (name !== '*') f.aliases.set((a.asname as string | null) ?? name, `${n.module}.${name}`);
      }
    }
    for (const c of pyChildren(n)) {
      f.parents.set(c, n);
      walk(c);
    }
  };
  walk(module);
  return f;
}

/** Qualified name of a Name/Attribute chain through the imports (`nn.Conv2d` → `torch.nn.Conv2d`). */
export function qualify(f: PyFile, n: unknown): string | null {
  if (!isNode(n)) return null;
  if (n._t === 'Name') return f.aliases.get(n.id as string) ?? null;
  if (n._t === 'Attribute') {
    const base = qualify(f, n.value);
    return base ? `${base}.${n.attr as string}` : null;
  }
  return null;
}

/** Dotted text of a Name/Attribute chain as written (`self.model`, `opt`), else null. */
export function dotted(n: unknown): string | null {
  if (!isNode(n)) return null;
  if (n._t === 'Name') return n.id as string;
  if (n._t === 'Attribute') {
    const base = dotted(n.value);
    return base ? `${base}.${n.attr as string}` : null;
  }
  return null;
}

export const text = (f: PyFile, n: PyNode): string => f.src.slice(n.s!, n.e!);

export function keyword(call: PyNode, name: string): PyNode | undefined {
  return (call.keywords as PyNode[]).find((k) => k.arg === name);
}

export function hasStarStar(call: PyNode): boolean {
  return (call.keywords as PyNode[]).some((k) => k.arg === null) || (call.args as PyNode[]).some((a) => a._t === 'Starred');
}

/** The local name bound to the `torch` module itself, if any (`torch`, `T`). */
export function torchName(f: PyFile): string | null {
  if (f.aliases.get('torch') === 'torch') return 'torch';
  const hit = [...f.aliases.entries()]
    .filter(([, q]) => q === 'torch')
    .map(([k]) => k)
    .sort()[0];
  return hit ?? null;
}

/** Offset of the start of the line holding `off`. */
export function lineStartOf(src: string, off: number): number {
  return src.lastIndexOf('\n', off - 1) + 1;
}

/** Offset just past the newline ending the line holding `off` (or the end of the source). */
export function lineEndOf(src: string, off: number): number {
  const nl = src.indexOf('\n', off);
  return nl < 0 ? src.length : nl + 1;
}

export function lineOf(src: string, off: number): number {
  let n = 1;
  for (let i = src.indexOf('\n'); i >= 0 && i < off; i = src.indexOf('\n', i + 1)) n++;
  return n;
}

/** The indentation of a statement when it starts its line (only whitespace before it), else null. */
export function indentOf(f: PyFile, st: PyNode): string | null {
  const ls = lineStartOf(f.src, st.s!);
  const ind = f.src.slice(ls, st.s!);
  return /^[ \t]*$/.test(ind) ? ind : null;
}

/** One indentation step in the style of a block indented by `ind` (a tab for tab-indented code). */
export function indentUnit(ind: string): string {
  return ind.includes('\t') ? '\t' : '    ';
}

export function ancestors(f: PyFile, n: PyNode): PyNode[] {
  const out: PyNode[] = [];
  for (let p = f.parents.get(n); p; p = f.parents.get(p)) out.push(p);
  return out;
}

/** The statement containing a node (the node itself when it is one). */
export function statementOf(f: PyFile, n: PyNode): PyNode | null {
  for (let c: PyNode | undefined = n; c; c = f.parents.get(c)) if (f.slots.has(c)) return c;
  return null;
}

export function isMainGuard(st: PyNode): boolean {
  if (st._t !== 'If') return false;
  const t = st.test as PyNode;
  if (t._t !== 'Compare') return false;
  const left = t.left as PyNode;
  const right = (t.comparators as PyNode[])[0];
  const isName = (x: PyNode | undefined): boolean => x?._t === 'Name' && x.id === '__name__';
  const isMain = (x: PyNode | undefined): boolean => x?._t === 'Constant' && x.value === '__main__';
  return (isName(left) && isMain(right)) || (isMain(left) && isName(right));
}

export function hasMainGuard(f: PyFile): boolean {
  return (f.module.body as PyNode[]).some(isMainGuard);
}

export const PRELUDE_END_MARK = '# <<< chatgpu device prelude';

/**
 * Where module-level setup goes: after the docstring, `from __future__` and the leading imports —
 * and after the migration's device prelude when the file has one. Returns the offset of the line
 * start to insert at.
 */
export function afterImportsOffset(f: PyFile): number {
  const prelude = f.src.indexOf(PRELUDE_END_MARK);
  if (prelude >= 0) return lineEndOf(f.src, prelude);
  let last: PyNode | undefined;
  for (const [i, st] of (f.module.body as PyNode[]).entries()) {
    const isDoc = i === 0 && st._t === 'Expr' && (st.value as PyNode)._t === 'Constant' && typeof (st.value as PyNode).value === 'string';
    if (isDoc || st._t === 'Import' || st._t === 'ImportFrom') last = st;
    else break;
  }
  if (last) return lineEndOf(f.src, last.e!);
  const m = /^(#![^\n]*\n)?(#[^\n]*coding[:=][^\n]*\n)?/.exec(f.src);
  return m ? m[0].length : 0;
}

/**
 * Applies splices to the source (an insertion sorts before a replacement at the same offset;
 * overlapping ones after the first are dropped) and reports one edit per group of touched lines,
 * in input line numbers. Whole-line insertions report `before: ''`.
 */
export function applySplices(file: string, src: string, splices: readonly Splice[]): { content: string; edits: Edit[] } {
  const sorted = [...splices].sort((a, b) => a.s - b.s || a.e - a.s - (b.e - b.s) || (a.text < b.text ? -1 : a.text > b.text ? 1 : 0));
  const kept: Splice[] = [];
  let pos = 0;
  for (const sp of sorted) {
    if (sp.s < pos) continue;
    if (kept.some((k) => k.s === sp.s && k.e === sp.e && k.text === sp.text)) continue;
    kept.push(sp);
    pos = Math.max(pos, sp.e);
  }
  let content = '';
  pos = 0;
  for (const sp of kept) {
    content += src.slice(pos, sp.s) + sp.text;
    pos = sp.e;
  }
  content += src.slice(pos);

  // edits: whole-line insertions stand alone; other splices are grouped by the lines they touch
  const edits: Edit[] = [];
  const groups: Array<{ start: number; end: number; splices: Splice[] }> = [];
  for (const sp of kept) {
    const wholeLine = sp.s === sp.e && sp.text.endsWith('\n') && lineStartOf(src, sp.s) === sp.s;
    if (wholeLine) {
      edits.push({ file, line: lineOf(src, sp.s), before: '', after: sp.text.replace(/^\n+/, '').replace(/\n$/, ''), rule: sp.rule });
      continue;
    }
    const start = lineStartOf(src, sp.s);
    const end = sp.e > sp.s && src[sp.e - 1] === '\n' ? sp.e : lineEndOf(src, sp.e);
    const g = groups.at(-1);
    if (g && start < g.end) {
      g.end = Math.max(g.end, end);
      g.splices.push(sp);
    } else groups.push({ start, end, splices: [sp] });
  }
  for (const g of groups) {
    let after = '';
    let p = g.start;
    for (const sp of g.splices) {
      after += src.slice(p, sp.s) + sp.text;
      p = sp.e;
    }
    after += src.slice(p, g.end);
    const rules = [...new Set(g.splices.map((sp) => sp.rule))].sort().join('+');
    edits.push({
      file,
      line: lineOf(src, g.start),
      before: src.slice(g.start, g.end).replace(/\n$/, ''),
      after: after.replace(/\n$/, ''),
      rule: rules,
    });
  }
  edits.sort((a, b) => a.line - b.line || (a.before === '' ? -1 : 0) - (b.before === '' ? -1 : 0));
  return { content, edits };
}

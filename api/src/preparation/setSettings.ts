/**
 * The `set-settings` rewrite: a project's settings that no flag reaches (module constants,
 * configurator globals in a config module, keys of a YAML or JSON config) changed by replacing
 * exactly the named literals, and nothing else.
 *
 * Each edit names a span of one file and the text it holds now (`from`); the rewrite refuses
 * when the text there differs (the plan was made from other files). It is then checked
 * statically, with no run: a Python file must parse and its AST must equal the original's
 * everywhere except at the edited literals (positions ignored); a YAML or JSON file must parse
 * and its data must equal the original's except at the edited keys. The user asked for the new
 * values, so no reference run is needed; the diff is the evidence.
 */
import { parse as parseYaml } from 'yaml';
import { isDeepStrictEqual } from 'node:util';
import { unifiedDiff } from './diffs.js';
import { isNode, parsePython, type PyNode } from './pythonAst.js';

export interface SettingEdit {
  /** The file the literal is in. */
  file: string;
  /** The setting's name (a dotted key for a config file), for the diff's reader and the data check. */
  name: string;
  /** 1-based lines, 0-based columns counted in UTF-8 bytes (as Python's `ast` gives them), end exclusive. */
  line: number;
  col: number;
  endLine: number;
  endCol: number;
  /** The literal as the file holds it now, e.g. `0.1`, `'cpu'`, `64`. */
  from: string;
  /** The literal to write, e.g. `0.05`, `'cuda'`, `128`. */
  to: string;
}

export type SettingsRewrite = { ok: true; tree: Record<string, string>; changed: string[]; diff: string } | { ok: false; problem: string };

const CONFIG_FORMATS: Record<string, 'yaml' | 'json'> = { '.yaml': 'yaml', '.yml': 'yaml', '.json': 'json' };
const MAX_EDITS = 40;

/** Offset in `text` (a JavaScript string index) of 1-based `line`, UTF-8 byte column `col`; null when out of range. */
export function offsetOf(text: string, line: number, col: number): number | null {
  let start = 0;
  for (let l = 1; l < line; l++) {
    const nl = text.indexOf('\n', start);
    if (nl < 0) return null;
    start = nl + 1;
  }
  const end = text.indexOf('\n', start);
  const lineText = text.slice(start, end < 0 ? text.length : end);
  const bytes = Buffer.from(lineText, 'utf8');
  if (col < 0 || col > bytes.length) return null;
  return start + bytes.subarray(0, col).toString('utf8').length;
}

function extension(file: string): string {
  const m = /\.[^./]+$/.exec(file);
  return m ? m[0].toLowerCase() : '';
}

/**
 * `files` with `edits` applied, checked. `python` parses Python files (null: Python files cannot be
 * checked, so edits to them are refused rather than applied unchecked).
 */
export async function applySettingEdits(
  files: Readonly<Record<string, string>>,
  edits: readonly SettingEdit[],
  python: string | null,
): Promise<SettingsRewrite> {
  if (edits.length === 0) return { ok: false, problem: 'No settings to change.' };
  if (edits.length > MAX_EDITS)
    return { ok: false, problem: `At most ${MAX_EDITS} settings can be changed at once (${edits.length} given).` };
  const byFile = new Map<string, { edit: SettingEdit; start: number; end: number }[]>();
  for (const edit of edits) {
    const text = files[edit.file];
    if (text === undefined) return { ok: false, problem: `No text file ${edit.file} in the project for the setting ${edit.name}.` };
    const ext = extension(edit.file);
    if (ext !== '.py' && !CONFIG_FORMATS[ext])
      return {
        ok: false,
        problem: `${edit.file}: settings are changed in Python, YAML or JSON files only; pass ${edit.name} another way (a flag or an override).`,
      };
    const start = offsetOf(text, edit.line, edit.col);
    const end = offsetOf(text, edit.endLine, edit.endCol);
    if (start === null || end === null || end <= start)
      return {
        ok: false,
        problem: `${edit.file}: the position ${edit.line}:${edit.col}–${edit.endLine}:${edit.endCol} given for ${edit.name} is not in the file.`,
      };
    const found = text.slice(start, end);
    if (found !== edit.from)
      return {
        ok: false,
        problem: `${edit.file} line ${edit.line}: expected ${JSON.stringify(edit.from)} for ${edit.name}, found ${JSON.stringify(found.slice(0, 80))}; the plan was made from other files.`,
      };
    if (!edit.to.trim() || /[\n\r]/.test(edit.to))
      return { ok: false, problem: `${edit.file}: the new value of ${edit.name} must be one literal on one line.` };
    const list = byFile.get(edit.file) ?? [];
    if (list.some((o) => start < o.end && o.start < end))
      return { ok: false, problem: `${edit.file}: two settings overlap at line ${edit.line}.` };
    list.push({ edit, start, end });
    byFile.set(edit.file, list);
  }
  const tree: Record<string, string> = {};
  for (const [file, list] of byFile) {
    let text = files[file]!;
    for (const { edit, start, end } of [...list].sort((a, b) => b.start - a.start)) text = text.slice(0, start) + edit.to + text.slice(end);
    tree[file] = text;
  }
  const problem = (await checkPython(files, tree, byFile, python)) ?? checkConfigs(files, tree, byFile);
  if (problem) return { ok: false, problem };
  const changed = Object.keys(tree)
    .filter((f) => tree[f] !== files[f])
    .sort();
  const before = Object.fromEntries(changed.map((f) => [f, files[f]!]));
  const after = Object.fromEntries(changed.map((f) => [f, tree[f]!]));
  return { ok: true, tree: after, changed, diff: unifiedDiff(before, after) };
}

/** Python files: the new file parses, each new value is a literal, and the ASTs differ only at the edited literals. */
async function checkPython(
  files: Readonly<Record<string, string>>,
  tree: Record<string, string>,
  byFile: Map<string, { edit: SettingEdit; start: number; end: number }[]>,
  python: string | null,
): Promise<string | null> {
  const py = [...byFile.keys()].filter((f) => extension(f) === '.py');
  if (py.length === 0) return null;
  if (!python) return 'No Python interpreter on the API machine to check the rewrite of a Python file; the settings were not changed.';
  const batch: Record<string, string> = {};
  for (const f of py) {
    batch[`a/${f}`] = files[f]!;
    batch[`b/${f}`] = tree[f]!;
    byFile.get(f)!.forEach(({ edit }, i) => (batch[`v/${f}/${i}`] = `(${edit.to})\n`));
  }
  const parsed = await parsePython(batch, { python });
  for (const f of py) {
    const a = parsed[`a/${f}`];
    const b = parsed[`b/${f}`];
    if (!a?.ok) return `${f} does not parse as it is (line ${a && !a.ok ? a.error.line : '?'}); its settings cannot be changed safely.`;
    for (const [i, { edit }] of byFile.get(f)!.entries()) {
      const v = parsed[`v/${f}/${i}`];
      if (!v?.ok || !isLiteral(((v.tree.body as PyNode[])[0]?.value as PyNode | undefined) ?? null))
        return `${f}: the new value of ${edit.name}, ${edit.to}, is not a Python literal (a number, string, True/False/None, or a list/tuple/dict of them).`;
    }
    if (!b?.ok)
      return `${f} would not parse after the change (line ${b && !b.ok ? b.error.line : '?'}: ${b && !b.ok ? b.error.message : ''}); the settings were not changed.`;
    const edited = new Set(byFile.get(f)!.map((x) => x.start));
    const where = sameExceptAt(a.tree, b.tree, edited);
    if (where) return `${f}: the rewrite would change more than the named literals (${where}); the settings were not changed.`;
  }
  return null;
}

const LITERAL_TYPES = new Set(['Constant', 'List', 'Tuple', 'Set', 'Dict']);

function isLiteral(node: PyNode | null): boolean {
  if (!node) return false;
  if (node._t === 'UnaryOp' && ((node.op as PyNode)?._t === 'USub' || (node.op as PyNode)?._t === 'UAdd'))
    return (node.operand as PyNode)?._t === 'Constant';
  if (!LITERAL_TYPES.has(node._t)) return false;
  if (node._t === 'Constant') return true;
  const kids = [
    ...((node.elts as PyNode[] | undefined) ?? []),
    ...((node.keys as PyNode[] | undefined) ?? []),
    ...((node.values as PyNode[] | undefined) ?? []),
  ];
  return kids.every((k) => isLiteral(k));
}

/**
 * Where two ASTs differ outside the edited nodes (a node of `a` starting at an offset in `edited`
 * may differ, if the replacement is a literal), or null when they agree. Positions are ignored.
 */
function sameExceptAt(a: unknown, b: unknown, edited: ReadonlySet<number>): string | null {
  if (isNode(a) && isNode(b)) {
    if (typeof a.s === 'number' && edited.has(a.s) && isLiteral(a) && isLiteral(b)) return null;
    if (a._t !== b._t) return `line ${a.l ?? '?'}: ${a._t} became ${b._t}`;
    for (const k of Object.keys(a)) {
      if (k === 's' || k === 'e' || k === 'l') continue;
      const d = sameExceptAt(a[k], b[k], edited);
      if (d) return d;
    }
    return null;
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) return 'a list of statements changed length';
    for (let i = 0; i < a.length; i++) {
      const d = sameExceptAt(a[i], b[i], edited);
      if (d) return d;
    }
    return null;
  }
  return Object.is(a, b) ? null : `${JSON.stringify(a)} became ${JSON.stringify(b)}`;
}

/** YAML / JSON files: both parse, and the data differs only at the edited keys. */
function checkConfigs(
  files: Readonly<Record<string, string>>,
  tree: Record<string, string>,
  byFile: Map<string, { edit: SettingEdit }[]>,
): string | null {
  for (const [file, list] of byFile) {
    const format = CONFIG_FORMATS[extension(file)];
    if (!format) continue;
    const read = (text: string): { ok: true; data: unknown } | { ok: false; error: string } => {
      try {
        return { ok: true, data: format === 'json' ? JSON.parse(text) : parseYaml(text) };
      } catch (e) {
        return { ok: false, error: (e as Error).message.split('\n')[0]! };
      }
    };
    const a = read(files[file]!);
    const b = read(tree[file]!);
    if (!a.ok) return `${file} does not parse as it is (${a.error}); its settings cannot be changed safely.`;
    if (!b.ok) return `${file} would not parse after the change (${b.error}); the settings were not changed.`;
    const keys = list.map(({ edit }) => edit.name.split('.'));
    const strip = (data: unknown): unknown => {
      const copy = structuredClone(data);
      for (const k of keys) {
        let at = copy as Record<string, unknown> | null;
        for (const part of k.slice(0, -1)) at = at && typeof at === 'object' ? (at[part] as Record<string, unknown> | null) : null;
        if (at && typeof at === 'object') delete at[k.at(-1)!];
      }
      return copy;
    };
    if (!isDeepStrictEqual(strip(a.data), strip(b.data)))
      return `${file}: the rewrite would change more than ${list.map(({ edit }) => edit.name).join(', ')}; the settings were not changed.`;
    for (const k of keys) {
      let at: unknown = b.data;
      for (const part of k) at = at && typeof at === 'object' ? (at as Record<string, unknown>)[part] : undefined;
      if (at === undefined || (at !== null && typeof at === 'object'))
        return `${file}: after the change, ${k.join('.')} is not a single value; the edit does not address that key.`;
    }
  }
  return null;
}

/**
 * The files of a project folder to upload: everything except version-control and
 * environment folders, caches, and what the folder's .gitignore files exclude (the
 * common subset: globs, `**`, leading and trailing `/`, `!` negation). Symlinks are
 * followed only to files inside the folder (invariant 8: nothing from outside).
 */
import { lstat, readdir, readFile, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { CliError } from './apiClient.js';

export const IGNORED_DIRS = new Set([
  '.git',
  '.hg',
  '.svn',
  'node_modules',
  '__pycache__',
  '.venv',
  '.chatgpu',
  '.mypy_cache',
  '.pytest_cache',
  '.ipynb_checkpoints',
]);
export const IGNORED_FILES = new Set(['.DS_Store']);
export const MAX_FILES = 10_000;

export interface WalkedFile {
  /** Relative to the folder, with forward slashes. */
  path: string;
  abs: string;
  size: number;
  mode: number;
}

export interface WalkResult {
  files: WalkedFile[];
  skipped: string[];
}

interface Rule {
  base: string;
  re: RegExp;
  negate: boolean;
  dirOnly: boolean;
}

/** A .gitignore pattern as a RegExp over paths relative to its folder. */
export function gitignoreRegex(pattern: string): { re: RegExp; dirOnly: boolean } {
  let p = pattern;
  const dirOnly = p.endsWith('/');
  if (dirOnly) p = p.replace(/\/+$/, '');
  const anchored = p.includes('/');
  if (p.startsWith('/')) p = p.slice(1);
  let re = '';
  for (let i = 0; i < p.length; i++) {
    const c = p[i]!;
    if (c === '*') {
      if (p[i + 1] === '*') {
        const atStart = i === 0 || p[i - 1] === '/';
        const atEnd = i + 2 === p.length || p[i + 2] === '/';
        if (atStart && atEnd) {
          if (i + 2 === p.length) re += '.*';
          else {
            re += '(?:.*/)?';
            i++; // the slash
          }
          i++;
          continue;
        }
      }
      re += '[^/]*';
    } else if (c === '?') re += '[^/]';
    else if (c === '\\' && i + 1 < p.length) re += escapeRe(p[++i]!);
    else if (c === '[') {
      const end = p.indexOf(']', i + 2);
      if (end === -1) re += '\\[';
      else {
        let cls = p.slice(i + 1, end);
        if (cls.startsWith('!')) cls = '^' + cls.slice(1);
        re += `[${cls.replace(/\\/g, '\\\\')}]`;
        i = end;
      }
    } else re += escapeRe(c);
  }
  return { re: new RegExp(anchored ? `^${re}$` : `(?:^|/)${re}$`), dirOnly };
}

function escapeRe(c: string): string {
  return c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

async function readRules(absDir: string, relDir: string): Promise<Rule[]> {
  let text: string;
  try {
    text = await readFile(path.join(absDir, '.gitignore'), 'utf8');
  } catch {
    return [];
  }
  const rules: Rule[] = [];
  for (let line of text.split(/\r?\n/)) {
    if (!line.endsWith('\\ ')) line = line.replace(/\s+$/, '');
    if (!line || line.startsWith('#')) continue;
    let negate = false;
    if (line.startsWith('!')) {
      negate = true;
      line = line.slice(1);
    } else if (line.startsWith('\\!') || line.startsWith('\\#')) line = line.slice(1);
    try {
      const { re, dirOnly } = gitignoreRegex(line);
      rules.push({ base: relDir, re, negate, dirOnly });
    } catch {
      /* a pattern we cannot read is ignored */
    }
  }
  return rules;
}

function ignoredBy(rules: Rule[], rel: string, isDir: boolean): boolean {
  let ignored = false;
  for (const r of rules) {
    if (r.dirOnly && !isDir) continue;
    let sub = rel;
    if (r.base) {
      if (!rel.startsWith(r.base + '/')) continue;
      sub = rel.slice(r.base.length + 1);
    }
    if (r.re.test(sub)) ignored = !r.negate;
  }
  return ignored;
}

export async function walkProject(root: string, maxFiles = MAX_FILES): Promise<WalkResult> {
  const absRoot = await realpath(root).catch(() => {
    throw new CliError(`No such folder: ${root}.`, 2);
  });
  if (!(await stat(absRoot)).isDirectory()) throw new CliError(`Not a folder: ${root} (submit takes the project's folder).`, 2);
  const files: WalkedFile[] = [];
  const skipped: string[] = [];

  const visit = async (absDir: string, relDir: string, inherited: Rule[]) => {
    const rules = [...inherited, ...(await readRules(absDir, relDir))];
    const entries = await readdir(absDir, { withFileTypes: true });
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const ent of entries) {
      const rel = relDir ? `${relDir}/${ent.name}` : ent.name;
      const abs = path.join(absDir, ent.name);
      let st = await lstat(abs);
      let target = abs;
      if (st.isSymbolicLink()) {
        const real = await realpath(abs).catch(() => null);
        if (!real || (real !== absRoot && !real.startsWith(absRoot + path.sep))) {
          skipped.push(`${rel} (a symlink to outside the folder)`);
          continue;
        }
        st = await stat(real);
        if (st.isDirectory()) {
          skipped.push(`${rel} (a symlink to a folder)`);
          continue;
        }
        target = real;
      }
      if (st.isDirectory()) {
        if (IGNORED_DIRS.has(ent.name) || ignoredBy(rules, rel, true)) continue;
        await visit(abs, rel, rules);
      } else if (st.isFile()) {
        if (IGNORED_FILES.has(ent.name) || ent.name.endsWith('.pyc') || ignoredBy(rules, rel, false)) continue;
        files.push({ path: rel, abs: target, size: st.size, mode: st.mode & 0o111 ? 0o755 : 0o644 });
        if (files.length > maxFiles) {
          throw new CliError(
            `${root} has more than ${maxFiles} files to upload (after skipping .git, node_modules, caches and .gitignore'd files): list bulky folders in a .gitignore or submit a smaller folder.`,
          );
        }
      } else {
        skipped.push(`${rel} (not a regular file)`);
      }
    }
  };
  await visit(absRoot, '', []);
  return { files, skipped };
}

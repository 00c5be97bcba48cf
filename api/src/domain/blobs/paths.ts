/**
 * Path rules for uploaded trees (invariant 8): relative, forward slashes, no `..`,
 * no empty or `.` segments after normalization, no NUL or control characters, bounded
 * length and depth; no file that is also a directory of another path.
 */
import { ValidationError } from '../errors.js';

export const MAX_PATH_LENGTH = 1024;
export const MAX_PATH_DEPTH = 64;

export function normalizeUploadPath(raw: string): string {
  const fail = (why: string) => {
    throw new ValidationError(`Invalid path ${JSON.stringify(raw.slice(0, 200))}: ${why}.`, [{ path: ['path'], message: why }]);
  };
  if (typeof raw !== 'string' || raw.length === 0) fail('empty');
  if (raw.length > MAX_PATH_LENGTH) fail(`longer than ${MAX_PATH_LENGTH} characters`);
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(raw)) fail('contains control characters');
  if (raw.includes('\\')) fail('backslashes are not allowed (use /)');
  if (raw.startsWith('/') || /^[A-Za-z]:/.test(raw)) fail('absolute paths are not allowed');
  const parts: string[] = [];
  for (const seg of raw.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') fail('".." is not allowed');
    parts.push(seg);
  }
  if (parts.length === 0) fail('names no file');
  if (parts.length > MAX_PATH_DEPTH) fail(`deeper than ${MAX_PATH_DEPTH} levels`);
  return parts.join('/');
}

export interface ManifestEntry {
  path: string;
  sha256: string;
  size: number;
  mode: number;
}

/** Sorts by path and rejects duplicates and file/directory clashes. */
export function checkTree(entries: ManifestEntry[]): ManifestEntry[] {
  const sorted = [...entries].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const files = new Set<string>();
  for (const e of sorted) {
    if (files.has(e.path)) throw new ValidationError(`Duplicate path: ${e.path}`, [{ path: ['files'], message: `duplicate ${e.path}` }]);
    files.add(e.path);
  }
  for (const e of sorted) {
    const segs = e.path.split('/');
    for (let i = 1; i < segs.length; i++) {
      const dir = segs.slice(0, i).join('/');
      if (files.has(dir)) {
        throw new ValidationError(`${dir} is both a file and a directory.`, [{ path: ['files'], message: `${dir} clash` }]);
      }
    }
  }
  return sorted;
}

/** Only the executable bit is kept from uploaded modes. */
export function normalizeMode(mode: number | null | undefined): number {
  return mode && mode & 0o111 ? 0o755 : 0o644;
}

/**
 * The merge of the shards' outputs and its check against the unsharded run, for every merge
 * kind of a shards spec (shards.ts MERGE_KINDS) — pure but for reading blobs through `read`:
 *   fields  the JSON result merged field by field (shards.ts mergeResults / checkMerged)
 *   list    a JSON list concatenated in shard order; checked exactly
 *   rows    a CSV: the header once (every shard's must be the same), the rows concatenated in
 *           shard order, each row's text unchanged; checked exactly, row by row
 *   files   the union of the per-input files under a folder (a path written by two shards with
 *           different contents is an error); checked byte for byte (sha256), path by path
 *   script  the user's merge program ran on a worker (a MERGE task): its file is compared with
 *           the unsharded run's same file, byte-equal or, for JSON, value by value (numbers
 *           within the plan's `rtol`, exactly by default)
 */
import { createHash } from 'node:crypto';
import { checkMerged, mergeResults, type ShardsSpec } from './shards.js';

type Merge = ShardsSpec['merge'];
/** A file of a merged or original result: a stored blob, or bytes the merge made. */
export interface OutFile {
  path: string;
  sha256: string;
  size: number;
  mode?: number;
  bytes?: Buffer;
}
export type ReadBlob = (sha256: string) => Promise<Buffer>;

export interface Merged {
  /** The merged files (new ones carry their bytes). */
  files: OutFile[];
  /** What the merge gave, for the event and the record (a JSON result, or a summary). */
  value: unknown;
}

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const made = (path: string, bytes: Buffer): OutFile => ({ path, sha256: sha(bytes), size: bytes.length, mode: 0o644, bytes });
const dirOf = (p: string) => p.replace(/\/$/, '');
const under = (p: string, dir: string) => p.startsWith(`${dirOf(dir)}/`);
const bytesOf = async (f: OutFile, read: ReadBlob) => f.bytes ?? read(f.sha256);

async function fileOf(outputs: OutFile[], path: string, who: string, read: ReadBlob): Promise<Buffer> {
  const f = outputs.find((o) => o.path === path);
  if (!f) throw new Error(`${who} wrote no ${path}`);
  return bytesOf(f, read);
}

async function jsonOf(outputs: OutFile[], path: string, who: string, read: ReadBlob): Promise<unknown> {
  const text = (await fileOf(outputs, path, who, read)).toString('utf8');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new Error(`${who}'s ${path} is not JSON`);
  }
}

/** A CSV's header line and the rest (its rows, each row's text as written), line endings kept. */
export function splitCsv(text: string, who: string): { header: string; body: string; rows: number } {
  const nl = text.indexOf('\n');
  if (nl < 0 && !text.length) throw new Error(`${who}'s CSV is empty`);
  const header = nl < 0 ? `${text}\n` : text.slice(0, nl + 1);
  let body = nl < 0 ? '' : text.slice(nl + 1);
  if (body && !body.endsWith('\n')) body += '\n';
  return { header, body, rows: csvRecords(body) };
}

/** Records in CSV text (newlines inside quoted fields do not end one). */
export function csvRecords(text: string): number {
  let n = 0;
  let quoted = false;
  let empty = true;
  for (const ch of text) {
    if (ch === '"') quoted = !quoted;
    if (ch === '\n' && !quoted) {
      if (!empty) n++;
      empty = true;
    } else if (ch !== '\r') empty = false;
  }
  return empty ? n : n + 1;
}

/**
 * The shards' outputs merged by the plan's rule (not `script`: that one runs on a worker).
 * `parts` are the shards' outputs in shard order; throws, in words, on what cannot be merged.
 */
export async function mergeOutputs(merge: Merge, parts: OutFile[][], read: ReadBlob): Promise<Merged> {
  const kind = merge.kind ?? 'fields';
  const who = (i: number) => `shard ${i + 1}`;
  if (kind === 'fields') {
    const objs = await Promise.all(parts.map((p, i) => jsonOf(p, merge.file, who(i), read)));
    objs.forEach((o, i) => {
      if (!o || typeof o !== 'object' || Array.isArray(o)) throw new Error(`${who(i)}'s ${merge.file} is not a JSON object`);
    });
    const value = mergeResults(merge.fields, objs as Record<string, unknown>[]);
    return { files: [made(merge.file, Buffer.from(`${JSON.stringify(value, null, 2)}\n`))], value };
  }
  if (kind === 'list') {
    const lists = await Promise.all(parts.map((p, i) => jsonOf(p, merge.file, who(i), read)));
    const value = lists.flatMap((l, i) => {
      if (!Array.isArray(l)) throw new Error(`${who(i)}'s ${merge.file} is not a JSON list`);
      return l as unknown[];
    });
    return { files: [made(merge.file, Buffer.from(`${JSON.stringify(value, null, 2)}\n`))], value };
  }
  if (kind === 'rows') {
    const csvs = await Promise.all(
      parts.map(async (p, i) => splitCsv((await fileOf(p, merge.file, who(i), read)).toString('utf8'), who(i))),
    );
    const header = csvs[0]!.header;
    csvs.forEach((c, i) => {
      if (c.header.trimEnd() !== header.trimEnd())
        throw new Error(
          `${who(i)}'s ${merge.file} has the header ${JSON.stringify(c.header.trimEnd())}, not ${JSON.stringify(header.trimEnd())}`,
        );
    });
    const bytes = Buffer.from(header + csvs.map((c) => c.body).join(''));
    return { files: [made(merge.file, bytes)], value: { rows: csvs.reduce((n, c) => n + c.rows, 0), perShard: csvs.map((c) => c.rows) } };
  }
  if (kind === 'files') {
    const union = new Map<string, OutFile & { shard: number }>();
    parts.forEach((p, i) => {
      for (const f of p.filter((o) => under(o.path, merge.file))) {
        const seen = union.get(f.path);
        if (seen && seen.sha256 !== f.sha256)
          throw new Error(`${who(seen.shard)} and ${who(i)} both wrote ${f.path}, with different contents`);
        if (!seen) union.set(f.path, { ...f, shard: i });
      }
    });
    const files = [...union.values()].sort((a, b) => (a.path < b.path ? -1 : 1)).map(({ shard: _s, ...f }) => f);
    return { files, value: { files: files.length, perShard: parts.map((p) => p.filter((o) => under(o.path, merge.file)).length) } };
  }
  throw new Error('a merge script runs on a worker, not in the API');
}

export interface Comparison {
  ok: boolean;
  report: string;
  detail: unknown;
}

/** Numbers of two JSON values equal within `rtol` (everything else exactly); the first difference, or null. */
export function jsonDiff(a: unknown, b: unknown, rtol: number, at = ''): string | null {
  if (typeof a === 'number' && typeof b === 'number')
    return Math.abs(a - b) <= rtol * Math.max(Math.abs(a), Math.abs(b)) ? null : `${at || 'the value'}: ${a} ≠ ${b}`;
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) return `${at || 'the list'}: ${a.length} items ≠ ${b.length}`;
    for (let i = 0; i < a.length; i++) {
      const d = jsonDiff(a[i], b[i], rtol, `${at}[${i}]`);
      if (d) return d;
    }
    return null;
  }
  if (a && b && typeof a === 'object' && typeof b === 'object' && !Array.isArray(a) && !Array.isArray(b)) {
    const ka = Object.keys(a).sort();
    const kb = Object.keys(b).sort();
    if (JSON.stringify(ka) !== JSON.stringify(kb)) return `${at || 'the object'}: keys ${ka.join(', ')} ≠ ${kb.join(', ')}`;
    for (const k of ka) {
      const d = jsonDiff((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], rtol, at ? `${at}.${k}` : k);
      if (d) return d;
    }
    return null;
  }
  return JSON.stringify(a) === JSON.stringify(b)
    ? null
    : `${at || 'the value'}: ${JSON.stringify(a)?.slice(0, 60)} ≠ ${JSON.stringify(b)?.slice(0, 60)}`;
}

/** The merged bounded result against the unsharded bounded run's outputs, with a report in words. */
export async function compareMerged(
  spec: Pick<ShardsSpec, 'merge'>,
  merged: OutFile[],
  original: OutFile[],
  read: ReadBlob,
): Promise<Comparison> {
  const { merge } = spec;
  const kind = merge.kind ?? 'fields';
  const agree = (ok: boolean, words: string) =>
    `${ok ? 'The merged result agrees with the unsharded run' : 'The merged result disagrees with the unsharded run'}: ${words}.`;
  if (kind === 'fields') {
    const [m, o] = [await jsonOf(merged, merge.file, 'the merge', read), await jsonOf(original, merge.file, 'the unsharded run', read)];
    if (!o || typeof o !== 'object' || Array.isArray(o)) throw new Error(`the unsharded run's ${merge.file} is not a JSON object`);
    const c = checkMerged(spec, m as Record<string, unknown>, o as Record<string, unknown>);
    return { ok: c.ok, report: c.report, detail: { merged: m, original: o, fields: c.fields, k: merge.k ?? 4 } };
  }
  if (kind === 'list' || (kind === 'script' && merge.file.endsWith('.json'))) {
    const [m, o] = [await jsonOf(merged, merge.file, 'the merge', read), await jsonOf(original, merge.file, 'the unsharded run', read)];
    const rtol = kind === 'script' ? (merge.rtol ?? 0) : 0;
    const diff = jsonDiff(m, o, rtol);
    const size = Array.isArray(m) ? `${m.length} items` : 'the result';
    return {
      ok: !diff,
      report: agree(
        !diff,
        `${merge.file}: ${diff ? `merged ≠ unsharded (${diff})` : `merged ${size} = unsharded`} (${rtol ? `numbers within a relative ${rtol}` : 'exact'})`,
      ),
      detail: { merged: m, original: o },
    };
  }
  if (kind === 'rows') {
    const m = splitCsv((await fileOf(merged, merge.file, 'the merge', read)).toString('utf8'), 'the merge');
    const o = splitCsv((await fileOf(original, merge.file, 'the unsharded run', read)).toString('utf8'), 'the unsharded run');
    let words: string;
    let ok = false;
    if (m.header.trimEnd() !== o.header.trimEnd())
      words = `${merge.file}: header ${JSON.stringify(m.header.trimEnd())} ≠ ${JSON.stringify(o.header.trimEnd())}`;
    else if (m.body.replace(/\r\n/g, '\n') !== o.body.replace(/\r\n/g, '\n')) {
      const ml = m.body.split('\n');
      const ol = o.body.split('\n');
      const i = ml.findIndex((l, j) => l !== ol[j]);
      words = `${merge.file}: merged ${m.rows} rows ≠ unsharded ${o.rows} rows; line ${i + 2} differs (${JSON.stringify(ml[i]?.slice(0, 60) ?? '')} vs ${JSON.stringify(ol[i]?.slice(0, 60) ?? '')})`;
    } else {
      ok = true;
      words = `${merge.file}: merged ${m.rows} rows = unsharded ${o.rows} rows, in order (exact)`;
    }
    return { ok, report: agree(ok, words), detail: { rows: { merged: m.rows, original: o.rows } } };
  }
  if (kind === 'files') {
    const pick = (fs: OutFile[]) => new Map(fs.filter((f) => under(f.path, merge.file)).map((f) => [f.path, f.sha256]));
    const [m, o] = [pick(merged), pick(original)];
    const missing = [...o.keys()].filter((p) => !m.has(p));
    const extra = [...m.keys()].filter((p) => !o.has(p));
    const differ = [...m.keys()].filter((p) => o.has(p) && o.get(p) !== m.get(p));
    const ok = !missing.length && !extra.length && !differ.length && o.size > 0;
    const list = (ps: string[]) => ps.slice(0, 5).join(', ') + (ps.length > 5 ? ` and ${ps.length - 5} more` : '');
    const words = ok
      ? `${m.size} files under ${merge.file}: the same paths, byte for byte (exact)`
      : [
          o.size === 0 ? `the unsharded run wrote no file under ${merge.file}` : '',
          missing.length ? `missing from the merge: ${list(missing)}` : '',
          extra.length ? `not written by the unsharded run: ${list(extra)}` : '',
          differ.length ? `different bytes: ${list(differ)}` : '',
        ]
          .filter(Boolean)
          .join('; ');
    return { ok, report: agree(ok, words), detail: { files: { merged: m.size, original: o.size }, missing, extra, differ } };
  }
  // script, byte for byte
  const [m, o] = [merged.find((f) => f.path === merge.file), original.find((f) => f.path === merge.file)];
  if (!m) throw new Error(`the merge script wrote no ${merge.file}`);
  if (!o) throw new Error(`the unsharded run wrote no ${merge.file}`);
  const ok = m.sha256 === o.sha256;
  return {
    ok,
    report: agree(
      ok,
      `${merge.file} written by ${merge.script?.path ?? 'the merge script'}: ${ok ? 'byte-equal to' : `${m.size} bytes, not the same as`} the unsharded run's (${o.size} bytes, exact)`,
    ),
    detail: { merged: m.sha256, original: o.sha256 },
  };
}

/**
 * Invariant 8, fuzzed: the archive unpacker (api/src/domain/blobs/archive.ts) on random
 * .zip and .tar.gz structures — regular files, directories, symbolic and hard links
 * (inside, outside, dangling, chained), FIFOs and devices, paths with `..`, absolute,
 * unicode and control characters, duplicates and file/directory clashes, bombs (huge
 * runs of zeros, a zip that under-declares its size), truncated and bit-flipped archives.
 *
 * Either a ValidationError with the blob store exactly as before (no blob of a refused
 * archive stays), or a correct manifest: sorted unique normalized paths, each the last
 * file of that path in the archive or a link to one, its blob stored with that content,
 * within the limits, and nothing stored besides. Then a bounded run through the whole
 * route (PUT /blobs, createJob) checks the database as well.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { unpackArchive, type ArchiveLimits } from '../src/domain/blobs/archive.js';
import { putBuffer, readBlobBuffer, type BlobStore } from '../src/domain/blobs/blobStore.js';
import { FsBlobStore } from '../src/domain/blobs/fsBlobStore.js';
import { ValidationError } from '../src/domain/errors.js';
import { startTestApi } from './helpers/api.js';
import { tarGz, zip, type ArchiveEntry } from './helpers/archives.js';
import { fuzzParams, fuzzTimeout, hostilePath, sha256hex, snapshotter } from './helpers/fuzz.js';

const LIMITS: ArchiveLimits = { maxEntries: 30, maxBytes: 1_000_000, maxRatio: 200 };

// ---------------------------------------------------------------- archives

const NAMES = [
  'a',
  'b.py',
  'src',
  'src/main.py',
  'src/lib/x.py',
  'data/ñandú.csv',
  '数据/模型.pt',
  'a/b',
  './a',
  'src//main.py',
  'src/./lib/x.py',
  'sp ace.txt',
  '🚀/r.md',
];
const entryPath = fc.oneof({ weight: 8, arbitrary: fc.constantFrom(...NAMES) }, { weight: 2, arbitrary: hostilePath() });
const linkTarget = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.constantFrom(
      'a',
      'b.py',
      'main.py',
      'lib/x.py',
      '../a',
      '../../etc/passwd',
      '/etc/passwd',
      'src/main.py',
      './b.py',
      '',
      'missing',
    ),
  },
  { weight: 1, arbitrary: hostilePath() },
);
/** A file's bytes, as hex, or `zeros:<n>` (a bomb's payload): printable in a counterexample. */
const fileData = fc.oneof(
  { weight: 8, arbitrary: fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.from(a).toString('hex')) },
  { weight: 1, arbitrary: fc.integer({ min: 100_000, max: 3_000_000 }).map((n) => `zeros:${n}`) },
);
const bytesOf = (d: string) => (d.startsWith('zeros:') ? Buffer.alloc(Number(d.slice(6))) : Buffer.from(d, 'hex'));
type EntrySpec = Exclude<ArchiveEntry, { kind: 'file' }> | { kind: 'file'; path: string; data: string; mode: number };
const entry: fc.Arbitrary<EntrySpec> = fc.oneof(
  {
    weight: 10,
    arbitrary: fc.record({
      kind: fc.constant('file' as const),
      path: entryPath,
      data: fileData,
      mode: fc.constantFrom(0o644, 0o755, 0o4777, 0),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('dir' as const), path: entryPath }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('symlink' as const), path: entryPath, target: linkTarget }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('hardlink' as const), path: entryPath, target: linkTarget }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('special' as const),
      path: entryPath,
      type: fc.constantFrom('fifo' as const, 'chardev' as const, 'blockdev' as const),
    }),
  },
);
type Damage = { kind: 'none' } | { kind: 'truncate'; at: number } | { kind: 'flip'; at: number; bits: number };
const archiveCase = fc.record({
  format: fc.constantFrom('zip' as const, 'tgz' as const),
  entries: fc.array(entry, { minLength: 0, maxLength: 12 }),
  store: fc.boolean(),
  lieAboutSize: fc.boolean(),
  damage: fc.oneof(
    { weight: 6, arbitrary: fc.constant<Damage>({ kind: 'none' }) },
    { weight: 1, arbitrary: fc.double({ min: 0, max: 1, noNaN: true }).map<Damage>((at) => ({ kind: 'truncate', at })) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.double({ min: 0, max: 1, noNaN: true }), fc.integer({ min: 1, max: 255 }))
        .map<Damage>(([at, bits]) => ({ kind: 'flip', at, bits })),
    },
  ),
});
type Case = typeof archiveCase extends fc.Arbitrary<infer T> ? T : never;

const entriesOf = (c: Case): ArchiveEntry[] => c.entries.map((e) => (e.kind === 'file' ? { ...e, data: bytesOf(e.data) } : e));

function build(c: Case): Buffer {
  const entries = entriesOf(c);
  let buf = c.format === 'zip' ? zip(entries, { store: c.store, lieAboutSize: c.lieAboutSize }) : tarGz(entries);
  if (c.damage.kind === 'truncate') buf = buf.subarray(0, Math.floor(buf.length * c.damage.at));
  if (c.damage.kind === 'flip') {
    buf = Buffer.from(buf);
    const i = Math.min(buf.length - 1, Math.floor(buf.length * c.damage.at));
    buf[i] = buf[i]! ^ c.damage.bits;
  }
  return buf;
}

// ---------------------------------------------------------------- the oracle

/** Independent of the unpacker: a path no accepted archive may contain. */
function escapes(p: string): boolean {
  // eslint-disable-next-line no-control-regex -- a control character in a path is exactly what this check looks for
  return p.startsWith('/') || /^[A-Za-z]:/.test(p) || p.split('/').includes('..') || p.includes('\\') || /[\u0000-\u001f\u007f]/.test(p);
}
/** The path's segments without empty and `.` ones (how the unpacker must name it). */
const canonical = (p: string) =>
  p
    .split('/')
    .filter((s) => s !== '' && s !== '.')
    .join('/');

/** Checks one unpacking; returns what is wrong (empty when right). */
async function check(blobs: BlobStore, listBlobs: () => Promise<string[]>, c: Case): Promise<string[]> {
  const archive = build(c);
  const put = await putBuffer(blobs, archive);
  const before = await listBlobs();
  const problems: string[] = [];
  let manifest;
  try {
    manifest = await unpackArchive(blobs, put.sha256, LIMITS);
  } catch (err) {
    if (!(err instanceof ValidationError)) problems.push(`not a ValidationError: ${(err as Error)?.stack ?? String(err)}`);
    const after = await listBlobs();
    const added = after.filter((b) => !before.includes(b));
    const removed = before.filter((b) => !after.includes(b));
    if (added.length || removed.length)
      problems.push(`refused (${(err as Error).message}) but the blob store changed: +${added.join(',')} -${removed.join(',')}`);
    return problems;
  }
  // No entry that must be refused was accepted.
  for (const e of c.entries) {
    if (escapes(e.path)) problems.push(`accepted an escaping path ${JSON.stringify(e.path)}`);
    if (e.kind === 'special') problems.push(`accepted a ${e.type} (${JSON.stringify(e.path)})`);
    if ((e.kind === 'symlink' || e.kind === 'hardlink') && e.target.startsWith('/')) problems.push(`accepted a link to ${e.target}`);
  }
  // The manifest: sorted, unique, normalized, within the limits, each blob stored with its content.
  const paths = manifest.map((m) => m.path);
  if (JSON.stringify(paths) !== JSON.stringify([...new Set(paths)].sort()))
    problems.push(`manifest not sorted/unique: ${paths.join(', ')}`);
  if (manifest.length > LIMITS.maxEntries) problems.push(`more than ${LIMITS.maxEntries} entries`);
  if (manifest.reduce((s, m) => s + m.size, 0) > LIMITS.maxBytes * LIMITS.maxEntries) problems.push('unpacked more than the limit');
  for (const m of manifest) {
    if (escapes(m.path) || canonical(m.path) !== m.path) problems.push(`manifest path not normalized: ${JSON.stringify(m.path)}`);
    if (m.mode !== 0o644 && m.mode !== 0o755) problems.push(`mode ${m.mode.toString(8)} kept for ${m.path}`);
    const bytes = await readBlobBuffer(blobs, m.sha256).catch(() => null);
    if (!bytes) problems.push(`${m.path}: blob ${m.sha256} not stored`);
    else if (sha256hex(bytes) !== m.sha256 || bytes.length !== m.size) problems.push(`${m.path}: stored blob does not match`);
  }
  if (c.damage.kind === 'none') {
    // Each manifest entry is the archive's last file of that path, or a link (to a stored file of the manifest).
    const lastFile = new Map<string, Buffer>();
    const linkPaths = new Set<string>();
    for (const e of entriesOf(c)) {
      if (e.kind === 'file') lastFile.set(canonical(e.path), e.data);
      if (e.kind === 'symlink' || e.kind === 'hardlink') linkPaths.add(canonical(e.path));
    }
    const shas = new Set(manifest.map((m) => m.sha256));
    for (const m of manifest) {
      const f = lastFile.get(m.path);
      if (linkPaths.has(m.path)) {
        if (!shas.has(m.sha256)) problems.push(`link ${m.path} names no file of the archive`);
      } else if (!f) problems.push(`${m.path} is in no archive entry`);
      else if (sha256hex(f) !== m.sha256) problems.push(`${m.path}: content differs from the archive's`);
    }
    for (const p of lastFile.keys()) if (!linkPaths.has(p) && !paths.includes(p)) problems.push(`file ${p} of the archive is missing`);
  }
  // Nothing stored besides the manifest's blobs.
  const after = await listBlobs();
  const expected = new Set([...before, ...manifest.map((m) => m.sha256)]);
  const strays = after.filter((b) => !expected.has(b));
  if (strays.length) problems.push(`stray blobs: ${strays.join(', ')}`);
  // Leave the store as it was for the next case.
  for (const m of manifest) if (!before.includes(m.sha256)) await blobs.remove(m.sha256);
  return problems;
}

const show = (c: Case) => JSON.stringify(c).slice(0, 2_000);

/** Archives the fuzzer found that failed before their fix (api/src/domain/blobs/archive.ts). */
const none = { kind: 'none' } as const;
const REGRESSIONS: { why: string; case: Case }[] = [
  {
    why: 'a tar.gz refused (a device entry) while a big file was still being stored left its blob and temporary file behind',
    case: {
      format: 'tgz',
      store: false,
      lieAboutSize: false,
      damage: none,
      entries: [
        { kind: 'file', path: 'src/main.py', data: 'zeros:907406', mode: 0o644 },
        { kind: 'special', path: 'dev', type: 'blockdev' },
        { kind: 'file', path: 'b.py', data: '46', mode: 0o644 },
      ],
    },
  },
  {
    why: 'a tar.gz refused for a later entry (a path 80 levels deep) kept the blob of a file the parser had already handed out',
    case: {
      format: 'tgz',
      store: false,
      lieAboutSize: false,
      damage: none,
      entries: [
        { kind: 'file', path: 'b.py', data: '46', mode: 0o644 },
        { kind: 'symlink', path: Array.from({ length: 80 }, () => 'd').join('/'), target: 'b.py' },
        { kind: 'file', path: 'c.py', data: '47', mode: 0o644 },
      ],
    },
  },
  {
    why: 'a zip entry that under-declares its size, refused as a bomb, raised an uncaught exception (it would end the API process)',
    case: {
      format: 'zip',
      store: false,
      lieAboutSize: true,
      damage: none,
      entries: [
        { kind: 'file', path: 'a', data: 'zeros:2000000', mode: 0o644 },
        { kind: 'special', path: 'p', type: 'fifo' },
      ],
    },
  },
  {
    why: "a zip's FIFO entry had its stream opened and dropped, whose late error was uncaught",
    case: {
      format: 'zip',
      store: true,
      lieAboutSize: true,
      damage: none,
      entries: [
        { kind: 'special', path: 'p', type: 'fifo' },
        { kind: 'file', path: 'a', data: '0102', mode: 0o644 },
      ],
    },
  },
  {
    why: 'two entries naming one path (src//main.py, src/main.py): the first one’s blob stayed stored, in no manifest; now refused like duplicate files',
    case: {
      format: 'tgz',
      store: false,
      lieAboutSize: false,
      damage: none,
      entries: [
        { kind: 'file', path: 'src//main.py', data: 'b6', mode: 0o644 },
        { kind: 'file', path: 'src/main.py', data: 'a598553a9acd8d62', mode: 0 },
      ],
    },
  },
  {
    why: 'a symbolic link with a 3 MB target (read whole into memory); now refused past 4,096 bytes',
    case: {
      format: 'zip',
      store: false,
      lieAboutSize: false,
      damage: none,
      entries: [
        { kind: 'file', path: 'a', data: '01', mode: 0o644 },
        { kind: 'symlink', path: 'l', target: 'x'.repeat(3_000_000) },
      ],
    },
  },
];

describe('fuzz: the archive unpacker', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'chatgpu-fuzz-archive-'));
  afterAll(() => rm(dir, { recursive: true, force: true }));
  const blobs = new FsBlobStore(dir);
  const listBlobs = async () => {
    const out: string[] = [];
    for (const d of await readdir(dir).catch(() => [] as string[])) {
      for (const f of await readdir(path.join(dir, d)).catch(() => [] as string[])) out.push(d === 'tmp' ? `tmp/${f}` : f);
    }
    return out.sort();
  };

  for (const r of REGRESSIONS) {
    it(`regression: ${r.why}`, async () => {
      expect(await check(blobs, listBlobs, r.case)).toEqual([]);
    });
  }

  it(
    'a ValidationError and nothing stored, or the right manifest and only its blobs',
    async () => {
      await fc.assert(
        fc.asyncProperty(archiveCase, async (c) => {
          const problems = await check(blobs, listBlobs, c);
          if (problems.length) throw new Error(`${show(c)}:\n  ${problems.join('\n  ')}`);
        }),
        fuzzParams(150),
      );
    },
    fuzzTimeout(),
  );
});

describe('fuzz: createJob from an archive, through the API', async () => {
  const api = await startTestApi({ ARCHIVE_MAX_ENTRIES: String(LIMITS.maxEntries), ARCHIVE_MAX_BYTES: String(LIMITS.maxBytes) });
  const user = await api.signUp();
  const snap = await snapshotter(api.databaseUrl, [path.join(api.dataDir, 'blobs')]);
  const CREATE = `mutation($i: CreateJobInput!) { createJob(input: $i) { __typename ... on Job { id } ... on Error { code message } } }`;

  it(
    'a job with the archive’s files, or a typed error that wrote nothing but the upload',
    async () => {
      await fc.assert(
        fc.asyncProperty(archiveCase, async (c) => {
          const archive = build(c);
          const put = await api.putBlob(archive, user.token);
          if (put.status !== 201) throw new Error(`upload: HTTP ${put.status}`);
          const before = await snap.take();
          const r = await api.gql(CREATE, { i: { title: 'fuzz', request: 'run it', archive: { sha256: put.sha256 } } }, user.token);
          const result = r.data?.createJob;
          const problems: string[] = [];
          if (r.status >= 500 || r.errors?.some((e) => e.extensions?.code === 'INTERNAL_SERVER_ERROR'))
            problems.push(`HTTP ${r.status}: ${JSON.stringify(r.errors)}`);
          else if (result?.__typename !== 'Job') {
            if (!['VALIDATION_ERROR', 'NOT_FOUND'].includes(result?.code ?? r.errors?.[0]?.extensions?.code))
              problems.push(`untyped refusal: ${JSON.stringify(r)}`);
            const changed = snap.diff(before, await snap.take());
            if (changed.length) problems.push(`refused (${result?.message}) but wrote: ${changed.join('; ')}`);
          }
          if (problems.length) throw new Error(`${show(c)}:\n  ${problems.join('\n  ')}`);
        }),
        fuzzParams(25),
      );
    },
    fuzzTimeout(),
  );
});

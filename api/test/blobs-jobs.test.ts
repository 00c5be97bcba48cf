import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { sha256, startTestApi } from './helpers/api.js';

const api = await startTestApi({ BLOB_MAX_BYTES: String(1024 * 1024), ARCHIVE_MAX_RATIO: '50' });
const alice = await api.signUp();
const bob = await api.signUp();

const CREATE = `mutation($i: CreateJobInput!) { createJob(input: $i) {
  __typename
  ... on Job { id title status originalCode { origin fileCount files { path sha256 size mode } } }
  ... on ValidationError { message issues { path message } }
  ... on NotFoundError { message } } }`;

async function upload(content: string | Buffer, token = alice.token) {
  const r = await api.putBlob(content, token);
  expect(r.status).toBe(201);
  return r.sha256;
}

/** Everything that createJob could have written. */
async function snapshot() {
  const p = api.server.db.prisma;
  const walk = (d: string): string[] => {
    try {
      return readdirSync(d, { withFileTypes: true }).flatMap((e) =>
        e.isDirectory() ? walk(path.join(d, e.name)) : [path.join(d, e.name)],
      );
    } catch {
      return [];
    }
  };
  return {
    jobs: await p.job.count(),
    versions: await p.codeVersion.count(),
    blobs: await p.blob.count(),
    access: await p.blobAccess.count(),
    files: walk(path.join(api.dataDir, 'blobs'))
      .filter((f) => !f.includes(`${path.sep}tmp${path.sep}`))
      .sort(),
  };
}

function makeTree(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'tree-'));
  for (const [p, c] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, p)), { recursive: true });
    writeFileSync(path.join(dir, p), c);
  }
  return dir;
}

describe('blobs', () => {
  it('stores a blob and gives it back byte-identical', async () => {
    const bytes = Buffer.from(Array.from({ length: 70_000 }, (_, i) => i % 251));
    const sha = await upload(bytes);
    const got = await api.getBlob(sha, alice.token);
    expect(got.status).toBe(200);
    expect(got.bytes.equals(bytes)).toBe(true);
  });

  it('refuses a hash mismatch (400), an oversize body (413) and a bad name, keeping nothing', async () => {
    const before = await snapshot();
    const wrong = await api.putBlob('hello', alice.token, sha256('something else'));
    expect(wrong.status).toBe(400);
    expect(wrong.body.error.message).toMatch(/mismatch/);
    const big = Buffer.alloc(1024 * 1024 + 1, 7);
    const over = await api.putBlob(big, alice.token);
    expect(over.status).toBe(413);
    const res = await fetch(`${api.url}/blobs/not-a-hash`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${alice.token}` },
      body: 'x',
    });
    expect(res.status).toBe(400);
    expect(await snapshot()).toEqual(before);
    expect(readdirSync(path.join(api.dataDir, 'blobs', 'tmp'))).toEqual([]);
  });

  it('stores the same bytes uploaded many times at once: every upload is a 201, one blob, one access row', async () => {
    const bytes = Buffer.from(`same bytes ${Date.now()}`.repeat(5000));
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => api.putBlob(bytes, i % 2 ? alice.token : bob.token)));
    expect(results.map((r) => r.status)).toEqual(results.map(() => 201));
    const sha = results[0]!.sha256;
    const p = api.server.db.prisma;
    expect(await p.blob.count({ where: { sha256: sha } })).toBe(1);
    expect(await p.blobAccess.count({ where: { sha256: sha } })).toBe(2);
    expect((await api.getBlob(sha, bob.token)).bytes.equals(bytes)).toBe(true);
  });

  it('lets nobody else read a blob: anonymous 401, another user 404', async () => {
    const sha = await upload('alice secret');
    expect((await api.getBlob(sha)).status).toBe(401);
    expect((await api.getBlob(sha, bob.token)).status).toBe(404);
    expect((await api.putBlob('x', 'cgu_bogus')).status).toBe(401);
  });
});

describe('createJob', () => {
  it('creates a job from a file manifest, normalizing paths, and lists jobs with pagination', async () => {
    const a = await upload('print("hi")\n');
    const b = await upload('numpy==1.26\n');
    const r = await api.gql(
      CREATE,
      {
        i: {
          title: 'First',
          request: 'run it',
          spendingCapCad: 5,
          files: [
            { path: './src//train.py', sha256: a, mode: 0o755 },
            { path: 'requirements.txt', sha256: b },
          ],
        },
      },
      alice.token,
    );
    expect(r.data.createJob.__typename).toBe('Job');
    expect(r.data.createJob.status).toBe('DRAFT');
    expect(r.data.createJob.originalCode.files).toEqual([
      { path: 'requirements.txt', sha256: b, size: 12, mode: 0o644 },
      { path: 'src/train.py', sha256: a, size: 12, mode: 0o755 },
    ]);
    for (let i = 0; i < 4; i++) {
      await api.gql(CREATE, { i: { title: `J${i}`, request: 'x', files: [{ path: 'a.py', sha256: a }] } }, alice.token);
    }
    const page1 = await api.gql(
      `{ jobs(first: 2) { totalCount edges { cursor node { title } } pageInfo { hasNextPage endCursor } } }`,
      {},
      alice.token,
    );
    expect(page1.data.jobs.totalCount).toBe(5);
    expect(page1.data.jobs.edges.map((e: any) => e.node.title)).toEqual(['J3', 'J2']);
    const page2 = await api.gql(
      `query($a: String) { jobs(first: 10, after: $a) { edges { node { title } } pageInfo { hasNextPage } } }`,
      { a: page1.data.jobs.pageInfo.endCursor },
      alice.token,
    );
    expect(page2.data.jobs.edges.map((e: any) => e.node.title)).toEqual(['J1', 'J0', 'First']);
    expect(page2.data.jobs.pageInfo.hasNextPage).toBe(false);
    const filtered = await api.gql(`{ jobs(status: [SUCCEEDED]) { totalCount } }`, {}, alice.token);
    expect(filtered.data.jobs.totalCount).toBe(0);
    expect((await api.gql(`{ jobs { totalCount } }`, {}, bob.token)).data.jobs.totalCount).toBe(0);
    // The job's files are readable by its owner through the manifest.
    expect((await api.getBlob(a, alice.token)).bytes.toString()).toBe('print("hi")\n');
  });

  it('creates a job from a .tar.gz and from a .zip archive', async () => {
    const dir = makeTree({ 'proj/train.py': 'import torch\n', 'proj/data/x.csv': '1,2\n' });
    symlinkSync('train.py', path.join(dir, 'proj/link.py'));
    const tgz = execFileSync('tar', ['-czf', '-', '-C', dir, 'proj']);
    execFileSync('sh', ['-c', `cd ${dir} && zip -qry ${dir}/p.zip proj`]);
    const zip = readFileSync(`${dir}/p.zip`);
    for (const archive of [tgz, zip]) {
      const sha = await upload(archive);
      const r = await api.gql(CREATE, { i: { title: 'arch', request: 'x', archive: { sha256: sha } } }, alice.token);
      expect(r.data.createJob.__typename).toBe('Job');
      const files = r.data.createJob.originalCode.files;
      expect(files.map((f: any) => f.path)).toEqual(['proj/data/x.csv', 'proj/link.py', 'proj/train.py']);
      expect(files[1].sha256).toBe(files[2].sha256);
      expect(r.data.createJob.originalCode.origin).toBe('archive');
      expect((await api.getBlob(files[0].sha256, alice.token)).bytes.toString()).toBe('1,2\n');
    }
  });

  const bad: [string, () => Promise<unknown>, RegExp][] = [
    ['a traversal path', async () => ({ files: [{ path: '../etc/passwd', sha256: await upload('x1') }] }), /\.\." is not allowed/],
    ['an absolute path', async () => ({ files: [{ path: '/etc/passwd', sha256: await upload('x2') }] }), /absolute/],
    [
      'a duplicate path',
      async () => ({
        files: [
          { path: 'a', sha256: await upload('x3') },
          { path: './a', sha256: await upload('x4') },
        ],
      }),
      /Duplicate/,
    ],
    [
      'a file that is also a directory',
      async () => ({
        files: [
          { path: 'a', sha256: await upload('x5') },
          { path: 'a/b', sha256: await upload('x6') },
        ],
      }),
      /both a file and a directory/,
    ],
    [
      'files and an archive together',
      async () => ({ files: [{ path: 'a', sha256: await upload('x7') }], archive: { sha256: await upload('x8') } }),
      /exactly one/,
    ],
    ['neither files nor archive', async () => ({}), /exactly one/],
    [
      'an archive that is not an archive',
      async () => ({ archive: { sha256: await upload('plain text') } }),
      /neither a .zip nor a .tar.gz/,
    ],
    [
      'a symlink out of the tree',
      async () => {
        const dir = makeTree({ 'p/a.py': 'x' });
        symlinkSync('/etc/passwd', path.join(dir, 'p/evil'));
        return { archive: { sha256: await upload(execFileSync('tar', ['-czf', '-', '-C', dir, 'p'])) } };
      },
      /points outside the project/,
    ],
    [
      'a relative symlink escaping the tree',
      async () => {
        const dir = makeTree({ 'p/a.py': 'x' });
        symlinkSync('../../secret', path.join(dir, 'p/evil'));
        return { archive: { sha256: await upload(execFileSync('tar', ['-czf', '-', '-C', dir, 'p'])) } };
      },
      /points outside the project/,
    ],
    [
      'an archive bomb',
      async () => {
        // 5 MB of zeros compress to ~5 KB: a ratio far above the limit of 50.
        const dir = makeTree({ 'p/zeros.bin': '\0'.repeat(5 * 1024 * 1024) });
        return { archive: { sha256: await upload(execFileSync('tar', ['-czf', '-', '-C', dir, 'p'])) } };
      },
      /archive bomb|unpacks to more/,
    ],
    [
      'a zip with a traversal entry',
      async () => {
        const dir = makeTree({ 'sub/x.txt': 'x' });
        const zip = execFileSync('sh', ['-c', `cd ${dir}/sub && zip -q - ../sub/x.txt`]);
        return { archive: { sha256: await upload(zip) } };
      },
      /\.\." is not allowed|invalid relative path/,
    ],
    [
      'a tar with an absolute entry',
      async () => {
        const header = Buffer.alloc(512);
        header.write('/abs/evil.txt', 0);
        header.write('0000644\0', 100);
        header.write('0000000\0', 108);
        header.write('0000000\0', 116);
        header.write('00000000001\0', 124);
        header.write('00000000000\0', 136);
        header.write('        ', 148);
        header.write('0', 156);
        header.write('ustar\0', 257);
        header.write('00', 263);
        let sum = 0;
        for (const b of header) sum += b;
        header.write(sum.toString(8).padStart(6, '0') + '\0 ', 148);
        const body = Buffer.alloc(512);
        body.write('x');
        return { archive: { sha256: await upload(gzipSync(Buffer.concat([header, body, Buffer.alloc(1024)]))) } };
      },
      /absolute/,
    ],
  ];

  for (const [name, input, message] of bad) {
    it(`refuses ${name} with a ValidationError and writes nothing`, async () => {
      const i = { title: 't', request: 'r', ...((await input()) as object) };
      const before = await snapshot();
      const r = await api.gql(CREATE, { i }, alice.token);
      expect(r.data.createJob.__typename).toBe('ValidationError');
      expect(r.data.createJob.message).toMatch(message);
      expect(await snapshot()).toEqual(before);
    });
  }

  it("refuses a blob the user never uploaded (someone else's hash) with NotFoundError", async () => {
    const secret = await upload('bob only', bob.token);
    const before = await snapshot();
    const r = await api.gql(CREATE, { i: { title: 't', request: 'r', files: [{ path: 'a', sha256: secret }] } }, alice.token);
    expect(r.data.createJob.__typename).toBe('NotFoundError');
    expect(await snapshot()).toEqual(before);
    const badInput = await api.gql(
      CREATE,
      { i: { title: '', request: 'r', spendingCapCad: -1, files: [{ path: 'a', sha256: 'XYZ' }] } },
      alice.token,
    );
    expect(badInput.data.createJob.__typename).toBe('ValidationError');
    expect(badInput.data.createJob.issues.length).toBeGreaterThanOrEqual(2);
  });
});

/**
 * A PEP 503 "simple" package index on 127.0.0.1 for tests of the setup phase: pure-Python wheels
 * written here with zipfile (no build tools, no network), served by `python3 -m http.server`.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll } from 'vitest';

const PY = '/usr/bin/python3';

const WHEEL_SCRIPT = String.raw`
import base64, hashlib, os, sys, zipfile
simple, name, version, module, value = sys.argv[1:6]
dist = name.replace("-", "_")
info = "%s-%s.dist-info" % (dist, version)
files = {module + "/__init__.py": "VALUE = %r\n" % value,
         info + "/METADATA": "Metadata-Version: 2.1\nName: %s\nVersion: %s\n" % (name, version),
         info + "/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
         info + "/top_level.txt": module + "\n"}
record = []
for n, c in files.items():
    d = base64.urlsafe_b64encode(hashlib.sha256(c.encode()).digest()).rstrip(b"=").decode()
    record.append("%s,sha256=%s,%d" % (n, d, len(c.encode())))
files[info + "/RECORD"] = "\n".join(record + [info + "/RECORD,,"]) + "\n"
os.makedirs(os.path.join(simple, name), exist_ok=True)
whl = "%s-%s-py3-none-any.whl" % (dist, version)
with zipfile.ZipFile(os.path.join(simple, name, whl), "w") as z:
    for n, c in files.items():
        z.writestr(n, c)
with open(os.path.join(simple, name, "index.html"), "w") as f:
    f.write('<!DOCTYPE html><html><body><a href="%s">%s</a></body></html>\n' % (whl, whl))
`;

export interface TestPackage {
  /** distribution name, e.g. chatgpu-testpkg */
  name: string;
  version: string;
  /** its one module; `import module; module.VALUE == value` */
  module: string;
  value: string;
}

export interface PipIndex {
  /** http://127.0.0.1:PORT/simple */
  url: string;
  port: number;
  /** the access log, one `"GET /…"` line per request, in order */
  requests: string[];
  close(): Promise<void>;
}

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const p = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return p;
}

export async function startPipIndex(dir: string, packages: TestPackage[]): Promise<PipIndex> {
  const simple = join(dir, 'simple');
  mkdirSync(simple, { recursive: true });
  for (const p of packages) {
    const r = spawnSync(PY, ['-c', WHEEL_SCRIPT, simple, p.name, p.version, p.module, p.value], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`building the wheel of ${p.name}: ${r.stderr}`);
  }
  const port = await freePort();
  const server = spawn(PY, ['-m', 'http.server', '--bind', '127.0.0.1', '--directory', dir, String(port)], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const requests: string[] = [];
  server.stderr!.setEncoding('utf8').on('data', (d: string) => requests.push(...d.split('\n').filter((l) => /"GET /.test(l))));
  const exited = new Promise<void>((r) => server.once('exit', () => r()));
  const close = async () => {
    server.kill('SIGKILL');
    await exited;
  };
  for (let i = 0; ; i++) {
    if (
      await fetch(`http://127.0.0.1:${port}/simple/`).then(
        (r) => r.ok,
        () => false,
      )
    )
      break;
    if (i > 100 || server.exitCode !== null) {
      await close();
      throw new Error('the test package index did not start');
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  requests.length = 0;
  return { url: `http://127.0.0.1:${port}/simple`, port, requests, close };
}

/** The package the suites install: chatgpu-testpkg 0.1, whose module chatgpu_testpkg has VALUE. */
export const TESTPKG: TestPackage = { name: 'chatgpu-testpkg', version: '0.1', module: 'chatgpu_testpkg', value: 'from the local index' };

/** An index in a fresh temporary folder for one test file, closed and removed after its tests. */
export async function tempPipIndex(packages: TestPackage[] = [TESTPKG]): Promise<PipIndex> {
  const dir = await mkdtemp(join(tmpdir(), 'chatgpu-pip-index-'));
  const index = await startPipIndex(dir, packages);
  afterAll(async () => {
    await index.close();
    await rm(dir, { recursive: true, force: true });
  });
  return index;
}

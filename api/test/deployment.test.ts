/**
 * The deployment files, checked statically (no Docker engine runs on the machines that run
 * `npm test`; README says what has not been run). Rules in the spirit of hadolint, written
 * here:
 *
 *   Dockerfiles (docker/*Dockerfile)
 *     D1  every FROM is pinned: an image with a version tag (digits) or a digest; never
 *         `latest`, never a bare major tag; a stage name is fine once defined
 *     D2  the final stage runs as a named non-root USER
 *     D3  the final stage has a HEALTHCHECK (exec form)
 *     D4  every COPY/ADD source that is not from a stage exists in the build context (the
 *         repository root) and is not excluded by .dockerignore
 *     D5  apt-get: -y, --no-install-recommends, the lists removed in the same RUN; no upgrade
 *     D6  CMD, ENTRYPOINT and HEALTHCHECK in exec (JSON) form; no `cd` in RUN (use WORKDIR);
 *         no sudo; no ADD of URLs
 *     D7  the program a CMD/ENTRYPOINT/HEALTHCHECK runs from /app exists in the repository
 *   compose.yaml (parsed with the `yaml` package)
 *     C1  services postgres, api and worker; every image pinned like D1; every build's
 *         context and dockerfile exist
 *     C2  every service has a healthcheck with a test
 *     C3  api waits for postgres and worker for api with `condition: service_healthy`
 *     C4  the database is not published; secrets come from the environment (the worker token
 *         is required with `:?`), not written in the file; named volumes are declared
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';

const ROOT = path.resolve(import.meta.dirname, '../..');
const DOCKER = path.join(ROOT, 'docker');

// ---------------------------------------------------------------- Dockerfile parsing

interface Instruction {
  line: number;
  op: string;
  args: string;
}

/** Instructions with continuation lines joined and comments dropped. */
function parseDockerfile(text: string): Instruction[] {
  const out: Instruction[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    let l = lines[i]!;
    if (/^\s*(#|$)/.test(l)) continue;
    const start = i + 1;
    while (/\\\s*$/.test(l) && i + 1 < lines.length) {
      i++;
      const next = lines[i]!;
      if (/^\s*#/.test(next)) continue;
      l = l.replace(/\\\s*$/, ' ') + next.trim();
    }
    const m = /^\s*([A-Za-z]+)\s+(.*)$/.exec(l);
    if (m) out.push({ line: start, op: m[1]!.toUpperCase(), args: m[2]!.trim() });
  }
  return out;
}

/** Is an image reference pinned (a version tag with digits, or a digest)? */
function pinnedImage(ref: string): string | null {
  if (/@sha256:[0-9a-f]{64}$/.test(ref)) return null;
  const tag = /:([^/:]+)$/.exec(ref)?.[1];
  if (!tag) return `${ref} has no tag (means latest)`;
  if (/^latest$/i.test(tag) || /(^|-)latest($|-)/.test(tag)) return `${ref} uses latest`;
  // A bare major (node:20, postgres:15) moves under you: ask for at least major.minor.
  if (!/\d+\.\d+/.test(tag)) return `${ref} is not pinned to a version (major.minor at least)`;
  return null;
}

function dockerignore(): RegExp[] {
  const file = path.join(ROOT, '.dockerignore');
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#') && !l.startsWith('!'))
    .map(
      (p) =>
        new RegExp(
          `^${p
            .replace(/[.+^${}()|[\]]/g, '\\$&')
            .replace(/\*\*\//g, '(.*/)?')
            .replace(/\*/g, '[^/]*')}(/.*)?$`,
        ),
    );
}

/** JSON (exec) form: a JSON array of strings. */
function execForm(args: string): string[] | null {
  try {
    const v = JSON.parse(args);
    return Array.isArray(v) && v.every((x) => typeof x === 'string') ? v : null;
  } catch {
    return null;
  }
}

/** Violations of D1–D7 in one Dockerfile. */
function lintDockerfile(text: string, context = ROOT): string[] {
  const ins = parseDockerfile(text);
  const problems: string[] = [];
  const stages = new Set<string>();
  const ignored = dockerignore();
  let finalStart = 0;
  ins.forEach((x, i) => {
    if (x.op !== 'FROM') return;
    finalStart = i;
    const [image, as, name] = x.args.replace(/--platform=\S+\s+/, '').split(/\s+/);
    if (!stages.has(image!)) {
      const why = pinnedImage(image!);
      if (why) problems.push(`D1 line ${x.line}: ${why}`);
    }
    if (as?.toUpperCase() === 'AS' && name) stages.add(name);
  });
  const final = ins.slice(finalStart);
  const users = final.filter((x) => x.op === 'USER');
  const lastUser = users.at(-1)?.args.split(':')[0];
  if (!lastUser) problems.push('D2: the final stage has no USER (it would run as root)');
  else if (lastUser === 'root' || lastUser === '0') problems.push(`D2: the final stage runs as ${lastUser}`);
  const health = final.filter((x) => x.op === 'HEALTHCHECK');
  if (health.length === 0) problems.push('D3: the final stage has no HEALTHCHECK');
  for (const x of ins) {
    if (x.op === 'COPY' || x.op === 'ADD') {
      if (/--from=/.test(x.args)) continue;
      const parts = x.args.replace(/--\S+\s+/g, '').split(/\s+/);
      for (const src of parts.slice(0, -1)) {
        if (x.op === 'ADD' && /^https?:/.test(src)) {
          problems.push(`D6 line ${x.line}: ADD of a URL (${src}); download in a RUN with a checksum`);
          continue;
        }
        const rel = src.replace(/^\.\//, '').replace(/\/$/, '') || '.';
        if (rel === '.') continue;
        if (!existsSync(path.join(context, rel))) problems.push(`D4 line ${x.line}: COPY ${src}: no such file in the build context`);
        else if (ignored.some((re) => re.test(rel))) problems.push(`D4 line ${x.line}: COPY ${src}: excluded by .dockerignore`);
      }
    }
    if (x.op === 'RUN') {
      if (/apt-get\s+(dist-)?upgrade/.test(x.args)) problems.push(`D5 line ${x.line}: apt-get upgrade (pin the base image instead)`);
      if (/apt-get\s+install/.test(x.args)) {
        if (!/\s-y\b|--yes|--assume-yes/.test(x.args)) problems.push(`D5 line ${x.line}: apt-get install without -y`);
        if (!/--no-install-recommends/.test(x.args)) problems.push(`D5 line ${x.line}: apt-get install without --no-install-recommends`);
        if (!/rm -rf \/var\/lib\/apt\/lists/.test(x.args)) problems.push(`D5 line ${x.line}: apt lists not removed in the same RUN`);
      }
      if (/(^|&&|;)\s*cd\s/.test(x.args)) problems.push(`D6 line ${x.line}: cd in RUN (use WORKDIR)`);
      if (/\bsudo\b/.test(x.args)) problems.push(`D6 line ${x.line}: sudo`);
    }
    if (x.op === 'CMD' || x.op === 'ENTRYPOINT' || x.op === 'HEALTHCHECK') {
      const cmd = x.op === 'HEALTHCHECK' ? (/CMD\s+(.*)$/.exec(x.args)?.[1] ?? '') : x.args;
      const argv = execForm(cmd);
      if (!argv) {
        problems.push(`D6 line ${x.line}: ${x.op} is not in exec (JSON) form`);
        continue;
      }
      // D7: a script path the program runs (relative to WORKDIR /app = the repository root).
      for (const a of argv)
        if (/^[\w./-]+\.(mjs|js|ts)$/.test(a) && !existsSync(path.join(context, a)))
          problems.push(`D7 line ${x.line}: ${a} does not exist`);
    }
  }
  return problems;
}

// ---------------------------------------------------------------- the files

const dockerfiles = readdirSync(DOCKER).filter((f) => /Dockerfile$/.test(f));
const compose = parseYaml(readFileSync(path.join(DOCKER, 'compose.yaml'), 'utf8')) as {
  services: Record<
    string,
    {
      image?: string;
      build?: { context: string; dockerfile: string };
      healthcheck?: { test?: unknown };
      depends_on?: Record<string, { condition?: string }> | string[];
      ports?: string[];
      environment?: Record<string, string>;
      volumes?: string[];
    }
  >;
  volumes?: Record<string, unknown>;
};

describe('Dockerfiles (hadolint-style rules, static)', () => {
  it('there is an API image and CPU, CUDA and ROCm worker images', () => {
    expect(dockerfiles.sort()).toEqual(
      expect.arrayContaining(['Dockerfile', 'worker.Dockerfile', 'worker-cuda.Dockerfile', 'worker-rocm.Dockerfile']),
    );
    const bases = (f: string) =>
      parseDockerfile(readFileSync(path.join(DOCKER, f), 'utf8'))
        .filter((x) => x.op === 'FROM')
        .map((x) => x.args.split(/\s+/)[0]);
    expect(bases('worker-cuda.Dockerfile').some((b) => b!.startsWith('nvidia/cuda:'))).toBe(true);
    expect(bases('worker-rocm.Dockerfile').some((b) => b!.startsWith('rocm/'))).toBe(true);
  });

  for (const f of dockerfiles) {
    it(`${f} passes D1–D7`, () => {
      expect(lintDockerfile(readFileSync(path.join(DOCKER, f), 'utf8'))).toEqual([]);
    });
  }

  it('the rules catch what they are for (each on a bad Dockerfile)', () => {
    const bad = [
      'FROM node:latest AS a',
      'FROM python',
      'FROM node:20',
      'RUN apt-get update && apt-get upgrade -y && apt-get install curl',
      'RUN cd /tmp && sudo make',
      'ADD https://example.org/x.tgz /x',
      'COPY no/such/file /x',
      'COPY node_modules /x',
      'HEALTHCHECK CMD curl -f http://localhost/',
      'CMD node scripts/missing.mjs',
      'ENTRYPOINT ["node", "scripts/missing.mjs"]',
    ].join('\n');
    const rules = lintDockerfile(bad).map((p) => p.split(/[ :]/)[0]);
    expect(new Set(rules)).toEqual(new Set(['D1', 'D2', 'D4', 'D5', 'D6', 'D7']));
    expect(lintDockerfile('FROM node:20.20.2-bookworm-slim\nUSER root\nCMD ["node"]')).toEqual(
      expect.arrayContaining([expect.stringMatching(/^D2: .*root/), expect.stringMatching(/^D3: /)]),
    );
    expect(lintDockerfile('FROM node:20.20.2-bookworm-slim AS b\nFROM b\nUSER node\nHEALTHCHECK CMD ["true"]\nCMD ["node"]')).toEqual([]);
  });
});

describe('compose.yaml (static)', () => {
  const s = compose.services;

  it('C1: postgres, api and worker; images pinned; builds exist', () => {
    expect(Object.keys(s)).toEqual(expect.arrayContaining(['postgres', 'api', 'worker']));
    const problems: string[] = [];
    for (const [name, svc] of Object.entries(s)) {
      if (svc.build) {
        const ctx = path.resolve(DOCKER, svc.build.context);
        if (!existsSync(ctx)) problems.push(`${name}: build context ${svc.build.context} missing`);
        if (!existsSync(path.join(ctx, svc.build.dockerfile))) problems.push(`${name}: ${svc.build.dockerfile} missing`);
      } else if (!svc.image) problems.push(`${name}: neither image nor build`);
      else {
        const why = pinnedImage(svc.image);
        if (why) problems.push(`${name}: ${why}`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('C2: every service has a healthcheck', () => {
    expect(
      Object.entries(s)
        .filter(([, svc]) => !svc.healthcheck?.test)
        .map(([n]) => n),
    ).toEqual([]);
  });

  it('C3: api starts when postgres is healthy, the worker when the api is', () => {
    const cond = (svc: string, on: string) => {
      const d = s[svc]!.depends_on;
      return d && !Array.isArray(d) ? d[on]?.condition : undefined;
    };
    expect(cond('api', 'postgres')).toBe('service_healthy');
    expect(cond('worker', 'api')).toBe('service_healthy');
  });

  it('C4: the database is not published; secrets come from the environment; volumes are declared', () => {
    expect(s.postgres!.ports ?? []).toEqual([]);
    expect(s.worker!.environment?.CHATGPU_WORKER_TOKEN).toMatch(/^\$\{CHATGPU_WORKER_TOKEN:\?/);
    // No literal secret: the password is a variable (a default for a laptop is allowed).
    expect(s.postgres!.environment?.POSTGRES_PASSWORD).toMatch(/^\$\{POSTGRES_PASSWORD/);
    expect(s.api!.environment?.DATABASE_URL).toContain('${POSTGRES_PASSWORD');
    const named = Object.values(s)
      .flatMap((svc) => (svc.volumes ?? []).map((v) => v.split(':')[0]!))
      .filter((v) => !v.startsWith('.') && !v.startsWith('/'));
    expect(named.filter((v) => !(v in (compose.volumes ?? {})))).toEqual([]);
  });
});

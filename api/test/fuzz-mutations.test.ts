/**
 * Invariant 9, fuzzed: every Mutation field of the printed schema (schema.graphql) is called
 * over real HTTP with variables generated from its argument types — hostile strings (NUL,
 * lone surrogates, bidi overrides, 70 kB), numbers at and past every bound, deeply nested
 * and huge JSON, unicode and escaping paths, wrong types, extra fields, nulls — mixed with
 * the real ids, shas, attempts and fencing tokens of a small world (so calls get past the
 * id checks into the domain's own validation).
 *
 * Each answer is a typed error or a result, never INTERNAL_SERVER_ERROR or HTTP 500; and a
 * refused call (top-level error or an `…Error` result) wrote nothing: the database (row
 * count and hash of every table) and the blob store are as they were before it.
 *
 * Fixed seed, bounded runs (helpers/fuzz.ts: CHATGPU_FUZZ_RUNS=<multiplier>,
 * CHATGPU_FUZZ_SEED=<n> for a longer run). REGRESSIONS below are inputs the fuzzer found
 * that used to fail; each runs on every `npm test`.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import fc from 'fast-check';
import {
  buildSchema,
  getNamedType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isUnionType,
  type GraphQLInputType,
} from 'graphql';
import { afterAll, describe, expect, it } from 'vitest';
import { hashToken } from '../src/domain/auth/secrets.js';
import { rawId, startTestApi } from './helpers/api.js';
import { fuzzParams, fuzzTimeout, hostileInt, hostileJson, hostilePath, hostileString, sha256hex, snapshotter } from './helpers/fuzz.js';
import { addTask, createJobWithFile, createWorkerToken, ProtocolWorker, workerGid } from './helpers/protocolClient.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const schema = buildSchema(await readFile(path.join(ROOT, 'schema.graphql'), 'utf8'));
const mutations = schema.getMutationType()!.getFields();

// ---------------------------------------------------------------- the world the calls act on

const api = await startTestApi();
const prisma = api.server.db.prisma;
const owner = await api.signUp();
const gid = (type: string, id: string) => Buffer.from(`${type}:${id}`).toString('base64');

const workerToken = await createWorkerToken(api, owner.token, 'fuzzed');
const worker = new ProtocolWorker(api, workerToken, 'fuzz-box');
await worker.hello({ slots: 16 });
const job = await createJobWithFile(api, owner.token, { title: 'fuzz job' });
const spareJob = await createJobWithFile(api, owner.token, { title: 'fuzz job 2' });
for (let i = 0; i < 8; i++) await addTask(api, job, { name: `t${i}` });
const leases = await worker.claim({ max: 8 });
if (leases.length !== 8) throw new Error(`setup: claimed ${leases.length}`);
const output = await api.putBlob(`an output ${randomUUID()}`, workerToken, undefined, leases[0]!.attemptId);
const question = await prisma.question.create({ data: { jobId: job.jobId, text: 'which one?', choices: ['a', 'b'] } });
// Tokens the fuzzer may revoke or rotate (never the ones it calls with).
const sacrificialApi = await Promise.all(
  [1, 2].map(async (i) => {
    const r = await api.gql(
      `mutation($n: String!) { createApiToken(input: {name: $n}) { ... on CreatedApiToken { apiToken { id } } } }`,
      { n: `s${i}` },
      owner.token,
    );
    return r.data.createApiToken.apiToken.id as string;
  }),
);
const sacrificialWorker = await Promise.all(
  [1, 2].map(async (i) => {
    const t = await createWorkerToken(api, owner.token, `s${i}`);
    return (await prisma.workerToken.findUniqueOrThrow({ where: { tokenHash: hashToken(t) } })).id;
  }),
);
const other = await api.signUp();
const otherJob = await createJobWithFile(api, other.token, { title: 'not yours' });

/** Ids and values of the world by argument or field name: real ones half of the time. */
const REAL: Record<string, unknown[]> = {
  id: [
    job.gid,
    spareJob.gid,
    otherJob.gid,
    workerGid(worker.workerId),
    ...sacrificialApi,
    ...sacrificialWorker,
    gid('Job', randomUUID()),
    gid('Worker', 'x'),
  ],
  attemptId: [...leases.map((l) => l.attemptId), randomUUID()],
  fencingToken: leases.map((l) => l.fencingToken),
  workerId: [worker.workerId, randomUUID()],
  questionId: [question.id, randomUUID()],
  sha256: [job.fileSha, output.sha256, otherJob.fileSha, sha256hex('never uploaded')],
  email: [owner.email, `new-${randomBytes(3).toString('hex')}@example.com`, 'a@b', 'not an email'],
  password: ['correct horse battery', 'short'],
  stream: ['stdout', 'stderr', 'system'],
  hardwarePreference: ['any', 'cpu', 'nvidia', 'amd', 'apple'],
  errorClass: ['USER_CODE', 'DEPENDENCY', 'INFRASTRUCTURE', 'TIMEOUT'],
  name: ['box', 'loss', 'fuzz-box'],
  title: ['fuzz'],
  request: ['run it'],
  answer: ['a'],
  path: ['main.py', 'src/a.py'],
  version: ['0.1.0'],
  slots: [1, 4],
  max: [1, 3],
  seq: [0, 1, 2],
  exitCode: [0, 1],
};

/** Who calls each mutation. A new mutation without an entry fails the coverage test. */
const CALLER: Record<string, 'anonymous' | 'user' | 'worker'> = {
  signUp: 'anonymous',
  logIn: 'anonymous',
  createApiToken: 'user',
  createWorkerToken: 'user',
  createJob: 'user',
  answerQuestion: 'user',
  cancelJob: 'user',
  pauseWorker: 'user',
  resumeWorker: 'user',
  drainWorker: 'user',
  revokeApiToken: 'user',
  revokeWorkerToken: 'user',
  rotateWorkerToken: 'user',
  workerHello: 'worker',
  claimTask: 'worker',
  heartbeat: 'worker',
  setWorkerPaused: 'worker',
  setWorkerHealth: 'worker',
  appendLogs: 'worker',
  reportMetrics: 'worker',
  completeAttempt: 'worker',
  completeAttempts: 'worker',
  drainOwnWorker: 'worker',
  saveCheckpoint: 'worker',
  releaseDrainedAttempt: 'worker',
  rotateServiceToken: 'user',
  stopService: 'user',
  openServiceInBrowser: 'user',
};
const tokenOf = { anonymous: undefined, user: owner.token, worker: workerToken } as const;

// ---------------------------------------------------------------- arbitraries from input types

const OMIT = Symbol('omit');

/**
 * Two kinds of call: well-typed (every value fits its GraphQL type, so the call reaches the
 * resolvers and the domain's own validation: hostile content, bounds, ids) and ill-typed
 * (wrong JSON types, out-of-range Ints, nulls for non-null, extra fields: coercion must refuse
 * them, typed). Mixing both per value would leave almost no call well-typed.
 */
type Mode = 'typed' | 'untyped';

function scalarArb(type: string, name: string, mode: Mode): fc.Arbitrary<unknown> {
  const real = REAL[name];
  const base: fc.Arbitrary<unknown> = (() => {
    switch (type) {
      case 'Int':
        // claimTask's waitMs long-polls up to its value: keep the fuzz run short (bounds still hit).
        if (name === 'waitMs') return fc.oneof(fc.constantFrom(0, -1, 30_001, 2 ** 31 - 1), fc.integer({ max: -1 }));
        return mode === 'typed'
          ? fc.oneof(
              fc.integer({ min: -5, max: 70 }),
              fc.constantFrom(2 ** 31 - 1, -(2 ** 31), 30_000, 10_001, 65, 1_000_001),
              fc.integer(),
            )
          : hostileInt();
      case 'Float':
        return mode === 'typed'
          ? fc.oneof(
              fc.integer({ min: -5, max: 100 }),
              fc.double({ noNaN: true, noDefaultInfinity: true }),
              fc.constantFrom(1e308, -0, 5e-324, 1_000_000.01),
            )
          : hostileInt();
      case 'Boolean':
        return fc.boolean();
      case 'JSON':
        return hostileJson();
      case 'LogLines': {
        // A list of line objects, checked by the scalar (shape) and the domain (seqs, streams, sizes).
        const line = fc.record(
          {
            seq: mode === 'typed' ? fc.integer({ min: -2, max: 8 }) : hostileInt(),
            stream: fc.oneof(fc.constantFrom('stdout', 'stderr', 'system'), hostileString({ maxLength: 10 })),
            text: hostileString(),
            ts: fc.oneof(
              fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
              hostileString({ maxLength: 30 }),
            ),
          },
          { requiredKeys: ['seq', 'stream', 'text'] },
        );
        return mode === 'typed' ? fc.array(line, { maxLength: 6 }) : fc.oneof(fc.array(line, { maxLength: 6 }), hostileJson());
      }
      case 'DateTime':
        return fc.oneof(
          fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
          fc.constantFrom('+275760-09-13T00:00:00.000Z', '-271821-04-20T00:00:00.000Z', '0000-01-01T00:00:00Z', '1970-01-01'),
          hostileString({ maxLength: 30 }),
        );
      case 'String':
      case 'ID':
      default:
        return name === 'path' ? fc.oneof(hostilePath(), hostileString()) : hostileString();
    }
  })();
  const arbs: fc.WeightedArbitrary<unknown>[] = [{ weight: 6, arbitrary: base }];
  if (real?.length) arbs.push({ weight: 6, arbitrary: fc.constantFrom(...real) });
  // Ill-typed: sometimes the wrong JSON type altogether.
  if (mode === 'untyped') arbs.push({ weight: 3, arbitrary: fc.constantFrom<unknown>(true, 12.5, 'str', [], {}, [1, 2]) });
  return fc.oneof(...arbs);
}

function inputArb(type: GraphQLInputType, name: string, mode: Mode): fc.Arbitrary<unknown> {
  if (isNonNullType(type)) {
    const inner = inputArb(type.ofType, name, mode);
    return mode === 'typed' ? inner : fc.oneof({ weight: 6, arbitrary: inner }, { weight: 1, arbitrary: fc.constant(null) });
  }
  if (isListType(type)) {
    const el = inputArb(type.ofType, name, mode);
    return fc.oneof({ weight: 8, arbitrary: fc.array(el, { maxLength: 6 }) }, { weight: 1, arbitrary: el });
  }
  if (isInputObjectType(type)) {
    const fields = Object.values(type.getFields());
    const rec: Record<string, fc.Arbitrary<unknown>> = {};
    for (const f of fields) {
      const a = inputArb(f.type, f.name, mode);
      rec[f.name] = isNonNullType(f.type) ? a : fc.oneof(a, fc.constant(null), fc.constant(OMIT));
    }
    const extra =
      mode === 'typed'
        ? fc.constant(null)
        : fc.option(fc.tuple(fc.constantFrom('extra', '__proto__', 'constructor', 'x y'), hostileJson()), { freq: 3 });
    return fc.tuple(fc.record(rec), extra).map(([r, x]) => {
      const o: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(r)) if (v !== OMIT) o[k] = v;
      if (x) Object.defineProperty(o, x[0], { value: x[1], enumerable: true, writable: true, configurable: true });
      return o;
    });
  }
  if (isEnumType(type)) {
    const values = fc.constantFrom(...type.getValues().map((v) => v.name));
    return mode === 'typed' ? values : fc.oneof(values, hostileString({ maxLength: 10 }));
  }
  return scalarArb(getNamedType(type).name, name, mode);
}

function argsArb(field: string): fc.Arbitrary<Record<string, unknown>> {
  const f = mutations[field]!;
  const forMode = (mode: Mode) => {
    const rec: Record<string, fc.Arbitrary<unknown>> = {};
    for (const a of f.args)
      rec[a.name] = isNonNullType(a.type) ? inputArb(a.type, a.name, mode) : fc.oneof(inputArb(a.type, a.name, mode), fc.constant(OMIT));
    return fc.record(rec).map((r) => Object.fromEntries(Object.entries(r).filter(([, v]) => v !== OMIT)));
  };
  return fc.oneof({ weight: 4, arbitrary: forMode('typed') }, { weight: 1, arbitrary: forMode('untyped') });
}

function documentFor(field: string): string {
  const f = mutations[field]!;
  const decl = f.args.map((a) => `$${a.name}: ${String(a.type)}`).join(', ');
  const pass = f.args.map((a) => `${a.name}: $${a.name}`).join(', ');
  const union = getNamedType(f.type);
  const errorMembers = isUnionType(union) ? union.getTypes().filter((t) => t.getInterfaces().some((i) => i.name === 'Error')) : [];
  const sel = `{ __typename ${errorMembers.length ? '... on Error { code message }' : ''} }`;
  return `mutation${decl ? `(${decl})` : ''} { ${field}${pass ? `(${pass})` : ''} ${sel} }`;
}

// ---------------------------------------------------------------- the property

const snap = await snapshotter(api.databaseUrl, [path.join(api.dataDir, 'blobs')]);

/** Codes a refused call may carry (top-level errors and typed results alike). */
const TYPED = new Set([
  'BAD_USER_INPUT',
  'GRAPHQL_VALIDATION_FAILED',
  'BAD_REQUEST',
  'VALIDATION_ERROR',
  'NOT_FOUND',
  'FORBIDDEN',
  'UNAUTHENTICATED',
  'CONFLICT',
  'PAYLOAD_TOO_LARGE',
  'QUERY_TOO_COSTLY',
  'QUERY_TOO_DEEP',
  'STALE_ATTEMPT',
  'AUTHENTICATION_FAILED',
]);
/** Tables a typed refusal writes on purpose: a stale report is recorded (invariant 1). */
const ALLOWED_ON_REFUSAL: Record<string, string[]> = { StaleAttemptError: ['StaleReport'] };

/** How each field's calls ended (printed with CHATGPU_FUZZ_STATS=1): how deep the fuzzing reached. */
const outcomes: Record<string, Record<string, number>> = {};

async function callOnce(field: string, variables: Record<string, unknown>): Promise<string[]> {
  const before = await snap.take();
  const res = await fetch(`${api.url}/graphql`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(tokenOf[CALLER[field]!] ? { authorization: `Bearer ${tokenOf[CALLER[field]!]}` } : {}),
    },
    body: JSON.stringify({ query: documentFor(field), variables }),
  });
  const text = await res.text();
  const problems: string[] = [];
  let body: { data?: any; errors?: { message: string; extensions?: { code?: string } }[] } = {};
  try {
    body = JSON.parse(text);
  } catch {
    problems.push(`HTTP ${res.status}, not JSON: ${text.slice(0, 200)}`);
  }
  if (res.status >= 500) problems.push(`HTTP ${res.status}: ${text.slice(0, 300)}`);
  for (const e of body.errors ?? []) {
    const code = e.extensions?.code ?? '(none)';
    if (!TYPED.has(code)) problems.push(`error ${code}: ${e.message.slice(0, 200)}`);
  }
  const result = body.data?.[field];
  const refusedAs = body.errors?.length
    ? 'top-level error'
    : typeof result?.__typename === 'string' && result.__typename.endsWith('Error')
      ? result.__typename
      : null;
  if (refusedAs && result?.code && !TYPED.has(result.code)) problems.push(`result ${result.__typename} with code ${result.code}`);
  if (!refusedAs && !result) problems.push(`no result and no error: ${text.slice(0, 200)}`);
  const outcome = body.errors?.length ? (body.errors[0]!.extensions?.code ?? '?') : (result?.code ?? result?.__typename ?? '?');
  (outcomes[field] ??= {})[outcome] = (outcomes[field]![outcome] ?? 0) + 1;
  if (refusedAs) {
    const changed = snap.diff(before, await snap.take(), ALLOWED_ON_REFUSAL[refusedAs] ?? []);
    if (changed.length)
      problems.push(
        `refused (${refusedAs}: ${(result?.message ?? body.errors?.[0]?.message ?? '').slice(0, 150)}) but wrote: ${changed.join('; ')}`,
      );
  }
  return problems;
}

/** A compact view of the variables for failure messages (huge strings cut). */
const show = (v: unknown) =>
  JSON.stringify(v, (_k, x) => (typeof x === 'string' && x.length > 80 ? `${x.slice(0, 40)}…(${x.length})` : x)).slice(0, 1_500);

/**
 * Inputs the fuzzer found that failed before their fix (each must now be a typed refusal
 * that writes nothing, or a result).
 */
const NUL = 'a\u0000b';
const REGRESSIONS: { field: string; why: string; variables: () => Record<string, unknown> }[] = [
  {
    field: 'workerHello',
    why: 'a NUL character in a JSON key (jsonb refuses it: was INTERNAL_SERVER_ERROR)',
    variables: () => ({ input: { capabilities: { constructor: 'x', [NUL]: '\u001b[31m' }, name: 'fuzz-box', slots: 4, version: '0.1.0' } }),
  },
  {
    field: 'claimTask',
    why: 'a Float for an Int argument (refused by the cost check before execution: was HTTP 500 with BAD_USER_INPUT)',
    variables: () => ({ max: -6.6e115, waitMs: -30, workerId: worker.workerId }),
  },
  {
    field: 'heartbeat',
    why: 'a NUL character in telemetry JSON',
    variables: () => ({ workerId: worker.workerId, leases: [], telemetry: { load: NUL } }),
  },
  {
    field: 'createJob',
    why: 'a NUL character in a title',
    variables: () => ({ input: { title: NUL, request: 'run it', files: [{ path: 'main.py', sha256: job.fileSha }] } }),
  },
  {
    field: 'createJob',
    why: 'a NUL character in a request',
    variables: () => ({ input: { title: 't', request: NUL, files: [{ path: 'main.py', sha256: job.fileSha }] } }),
  },
  {
    field: 'signUp',
    why: 'a NUL character in a display name',
    variables: () => ({
      input: { email: `nul-${randomBytes(3).toString('hex')}@example.com`, password: 'correct horse battery', displayName: NUL },
    }),
  },
  {
    field: 'signUp',
    why: 'a NUL character in an email',
    variables: () => ({ input: { email: `n${NUL}@example.com`, password: 'correct horse battery' } }),
  },
  {
    field: 'logIn',
    why: 'a NUL character in an email',
    variables: () => ({ input: { email: `n${NUL}@example.com`, password: 'correct horse battery' } }),
  },
  { field: 'createApiToken', why: 'a NUL character in a token name', variables: () => ({ input: { name: NUL } }) },
  { field: 'answerQuestion', why: 'a NUL character in an answer', variables: () => ({ input: { questionId: question.id, answer: NUL } }) },
  {
    field: 'appendLogs',
    why: 'a NUL character in a log line',
    variables: () => ({
      attemptId: leases[7]!.attemptId,
      fencingToken: leases[7]!.fencingToken,
      lines: [{ seq: 0, stream: 'stdout', text: NUL }],
    }),
  },
  {
    field: 'appendLogs',
    why: 'a NUL character in a stream name',
    variables: () => ({
      attemptId: leases[7]!.attemptId,
      fencingToken: leases[7]!.fencingToken,
      lines: [{ seq: 0, stream: NUL, text: 'x' }],
    }),
  },
  {
    field: 'reportMetrics',
    why: 'a NUL character in a metric name',
    variables: () => ({
      attemptId: leases[7]!.attemptId,
      fencingToken: leases[7]!.fencingToken,
      points: [{ seq: 0, name: NUL, value: 1 }],
    }),
  },
  {
    field: 'workerHello',
    why: 'a NUL character in a version',
    variables: () => ({ input: { capabilities: {}, name: 'fuzz-box', slots: 4, version: NUL } }),
  },
  {
    field: 'completeAttempt',
    why: 'a NUL character in an error message',
    variables: () => ({
      attemptId: leases[6]!.attemptId,
      fencingToken: leases[6]!.fencingToken,
      result: { exitCode: 1, errorClass: 'USER_CODE', errorMessage: NUL },
    }),
  },
];

describe('fuzz: every mutation', () => {
  it('every Mutation field has a caller here', () => {
    const names = Object.keys(mutations).sort();
    expect(
      names.filter((n) => !(n in CALLER)),
      'add each to CALLER (who calls it)',
    ).toEqual([]);
  });

  for (const r of REGRESSIONS) {
    it(`regression: ${r.field} — ${r.why}`, async () => {
      expect(await callOnce(r.field, r.variables())).toEqual([]);
    });
  }

  for (const field of Object.keys(CALLER).filter((f) => f in mutations)) {
    it(
      `${field}: typed error or result, and a refusal writes nothing`,
      async () => {
        await fc.assert(
          fc.asyncProperty(argsArb(field), async (variables) => {
            const problems = await callOnce(field, variables);
            if (problems.length) throw new Error(`${field}(${show(variables)}):\n  ${problems.join('\n  ')}`);
          }),
          fuzzParams(10),
        );
      },
      fuzzTimeout(),
    );
  }
});

afterAll(() => {
  if (process.env.CHATGPU_FUZZ_STATS) console.log(JSON.stringify(outcomes, null, 1));
});

// The world is still usable after the fuzzing (the fuzzer did not break what it acts on).
describe('after the fuzzing', () => {
  it('the owner still reads their job', async () => {
    const r = await api.gql(`query($id: ID!) { job(id: $id) { id } }`, { id: job.gid }, owner.token);
    expect(rawId(r.data.job.id)).toBe(job.jobId);
  });
});

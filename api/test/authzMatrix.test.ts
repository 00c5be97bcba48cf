/**
 * Invariant 7, schema-wide: the authorization matrix. Every Query, Mutation and
 * Subscription field of the printed schema (schema.graphql) and every HTTP route of the
 * router's table (api/src/http/routes.ts) is called as each principal below, over real
 * HTTP and WebSocket on 127.0.0.1 against a real PostgreSQL:
 *
 *   anonymous, a revoked API token, an expired session, a revoked worker token, another
 *   user, an operator (CHATGPU_OPERATORS; owns nothing), another user's worker token,
 *   the owner's worker token (holds the leases) and the owner.
 *
 * A principal that may not reach the owner's data gets the exact typed answer the table
 * derives (UNAUTHENTICATED, FORBIDDEN, null, a NotFoundError result, NOT_FOUND, or an HTTP
 * status), nothing of the owner's in the response (every owner row carries the marker
 * "ownersecret"), and leaves the owner's rows as they were. The owner (or the worker
 * holding the lease) is the positive control and gets the data.
 *
 * A field or route without an entry here fails the coverage tests, naming it; so does an
 * entry whose field or route is gone.
 */
import { createHash, randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  buildSchema,
  getNamedType,
  isInterfaceType,
  isLeafType,
  isNonNullType,
  isUnionType,
  parse,
  type GraphQLField,
  type GraphQLInterfaceType,
  type GraphQLObjectType,
  type GraphQLOutputType,
} from 'graphql';
import { afterAll, describe, expect, it } from 'vitest';
import { hashToken } from '../src/domain/auth/secrets.js';
import { registerBlob } from '../src/domain/blobs/blobAccess.js';
import { putBuffer } from '../src/domain/blobs/blobStore.js';
import { checkLimits } from '../src/graphql/limits.js';
import { HTTP_ROUTES } from '../src/http/routes.js';
import { hostFetch } from './helpers/serviceHost.js';
import { startTestApi } from './helpers/api.js';
import { addTask, createJobWithFile, createWorkerToken, ProtocolWorker, workerGid } from './helpers/protocolClient.js';
import { subscribe } from './helpers/ws.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const schema = buildSchema(await readFile(path.join(ROOT, 'schema.graphql'), 'utf8'));

// ---------------------------------------------------------------- principals

const PRINCIPALS = [
  'anonymous',
  'revokedApiToken',
  'expiredSession',
  'revokedWorkerToken',
  'otherUser',
  'operator',
  'otherWorker',
  'ownerWorker',
  'owner',
] as const;
type P = (typeof PRINCIPALS)[number];
/** Tokens that authenticate as nobody: every scoped field and route refuses them as anonymous. */
const UNAUTH: readonly P[] = ['anonymous', 'revokedApiToken', 'expiredSession', 'revokedWorkerToken'];
const WORKERS: readonly P[] = ['otherWorker', 'ownerWorker'];

/** Everything of the owner's carries this (case-insensitive: emails are lower-cased). */
const MARK = 'ownersecret';
const hasOwnerData = (x: unknown) =>
  JSON.stringify(x ?? null)
    .toLowerCase()
    .includes(MARK);

// ---------------------------------------------------------------- setup: one API, the owner's world

const webDir = await mkdtemp(path.join(tmpdir(), 'chatgpu-authz-web-'));
await writeFile(path.join(webDir, 'index.html'), '<!doctype html><title>ChatGPU</title>');
afterAll(() => rm(webDir, { recursive: true, force: true }));
const OPERATOR = `op-${randomBytes(4).toString('hex')}@example.com`;
// Leases outlive the whole run: the owner's worker holds its attempts from the setup to the
// worker-of-lease rows at the end, and the matrix tests who may report on a live lease, not
// expiry (races.test.ts does). With the default 30 s, a loaded machine let the lease lapse first.
const api = await startTestApi({ CHATGPU_OPERATORS: OPERATOR, LEASE_SEC: '3600' }, { webDir });
const prisma = api.server.db.prisma;
const tag = randomBytes(4).toString('hex');
const must = <T>(v: T | null | undefined, what: string): T => {
  if (v === null || v === undefined) throw new Error(`setup: no ${what}`);
  return v;
};

const owner = await api.signUp(`${MARK}-${tag}@example.com`);
const other = await api.signUp();
const operator = await api.signUp(OPERATOR);
const spare = await api.signUp(); // logIn's credentials (anyone who knows them may log in)

async function apiToken(token: string, name: string): Promise<{ token: string; id: string }> {
  const r = await api.gql(
    `mutation($n: String!) { createApiToken(input: {name: $n}) { ... on CreatedApiToken { token apiToken { id } } } }`,
    { n: name },
    token,
  );
  return { token: must(r.data?.createApiToken?.token, 'api token'), id: r.data.createApiToken.apiToken.id };
}
async function workerTokenWithId(token: string, name: string): Promise<{ token: string; id: string }> {
  const t = await createWorkerToken(api, token, name);
  return { token: t, id: (await prisma.workerToken.findUniqueOrThrow({ where: { tokenHash: hashToken(t) } })).id };
}

// A revoked API token and an expired session of the owner's.
const revokedApi = await apiToken(owner.token, 'to revoke');
must(
  (await api.gql(`mutation($id: ID!) { revokeApiToken(id: $id) { __typename } }`, { id: revokedApi.id }, owner.token)).data?.revokeApiToken,
  'revoke',
);
const login = await api.gql(`mutation($i: LogInInput!) { logIn(input: $i) { ... on AuthPayload { token } } }`, {
  i: { email: owner.email, password: 'correct horse battery' },
});
const expiredSession: string = must(login.data?.logIn?.token, 'session');
await prisma.apiToken.update({ where: { tokenHash: hashToken(expiredSession) }, data: { expiresAt: new Date(Date.now() - 60_000) } });

// The owner's worker token: its worker holds the leases. A second one said hello and was revoked.
const ownerWT = await workerTokenWithId(owner.token, 'lease holder');
const ownerWorker = new ProtocolWorker(api, ownerWT.token, `${MARK}-box`);
must((await ownerWorker.hello({ slots: 4 })).workerId, 'owner worker');
const revokedWT = await workerTokenWithId(owner.token, 'to revoke');
must((await new ProtocolWorker(api, revokedWT.token, 'revoked-box').hello()).workerId, 'revoked worker');
must(
  (await api.gql(`mutation($id: ID!) { revokeWorkerToken(id: $id) { __typename } }`, { id: revokedWT.id }, owner.token)).data
    ?.revokeWorkerToken,
  'revoke wt',
);
// Targets of rotateWorkerToken / revokeWorkerToken / revokeApiToken (the owner's control uses them up).
const rotateTarget = await workerTokenWithId(owner.token, 'rotate target');
const revokeTarget = await workerTokenWithId(owner.token, 'revoke target');
const apiRevokeTarget = await apiToken(owner.token, 'revoke target');

// Another user's and the operator's worker tokens, each with a worker of its own.
const otherWorker = new ProtocolWorker(api, await createWorkerToken(api, other.token, 'theirs'), 'their-box');
must((await otherWorker.hello()).workerId, 'other worker');
const operatorWorker = new ProtocolWorker(api, await createWorkerToken(api, operator.token, 'ops'), 'ops-box');
must((await operatorWorker.hello()).workerId, 'operator worker');

// The owner's job: one task run to completion with an output, one still leased (logs, metrics).
const job = await createJobWithFile(api, owner.token, { title: `${MARK} job`, content: `print("${MARK} file")\n` });
const spareJob = await createJobWithFile(api, owner.token, { title: `${MARK} job to cancel` });
await addTask(api, job, { name: `${MARK}-done` });
await addTask(api, job, { name: `${MARK}-live` });
const claimed = await ownerWorker.claim({ max: 2 });
if (claimed.length !== 2) throw new Error(`setup: claimed ${claimed.length}`);
const [done, live] = [claimed.find((a) => a.task.name.endsWith('done'))!, claimed.find((a) => a.task.name.endsWith('live'))!];
const output = await api.putBlob(`${MARK} output`, ownerWT.token, undefined, done.attemptId);
const completed = await ownerWorker.complete(done, { exitCode: 0, outputs: [{ path: 'out.txt', sha256: output.sha256 }] });
if (completed.__typename !== 'Attempt') throw new Error(`setup: complete ${JSON.stringify(completed)}`);
await ownerWorker.appendLogs(live, [{ seq: 0, text: `${MARK} log line` }]);
await ownerWorker.reportMetrics(live, [{ seq: 0, name: `${MARK}_loss`, value: 1 }]);
const question = await prisma.question.create({ data: { jobId: job.jobId, text: `${MARK} question?`, choices: ['a', 'b'] } });
// A preparation record with an evidence bundle (the owner may read it: GET /blobs/<evidenceSha>).
const evidence = await putBuffer(api.server.resources.blobs, Buffer.from(`${MARK} evidence`));
await registerBlob(api.server.resources, evidence.sha256, evidence.size, owner.userId);
await prisma.preparationRecord.create({
  data: {
    jobId: job.jobId,
    step: 'reference',
    kind: 'reference',
    hardware: { worker: `${MARK}-box` },
    originalCodeId: job.codeVersionId,
    originalManifestSha: '0'.repeat(64),
    transformation: 'none',
    outcome: 'ACCEPTED',
    reason: `${MARK} reason`,
    evidenceSha: evidence.sha256,
  },
});

// The owner's hosted service, leased to the owner's worker, which opens no tunnel in setup: its
// URL answers 503 to its own token; the worker may open the tunnel (WS /svc-tunnel).
const serviceJob = await createJobWithFile(api, owner.token, { title: `${MARK} service job` });
await prisma.job.update({ where: { id: serviceJob.jobId }, data: { status: 'RUNNING' } });
const serviceTask = await addTask(api, serviceJob, { kind: 'SERVICE', name: 'service' });
const serviceAttempt = must(
  (await ownerWorker.claim({ max: 1 })).find((a) => a.task.id === serviceTask.id),
  'service attempt',
);
const serviceToken = `cgv_${randomBytes(16).toString('hex')}`;
const service = await prisma.service.create({
  data: {
    jobId: serviceJob.jobId,
    taskId: serviceTask.id,
    slug: randomBytes(8).toString('hex'),
    accessTokenHash: hashToken(serviceToken),
    spec: { note: `${MARK} spec` },
  },
});

// The owner's browser cookie of the service (openServiceInBrowser's ticket, exchanged by the API).
const link = await api.gql(
  `mutation($id: ID!) { openServiceInBrowser(jobId: $id) { ... on ServiceBrowserLink { url } } }`,
  { id: serviceJob.gid },
  owner.token,
);
const serviceLink = new URL(must(link.data?.openServiceInBrowser?.url as string | undefined, 'browser link'));
const opened = await hostFetch(serviceLink.toString());
const serviceCookie = must(/^(chatgpu_svc=[^;]+)/.exec(String(opened.headers['set-cookie'] ?? ''))?.[1], 'service cookie');
/** The service's own host, as a browser sends it (`<slug>.svc.localhost:PORT`). */
const serviceHost = serviceLink.host;

const S = {
  jobGid: job.gid,
  serviceJobGid: serviceJob.gid,
  spareJobGid: spareJob.gid,
  fileSha: job.fileSha,
  workerId: ownerWorker.workerId,
  workerGid: workerGid(ownerWorker.workerId),
  live: { attemptId: live.attemptId, fencingToken: live.fencingToken },
  questionId: question.id,
  /** Replay from here: the next stored event is a task's, named with the marker. */
  createdEventId: (await prisma.jobEvent.findFirstOrThrow({ where: { jobId: job.jobId, kind: 'job.created' } })).id.toString(),
};

const TOKENS: Record<P, string | undefined> = {
  anonymous: undefined,
  revokedApiToken: revokedApi.token,
  expiredSession,
  revokedWorkerToken: revokedWT.token,
  otherUser: other.token,
  operator: operator.token,
  otherWorker: otherWorker.token,
  ownerWorker: ownerWT.token,
  owner: owner.token,
};

// ---------------------------------------------------------------- the field expectations

/**
 * Who may call a field:
 *   public           anyone (signUp, logIn; me and node answer about the caller only)
 *   user             any signed-in user, who sees only their own
 *   owner-of-arg     a user, about an object (id argument) that is theirs
 *   worker           any worker token, about itself
 *   worker-of-lease  a worker token, about its own worker or a live attempt it holds
 * The expected answer of each principal follows from it (see `expected`); `expect` overrides
 * where a field answers differently, `ownerData: false` where the control's answer holds
 * nothing of the owner's (a token, a boolean, an empty claim).
 */
type Access = 'public' | 'user' | 'owner-of-arg' | 'worker' | 'worker-of-lease';
/** A top-level error code, `null`, a typed error result, or data (with or without the owner's). */
type Outcome =
  | 'UNAUTHENTICATED'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'null'
  | 'NotFoundError'
  | 'data'
  | 'data+owner'
  | 'ValidationError'
  | 'StaleAttemptError';
interface FieldEntry {
  access: Access;
  vars?: (p: P) => Record<string, unknown>;
  ownerData?: false;
  expect?: Partial<Record<P, Outcome>>;
}
const nullFor = (ps: readonly P[]) => Object.fromEntries(ps.map((p) => [p, 'null'])) as Partial<Record<P, Outcome>>;
const tokenName = { input: { name: 'matrix' } };

const FIELDS: Record<string, FieldEntry> = {
  // Queries.
  'Query.me': { access: 'public', expect: { ...nullFor(UNAUTH), ...nullFor(WORKERS) } },
  'Query.node': { access: 'public', vars: () => ({ id: S.jobGid }), expect: nullFor(PRINCIPALS.filter((p) => p !== 'owner')) },
  'Query.job': { access: 'owner-of-arg', vars: () => ({ id: S.jobGid }) },
  'Query.jobs': { access: 'user' },
  'Query.attempt': { access: 'owner-of-arg', vars: () => ({ id: S.live.attemptId }) },
  'Query.worker': { access: 'owner-of-arg', vars: () => ({ id: S.workerGid }) },
  'Query.workers': { access: 'user' },
  // Aggregates of the whole network: counts and versions, no owner or machine names.
  'Query.networkCapacity': { access: 'user', ownerData: false },
  // An operator sees every job's preparation records, and through PreparationRecord.job
  // the job itself (by design of CHATGPU_OPERATORS; see the report of issue 18).
  'Query.preparationRecords': { access: 'user', expect: { operator: 'data+owner' } },
  // Subscriptions (over graphql-ws).
  'Subscription.jobUpdated': { access: 'owner-of-arg', vars: () => ({ id: S.jobGid }) },
  'Subscription.jobEvents': { access: 'owner-of-arg', vars: () => ({ jobId: S.jobGid, after: S.createdEventId }) },
  'Subscription.workersChanged': { access: 'user' },
  // Mutations, in the order they run (the owner's controls use up their targets).
  'Mutation.signUp': {
    access: 'public',
    ownerData: false,
    vars: (p) => ({ input: { email: `${p.toLowerCase()}-${tag}@example.com`, password: 'correct horse battery' } }),
  },
  'Mutation.logIn': {
    access: 'public',
    ownerData: false,
    vars: () => ({ input: { email: spare.email, password: 'correct horse battery' } }),
  },
  'Mutation.createApiToken': { access: 'user', ownerData: false, vars: () => tokenName },
  'Mutation.createWorkerToken': { access: 'user', ownerData: false, vars: () => tokenName },
  // The files named must be the caller's: the owner's blob is not another user's to use.
  'Mutation.createJob': {
    access: 'user',
    vars: () => ({ input: { title: `${MARK} new job`, request: 'r', files: [{ path: 'a.py', sha256: S.fileSha }] } }),
    expect: { otherUser: 'NotFoundError', operator: 'NotFoundError' },
  },
  'Mutation.answerQuestion': { access: 'owner-of-arg', vars: () => ({ input: { questionId: S.questionId, answer: 'a' } }) },
  'Mutation.cancelJob': { access: 'owner-of-arg', vars: () => ({ id: S.spareJobGid }) },
  'Mutation.pauseWorker': { access: 'owner-of-arg', vars: () => ({ id: S.workerGid }) },
  // Before resumeWorker, which brings the worker back ONLINE for the worker-side fields below.
  'Mutation.drainWorker': { access: 'owner-of-arg', vars: () => ({ id: S.workerGid }) },
  'Mutation.resumeWorker': { access: 'owner-of-arg', vars: () => ({ id: S.workerGid }) },
  'Mutation.rotateServiceToken': { access: 'owner-of-arg', vars: () => ({ jobId: S.serviceJobGid }) },
  'Mutation.openServiceInBrowser': { access: 'owner-of-arg', ownerData: false, vars: () => ({ jobId: S.serviceJobGid }) },
  'Mutation.stopService': { access: 'owner-of-arg', vars: () => ({ jobId: S.serviceJobGid }) },
  'Mutation.revokeApiToken': { access: 'owner-of-arg', ownerData: false, vars: () => ({ id: apiRevokeTarget.id }) },
  'Mutation.rotateWorkerToken': { access: 'owner-of-arg', ownerData: false, vars: () => ({ id: rotateTarget.id }) },
  'Mutation.revokeWorkerToken': { access: 'owner-of-arg', ownerData: false, vars: () => ({ id: revokeTarget.id }) },
  'Mutation.workerHello': {
    access: 'worker',
    vars: (p) => ({
      input: { name: p === 'ownerWorker' ? ownerWorker.name : otherWorker.name, version: '0.1.0', slots: 4, capabilities: {} },
    }),
  },
  'Mutation.claimTask': { access: 'worker-of-lease', ownerData: false, vars: () => ({ workerId: S.workerId, waitMs: 0, max: 1 }) },
  'Mutation.heartbeat': { access: 'worker-of-lease', ownerData: false, vars: () => ({ workerId: S.workerId, leases: [S.live] }) },
  // Before setWorkerPaused (paused: false), which brings the worker back ONLINE.
  'Mutation.drainOwnWorker': { access: 'worker-of-lease', vars: () => ({ workerId: S.workerId }) },
  'Mutation.setWorkerPaused': { access: 'worker-of-lease', vars: () => ({ workerId: S.workerId, paused: false }) },
  // healthy: true keeps it ONLINE for the fields below.
  'Mutation.setWorkerHealth': { access: 'worker-of-lease', vars: () => ({ workerId: S.workerId, healthy: true }) },
  // A file not uploaded for the attempt: its worker is told so; any other caller learns nothing.
  'Mutation.saveCheckpoint': {
    access: 'worker-of-lease',
    vars: () => ({ ...S.live, checkpoint: { files: [{ path: 'checkpoint/state.json', sha256: S.fileSha }], step: 1 } }),
    expect: { ownerWorker: 'ValidationError' },
  },
  // A wrong fencing token (the lease must live on for the fields below): its worker gets StaleAttemptError.
  'Mutation.releaseDrainedAttempt': {
    access: 'worker-of-lease',
    vars: () => ({ attemptId: S.live.attemptId, fencingToken: 'not-the-token' }),
    expect: { ownerWorker: 'StaleAttemptError' },
  },
  'Mutation.appendLogs': {
    access: 'worker-of-lease',
    ownerData: false,
    vars: () => ({ ...S.live, lines: [{ seq: 1, stream: 'stdout', text: 'matrix' }] }),
  },
  'Mutation.reportMetrics': {
    access: 'worker-of-lease',
    ownerData: false,
    vars: () => ({ ...S.live, points: [{ seq: 1, name: 'matrix', value: 1 }] }),
  },
  // Last: it ends the lease the fields above need.
  'Mutation.completeAttempt': { access: 'worker-of-lease', vars: () => ({ ...S.live, result: { exitCode: 0 } }) },
  // After it: the owner's worker gets a refusal of the (now completed) attempt as data; another
  // worker the same per-attempt NOT_FOUND, never the attempt (completeBatch.test.ts covers acceptance).
  'Mutation.completeAttempts': {
    access: 'worker-of-lease',
    ownerData: false,
    vars: () => ({ completions: [{ ...S.live, result: { exitCode: 0 } }] }),
    expect: { otherWorker: 'data' },
  },
};

/** What a principal gets from a field, derived from its access (docs above). */
function expected(name: string, p: P): Outcome {
  const e = FIELDS[name]!;
  const override = e.expect?.[p];
  if (override) return override;
  const workerSide = e.access === 'worker' || e.access === 'worker-of-lease';
  const control = workerSide ? p === 'ownerWorker' : p === 'owner';
  const success: Outcome = e.ownerData === false ? 'data' : 'data+owner';
  if (control) return success;
  if (e.access === 'public') return 'data';
  if (UNAUTH.includes(p)) return 'UNAUTHENTICATED';
  if (workerSide !== WORKERS.includes(p)) return 'FORBIDDEN';
  if (e.access === 'user' || e.access === 'worker') return 'data';
  return name.startsWith('Query.') ? 'null' : name.startsWith('Mutation.') ? 'NotFoundError' : 'NOT_FOUND';
}

/** Whose call is the positive control of a field. */
const isControl = (name: string, p: P) =>
  ['worker', 'worker-of-lease'].includes(FIELDS[name]!.access) ? p === 'ownerWorker' : p === 'owner';

// ---------------------------------------------------------------- generic documents from the schema

/** Every leaf of a type and of its object fields `depth` levels down (fields needing arguments skipped). */
function selection(type: GraphQLOutputType, depth: number): string {
  const named = getNamedType(type);
  if (isLeafType(named)) return '';
  if (isUnionType(named))
    return `{ __typename ${named
      .getTypes()
      .map((t) => `... on ${t.name} ${fieldsOf(t, depth)}`)
      .join(' ')} }`;
  if (isInterfaceType(named)) {
    return `{ __typename ${schema
      .getPossibleTypes(named)
      .map((t) => `... on ${t.name} ${fieldsOf(t, depth)}`)
      .join(' ')} }`;
  }
  return fieldsOf(named as GraphQLObjectType, depth);
}
function fieldsOf(t: GraphQLObjectType | GraphQLInterfaceType, depth: number): string {
  const parts: string[] = [];
  for (const f of Object.values(t.getFields()) as GraphQLField<unknown, unknown>[]) {
    if (f.args.some((a) => isNonNullType(a.type) && a.defaultValue === undefined)) continue;
    // Aliased by type: members of a union may share a field name with another type.
    if (isLeafType(getNamedType(f.type))) parts.push(`${t.name}_${f.name}: ${f.name}`);
    else if (depth > 0) parts.push(`${t.name}_${f.name}: ${f.name} ${selection(f.type, depth - 1)}`);
  }
  return `{ __typename ${parts.join(' ')} }`;
}

const rootTypes = { Query: schema.getQueryType()!, Mutation: schema.getMutationType()!, Subscription: schema.getSubscriptionType()! };
function documentFor(name: string, vars: Record<string, unknown>): string {
  const [root, fieldName] = name.split('.') as [keyof typeof rootTypes, string];
  const field = rootTypes[root].getFields()[fieldName]!;
  const args = field.args.filter((a) => a.name in vars);
  const decl = args.length ? `(${args.map((a) => `$${a.name}: ${String(a.type)}`).join(', ')})` : '';
  const pass = args.length ? `(${args.map((a) => `${a.name}: $${a.name}`).join(', ')})` : '';
  // As deep as the API's depth and cost limits let one request go (the same limits for every principal).
  for (let depth = 3; ; depth--) {
    const doc = `${root.toLowerCase()}${decl} { ${fieldName}${pass} ${selection(field.type, depth)} }`;
    if (depth === 0 || !checkLimits(schema, parse(doc), vars, undefined, api.config.graphql)) return doc;
  }
}

/** The answer of one call, in the table's terms. */
function outcomeOf(fieldName: string, body: { data?: any; errors?: any[] }): Outcome | string {
  const code = body.errors?.[0]?.extensions?.code;
  if (code) return code;
  const v = body.data?.[fieldName];
  if (v === null || v === undefined) return 'null';
  if (typeof v.__typename === 'string' && v.__typename.endsWith('Error')) return v.__typename;
  return hasOwnerData(v) ? 'data+owner' : 'data';
}

/** The owner's rows that no refused call may change. */
async function ownerState() {
  const ownerId = owner.userId;
  return JSON.stringify({
    jobs: await prisma.job.findMany({ where: { ownerId }, orderBy: { id: 'asc' }, select: { id: true, status: true, title: true } }),
    questions: await prisma.question.findMany({
      where: { job: { ownerId } },
      orderBy: { id: 'asc' },
      select: { id: true, status: true, answer: true },
    }),
    workers: await prisma.worker.findMany({ where: { ownerId }, orderBy: { id: 'asc' }, select: { id: true, status: true, name: true } }),
    tasks: await prisma.task.findMany({ where: { ownerId }, orderBy: { id: 'asc' }, select: { id: true, status: true } }),
    attempts: await prisma.attempt.findMany({
      where: { task: { ownerId } },
      orderBy: { id: 'asc' },
      select: { id: true, status: true, leaseExpiresAt: true, fencingToken: true },
    }),
    logs: await prisma.logChunk.count({ where: { attempt: { task: { ownerId } } } }),
    metrics: await prisma.metricPoint.count({ where: { attempt: { task: { ownerId } } } }),
    apiTokens: await prisma.apiToken.findMany({
      where: { userId: ownerId },
      orderBy: { id: 'asc' },
      select: { id: true, revokedAt: true, expiresAt: true },
    }),
    workerTokens: await prisma.workerToken.findMany({
      where: { userId: ownerId },
      orderBy: { id: 'asc' },
      select: { id: true, revokedAt: true, tokenHash: true },
    }),
  });
}

// ---------------------------------------------------------------- the HTTP route expectations

/** An HTTP status per principal: `unauth` for the four that authenticate as nobody. */
function statuses(s: {
  unauth: number;
  otherUser: number;
  operator?: number;
  otherWorker: number;
  ownerWorker: number;
  owner: number;
}): Record<P, number> {
  return {
    anonymous: s.unauth,
    revokedApiToken: s.unauth,
    expiredSession: s.unauth,
    revokedWorkerToken: s.unauth,
    otherUser: s.otherUser,
    operator: s.operator ?? s.otherUser,
    otherWorker: s.otherWorker,
    ownerWorker: s.ownerWorker,
    owner: s.owner,
  };
}
interface RouteCase {
  what: string;
  /** `host`: sent as the Host header (a service's own host), to the same API. */
  request: (p: P) => { method: string; path: string; host?: string; headers?: Record<string, string>; body?: Buffer };
  status: Record<P, number>;
  /** The control's body holds the owner's data (checked unless false). */
  ownerData?: false;
}
/** Keyed `${method} ${route}` for every method of every route in HTTP_ROUTES. */
const ROUTES: Record<string, { cases: RouteCase[] } | { coveredBy: string }> = {
  'GET healthz': {
    cases: [
      {
        what: 'health',
        request: () => ({ method: 'GET', path: '/healthz' }),
        status: statuses({ unauth: 200, otherUser: 200, otherWorker: 200, ownerWorker: 200, owner: 200 }),
        ownerData: false,
      },
    ],
  },
  'GET graphql': {
    cases: [
      {
        what: 'a query over GET',
        request: () => ({
          method: 'GET',
          path: `/graphql?query=${encodeURIComponent('{ jobs { edges { node { title } } } }')}`,
          headers: { 'apollo-require-preflight': 'true' },
        }),
        // Field errors are 200 with `errors` (the field matrix checks their codes).
        status: statuses({ unauth: 200, otherUser: 200, otherWorker: 200, ownerWorker: 200, owner: 200 }),
      },
    ],
  },
  'POST graphql': { coveredBy: 'the Query and Mutation fields below (POST /graphql)' },
  'WS graphql': { coveredBy: 'the Subscription fields below (graphql-ws on /graphql)' },
  'GET blob': {
    cases: [
      {
        what: "the job's code file",
        request: () => ({ method: 'GET', path: `/blobs/${S.fileSha}` }),
        status: statuses({ unauth: 401, otherUser: 404, otherWorker: 404, ownerWorker: 200, owner: 200 }),
      },
      {
        what: 'an evidence bundle',
        request: () => ({ method: 'GET', path: `/blobs/${evidence.sha256}` }),
        status: statuses({ unauth: 401, otherUser: 404, otherWorker: 404, ownerWorker: 404, owner: 200 }),
      },
      {
        what: "an attempt's output",
        request: () => ({ method: 'GET', path: `/blobs/${output.sha256}` }),
        status: statuses({ unauth: 401, otherUser: 404, otherWorker: 404, ownerWorker: 404, owner: 200 }),
      },
    ],
  },
  'HEAD blob': {
    cases: [
      {
        what: "the job's code file",
        request: () => ({ method: 'HEAD', path: `/blobs/${S.fileSha}` }),
        status: statuses({ unauth: 401, otherUser: 404, otherWorker: 404, ownerWorker: 200, owner: 200 }),
        ownerData: false,
      },
    ],
  },
  'PUT blob': {
    cases: [
      {
        what: 'an upload',
        request: (p) => upload(`matrix upload by ${p}`),
        status: statuses({ unauth: 401, otherUser: 201, otherWorker: 201, ownerWorker: 201, owner: 201 }),
        ownerData: false,
      },
      {
        what: "an output of the owner's live attempt (X-ChatGPU-Attempt)",
        request: (p) => upload(`matrix output by ${p}`, { 'x-chatgpu-attempt': S.live.attemptId }),
        status: statuses({ unauth: 401, otherUser: 403, otherWorker: 404, ownerWorker: 201, owner: 403 }),
        ownerData: false,
      },
    ],
  },
  // A worker token is told to send a user token (401), where GraphQL says FORBIDDEN.
  'GET outputsArchive': {
    cases: [
      {
        what: "the owner's job outputs",
        request: () => ({ method: 'GET', path: `/jobs/${S.jobGid}/outputs.tar.gz` }),
        status: statuses({ unauth: 401, otherUser: 404, otherWorker: 401, ownerWorker: 401, owner: 200 }),
        ownerData: false,
      },
    ],
  },
  // A service answers only its own token (cgv_…): none → 401, any other → 403, before any worker.
  // On the API's origin the browser cookie is no credential (401: it is only ever sent to the service's own host).
  'GET service': {
    cases: [
      {
        what: "the owner's service, the owner with its token",
        request: (p) => serviceRequest(p, 'GET'),
        get status() {
          return serviceStatuses();
        },
        ownerData: false,
      },
      {
        what: "the owner's service, the owner with its browser cookie",
        request: (p) => serviceRequest(p, 'GET', 'cookie'),
        get status() {
          return { ...serviceStatuses(), owner: 401 };
        },
        ownerData: false,
      },
    ],
  },
  'POST service': {
    cases: [
      {
        what: "the owner's service, the owner with its token",
        request: (p) => serviceRequest(p, 'POST'),
        get status() {
          return serviceStatuses();
        },
        ownerData: false,
      },
    ],
  },
  // On its own host: the token or the cookie; the cookie sent by another site's page (fetch metadata) → 403.
  'GET serviceHost': {
    cases: [
      {
        what: "the owner's service, the owner with its token",
        request: (p) => serviceRequest(p, 'GET', 'token', serviceHost),
        get status() {
          return serviceStatuses();
        },
        ownerData: false,
      },
      {
        what: "the owner's service, the owner with its browser cookie",
        request: (p) => serviceRequest(p, 'GET', 'cookie', serviceHost),
        get status() {
          return serviceStatuses();
        },
        ownerData: false,
      },
      {
        what: "the owner's service, its cookie sent by another site's page",
        request: (p) => serviceRequest(p, 'GET', 'cross-site cookie', serviceHost),
        get status() {
          return { ...serviceStatuses(), owner: 403 };
        },
        ownerData: false,
      },
      {
        what: "the dashboard's paths on a service host are the service's",
        request: (p) => ({ ...serviceRequest(p, 'GET', 'token', serviceHost), path: '/graphql' }),
        get status() {
          return serviceStatuses();
        },
        ownerData: false,
      },
    ],
  },
  'POST serviceHost': {
    cases: [
      {
        what: "the owner's service, the owner with its token",
        request: (p) => serviceRequest(p, 'POST', 'token', serviceHost),
        get status() {
          return serviceStatuses();
        },
        ownerData: false,
      },
      {
        what: "the owner's service, its cookie in another site's form post",
        request: (p) => serviceRequest(p, 'POST', 'cross-site cookie', serviceHost),
        get status() {
          return { ...serviceStatuses(), owner: 403 };
        },
        ownerData: false,
      },
    ],
  },
  'GET serviceTunnel': {
    cases: [
      {
        what: 'without the WebSocket upgrade',
        request: () => ({ method: 'GET', path: '/svc-tunnel' }),
        status: statuses({ unauth: 426, otherUser: 426, otherWorker: 426, ownerWorker: 426, owner: 426 }),
        ownerData: false,
      },
    ],
  },
  // Only the worker token holding the SERVICE attempt, with its fencing token, opens the tunnel
  // (101); users and unknown tokens 401, another worker's token 404, a wrong fencing token 409.
  'WS serviceTunnel': {
    cases: [
      {
        what: "the owner's SERVICE attempt with its fencing token",
        request: () => tunnelUpgrade(serviceAttempt.attemptId, serviceAttempt.fencingToken),
        status: statuses({ unauth: 401, otherUser: 401, otherWorker: 404, ownerWorker: 101, owner: 401 }),
        ownerData: false,
      },
      {
        what: "the owner's SERVICE attempt with a wrong fencing token",
        request: () => tunnelUpgrade(serviceAttempt.attemptId, randomBytes(16).toString('hex')),
        status: statuses({ unauth: 401, otherUser: 401, otherWorker: 404, ownerWorker: 409, owner: 401 }),
        ownerData: false,
      },
      {
        what: 'a live attempt that is not a SERVICE',
        request: () => tunnelUpgrade(S.live.attemptId, S.live.fencingToken),
        status: statuses({ unauth: 401, otherUser: 401, otherWorker: 404, ownerWorker: 404, owner: 401 }),
        ownerData: false,
      },
    ],
  },
  // Public by design: static files of the built dashboard; no data.
  'GET dashboard': {
    cases: [
      {
        what: 'a client-side route',
        request: () => ({ method: 'GET', path: '/jobs/anything' }),
        status: statuses({ unauth: 200, otherUser: 200, otherWorker: 200, ownerWorker: 200, owner: 200 }),
        ownerData: false,
      },
    ],
  },
  'HEAD dashboard': {
    cases: [
      {
        what: 'index.html',
        request: () => ({ method: 'HEAD', path: '/' }),
        status: statuses({ unauth: 200, otherUser: 200, otherWorker: 200, ownerWorker: 200, owner: 200 }),
        ownerData: false,
      },
    ],
  },
};

/**
 * The owner calls with the service's token or cookie (the control: 503, nothing serves it);
 * everyone else with their own. With `host`: on the service's own host, at its root.
 */
function serviceRequest(
  p: P,
  method: string,
  cred: 'token' | 'cookie' | 'cross-site cookie' = 'token',
  host?: string,
): ReturnType<RouteCase['request']> {
  const headers: Record<string, string> =
    p !== 'owner'
      ? {}
      : cred === 'token'
        ? { authorization: `Bearer ${serviceToken}` }
        : {
            authorization: '',
            cookie: serviceCookie,
            'sec-fetch-site': cred === 'cookie' ? 'same-origin' : 'cross-site',
            'sec-fetch-mode': cred === 'cookie' ? 'cors' : method === 'POST' ? 'navigate' : 'no-cors',
          };
  return {
    method,
    path: host ? '/x' : `/svc/${service.slug}/x`,
    ...(host ? { host } : {}),
    headers,
    ...(method === 'POST' ? { body: Buffer.from('{}') } : {}),
  };
}
function serviceStatuses(): Record<P, number> {
  return { ...statuses({ unauth: 403, otherUser: 403, otherWorker: 403, ownerWorker: 403, owner: 503 }), anonymous: 401 };
}

/** The tunnel's WebSocket upgrade (method WS: see `http`), naming an attempt and a fencing token. */
function tunnelUpgrade(attemptId: string, fencingToken: string): ReturnType<RouteCase['request']> {
  return { method: 'WS', path: '/svc-tunnel', headers: { 'x-chatgpu-attempt': attemptId, 'x-chatgpu-fencing-token': fencingToken } };
}

function upload(content: string, headers: Record<string, string> = {}) {
  const body = Buffer.from(`${content} ${randomBytes(4).toString('hex')}`);
  return {
    method: 'PUT',
    path: `/blobs/${createHash('sha256').update(body).digest('hex')}`,
    headers: { 'content-type': 'application/octet-stream', ...headers },
    body,
  };
}

async function http(p: P, req: ReturnType<RouteCase['request']>): Promise<{ status: number; body: Buffer }> {
  const token = TOKENS[p];
  if (req.method === 'WS') return upgrade(token, req);
  if (req.host) {
    const r = await hostFetch(`http://${req.host}${req.path}`, {
      method: req.method,
      headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...req.headers },
      ...(req.body ? { body: req.body } : {}),
    });
    return { status: r.status, body: Buffer.from(r.text, 'latin1') };
  }
  const res = await fetch(`${api.url}${req.path}`, {
    method: req.method,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...req.headers },
    ...(req.body ? { body: new Uint8Array(req.body) } : {}),
  });
  return { status: res.status, body: Buffer.from(await res.arrayBuffer()) };
}

/** A WebSocket upgrade request: 101 (the socket is closed at once) or the refusal's status. */
function upgrade(token: string | undefined, req: ReturnType<RouteCase['request']>): Promise<{ status: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const out = httpRequest(`${api.url}${req.path}`, {
      headers: {
        connection: 'Upgrade',
        upgrade: 'websocket',
        'sec-websocket-version': '13',
        'sec-websocket-key': randomBytes(16).toString('base64'),
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...req.headers,
      },
    });
    out.on('upgrade', (res, socket) => {
      socket.destroy();
      resolve({ status: res.statusCode ?? 0, body: Buffer.alloc(0) });
    });
    out.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
    });
    out.on('error', reject);
    out.end();
  });
}

// ---------------------------------------------------------------- the matrix

/** Mismatches, reported together so one run names every cell that is wrong. */
type Cell = { principal: P; expected: string; got: string; leak?: true };

async function callField(name: string, p: P): Promise<Cell & { body: unknown }> {
  const vars = FIELDS[name]!.vars?.(p) ?? {};
  const doc = documentFor(name, vars);
  const fieldName = name.split('.')[1]!;
  let body: { data?: any; errors?: any[] };
  if (name.startsWith('Subscription.')) body = await subscriptionAnswer(p, doc, vars);
  else body = await api.gql(doc, vars, TOKENS[p]);
  return { principal: p, expected: expected(name, p), got: outcomeOf(fieldName, body), body };
}

/**
 * A subscription's first answer. A refused one ends with an error; an accepted one
 * (jobUpdated/jobEvents of one's own job) sends its current state or replay first.
 * workersChanged sends nothing until a worker changes: see its own test below.
 */
async function subscriptionAnswer(p: P, doc: string, vars: Record<string, unknown>) {
  const s = subscribe(api.url, TOKENS[p], doc, vars);
  try {
    await s.first;
    return s.errors.length ? { errors: s.errors } : { data: s.results[0] };
  } finally {
    await s.close();
  }
}

function check(cells: (Cell & { body?: unknown })[], controlOf: (p: P) => boolean) {
  const wrong: Cell[] = [];
  for (const c of cells) {
    if (c.got !== c.expected) wrong.push({ principal: c.principal, expected: c.expected, got: c.got });
    // Nothing of the owner's reaches another principal, not even in an error's message.
    else if (!controlOf(c.principal) && c.expected !== 'data+owner' && hasOwnerData(c.body))
      wrong.push({ principal: c.principal, expected: c.expected, got: 'owner data in the answer', leak: true });
  }
  return wrong;
}

describe('authorization matrix: coverage', () => {
  it('every Query, Mutation and Subscription field of schema.graphql has an entry, and every entry a field', () => {
    const fields = Object.entries(rootTypes).flatMap(([root, t]) => Object.keys(t.getFields()).map((f) => `${root}.${f}`));
    const missing = fields.filter((f) => !(f in FIELDS)).sort();
    const stale = Object.keys(FIELDS)
      .filter((f) => !fields.includes(f))
      .sort();
    expect(
      { missing, stale },
      'add each missing field to FIELDS in api/test/authzMatrix.test.ts (who may call it); drop stale ones',
    ).toEqual({ missing: [], stale: [] });
  });

  it('every method of every route in HTTP_ROUTES has an entry, and every entry a route', () => {
    const routes = Object.entries(HTTP_ROUTES).flatMap(([name, r]) => r.methods.map((m) => `${m} ${name}`));
    const missing = routes.filter((r) => !(r in ROUTES)).sort();
    const stale = Object.keys(ROUTES)
      .filter((r) => !routes.includes(r))
      .sort();
    expect({ missing, stale }, 'add each missing route to ROUTES in api/test/authzMatrix.test.ts; drop stale ones').toEqual({
      missing: [],
      stale: [],
    });
  });

  it('the router names no path outside HTTP_ROUTES (server.ts and api/src/http/*)', async () => {
    const files = [
      'api/src/server.ts',
      ...(await readdir(path.join(ROOT, 'api/src/http')))
        .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && f !== 'routes.ts')
        .map((f) => `api/src/http/${f}`),
    ];
    const patterns = Object.entries(HTTP_ROUTES)
      .filter(([n]) => n !== 'dashboard')
      .map(([, r]) => r.pattern);
    const strays: string[] = [];
    for (const f of files) {
      const code = (await readFile(path.join(ROOT, f), 'utf8')).replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
      // A quoted absolute path ('/x…') must be a route's path; a regex literal on a path must be a route's pattern.
      for (const m of code.matchAll(/['"`](\/[A-Za-z][^'"`\s?]*)['"`]/g))
        if (!patterns.some((re) => re.test(m[1]!))) strays.push(`${f}: '${m[1]}'`);
      for (const m of code.matchAll(/\/\^\\\/[^\n]*?\$\//g))
        if (!patterns.some((re) => `/${re.source}/` === m[0])) strays.push(`${f}: ${m[0]}`);
    }
    expect(strays, 'route these through HTTP_ROUTES (api/src/http/routes.ts)').toEqual([]);
  });
});

describe('authorization matrix: HTTP routes', () => {
  for (const [key, entry] of Object.entries(ROUTES)) {
    if ('coveredBy' in entry) {
      it(`${key}: covered by ${entry.coveredBy}`, () => {
        const root = key.startsWith('WS') ? 'Subscription.' : 'Query.';
        expect(Object.keys(FIELDS).some((f) => f.startsWith(root))).toBe(true);
      });
      continue;
    }
    for (const c of entry.cases) {
      it(`${key} (${c.what}) as each principal`, async () => {
        const before = await ownerState();
        const others = PRINCIPALS.filter((p) => p !== 'owner');
        const cells = await Promise.all(
          others.map(async (p) => {
            const r = await http(p, c.request(p));
            return { principal: p, expected: String(c.status[p]), got: String(r.status), body: r.body.toString('latin1') };
          }),
        );
        // The worker holding the lease reads what its lease needs: its control, not a leak.
        expect(check(cells, (p) => p === 'ownerWorker' && c.status[p] < 300)).toEqual([]);
        expect(await ownerState()).toBe(before);
        const control = await http('owner', c.request('owner'));
        expect(control.status).toBe(c.status.owner);
        if (c.status.owner < 300 && c.ownerData !== false) expect(hasOwnerData(control.body.toString('latin1'))).toBe(true);
      });
    }
  }
});

describe('authorization matrix: GraphQL fields', () => {
  const order = Object.keys(FIELDS).filter((f) => f !== 'Subscription.workersChanged');
  for (const name of order) {
    it(`${name} (${FIELDS[name]!.access}) as each principal`, async () => {
      // Everyone else first, all at once: refused (or answered about themselves), the owner's rows unchanged…
      const before = await ownerState();
      const cells = await Promise.all(PRINCIPALS.filter((p) => !isControl(name, p)).map((p) => callField(name, p)));
      expect(check(cells, () => false)).toEqual([]);
      expect(await ownerState()).toBe(before);
      // …then the positive control gets the data.
      const control = PRINCIPALS.find((p) => isControl(name, p))!;
      expect(check([await callField(name, control)], () => true)).toEqual([]);
    });
  }

  it('Subscription.workersChanged (user) as each principal: the owner sees their worker change, others only their own', async () => {
    const doc = documentFor('Subscription.workersChanged', {});
    const subs = Object.fromEntries(PRINCIPALS.map((p) => [p, subscribe(api.url, TOKENS[p], doc)])) as Record<
      P,
      ReturnType<typeof subscribe>
    >;
    try {
      // Refused ones end with their error at once.
      for (const p of [...UNAUTH, ...WORKERS]) {
        await subs[p].first;
        expect({ p, code: subs[p].errors[0]?.extensions?.code, results: subs[p].results }).toEqual({
          p,
          code: expected('Subscription.workersChanged', p),
          results: [],
        });
      }
      // Each user's own worker, changed until their subscription is live and has seen it.
      const own: [P, string, string][] = [
        ['owner', owner.token, S.workerGid],
        ['otherUser', other.token, workerGid(otherWorker.workerId)],
        ['operator', operator.token, workerGid(operatorWorker.workerId)],
      ];
      const change = (token: string, id: string) => api.gql(`mutation($id: ID!) { resumeWorker(id: $id) { __typename } }`, { id }, token);
      for (const [p, token, id] of own) {
        while (subs[p].results.length === 0) {
          await change(token, id);
          await subs[p].until((r) => r.length > 0, 2_000).catch(() => {});
        }
      }
      // The owner's worker changes; then each other user's own does. Events arrive in order,
      // so once another user has seen their own change, they have been passed the owner's.
      const seen = Object.fromEntries(own.map(([p]) => [p, subs[p].results.length])) as Record<P, number>;
      await change(owner.token, S.workerGid);
      await subs.owner.until((r) => r.length > seen.owner);
      for (const [p, token, id] of own.slice(1)) {
        await change(token, id);
        await subs[p].until((r) => r.length > seen[p]);
        expect(hasOwnerData(subs[p].results), `${p} saw the owner's worker`).toBe(false);
        expect(subs[p].errors).toEqual([]);
      }
      expect(hasOwnerData(subs.owner.results.at(-1))).toBe(true);
    } finally {
      for (const s of Object.values(subs)) await s.close();
    }
  });
});

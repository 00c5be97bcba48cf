/**
 * Invariant 7: every query, mutation, subscription and blob route tried as anonymous,
 * as another user and as a worker token — no leak, typed errors.
 */
import { describe, expect, it } from 'vitest';
import { sha256, startTestApi } from './helpers/api.js';
import { subscribe } from './helpers/ws.js';

const api = await startTestApi();
const owner = await api.signUp();
const other = await api.signUp();
const wt = await api.gql(`mutation { createWorkerToken(input: {name: "w"}) { ... on CreatedWorkerToken { token } } }`, {}, owner.token);
const workerToken: string = wt.data.createWorkerToken.token;
const put = await api.putBlob('owner file', owner.token);
const jobRes = await api.gql(
  `mutation($i: CreateJobInput!) { createJob(input: $i) { ... on Job { id } } }`,
  { i: { title: 'secret job', request: 'x', files: [{ path: 'a.py', sha256: put.sha256 }] } },
  owner.token,
);
const jobId: string = jobRes.data.createJob.id;
const w = await api.server.db.prisma.worker.create({
  data: {
    ownerId: owner.userId,
    tokenId: (await api.server.db.prisma.workerToken.findFirstOrThrow()).id,
    name: 'box',
    workloads: ['shell'],
  },
});
const workerGid = Buffer.from(`Worker:${w.id}`).toString('base64');
const q = await api.server.db.prisma.question.create({
  data: { jobId: (await api.server.db.prisma.job.findFirstOrThrow()).id, text: 'Which?', choices: ['a', 'b'] },
});

type Who = 'anonymous' | 'other user' | 'worker token';
const callers: [Who, string | undefined][] = [
  ['anonymous', undefined],
  ['other user', other.token],
  ['worker token', workerToken],
];

const reads: [string, string, Record<string, unknown>, (d: any) => void][] = [
  ['job(id)', `query($id: ID!) { job(id: $id) { title } }`, { id: jobId }, (d) => expect(d?.job ?? null).toBeNull()],
  ['node(id) of a job', `query($id: ID!) { node(id: $id) { id } }`, { id: jobId }, (d) => expect(d?.node ?? null).toBeNull()],
  ['jobs', `{ jobs { totalCount edges { node { title } } } }`, {}, (d) => expect(d?.jobs?.totalCount ?? 0).toBe(0)],
  ['worker(id)', `query($id: ID!) { worker(id: $id) { name } }`, { id: workerGid }, (d) => expect(d?.worker ?? null).toBeNull()],
  ['node(id) of a worker', `query($id: ID!) { node(id: $id) { id } }`, { id: workerGid }, (d) => expect(d?.node ?? null).toBeNull()],
  ['workers', `{ workers { totalCount } }`, {}, (d) => expect(d?.workers?.totalCount ?? 0).toBe(0)],
  ['me', `{ me { email } }`, {}, (d) => expect(d?.me?.email).not.toBe(owner.email)],
];

const writes: [string, string, Record<string, unknown>][] = [
  ['cancelJob', `mutation($id: ID!) { cancelJob(id: $id) { __typename } }`, { id: jobId }],
  [
    'answerQuestion',
    `mutation($i: AnswerQuestionInput!) { answerQuestion(input: $i) { __typename } }`,
    { i: { questionId: q.id, answer: 'a' } },
  ],
  ['pauseWorker', `mutation($id: ID!) { pauseWorker(id: $id) { __typename } }`, { id: workerGid }],
  ['resumeWorker', `mutation($id: ID!) { resumeWorker(id: $id) { __typename } }`, { id: workerGid }],
  [
    'createJob',
    `mutation($i: CreateJobInput!) { createJob(input: $i) { __typename } }`,
    { i: { title: 't', request: 'r', files: [{ path: 'a', sha256: put.sha256 }] } },
  ],
  ['createApiToken', `mutation { createApiToken(input: {name: "x"}) { __typename } }`, {}],
  ['createWorkerToken', `mutation { createWorkerToken(input: {name: "x"}) { __typename } }`, {}],
];

describe('authorization matrix', () => {
  for (const [who, token] of callers) {
    for (const [name, query, vars, expectNoLeak] of reads) {
      it(`${name} as ${who}: no leak`, async () => {
        const r = await api.gql(query, vars, token);
        expectNoLeak(r.data);
        expect(JSON.stringify(r)).not.toContain('secret job');
        for (const e of r.errors ?? []) expect(['UNAUTHENTICATED', 'FORBIDDEN', 'NOT_FOUND']).toContain(e.extensions.code);
        if (who !== 'other user' && name !== 'me' && !name.startsWith('node'))
          expect(r.errors?.[0]?.extensions.code).toBe(who === 'anonymous' ? 'UNAUTHENTICATED' : 'FORBIDDEN');
      });
    }
    for (const [name, query, vars] of writes) {
      it(`${name} as ${who}: refused with a typed error, nothing changes`, async () => {
        const before = JSON.stringify(await state());
        const r = await api.gql(query, vars, token);
        const typename = r.data?.[name]?.__typename;
        if (who === 'other user' && ['createJob'].includes(name)) expect(typename).toBe('NotFoundError');
        else if (who === 'other user' && ['createApiToken', 'createWorkerToken'].includes(name)) expect(typename).toMatch(/^Created/);
        else if (who === 'other user') expect(typename).toBe('NotFoundError');
        else expect(r.errors?.[0]?.extensions.code).toBe(who === 'anonymous' ? 'UNAUTHENTICATED' : 'FORBIDDEN');
        if (!(who === 'other user' && name.startsWith('create') && name !== 'createJob'))
          expect(JSON.stringify(await state())).toBe(before);
      });
    }
    it(`subscriptions as ${who}: jobEvents, jobUpdated and workersChanged reveal nothing`, async () => {
      const subs = [
        subscribe(api.url, token, `subscription($id: ID!) { jobEvents(jobId: $id) { __typename } }`, { id: jobId }),
        subscribe(api.url, token, `subscription($id: ID!) { jobUpdated(id: $id) { title } }`, { id: jobId }),
        subscribe(api.url, token, `subscription { workersChanged { name } }`),
      ];
      await Promise.all(subs.slice(0, 2).map((s) => s.first));
      // Cause events the owner would see.
      await api.gql(`mutation($id: ID!) { pauseWorker(id: $id) { __typename } }`, { id: workerGid }, owner.token);
      await api.gql(`mutation($id: ID!) { resumeWorker(id: $id) { __typename } }`, { id: workerGid }, owner.token);
      await new Promise((r) => setTimeout(r, 300));
      for (const s of subs.slice(0, 2)) {
        expect(s.results).toEqual([]);
        expect(['UNAUTHENTICATED', 'FORBIDDEN', 'NOT_FOUND']).toContain(s.errors[0]?.extensions?.code);
      }
      if (who === 'other user') expect(subs[2]!.results).toEqual([]);
      else {
        await subs[2]!.first;
        expect(subs[2]!.errors[0]?.extensions?.code).toBe(who === 'anonymous' ? 'UNAUTHENTICATED' : 'FORBIDDEN');
      }
      for (const s of subs) await s.close();
    });
    it(`blob routes as ${who}`, async () => {
      const got = await api.getBlob(put.sha256, token);
      expect(got.status).toBe(who === 'anonymous' ? 401 : 404);
      expect(got.bytes.toString()).not.toContain('owner file');
    });
  }

  it('the owner sees everything of their own', async () => {
    expect((await api.gql(`query($id: ID!) { job(id: $id) { title } }`, { id: jobId }, owner.token)).data.job.title).toBe('secret job');
    expect((await api.gql(`query($id: ID!) { node(id: $id) { ... on Job { title } } }`, { id: jobId }, owner.token)).data.node.title).toBe(
      'secret job',
    );
    expect((await api.gql(`{ workers { totalCount } }`, {}, owner.token)).data.workers.totalCount).toBe(1);
    expect((await api.getBlob(put.sha256, owner.token)).status).toBe(200);
    expect(sha256('owner file')).toBe(put.sha256);
  });
});

async function state() {
  const p = api.server.db.prisma;
  return {
    jobs: await p.job.findMany({ orderBy: { id: 'asc' } }),
    workers: await p.worker.findMany({ orderBy: { id: 'asc' }, select: { id: true, status: true } }),
    questions: await p.question.findMany({ orderBy: { id: 'asc' } }),
    tokens: await p.apiToken.count({ where: { kind: 'API' } }),
    workerTokens: await p.workerToken.count(),
  };
}

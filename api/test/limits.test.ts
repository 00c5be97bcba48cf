import { describe, expect, it } from 'vitest';
import { startTestApi } from './helpers/api.js';
import { subscribe } from './helpers/ws.js';

const api = await startTestApi({ GRAPHQL_MAX_DEPTH: '4', GRAPHQL_MAX_COST: '300' });
const u = await api.signUp();

describe('query limits and malformed input', () => {
  it('refuses an over-deep query, over HTTP and over WebSocket', async () => {
    const deep = `{ jobs { edges { node { tasks { attempts { logs { text } } } } } } }`;
    const r = await api.gql(deep, {}, u.token);
    expect(r.errors?.[0]?.extensions.code).toBe('QUERY_TOO_DEEP');
    expect(r.status).toBe(400); // the client's error, not the server's
    expect(r.data).toBeUndefined();
    const frag = `fragment F on Job { tasks { attempts { logs { text } } } } { jobs { edges { node { ...F } } } }`;
    expect((await api.gql(frag, {}, u.token)).errors?.[0]?.extensions.code).toBe('QUERY_TOO_DEEP');
    const s = subscribe(api.url, u.token, `subscription($id: ID!) { jobUpdated(id: $id) { tasks { attempts { logs { text } } } } }`, {
      id: 'x',
    });
    await s.first;
    expect(s.errors[0]?.extensions?.code ?? s.errors[0]?.message).toMatch(/QUERY_TOO_DEEP|too deep/);
    await s.close();
  });

  it('refuses an over-costly query', async () => {
    const r = await api.gql(`{ jobs(first: 100) { edges { node { title status } } } }`, {}, u.token);
    expect(r.errors?.[0]?.extensions.code).toBe('QUERY_TOO_COSTLY');
    expect(r.status).toBe(400);
    const ok = await api.gql(`{ jobs(first: 5) { totalCount } }`, {}, u.token);
    expect(ok.errors).toBeUndefined();
  });

  it("keeps a document's cost from one request to the next only when no variable changes it", async () => {
    // The same text twice: the second is answered from the kept cost, and refused alike.
    const costly = `{ jobs(first: 100) { edges { node { title status } } } }`;
    for (let i = 0; i < 2; i++) expect((await api.gql(costly, {}, u.token)).errors?.[0]?.extensions.code).toBe('QUERY_TOO_COSTLY');
    // A page size from a variable: a cheap request first, then the same text with a costly one.
    const paged = `query($n: Int) { jobs(first: $n) { edges { node { title status } } } }`;
    expect((await api.gql(paged, { n: 5 }, u.token)).errors).toBeUndefined();
    const big = await api.gql(paged, { n: 100 }, u.token);
    expect(big.errors?.[0]?.extensions.code).toBe('QUERY_TOO_COSTLY');
    expect(big.status).toBe(400);
    // A directive's variable decides whether a costly field counts.
    const gated = `query($all: Boolean!) { jobs(first: 5) { totalCount } all: jobs(first: 100) @include(if: $all) { edges { node { title status } } } }`;
    expect((await api.gql(gated, { all: false }, u.token)).errors).toBeUndefined();
    expect((await api.gql(gated, { all: true }, u.token)).errors?.[0]?.extensions.code).toBe('QUERY_TOO_COSTLY');
    // Variables that do not fit their types, after the same text passed: still the client's error.
    const byId = `query($id: ID!) { job(id: $id) { id } }`;
    expect((await api.gql(byId, { id: 'x' }, u.token)).errors).toBeUndefined();
    const wrong = await api.gql(byId, { id: { nested: true } }, u.token);
    expect(wrong.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
    expect(wrong.status).toBe(400);
  });

  it('treats malformed ids as not found, never as an internal error', async () => {
    for (const id of [
      '',
      'garbage',
      '!!!',
      Buffer.from('Job:not-a-uuid').toString('base64'),
      Buffer.from('Worker:00000000-0000-0000-0000-000000000001').toString('base64'),
    ]) {
      const r = await api.gql(`query($id: ID!) { job(id: $id) { id } node(id: $id) { id } }`, { id }, u.token);
      expect(r.errors).toBeUndefined();
      expect(r.data).toEqual({ job: null, node: null });
      const c = await api.gql(`mutation($id: ID!) { cancelJob(id: $id) { __typename ... on NotFoundError { message } } }`, { id }, u.token);
      expect(c.data.cancelJob.__typename).toBe('NotFoundError');
      const a = await api.gql(
        `mutation($i: AnswerQuestionInput!) { answerQuestion(input: $i) { __typename } }`,
        { i: { questionId: id, answer: 'x' } },
        u.token,
      );
      expect(a.data.answerQuestion.__typename).toBe('NotFoundError');
    }
  });

  it('gives typed errors for bad JSON, wrong variable types and unknown fields, without stack traces', async () => {
    const res = await fetch(`${api.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"query": ' });
    expect(res.status).toBe(400);
    const wrongType = await api.gql(`query($id: ID!) { job(id: $id) { id } }`, { id: { nested: true } }, u.token);
    expect(wrongType.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
    const unknown = await api.gql(`{ nope }`, {}, u.token);
    expect(unknown.errors?.[0]?.extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
    for (const r of [wrongType, unknown]) expect(JSON.stringify(r)).not.toMatch(/stacktrace|at .*\.ts:\d+/);
    const health = await fetch(`${api.url}/healthz`);
    expect(await health.json()).toEqual({ ok: true, database: 'postgres' });
  });
});

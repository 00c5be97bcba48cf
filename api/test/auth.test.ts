import { createClient } from 'graphql-ws';
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startTestApi } from './helpers/api.js';
import { createJobWithFile } from './helpers/protocolClient.js';

const api = await startTestApi();

const SIGN_UP = `mutation($i: SignUpInput!) { signUp(input: $i) {
  __typename ... on AuthPayload { token user { id email } }
  ... on ValidationError { message issues { path message } } ... on ConflictError { message } } }`;
const LOG_IN = `mutation($i: LogInInput!) { logIn(input: $i) {
  __typename ... on AuthPayload { token user { email } } ... on AuthenticationError { message code } } }`;

describe('auth', () => {
  it('signs up, logs in, and knows who is calling', async () => {
    const r = await api.gql(SIGN_UP, { i: { email: '  Ada@Example.com ', password: 'a long password' } });
    expect(r.data.signUp.__typename).toBe('AuthPayload');
    expect(r.data.signUp.user.email).toBe('ada@example.com');
    const me = await api.gql('{ me { email } }', {}, r.data.signUp.token);
    expect(me.data.me.email).toBe('ada@example.com');

    const login = await api.gql(LOG_IN, { i: { email: 'ada@example.com', password: 'a long password' } });
    expect(login.data.logIn.__typename).toBe('AuthPayload');
    expect(login.data.logIn.token).not.toBe(r.data.signUp.token);
    expect((await api.gql('{ me { email } }', {}, login.data.logIn.token)).data.me.email).toBe('ada@example.com');
    expect((await api.gql('{ me { email } }')).data.me).toBeNull();
  });

  it('refuses a taken email, a short password, a bad email and a wrong password with typed errors', async () => {
    await api.gql(SIGN_UP, { i: { email: 'bob@example.com', password: 'a long password' } });
    const dup = await api.gql(SIGN_UP, { i: { email: 'BOB@example.com', password: 'another password' } });
    expect(dup.data.signUp.__typename).toBe('ConflictError');
    const short = await api.gql(SIGN_UP, { i: { email: 'carol@example.com', password: 'short' } });
    expect(short.data.signUp.__typename).toBe('ValidationError');
    expect(short.data.signUp.issues[0].message).toMatch(/at least 8/);
    const bad = await api.gql(SIGN_UP, { i: { email: 'not-an-email', password: 'a long password' } });
    expect(bad.data.signUp.__typename).toBe('ValidationError');
    const wrong = await api.gql(LOG_IN, { i: { email: 'bob@example.com', password: 'nope nope nope' } });
    expect(wrong.data.logIn).toMatchObject({ __typename: 'AuthenticationError', code: 'UNAUTHENTICATED' });
    const unknown = await api.gql(LOG_IN, { i: { email: 'nobody@example.com', password: 'nope nope nope' } });
    expect(unknown.data.logIn.__typename).toBe('AuthenticationError');
    const count = await api.server.db.prisma.user.count({ where: { email: { in: ['carol@example.com', 'not-an-email'] } } });
    expect(count).toBe(0);
  });

  it('creates API and worker tokens that are stored hashed and can be revoked', async () => {
    const u = await api.signUp();
    const t = await api.gql(
      `mutation { createApiToken(input: { name: "ci" }) { __typename ... on CreatedApiToken { token apiToken { id name prefix } } } }`,
      {},
      u.token,
    );
    const token: string = t.data.createApiToken.token;
    expect(token).toMatch(/^cgu_/);
    expect(token.startsWith(t.data.createApiToken.apiToken.prefix)).toBe(true);
    expect((await api.gql('{ me { email apiTokens { name } } }', {}, token)).data.me.apiTokens.map((x: any) => x.name)).toEqual(['ci']);
    const stored = await api.server.db.prisma.apiToken.findMany({ where: { userId: u.userId } });
    for (const s of stored) expect(s.tokenHash).not.toContain(token.slice(4, 20));
    expect(JSON.stringify(stored)).not.toContain(token);

    const w = await api.gql(
      `mutation { createWorkerToken(input: { name: "my box" }) { __typename ... on CreatedWorkerToken { token command workerToken { name } } } }`,
      {},
      u.token,
    );
    expect(w.data.createWorkerToken.token).toMatch(/^cgw_/);
    expect(w.data.createWorkerToken.command).toContain(w.data.createWorkerToken.token);
    expect(JSON.stringify(await api.server.db.prisma.workerToken.findMany())).not.toContain(w.data.createWorkerToken.token);

    const rev = await api.gql(
      `mutation($id: ID!) { revokeApiToken(id: $id) { __typename } }`,
      { id: t.data.createApiToken.apiToken.id },
      u.token,
    );
    expect(rev.data.revokeApiToken.__typename).toBe('MutationRevokeApiTokenSuccess');
    expect((await api.gql('{ me { email } }', {}, token)).data.me).toBeNull();
    const empty = await api.gql(`mutation { createApiToken(input: { name: "  " }) { __typename } }`, {}, u.token);
    expect(empty.data.createApiToken.__typename).toBe('ValidationError');
  });
});

describe('worker tokens: rotation and revocation take effect on the very next call', () => {
  const WT = `mutation($n: String!) { createWorkerToken(input: { name: $n }) { __typename ... on CreatedWorkerToken { token command workerToken { id prefix } } } }`;
  const ROTATE = `mutation($id: ID!) { rotateWorkerToken(id: $id) { __typename
    ... on CreatedWorkerToken { token command workerToken { id prefix } } ... on NotFoundError { code message entity } } }`;
  const REVOKE = `mutation($id: ID!) { revokeWorkerToken(id: $id) { __typename ... on NotFoundError { code message entity } } }`;
  const HELLO = `mutation { workerHello(input: { name: "box", version: "1", slots: 1, capabilities: {} }) { __typename ... on WorkerHelloResult { workerId } } }`;
  const helloWith = async (token: string) => {
    const r = await api.gql(HELLO, {}, token);
    return r.data?.workerHello?.__typename ?? r.errors?.[0]?.extensions?.code;
  };

  it('the start command carries the token in the environment, never as an argument', async () => {
    const u = await api.signUp();
    const w = (await api.gql(WT, { n: 'cmd' }, u.token)).data.createWorkerToken;
    expect(w.command).toBe(`CHATGPU_WORKER_TOKEN=${w.token} npx chatgpu-worker --server ${api.server.resources.baseUrl}`);
    expect(w.command).not.toContain('--token');
  });

  it('rotate: a new secret once (stored hashed); the old one is refused at once, over HTTP, blobs and WebSocket', async () => {
    const u = await api.signUp();
    const created = (await api.gql(WT, { n: 'rotating' }, u.token)).data.createWorkerToken;
    expect(await helloWith(created.token)).toBe('WorkerHelloResult');
    const ws = createClient({
      url: api.url.replace(/^http/, 'ws') + '/graphql',
      webSocketImpl: WebSocket,
      connectionParams: { authorization: `Bearer ${u.token}` },
      retryAttempts: 0,
      lazy: false,
    });
    const job = await createJobWithFile(api, u.token);
    // jobUpdated sends the job's current state first: data = accepted, errors = refused.
    const subscribeOnce = () =>
      new Promise<string>((resolve) => {
        const stop = ws.subscribe(
          { query: 'subscription($id: ID!) { jobUpdated(id: $id) { id } }', variables: { id: job.gid } },
          {
            next: (v) => {
              stop();
              resolve(v.errors ? JSON.stringify(v.errors) : v.data ? 'accepted' : 'empty');
            },
            error: (e) => resolve(JSON.stringify(e)),
            complete: () => resolve('complete'),
          },
        );
      });
    try {
      expect(await subscribeOnce()).toBe('accepted');
      const r = (await api.gql(ROTATE, { id: created.workerToken.id }, u.token)).data.rotateWorkerToken;
      expect(r.__typename).toBe('CreatedWorkerToken');
      expect(r.token).toMatch(/^cgw_/);
      expect(r.token).not.toBe(created.token);
      expect(r.workerToken).toEqual({ id: created.workerToken.id, prefix: r.token.slice(0, 10) });
      expect(r.command).toContain(`CHATGPU_WORKER_TOKEN=${r.token}`);
      const row = await api.server.db.prisma.workerToken.findUniqueOrThrow({ where: { id: created.workerToken.id } });
      expect(JSON.stringify(row)).not.toContain(r.token);
      // The very next call with the old secret is refused; the new one works.
      expect(await helloWith(created.token)).toBe('UNAUTHENTICATED');
      expect((await fetch(`${api.url}/blobs/${'0'.repeat(64)}`, { headers: { authorization: `Bearer ${created.token}` } })).status).toBe(
        401,
      );
      expect(await helloWith(r.token)).toBe('WorkerHelloResult');
      // A session revoked while its socket is open: the next subscription on it is refused.
      const sessions = await api.server.db.prisma.apiToken.findMany({ where: { userId: u.userId } });
      await api.server.db.prisma.apiToken.updateMany({ where: { id: { in: sessions.map((s) => s.id) } }, data: { revokedAt: new Date() } });
      expect(await subscribeOnce()).toMatch(/UNAUTHENTICATED|Sign in|Not authorized/i);
    } finally {
      await ws.dispose();
    }
  });

  it('revoke: the token’s next call is refused; revoking again → NotFoundError', async () => {
    const u = await api.signUp();
    const created = (await api.gql(WT, { n: 'revoked' }, u.token)).data.createWorkerToken;
    expect(await helloWith(created.token)).toBe('WorkerHelloResult');
    expect((await api.gql(REVOKE, { id: created.workerToken.id }, u.token)).data.revokeWorkerToken.__typename).toBe(
      'MutationRevokeWorkerTokenSuccess',
    );
    expect(await helloWith(created.token)).toBe('UNAUTHENTICATED');
    expect((await api.gql(`{ me { workerTokens { id } } }`, {}, u.token)).data.me.workerTokens).toEqual([]);
    expect((await api.gql(REVOKE, { id: created.workerToken.id }, u.token)).data.revokeWorkerToken).toMatchObject({
      __typename: 'NotFoundError',
      entity: 'WorkerToken',
    });
    expect((await api.gql(ROTATE, { id: created.workerToken.id }, u.token)).data.rotateWorkerToken).toMatchObject({
      __typename: 'NotFoundError',
      entity: 'WorkerToken',
    });
  });

  it('only the owner: another user, a malformed id, a worker token and an anonymous caller get typed errors; nothing changes', async () => {
    const owner = await api.signUp();
    const other = await api.signUp();
    const created = (await api.gql(WT, { n: 'mine' }, owner.token)).data.createWorkerToken;
    const before = await api.server.db.prisma.workerToken.findUniqueOrThrow({ where: { id: created.workerToken.id } });
    for (const q of [ROTATE, REVOKE]) {
      const field = q === ROTATE ? 'rotateWorkerToken' : 'revokeWorkerToken';
      expect((await api.gql(q, { id: created.workerToken.id }, other.token)).data[field], `${field} by another user`).toMatchObject({
        __typename: 'NotFoundError',
        code: 'NOT_FOUND',
      });
      expect((await api.gql(q, { id: 'not-a-uuid' }, owner.token)).data[field], `${field} malformed id`).toMatchObject({
        __typename: 'NotFoundError',
        code: 'NOT_FOUND',
      });
      const byWorker = await api.gql(q, { id: created.workerToken.id }, created.token);
      expect(byWorker.errors?.[0]?.extensions?.code ?? byWorker.data?.[field]?.code, `${field} by a worker token`).toMatch(
        /FORBIDDEN|UNAUTHENTICATED/,
      );
      const anonymous = await api.gql(q, { id: created.workerToken.id });
      expect(anonymous.errors?.[0]?.extensions?.code ?? anonymous.data?.[field]?.code, `${field} anonymous`).toMatch(
        /FORBIDDEN|UNAUTHENTICATED/,
      );
    }
    expect(await api.server.db.prisma.workerToken.findUniqueOrThrow({ where: { id: created.workerToken.id } })).toEqual(before);
    expect(await helloWith(created.token)).toBe('WorkerHelloResult');
  });
});

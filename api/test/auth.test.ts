import { describe, expect, it } from 'vitest';
import { startTestApi } from './helpers/api.js';

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

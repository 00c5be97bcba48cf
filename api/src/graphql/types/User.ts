import { z } from 'zod';
import {
  createApiToken,
  createWorkerToken,
  logIn,
  revokeApiToken,
  revokeWorkerToken,
  rotateWorkerToken,
  signUp,
} from '../../domain/auth/users.js';
import type { Context } from '../context.js';
import { builder } from '../builder.js';
import { isUuid, NOBODY, parseUuid, requireUser, viewerId } from '../principal.js';
import { ConflictError, NotFoundError, UnauthenticatedError, ValidationError } from './errors.js';

export const UserRef = builder.prismaNode('User', {
  id: { field: 'id' },
  // A node that is not yours loads as null (the same answer as one that does not exist).
  nullable: true,
  // Only the user themself can load their node.
  findUnique: (id, ctx) => ({ id: isUuid(id) && id === viewerId(ctx) ? id : NOBODY }),
  fields: (t) => ({
    email: t.exposeString('email'),
    displayName: t.exposeString('displayName', { nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    apiTokens: t.relation('apiTokens', {
      query: { where: { kind: 'API', revokedAt: null }, orderBy: { createdAt: 'desc' } },
    }),
    workerTokens: t.relation('workerTokens', {
      query: { where: { revokedAt: null }, orderBy: { createdAt: 'desc' } },
    }),
  }),
});

builder.prismaObject('ApiToken', {
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    prefix: t.exposeString('prefix', { description: 'The first characters of the token, to recognise it.' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    lastUsedAt: t.expose('lastUsedAt', { type: 'DateTime', nullable: true }),
  }),
});

builder.prismaObject('WorkerToken', {
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    prefix: t.exposeString('prefix'),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    lastUsedAt: t.expose('lastUsedAt', { type: 'DateTime', nullable: true }),
  }),
});

type AuthPayloadShape = { token: string; user: { id: string } };
const AuthPayload = builder.objectRef<AuthPayloadShape>('AuthPayload').implement({
  fields: (t) => ({
    token: t.exposeString('token', { description: 'A bearer token for the Authorization header. Shown once.' }),
    user: t.prismaField({
      type: 'User',
      resolve: (query, p, _a, ctx) => ctx.prisma.user.findUniqueOrThrow({ ...query, where: { id: p.user.id } }),
    }),
  }),
});

const CreatedApiToken = builder.objectRef<{ token: string; apiToken: { id: string } }>('CreatedApiToken').implement({
  fields: (t) => ({
    token: t.exposeString('token', { description: 'The token itself. Shown once; only its hash is kept.' }),
    apiToken: t.prismaField({
      type: 'ApiToken',
      resolve: (query, p, _a, ctx) => ctx.prisma.apiToken.findUniqueOrThrow({ ...query, where: { id: p.apiToken.id } }),
    }),
  }),
});

const CreatedWorkerToken = builder
  .objectRef<{ token: string; workerToken: { id: string }; command: string }>('CreatedWorkerToken')
  .implement({
    fields: (t) => ({
      token: t.exposeString('token', { description: 'The token itself. Shown once; only its hash is kept.' }),
      command: t.exposeString('command', { description: 'The one line that starts a worker with this token.' }),
      workerToken: t.prismaField({
        type: 'WorkerToken',
        resolve: (query, p, _a, ctx) => ctx.prisma.workerToken.findUniqueOrThrow({ ...query, where: { id: p.workerToken.id } }),
      }),
    }),
  });

const email = z.string().trim().toLowerCase().email('Enter a valid email address.').max(254);
const password = z.string().min(8, 'Passwords need at least 8 characters.').max(256);
const tokenName = z.string().trim().min(1, 'Give the token a name.').max(100);

const SignUpInput = builder.inputType('SignUpInput', {
  fields: (t) => ({
    email: t.string({ validate: email }),
    password: t.string({ validate: password }),
    displayName: t.string({ required: false, validate: z.string().trim().max(100).nullish() }),
  }),
});
const LogInInput = builder.inputType('LogInInput', {
  fields: (t) => ({
    email: t.string({ validate: z.string().max(254) }),
    password: t.string({ validate: z.string().max(256) }),
  }),
});
const TokenInput = builder.inputType('CreateTokenInput', {
  fields: (t) => ({ name: t.string({ validate: tokenName }) }),
});

builder.queryField('me', (t) =>
  t.prismaField({
    type: 'User',
    nullable: true,
    description: 'The signed-in user, or null when anonymous.',
    resolve: (query, _p, _a, ctx) =>
      ctx.principal.kind === 'user' ? ctx.prisma.user.findUnique({ ...query, where: { id: ctx.principal.userId } }) : null,
  }),
);

builder.mutationFields((t) => ({
  signUp: t.field({
    type: AuthPayload,
    args: { input: t.arg({ type: SignUpInput }) },
    errors: { types: [ValidationError, ConflictError] },
    resolve: (_p, { input }, ctx) => signUp(ctx, input),
  }),
  logIn: t.field({
    type: AuthPayload,
    args: { input: t.arg({ type: LogInInput }) },
    errors: { types: [ValidationError, UnauthenticatedError] },
    resolve: (_p, { input }, ctx) => logIn(ctx, input),
  }),
  createApiToken: t.field({
    type: CreatedApiToken,
    authScopes: { user: true },
    args: { input: t.arg({ type: TokenInput }) },
    errors: { types: [ValidationError] },
    resolve: (_p, { input }, ctx) => createApiToken(ctx, requireUser(ctx), input.name),
  }),
  revokeApiToken: t.field({
    type: 'Boolean',
    authScopes: { user: true },
    args: { id: t.arg.id() },
    errors: { types: [ValidationError, NotFoundError], directResult: false },
    resolve: async (_p, { id }, ctx) => {
      await revokeApiToken(ctx, requireUser(ctx), parseUuid(String(id), 'ApiToken'));
      return true;
    },
  }),
  createWorkerToken: t.field({
    type: CreatedWorkerToken,
    authScopes: { user: true },
    args: { input: t.arg({ type: TokenInput }) },
    errors: { types: [ValidationError] },
    resolve: async (_p, { input }, ctx) => {
      const created = await createWorkerToken(ctx, requireUser(ctx), input.name);
      return { ...created, command: workerCommand(ctx, created.token) };
    },
  }),
  rotateWorkerToken: t.field({
    type: CreatedWorkerToken,
    description: 'Replaces a worker token’s secret; the old one stops working on the next call. The new one is shown once.',
    authScopes: { user: true },
    args: { id: t.arg.id({ description: 'WorkerToken.id' }) },
    errors: { types: [NotFoundError] },
    resolve: async (_p, { id }, ctx) => {
      const rotated = await rotateWorkerToken(ctx, requireUser(ctx), parseUuid(String(id), 'WorkerToken'));
      return { ...rotated, command: workerCommand(ctx, rotated.token) };
    },
  }),
  revokeWorkerToken: t.field({
    type: 'Boolean',
    description: 'Revokes a worker token; its workers’ next call is refused.',
    authScopes: { user: true },
    args: { id: t.arg.id({ description: 'WorkerToken.id' }) },
    errors: { types: [NotFoundError], directResult: false },
    resolve: async (_p, { id }, ctx) => {
      await revokeWorkerToken(ctx, requireUser(ctx), parseUuid(String(id), 'WorkerToken'));
      return true;
    },
  }),
}));

/**
 * The one line that starts a worker: the token goes in the environment, not the arguments
 * (a process's arguments are visible to every local user through `ps`).
 */
function workerCommand(ctx: Context, token: string): string {
  const server = ctx.baseUrl ?? ctx.config.publicUrl ?? `http://localhost:${ctx.config.port}`;
  return `CHATGPU_WORKER_TOKEN=${token} npx chatgpu-worker --server ${server}`;
}

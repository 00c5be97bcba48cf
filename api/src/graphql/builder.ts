/**
 * Configures the Pothos builder (plugins, scalars, context, auth scopes) and defines
 * nothing else. Types live in types/<Type>.ts; index.ts builds the schema.
 */
import SchemaBuilder from '@pothos/core';
import ErrorsPlugin from '@pothos/plugin-errors';
import PrismaPlugin from '@pothos/plugin-prisma';
import RelayPlugin from '@pothos/plugin-relay';
import ScopeAuthPlugin from '@pothos/plugin-scope-auth';
import ValidationPlugin from '@pothos/plugin-validation';
import { GraphQLError } from 'graphql';
import type PrismaTypes from '../generated/pothos-types.js';
import { getDatamodel } from '../generated/pothos-types.js';
import { ValidationError } from '../domain/errors.js';
import { isUuid } from './principal.js';
import type { Context } from './context.js';
import type { LogLineInput } from '../domain/leases/reports.js';

export type Scalars = {
  DateTime: { Input: Date; Output: Date };
  JSON: { Input: unknown; Output: unknown };
  BigInt: { Input: bigint; Output: bigint | number };
  Decimal: { Input: number; Output: { toString(): string } | number };
  LogLines: { Input: LogLineInput[]; Output: never };
};

export const builder = new SchemaBuilder<{
  Context: Context;
  PrismaTypes: PrismaTypes;
  Scalars: Scalars;
  AuthScopes: { user: boolean; worker: boolean };
  DefaultFieldNullability: false;
  DefaultInputFieldRequiredness: true;
}>({
  plugins: [ScopeAuthPlugin, ErrorsPlugin, PrismaPlugin, RelayPlugin, ValidationPlugin],
  defaultFieldNullability: false,
  defaultInputFieldRequiredness: true,
  scopeAuth: {
    authorizeOnSubscribe: true,
    authScopes: (ctx) => ({
      user: ctx.principal.kind === 'user',
      worker: ctx.principal.kind === 'worker',
    }),
    unauthorizedError: (_parent, ctx) =>
      ctx.principal.kind === 'anonymous'
        ? new GraphQLError('Sign in first: this needs a valid token.', { extensions: { code: 'UNAUTHENTICATED' } })
        : new GraphQLError('This token may not do that.', { extensions: { code: 'FORBIDDEN' } }),
  },
  errors: { unsafelyHandleInputErrors: true, directResult: true },
  validation: {
    validationError: (result) =>
      new ValidationError(
        `Invalid input: ${result.issues.map((i) => i.message).join('; ')}`,
        result.issues.map((i) => ({
          path: (i.path ?? []).map((p) => String(typeof p === 'object' ? p.key : p)),
          message: i.message,
        })),
      ),
  },
  prisma: {
    client: (ctx) => ctx.prisma,
    dmmf: getDatamodel(),
    exposeDescriptions: false,
    filterConnectionTotalCount: true,
    onUnusedQuery: null,
  },
  relay: {
    clientMutationId: 'omit',
    cursorType: 'String',
    // Malformed or foreign ids load as null, like ids that are not yours (never an error).
    decodeGlobalID: (globalID: string) => {
      const decoded = Buffer.from(globalID, 'base64').toString('utf8');
      const i = decoded.indexOf(':');
      return i > 0 ? { typename: decoded.slice(0, i), id: decoded.slice(i + 1) } : { typename: '', id: '' };
    },
    nodeQueryOptions: {
      nullable: true,
      resolve: (_root, { id }, _ctx, _info, resolveNode) =>
        ['Job', 'Worker', 'User', 'PreparationRecord'].includes(id.typename) && isUuid(String(id.id)) ? resolveNode(id) : null,
    },
    nodesQueryOptions: false,
  },
});

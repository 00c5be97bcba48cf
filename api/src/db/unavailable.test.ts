/**
 * The error shapes below are the ones a real PostgreSQL produced under this process when
 * stopped (pg_ctl stop -m fast) and when a TCP proxy in front of it was cut; the
 * integration suite (api/test/outages.test.ts) meets them for real.
 */
import { GraphQLError } from 'graphql';
import { describe, expect, it } from 'vitest';
import { databaseUnavailable } from './unavailable.js';

/** A Prisma known-request error as @prisma/adapter-pg surfaces a driver error. */
function prismaError(code: string, cause: Record<string, unknown>, message = 'Invalid invocation') {
  return Object.assign(new Error(message), {
    name: 'PrismaClientKnownRequestError',
    code,
    clientVersion: '7.10.1',
    meta: { driverAdapterError: Object.assign(new Error('DriverAdapterError'), { name: 'DriverAdapterError', cause }) },
  });
}

function pgServerError(code: string, message: string) {
  return Object.assign(new Error(message), { code, severity: 'FATAL' });
}

describe('databaseUnavailable', () => {
  it('recognizes the outage forms', () => {
    const outages: unknown[] = [
      // $queryRaw while the server shuts down.
      prismaError('P2010', {
        originalCode: '57P01',
        kind: 'postgres',
        code: '57P01',
        severity: 'FATAL',
        message: 'terminating connection due to administrator command',
      }),
      // A model query or transaction once it is down.
      prismaError(
        'P1001',
        { kind: 'DatabaseNotReachable', host: '127.0.0.1', port: 5432 },
        "Can't reach database server at 127.0.0.1:5432",
      ),
      prismaError('P1017', { kind: 'ConnectionClosed' }),
      // pg's own errors, passed through unwrapped.
      new Error('Connection terminated unexpectedly'),
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED', syscall: 'connect', errno: -111 }),
      Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET', syscall: 'read', errno: -104 }),
      // Connecting to a name with two addresses (localhost → ::1 and 127.0.0.1), both refused.
      Object.assign(
        new AggregateError([
          Object.assign(new Error('connect ECONNREFUSED ::1:5432'), { code: 'ECONNREFUSED', syscall: 'connect' }),
          Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED', syscall: 'connect' }),
        ]),
        { code: 'ECONNREFUSED' },
      ),
      pgServerError('57P03', 'the database system is starting up'),
      pgServerError('57P03', 'the database system is shutting down'),
      pgServerError('57P02', 'terminating connection because of crash of another server process'),
      pgServerError('08006', 'connection failure'),
      pgServerError('53300', 'sorry, too many clients already'),
      // As GraphQL hands it to formatError.
      new GraphQLError('x', { originalError: pgServerError('57P01', 'terminating connection due to administrator command') }),
    ];
    for (const e of outages) expect(databaseUnavailable(e), String((e as Error).message)).toBeTruthy();
    expect(databaseUnavailable(outages[0])).toBe('57P01 terminating connection due to administrator command');
  });

  it('leaves everything else to the 500 path', () => {
    const others: unknown[] = [
      prismaError('P2002', { kind: 'UniqueConstraintViolation', constraint: { fields: ['email'] } }),
      prismaError('P2010', { kind: 'postgres', code: '42P01', severity: 'ERROR', message: 'relation "x" does not exist' }),
      pgServerError('40P01', 'deadlock detected'),
      // A client that hung up mid-upload: Node's "aborted" carries no syscall.
      Object.assign(new Error('aborted'), { code: 'ECONNRESET' }),
      // Another service (a model API) unreachable.
      Object.assign(new TypeError('fetch failed'), {
        cause: Object.assign(new Error('connect ECONNREFUSED 10.0.0.1:443'), { code: 'ECONNREFUSED', syscall: 'connect' }),
      }),
      new Error('Connection closed by the user'),
      null,
      'ECONNREFUSED',
    ];
    for (const e of others) expect(databaseUnavailable(e), String((e as Error)?.message ?? e)).toBeNull();
  });
});

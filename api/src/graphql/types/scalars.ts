import { GraphQLError, Kind, type ValueNode } from 'graphql';
import { builder } from '../builder.js';
import type { LogLineInput } from '../../domain/leases/reports.js';

builder.scalarType('DateTime', {
  description: 'An instant, as an ISO-8601 string in UTC.',
  serialize: (d) => (d instanceof Date ? d.toISOString() : new Date(d as string).toISOString()),
  parseValue: (v) => {
    const d = new Date(String(v));
    if (typeof v !== 'string' || Number.isNaN(d.getTime())) {
      throw new GraphQLError('DateTime must be an ISO-8601 string.', { extensions: { code: 'BAD_USER_INPUT' } });
    }
    return d;
  },
});

/**
 * PostgreSQL's jsonb cannot hold the NUL character (\u0000) in a string or a key: such a
 * value is refused here, typed, instead of failing the write later as an internal error.
 */
function refuseNul(v: unknown): unknown {
  const stack: unknown[] = [v];
  while (stack.length) {
    const x = stack.pop();
    if (typeof x === 'string') {
      if (x.includes('\u0000'))
        throw new GraphQLError('JSON values cannot contain the NUL character (\\u0000).', { extensions: { code: 'BAD_USER_INPUT' } });
    } else if (Array.isArray(x)) stack.push(...x);
    else if (x && typeof x === 'object') for (const [k, y] of Object.entries(x)) stack.push(k, y);
  }
  return v;
}

builder.scalarType('JSON', {
  description: 'Arbitrary JSON.',
  serialize: (v) => v,
  parseValue: refuseNul,
  parseLiteral: (ast) => refuseNul(parseJsonLiteral(ast)),
});

function parseJsonLiteral(ast: ValueNode): unknown {
  switch (ast.kind) {
    case Kind.STRING:
    case Kind.BOOLEAN:
      return ast.value;
    case Kind.INT:
    case Kind.FLOAT:
      return Number(ast.value);
    case Kind.NULL:
      return null;
    case Kind.LIST:
      return ast.values.map((v) => parseJsonLiteral(v));
    case Kind.OBJECT:
      return Object.fromEntries(ast.fields.map((f) => [f.name.value, parseJsonLiteral(f.value)]));
    default:
      throw new GraphQLError('Variables are not allowed inside JSON literals.');
  }
}

builder.scalarType('BigInt', {
  description: 'A 64-bit integer, as a number when it fits exactly, else a string.',
  serialize: (v) => (typeof v === 'bigint' && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : String(v)),
  parseValue: (v) => BigInt(v as string),
});

builder.scalarType('Decimal', {
  description: 'A decimal amount (CAD), as a number.',
  serialize: (v) => Number(v.toString()),
  parseValue: (v) => {
    const n = Number(v);
    if (!Number.isFinite(n)) throw new GraphQLError('Decimal must be a finite number.', { extensions: { code: 'BAD_USER_INPUT' } });
    return n;
  },
});

const LOG_LINE_KEYS = new Set(['seq', 'stream', 'text', 'ts']);
/** 9999-12-31T23:59:59.999Z: a log line's time is a worker's clock, not any instant JavaScript can hold. */
const MAX_TS = 253402300799999;
const badLine = (i: number, what: string) => new GraphQLError(`LogLines[${i}]${what}.`, { extensions: { code: 'BAD_USER_INPUT' } });

/**
 * A batch of log lines is a scalar, not a list of input objects: graphql-js coerces a list of
 * input objects value by value (2,000 lines × 4 fields per batch), and that coercion and its
 * garbage were ~40 % of the API's CPU while a task printed 10 MB/s (bench/logStream.ts). Here
 * one loop checks the shape; the domain (appendLogs) checks counts, seqs, streams and sizes and
 * answers with a typed ValidationError as before.
 */
export function parseLogLines(v: unknown): LogLineInput[] {
  if (!Array.isArray(v))
    throw new GraphQLError('LogLines must be a list of {seq, stream, text, ts}.', { extensions: { code: 'BAD_USER_INPUT' } });
  const out: LogLineInput[] = new Array(v.length);
  for (let i = 0; i < v.length; i++) {
    const l = v[i] as Record<string, unknown> | null;
    if (l === null || typeof l !== 'object' || Array.isArray(l)) throw badLine(i, ' must be an object {seq, stream, text, ts}');
    for (const k in l) if (!LOG_LINE_KEYS.has(k)) throw badLine(i, ` has an unknown field ${JSON.stringify(k).slice(0, 40)}`);
    const { seq, stream, text, ts } = l;
    if (typeof seq !== 'number' || !Number.isInteger(seq) || seq > 2 ** 31 - 1 || seq < -(2 ** 31))
      throw badLine(i, '.seq must be a 32-bit integer');
    if (typeof stream !== 'string') throw badLine(i, '.stream must be a string');
    if (typeof text !== 'string') throw badLine(i, '.text must be a string');
    let ms: number | null = null;
    if (ts !== undefined && ts !== null) {
      ms = typeof ts === 'string' ? Date.parse(ts) : NaN;
      if (!(ms >= 0 && ms <= MAX_TS)) throw badLine(i, '.ts must be an ISO-8601 string between 1970 and 9999');
    }
    out[i] = { seq, stream, text, ts: ms };
  }
  return out;
}

builder.scalarType('LogLines', {
  description:
    'A batch of log lines: a JSON list of {seq: Int!, stream: "stdout" | "stderr" | "system", text: String!, ts: DateTime}. ' +
    'A scalar so that a batch of thousands of lines is checked in one pass, not coerced field by field.',
  serialize: () => {
    throw new GraphQLError('LogLines is an input only.');
  },
  parseValue: parseLogLines,
  parseLiteral: (ast) => parseLogLines(parseJsonLiteral(ast)),
});

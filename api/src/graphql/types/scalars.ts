import { GraphQLError, Kind, type ValueNode } from 'graphql';
import { builder } from '../builder.js';

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
      if (x.includes('\u0000')) throw new GraphQLError('JSON values cannot contain the NUL character (\\u0000).', { extensions: { code: 'BAD_USER_INPUT' } });
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

import { GraphQLError, Kind } from 'graphql';
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

builder.scalarType('JSON', {
  description: 'Arbitrary JSON.',
  serialize: (v) => v,
  parseValue: (v) => v,
  parseLiteral: function parse(ast): unknown {
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
        return ast.values.map((v) => parse(v));
      case Kind.OBJECT:
        return Object.fromEntries(ast.fields.map((f) => [f.name.value, parse(f.value)]));
      default:
        throw new GraphQLError('Variables are not allowed inside JSON literals.');
    }
  },
});

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

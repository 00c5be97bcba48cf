import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { normalizeStrictArgs, parseToolArgs, toStrictJsonSchema } from './strictSchema.js';

describe('toStrictJsonSchema', () => {
  it('requires every property, makes optional ones nullable, closes every object', () => {
    const s = z.object({
      path: z.string().describe('file path'),
      limit: z.number().int().optional(),
      mode: z.enum(['fast', 'safe']).optional(),
      kind: z.literal('plan').optional(),
      keep: z.boolean().default(false).describe('keep it'),
      note: z.string().nullable(),
      nested: z.object({ x: z.string(), y: z.number().optional() }).optional(),
      list: z.array(z.object({ n: z.number().optional() })),
      either: z.union([z.object({ a: z.string() }), z.object({ b: z.number() })]).optional(),
    });
    expect(toStrictJsonSchema(s)).toEqual({
      type: 'object',
      properties: {
        path: { type: 'string', description: 'file path' },
        limit: { type: ['integer', 'null'], minimum: Number.MIN_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER },
        mode: { type: ['string', 'null'], enum: ['fast', 'safe', null] },
        kind: { type: ['string', 'null'], enum: ['plan', null] },
        keep: { type: ['boolean', 'null'], description: 'keep it (default: false)' },
        note: { type: ['string', 'null'] },
        nested: {
          type: ['object', 'null'],
          properties: { x: { type: 'string' }, y: { type: ['number', 'null'] } },
          required: ['x', 'y'],
          additionalProperties: false,
        },
        list: {
          type: 'array',
          items: { type: 'object', properties: { n: { type: ['number', 'null'] } }, required: ['n'], additionalProperties: false },
        },
        either: {
          anyOf: [
            {
              anyOf: [
                { type: 'object', properties: { a: { type: 'string' } }, required: ['a'], additionalProperties: false },
                { type: 'object', properties: { b: { type: 'number' } }, required: ['b'], additionalProperties: false },
              ],
            },
            { type: 'null' },
          ],
        },
      },
      required: ['path', 'limit', 'mode', 'kind', 'keep', 'note', 'nested', 'list', 'either'],
      additionalProperties: false,
    });
  });

  it('closes loose objects, keeps recursion by $ref, and drops $schema', () => {
    const Node: z.ZodType = z.looseObject({
      name: z.string(),
      get children() {
        return z.array(Node).optional();
      },
    });
    const js = toStrictJsonSchema(Node);
    expect(js.$schema).toBeUndefined();
    expect(js).toEqual({
      type: 'object',
      properties: { name: { type: 'string' }, children: { type: ['array', 'null'], items: { $ref: '#' } } },
      required: ['name', 'children'],
      additionalProperties: false,
    });
  });

  it('intersections of objects come out merged (zod 4.6 does that) and closed', () => {
    expect(toStrictJsonSchema(z.object({ a: z.string() }).and(z.object({ b: z.string().optional() })))).toEqual({
      type: 'object',
      properties: { a: { type: 'string' }, b: { type: ['string', 'null'] } },
      required: ['a', 'b'],
      additionalProperties: false,
    });
  });

  it('refuses what strict mode cannot express', () => {
    expect(() => toStrictJsonSchema(z.object({ env: z.record(z.string(), z.string()) }))).toThrow(/record/);
    expect(() => toStrictJsonSchema(z.string())).toThrow(/root .* must be an object/);
    expect(() => toStrictJsonSchema(z.object({ x: z.any() }))).toThrow(/z.any/);
  });
});

describe('parseToolArgs / normalizeStrictArgs', () => {
  const S = z.object({
    path: z.string(),
    limit: z.number().optional(),
    keep: z.boolean().default(true),
    note: z.string().nullable(),
    nested: z.object({ y: z.number().optional(), z: z.string().nullable().optional() }).optional(),
    list: z.array(z.object({ n: z.number().optional() })).optional(),
  });

  it('drops the nulls strict mode adds for optional properties, keeps nulls the schema allows', () => {
    const args = { path: 'a', limit: null, keep: null, note: null, nested: { y: null, z: null }, list: [{ n: null }, { n: 2 }] };
    expect(normalizeStrictArgs(S, args)).toEqual({ path: 'a', note: null, nested: { z: null }, list: [{}, { n: 2 }] });
    expect(parseToolArgs(S, JSON.stringify(args))).toEqual({
      ok: true,
      value: { path: 'a', keep: true, note: null, nested: { z: null }, list: [{}, { n: 2 }] },
    });
    expect(parseToolArgs(S, JSON.stringify({ path: 'a', limit: 3, keep: false, note: 'n', nested: null, list: null }))).toEqual({
      ok: true,
      value: { path: 'a', limit: 3, keep: false, note: 'n' },
    });
  });

  it('reports invalid JSON and schema violations in plain words', () => {
    const bad = parseToolArgs(S, '{"path": ');
    expect(bad.ok).toBe(false);
    expect(!bad.ok && bad.error).toMatch(/^arguments are not valid JSON/);
    const wrong = parseToolArgs(S, JSON.stringify({ path: 3, note: null }));
    expect(wrong.ok).toBe(false);
    expect(!wrong.ok && wrong.error).toMatch(/^invalid arguments: .*path/s);
    expect(parseToolArgs(S, JSON.stringify({ path: 'a', note: null, extra: 1 }))).toMatchObject({ ok: true });
  });

  it('refuses a NUL anywhere and makes lone surrogates well-formed (PostgreSQL stores neither)', () => {
    const T = z.object({ text: z.string(), tags: z.record(z.string(), z.string()).optional() });
    expect(parseToolArgs(T, JSON.stringify({ text: 'a\u0000b' }))).toMatchObject({
      ok: false,
      error: expect.stringMatching(/NUL character/),
    });
    expect(parseToolArgs(T, JSON.stringify({ text: 'a', tags: { 'k\u0000': 'v' } }))).toMatchObject({
      ok: false,
      error: expect.stringMatching(/NUL character/),
    });
    expect(parseToolArgs(T, JSON.stringify({ text: 'a', tags: { 'k\ud800': 'v' } }))).toMatchObject({
      ok: false,
      error: expect.stringMatching(/lone UTF-16 surrogate in a key/),
    });
    expect(parseToolArgs(T, JSON.stringify({ text: 'x\ud800y\udfffz\ud83d\ude00' }))).toEqual({
      ok: true,
      value: { text: 'x\ufffdy\ufffdz\ud83d\ude00' },
    });
    // An escaped backslash before u0000 is text, not a NUL.
    expect(parseToolArgs(T, '{"text": "\\\\u0000"}')).toEqual({ ok: true, value: { text: '\\u0000' } });
  });

  it('handles unions and recursion', () => {
    const Node: z.ZodType = z.object({
      name: z.string(),
      tag: z.string().optional(),
      get children() {
        return z.array(Node).optional();
      },
    });
    expect(normalizeStrictArgs(Node, { name: 'r', tag: null, children: [{ name: 'c', tag: null, children: null }] })).toEqual({
      name: 'r',
      children: [{ name: 'c' }],
    });
    const U = z.object({ v: z.union([z.object({ a: z.string(), o: z.number().optional() }), z.string()]) });
    expect(normalizeStrictArgs(U, { v: { a: 'x', o: null } })).toEqual({ v: { a: 'x' } });
    expect(normalizeStrictArgs(U, { v: 'plain' })).toEqual({ v: 'plain' });
  });
});

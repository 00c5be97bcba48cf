/**
 * Tool parameter schemas for OpenAI "strict" function calling, made from zod schemas.
 *
 * Strict mode wants: every property listed in `required`, optional properties expressed
 * as nullable (`type: ['string', 'null']`), `additionalProperties: false` on every object,
 * `anyOf` (never `oneOf`/`allOf`), no `default`. `toStrictJsonSchema` takes zod 4's
 * `z.toJSONSchema(schema, { io: 'input' })` and rewrites it that way.
 *
 * The model then sends `null` for an optional property it leaves out, which the original
 * zod schema (`.optional()`) would reject: `parseToolArgs` / `normalizeStrictArgs` drop
 * exactly those nulls (and keep nulls of properties that are nullable in the zod schema)
 * before validating, so `.default(…)` values apply as usual.
 */
import { z } from 'zod';

type Json = Record<string, unknown>;

const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Keywords strict mode rejects or that carry no meaning for the model; dropped. */
const DROP = new Set(['$schema', '$id', 'propertyNames', 'patternProperties', 'unevaluatedProperties', 'minProperties', 'maxProperties']);

const inputSchemas = new WeakMap<z.ZodType, Json>();

/** zod 4's JSON Schema of what a caller may *send* (io: 'input'), cached per schema. */
function inputJsonSchema(schema: z.ZodType): Json {
  let js = inputSchemas.get(schema);
  if (!js) {
    js = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'throw' }) as Json;
    inputSchemas.set(schema, js);
  }
  return js;
}

/**
 * A strict-mode JSON Schema for a zod object schema: every property required, optional
 * ones nullable, `additionalProperties: false` recursively. Throws for shapes strict mode
 * cannot express (records / maps with arbitrary keys, intersections, a non-object root).
 */
export function toStrictJsonSchema(schema: z.ZodType): Json {
  const src = inputJsonSchema(schema);
  const out = rewrite(src, '#');
  if (!isObject(out)) {
    throw new Error('toStrictJsonSchema: the root of a tool parameter schema must be an object (z.object)');
  }
  return out;
}

function isObject(js: Json): boolean {
  const t = js.type;
  return t === 'object' || (Array.isArray(t) && t.includes('object'));
}

function rewrite(node: unknown, path: string): Json {
  const concrete = isObj(node) && ['type', 'anyOf', 'oneOf', 'allOf', '$ref', 'enum', 'const'].some((k) => k in node);
  if (!isObj(node) || !concrete) {
    // `true` / `{}` (z.any / z.unknown): strict mode needs a concrete schema.
    throw new Error(`toStrictJsonSchema: ${path} accepts anything (z.any/z.unknown); strict mode needs a concrete type`);
  }
  const out: Json = {};
  for (const [k, v] of Object.entries(node)) {
    if (DROP.has(k)) continue;
    switch (k) {
      case 'default':
        // Not allowed in strict mode; tell the model in words instead.
        break;
      case 'properties':
      case '$defs':
      case 'definitions': {
        const m: Json = {};
        for (const [pk, pv] of Object.entries(v as Json)) m[pk] = rewrite(pv, `${path}/${k}/${pk}`);
        out[k] = m;
        break;
      }
      case 'items':
        out.items = rewrite(v, `${path}/items`);
        break;
      case 'prefixItems':
        out.prefixItems = (v as unknown[]).map((x, i) => rewrite(x, `${path}/prefixItems/${i}`));
        break;
      case 'anyOf':
      case 'oneOf':
        out.anyOf = (v as unknown[]).map((x, i) => rewrite(x, `${path}/${k}/${i}`));
        break;
      case 'allOf':
        throw new Error(
          `toStrictJsonSchema: ${path} uses allOf (z.intersection / .and); strict mode does not support it — use one z.object`,
        );
      case 'additionalProperties':
        if (isObj(v) && Object.keys(v).length > 0) {
          throw new Error(`toStrictJsonSchema: ${path} is a record/map with arbitrary keys; strict mode needs named properties`);
        }
        break; // set to false below for every object
      default:
        out[k] = v;
    }
  }
  if ('default' in node && node.default !== undefined) {
    const d = `default: ${JSON.stringify(node.default)}`;
    out.description = typeof out.description === 'string' && out.description ? `${out.description} (${d})` : d;
  }
  if (isObject(out)) {
    const props = (out.properties as Json | undefined) ?? {};
    const required = new Set(Array.isArray(node.required) ? (node.required as string[]) : []);
    for (const key of Object.keys(props)) {
      if (!required.has(key)) props[key] = nullable(props[key] as Json);
    }
    out.properties = props;
    out.required = Object.keys(props);
    out.additionalProperties = false;
  }
  return out;
}

function allowsNull(js: Json): boolean {
  if (js.type === 'null' || (Array.isArray(js.type) && js.type.includes('null'))) return true;
  if (Array.isArray(js.enum) && js.enum.includes(null)) return true;
  if ('const' in js && js.const === null) return true;
  if (Array.isArray(js.anyOf)) return js.anyOf.some((b) => isObj(b) && allowsNull(b));
  return false;
}

/** The same schema, also accepting null. */
function nullable(js: Json): Json {
  if (allowsNull(js)) return js;
  if ('$ref' in js || Array.isArray(js.anyOf) || js.type === undefined) {
    const { description, ...rest } = js;
    return { ...(description !== undefined ? { description } : {}), anyOf: [rest, { type: 'null' }] };
  }
  const out: Json = { ...js };
  out.type = Array.isArray(js.type) ? [...(js.type as unknown[]), 'null'] : [js.type, 'null'];
  if ('const' in out) {
    out.enum = [out.const, null];
    delete out.const;
  } else if (Array.isArray(out.enum)) {
    out.enum = [...out.enum, null];
  }
  return out;
}

/**
 * Undo what strict mode adds: drop the `null` values of properties that are optional in
 * the zod schema (and not nullable there), recursively. Returns a new value.
 */
export function normalizeStrictArgs(schema: z.ZodType, value: unknown): unknown {
  const root = inputJsonSchema(schema);
  return strip(root, value, root, 0);
}

function resolve(js: unknown, root: Json): Json | undefined {
  let cur = js;
  for (let i = 0; i < 32 && isObj(cur) && typeof cur.$ref === 'string'; i++) {
    const ref = cur.$ref;
    if (ref === '#') cur = root;
    else if (ref.startsWith('#/')) {
      let t: unknown = root;
      for (const part of ref.slice(2).split('/')) t = isObj(t) ? t[part.replace(/~1/g, '/').replace(/~0/g, '~')] : undefined;
      cur = t;
    } else return undefined;
  }
  return isObj(cur) ? cur : undefined;
}

function typeOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

function strip(schemaNode: unknown, value: unknown, root: Json, depth: number): unknown {
  const js = resolve(schemaNode, root);
  if (!js || depth > 64 || value === null || typeof value !== 'object') return value;
  const branches = (js.anyOf ?? js.oneOf) as unknown[] | undefined;
  if (Array.isArray(branches)) {
    const want = typeOf(value);
    const branch = branches
      .map((b) => resolve(b, root))
      .find((b) => b && (b.type === want || (Array.isArray(b.type) && b.type.includes(want))));
    return branch ? strip(branch, value, root, depth + 1) : value;
  }
  if (Array.isArray(value)) {
    const prefix = Array.isArray(js.prefixItems) ? js.prefixItems : [];
    return value.map((v, i) => strip(i < prefix.length ? prefix[i] : js.items, v, root, depth + 1));
  }
  const props = isObj(js.properties) ? js.properties : {};
  const required = new Set(Array.isArray(js.required) ? (js.required as string[]) : []);
  const out: Json = {};
  for (const [k, v] of Object.entries(value as Json)) {
    const p = resolve(props[k], root);
    if (v === null && p && !required.has(k) && !allowsNull(p)) continue;
    out[k] = p ? strip(p, v, root, depth + 1) : v;
  }
  return out;
}

export type ToolArgsResult<T> = { ok: true; value: T } | { ok: false; error: string };

/**
 * Parse a function call's `arguments` string as the model sent it: JSON, strict-mode nulls
 * dropped, then validated by the zod schema. Errors are plain sentences for the model.
 * What PostgreSQL cannot store (a side effect's Action row keeps its arguments as jsonb, and the
 * effect may write them into text) is dealt with first, so it never fails after the checks: a
 * lone UTF-16 surrogate becomes U+FFFD (as UTF-8 text would have it), a NUL character is refused.
 */
export function parseToolArgs<S extends z.ZodType>(schema: S, args: string): ToolArgsResult<z.output<S>> {
  let raw: unknown;
  try {
    raw = JSON.parse(args, (_k, v: unknown) => (typeof v === 'string' ? wellFormed(v) : v));
  } catch (err) {
    return { ok: false, error: `arguments are not valid JSON (${(err as Error).message})` };
  }
  const bad = unstorable(raw);
  if (bad)
    return {
      ok: false,
      error: `invalid arguments: they contain ${bad}, which cannot be stored; leave it out (describe binary content in words).`,
    };
  const parsed = schema.safeParse(normalizeStrictArgs(schema, raw));
  if (!parsed.success) return { ok: false, error: `invalid arguments: ${z.prettifyError(parsed.error)}` };
  return { ok: true, value: parsed.data };
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
const wellFormed = (s: string) => s.replace(LONE_SURROGATE, '\ufffd');

/** A NUL in a string or a key, or a lone surrogate in a key (iterative: arguments may nest deeply); null when none. */
function unstorable(value: unknown): string | null {
  const stack = [value];
  while (stack.length) {
    const v = stack.pop();
    if (typeof v === 'string') {
      if (v.includes('\u0000')) return 'the NUL character (\\u0000)';
    } else if (Array.isArray(v)) stack.push(...v);
    else if (v && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) {
        if (k.includes('\u0000')) return 'the NUL character (\\u0000)';
        if (wellFormed(k) !== k) return 'a lone UTF-16 surrogate in a key';
        stack.push(x);
      }
    }
  }
  return null;
}

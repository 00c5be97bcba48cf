/**
 * A local fake of the OpenAI Responses API on 127.0.0.1 (random port), speaking the real
 * wire format: `POST /v1/responses` with a JSON body, answered with a full `Response`
 * object as the `openai` package's own types define it. Point the real package at it
 * with `baseURL: fake.baseURL`.
 *
 * Scripted per test: `fake.enqueue(...)` a queue of handlers, one per request. A handler is
 * a reply or `(body, req) => reply`, where a reply is
 *   - a partial `Response` (`{ output, status, incomplete_details, usage, … }`), completed
 *     with realistic defaults (id, object, created_at, model/tools/tool_choice echoed…);
 *   - `{ status: 500 }` (any numeric HTTP status) with an optional `body` (default: an
 *     OpenAI-style error object) and `headers` — note the `openai` package retries 408,
 *     409, 429 and 5xx itself (`maxRetries`); `retryAfterMs` sets `retry-after-ms` so a
 *     retry happens at once;
 *   - `{ delayMs, then? }`: wait, then send `then` (never answers when `then` is absent),
 *     to simulate a slow server / a timeout.
 * Every request is recorded (`requests`, `bodies`). An empty queue answers 500 with a
 * message saying so, and counts it in `unexpected`.
 *
 * Like the real API, requests are checked first (`validate: false` turns it off) and get a
 * 400 `invalid_request_error` when: a strict function tool's schema is not strict (a
 * property missing from `required`, an object without `additionalProperties: false`);
 * with `store: false`, a reasoning item is sent back without its `encrypted_content`; a
 * `function_call_output` has no `function_call` with its `call_id` earlier in `input`.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import type {
  Response,
  ResponseFunctionToolCall,
  ResponseOutputItem,
  ResponseOutputMessage,
  ResponseReasoningItem,
  ResponseUsage,
} from 'openai/resources/responses/responses';

/** What the SDK puts on the wire; `output_text` is computed client-side, not sent. */
export type WireResponse = Omit<Response, 'output_text'> & { store?: boolean };

/** Output items may also be of types the client does not know (forward compatibility). */
export type FakeOutputItem = ResponseOutputItem | { type: string; id?: string; [k: string]: unknown };

export type FakeResponse = Partial<Omit<WireResponse, 'output'>> & { output?: FakeOutputItem[] };
export type FakeHttpError = { status: number; body?: unknown; headers?: Record<string, string>; retryAfterMs?: number };
export type FakeDelay = { delayMs: number; then?: FakeReply };
export type FakeReply = FakeResponse | FakeHttpError | FakeDelay;
export type FakeHandler = FakeReply | ((body: any, req: RecordedRequest) => FakeReply | Promise<FakeReply>);

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** Parsed JSON body (or the raw string when it was not JSON). */
  body: any;
}

export interface FakeOpenAI {
  /** e.g. http://127.0.0.1:41234/v1 — give it to the `openai` package as `baseURL`. */
  baseURL: string;
  requests: RecordedRequest[];
  /** The JSON bodies of every POST /v1/responses, oldest first. */
  readonly bodies: any[];
  enqueue(...handlers: FakeHandler[]): void;
  /** Handlers not yet used. */
  readonly pending: number;
  /** Requests that found the queue empty or hit an unknown path. */
  readonly unexpected: number;
  close(): Promise<void>;
}

let counter = 0;
const uid = (prefix: string) => `${prefix}_${Date.now().toString(36)}${(++counter).toString(36).padStart(6, '0')}`;

export async function startFakeOpenAI(opts: { validate?: boolean } = {}): Promise<FakeOpenAI> {
  const validate = opts.validate ?? true;
  const queue: FakeHandler[] = [];
  const requests: RecordedRequest[] = [];
  let unexpected = 0;
  const timers = new Set<NodeJS.Timeout>();

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: any = text;
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {
        /* keep the raw text */
      }
      const path = (req.url ?? '/').split('?')[0]!;
      const rec: RecordedRequest = { method: req.method ?? 'GET', path, headers: req.headers, body };
      requests.push(rec);

      const send = (status: number, payload: unknown, headers: Record<string, string> = {}) => {
        if (res.destroyed || res.writableEnded) return;
        const data = typeof payload === 'string' ? payload : JSON.stringify(payload);
        res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': uid('req'), ...headers }).end(data);
      };

      if (rec.method !== 'POST' || path !== '/v1/responses') {
        unexpected++;
        return send(404, apiError(`fake OpenAI: no route ${rec.method} ${path}`, 'invalid_request_error', 'not_found'));
      }
      if (validate) {
        const problem = checkRequest(body);
        if (problem) return send(400, apiError(problem, 'invalid_request_error', 'invalid_request'));
      }
      const handler = queue.shift();
      if (handler === undefined) {
        unexpected++;
        return send(500, apiError(`fake OpenAI: no scripted reply left for request #${requests.length}`, 'server_error'));
      }

      const deliver = async (reply: FakeReply): Promise<void> => {
        if ('delayMs' in reply && typeof reply.delayMs === 'number') {
          const next = (reply as FakeDelay).then;
          const t = setTimeout(() => {
            timers.delete(t);
            if (next !== undefined) void deliver(next);
          }, reply.delayMs);
          timers.add(t);
          return;
        }
        if ('status' in reply && typeof reply.status === 'number') {
          const e = reply as FakeHttpError;
          const headers = { ...(e.retryAfterMs !== undefined ? { 'retry-after-ms': String(e.retryAfterMs) } : {}), ...e.headers };
          return send(
            e.status,
            e.body ?? apiError(`fake OpenAI: scripted HTTP ${e.status}`, e.status >= 500 ? 'server_error' : 'invalid_request_error'),
            headers,
          );
        }
        send(200, buildResponse(reply as FakeResponse, body));
      };

      Promise.resolve(typeof handler === 'function' ? handler(body, rec) : handler)
        .then(deliver)
        .catch((err: unknown) => send(500, apiError(`fake OpenAI: handler threw: ${(err as Error)?.message ?? err}`, 'server_error')));
    });
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;

  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    get bodies() {
      return requests.filter((r) => r.path === '/v1/responses').map((r) => r.body);
    },
    enqueue(...handlers) {
      queue.push(...handlers);
    },
    get pending() {
      return queue.length;
    },
    get unexpected() {
      return unexpected;
    },
    close() {
      for (const t of timers) clearTimeout(t);
      timers.clear();
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

function apiError(message: string, type: string, code: string | null = null) {
  return { error: { message, type, param: null, code } };
}

/** A full wire Response from a partial one, echoing the request like the real API does. */
export function buildResponse(partial: FakeResponse, body: any = {}): WireResponse {
  const now = Math.floor(Date.now() / 1000);
  const output = (partial.output ?? []) as ResponseOutputItem[];
  const status = partial.status ?? 'completed';
  const usage: ResponseUsage = {
    input_tokens: 120,
    input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
    output_tokens: 40,
    output_tokens_details: { reasoning_tokens: output.some((o) => o.type === 'reasoning') ? 24 : 0 },
    total_tokens: 160,
  };
  const rsp: WireResponse = {
    id: uid('resp'),
    object: 'response',
    created_at: now,
    status,
    background: false,
    completed_at: status === 'completed' ? now : null,
    error: null,
    incomplete_details: null,
    instructions: typeof body?.instructions === 'string' ? body.instructions : null,
    max_output_tokens: body?.max_output_tokens ?? null,
    metadata: {},
    model: typeof body?.model === 'string' ? body.model : 'gpt-fake',
    output,
    parallel_tool_calls: body?.parallel_tool_calls ?? true,
    previous_response_id: null,
    reasoning: { effort: 'medium', summary: null },
    service_tier: 'default',
    store: body?.store ?? true,
    temperature: 1,
    text: { format: { type: 'text' }, verbosity: 'medium' },
    tool_choice: body?.tool_choice ?? 'auto',
    tools: Array.isArray(body?.tools) ? body.tools : [],
    top_p: 1,
    truncation: 'disabled',
    usage,
    ...(partial as Partial<WireResponse>),
  };
  return rsp;
}

// ---- wire output item builders ---------------------------------------------------------

export function wireMessage(text: string, id = uid('msg')): ResponseOutputMessage {
  return {
    id,
    type: 'message',
    status: 'completed',
    role: 'assistant',
    content: [{ type: 'output_text', text, annotations: [], logprobs: [] }],
  };
}

export function wireReasoning(
  summary: string,
  encrypted: string | null = `gAAAA${Buffer.from(summary).toString('base64')}`,
  id = uid('rs'),
): ResponseReasoningItem {
  return {
    id,
    type: 'reasoning',
    summary: summary ? [{ type: 'summary_text', text: summary }] : [],
    ...(encrypted !== null ? { encrypted_content: encrypted } : {}),
  };
}

/** `args` that is a string is sent raw (malformed JSON on purpose); anything else is JSON-encoded. */
export function wireFunctionCall(name: string, args: unknown, callId = uid('call'), id = uid('fc')): ResponseFunctionToolCall {
  return {
    id,
    type: 'function_call',
    status: 'completed',
    call_id: callId,
    name,
    arguments: typeof args === 'string' ? args : JSON.stringify(args),
  };
}

// ---- request checks, as the real API makes them ----------------------------------------

function checkRequest(body: any): string | null {
  if (!body || typeof body !== 'object') return 'We could not parse the JSON body of your request.';
  if (typeof body.model !== 'string' || !body.model) return "Missing required parameter: 'model'.";
  for (const tool of Array.isArray(body.tools) ? body.tools : []) {
    if (tool?.type === 'function' && tool.strict === true) {
      const p = strictProblem(tool.parameters, []);
      if (p) return `Invalid schema for function '${tool.name}': ${p}`;
    }
  }
  const input: any[] = typeof body.input === 'string' ? [] : Array.isArray(body.input) ? body.input : [];
  const seenCalls = new Set<string>();
  for (const [i, item] of input.entries()) {
    if (item?.type === 'function_call') seenCalls.add(item.call_id);
    if (item?.type === 'function_call_output' && !seenCalls.has(item.call_id)) {
      return `No tool call found for function call output with call_id ${item.call_id}. (input[${i}])`;
    }
    if (item?.type === 'reasoning' && body.store === false && typeof item.encrypted_content !== 'string') {
      return `Item with id '${item.id}' not found. Items are not persisted when \`store\` is set to false. Try again with \`store\` set to true, or remove this item from your input. (input[${i}])`;
    }
  }
  return null;
}

function strictProblem(schema: any, ctx: string[]): string | null {
  if (!schema || typeof schema !== 'object') return `In context=(${ctx.join(', ')}), schema must be an object.`;
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  if (types.includes('object')) {
    const keys = Object.keys(schema.properties ?? {});
    const required: string[] = Array.isArray(schema.required) ? schema.required : [];
    const missing = keys.find((k) => !required.includes(k));
    if (!Array.isArray(schema.required) || missing) {
      return `In context=(${ctx.map((c) => `'${c}'`).join(', ')}), 'required' is required to be supplied and to be an array including every key in properties. Missing '${missing ?? keys[0] ?? ''}'.`;
    }
    if (schema.additionalProperties !== false) {
      return `In context=(${ctx.map((c) => `'${c}'`).join(', ')}), 'additionalProperties' is required to be supplied and to be false.`;
    }
    for (const k of keys) {
      const p = strictProblem(schema.properties[k], [...ctx, 'properties', k]);
      if (p) return p;
    }
  }
  if (schema.items) {
    const p = strictProblem(schema.items, [...ctx, 'items']);
    if (p) return p;
  }
  if (schema.oneOf) return `In context=(${ctx.map((c) => `'${c}'`).join(', ')}), 'oneOf' is not permitted.`;
  for (const [i, b] of (Array.isArray(schema.anyOf) ? schema.anyOf : []).entries()) {
    const p = strictProblem(b, [...ctx, 'anyOf', String(i)]);
    if (p) return p;
  }
  for (const [k, d] of Object.entries(schema.$defs ?? {})) {
    const p = strictProblem(d, [...ctx, '$defs', k]);
    if (p) return p;
  }
  if ('default' in schema) return `In context=(${ctx.map((c) => `'${c}'`).join(', ')}), 'default' is not permitted.`;
  return null;
}

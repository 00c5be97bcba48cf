/**
 * The `openai` ModelClient: the official `openai` package, Responses API, strict JSON
 * Schema function tools, `store: false` (the caller owns the history and sends every
 * item back, reasoning items with their `encrypted_content` included),
 * `parallel_tool_calls: false`. `baseURL` points it at any compatible server
 * (OPENAI_BASE_URL, e.g. a local vLLM, or the fake server in tests).
 *
 * Retries: the package retries connection errors, timeouts, 408/409/429 and 5xx itself;
 * we allow `maxRetries` (default 1) so one transient 5xx does not stop a turn, while the
 * worst case stays bounded at (maxRetries + 1) × timeoutMs plus a short back-off. Anything
 * that still fails rejects with `ModelError` / `ModelTimeoutError` (see errors.ts); the
 * agent loop turns that into a stopped turn.
 */
import OpenAI from 'openai';
import type { Response as OAIResponse, ResponseCreateParamsNonStreaming, ResponseInputItem } from 'openai/resources/responses/responses';
import { abortedError, ModelError, ModelTimeoutError } from './errors.js';
import type { Item, ModelClient, ModelRequest, ModelResponse, ToolSpec } from './types.js';

export { ModelError, ModelTimeoutError } from './errors.js';
export type { ModelErrorCode } from './errors.js';
export { toStrictJsonSchema, normalizeStrictArgs, parseToolArgs } from './strictSchema.js';

export interface OpenAIClientOptions {
  apiKey: string;
  /** e.g. http://127.0.0.1:8000/v1 — any server that speaks the Responses API. Default: api.openai.com. */
  baseURL?: string;
  model: string;
  /** Per attempt. Default 60 s. */
  timeoutMs?: number;
  /** Retries done by the `openai` package (connection errors, timeouts, 429, 5xx). Default 1. */
  maxRetries?: number;
  /** Told about output items we do not understand (they are left out of `output`). */
  onWarning?: (message: string) => void;
}

export const DEFAULT_TIMEOUT_MS = 60_000;
export const DEFAULT_MAX_RETRIES = 1;

export function createOpenAIClient(opts: OpenAIClientOptions): ModelClient {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxRetries = opts.maxRetries ?? DEFAULT_MAX_RETRIES;
  const sdk = new OpenAI({
    apiKey: opts.apiKey,
    ...(opts.baseURL ? { baseURL: opts.baseURL } : {}),
    timeout: timeoutMs,
    maxRetries,
  });
  const warn = opts.onWarning ?? (() => {});

  return {
    name: `openai:${opts.model}`,
    async respond(req: ModelRequest): Promise<ModelResponse> {
      if (req.signal?.aborted) throw abortedError(req.signal);
      const body = buildRequestBody(opts.model, req);
      let rsp: OAIResponse;
      try {
        rsp = await sdk.responses.create(body, {
          timeout: timeoutMs,
          maxRetries,
          ...(req.signal ? { signal: req.signal } : {}),
        });
      } catch (err) {
        throw toModelError(err, req.signal, timeoutMs);
      }
      return mapResponse(rsp, warn);
    },
  };
}

/** The request body we send (exported for tests and for logging what was asked). */
export function buildRequestBody(model: string, req: ModelRequest): ResponseCreateParamsNonStreaming {
  return {
    model,
    instructions: req.instructions,
    input: req.input.map(toInputItem),
    tools: req.tools.map(toFunctionTool),
    tool_choice: 'auto',
    parallel_tool_calls: false,
    store: false,
    include: ['reasoning.encrypted_content'],
  };
}

function toFunctionTool(t: ToolSpec) {
  return { type: 'function' as const, name: t.name, description: t.description, parameters: t.parameters, strict: true };
}

/** Our Item → the wire input item, verbatim where the item came from the model. */
export function toInputItem(item: Item): ResponseInputItem {
  switch (item.type) {
    case 'message':
      if (item.role === 'assistant' && item.id) {
        // An output message sent back as it came (its id pairs it with a preceding reasoning item).
        return {
          type: 'message',
          id: item.id,
          role: 'assistant',
          status: 'completed',
          content: [{ type: 'output_text', text: item.content, annotations: [] }],
        };
      }
      return { type: 'message', role: item.role, content: item.content };
    case 'reasoning':
      return {
        type: 'reasoning',
        id: item.id,
        summary: item.summary.map((s) => ({ type: 'summary_text' as const, text: s.text })),
        ...(item.encrypted_content != null ? { encrypted_content: item.encrypted_content } : {}),
      };
    case 'function_call':
      return {
        type: 'function_call',
        call_id: item.call_id,
        name: item.name,
        arguments: item.arguments,
        ...(item.id ? { id: item.id } : {}),
      };
    case 'function_call_output':
      return { type: 'function_call_output', call_id: item.call_id, output: item.output };
  }
}

const str = (v: unknown): string => (typeof v === 'string' ? v : v == null ? '' : JSON.stringify(v));

/** The wire Response → our ModelResponse. Never throws on unknown or odd items. */
export function mapResponse(rsp: OAIResponse, warn: (m: string) => void = () => {}): ModelResponse {
  if (!rsp || typeof rsp !== 'object' || !Array.isArray(rsp.output)) {
    throw new ModelError('the model server answered with something that is not a Responses API object', { code: 'bad_response' });
  }
  const output: Item[] = [];
  for (const raw of rsp.output as unknown[]) {
    const it = raw as Record<string, any> | null;
    if (!it || typeof it !== 'object') continue;
    switch (it.type) {
      case 'message': {
        const parts: unknown[] = Array.isArray(it.content) ? it.content : [];
        const texts = parts.filter((p: any) => p?.type === 'output_text').map((p: any) => str(p.text));
        const refusals = parts.filter((p: any) => p?.type === 'refusal').map((p: any) => str(p.refusal));
        const content = texts.length ? texts.join('') : refusals.join('');
        output.push({ type: 'message', role: 'assistant', content, ...(typeof it.id === 'string' ? { id: it.id } : {}) });
        break;
      }
      case 'reasoning': {
        const summary = (Array.isArray(it.summary) ? it.summary : [])
          .filter((s: any) => s && typeof s.text === 'string')
          .map((s: any) => ({ type: 'summary_text' as const, text: s.text as string }));
        output.push({
          type: 'reasoning',
          id: str(it.id),
          summary,
          encrypted_content: typeof it.encrypted_content === 'string' ? it.encrypted_content : null,
        });
        break;
      }
      case 'function_call':
        output.push({
          type: 'function_call',
          call_id: str(it.call_id),
          name: str(it.name),
          arguments: str(it.arguments),
          ...(typeof it.id === 'string' ? { id: it.id } : {}),
        });
        break;
      default:
        warn(`ignored an output item of type ${JSON.stringify(it.type)} from the model server`);
    }
  }

  let status: ModelResponse['status'];
  let reason: string | undefined;
  switch (rsp.status) {
    case 'completed':
    case undefined: // some compatible servers omit it
      status = 'completed';
      break;
    case 'incomplete':
      status = 'incomplete';
      reason = rsp.incomplete_details?.reason ?? 'incomplete';
      break;
    case 'failed':
    case 'cancelled':
      status = 'failed';
      reason = rsp.error?.message ?? rsp.status;
      break;
    default:
      status = 'failed';
      reason = `unexpected response status ${JSON.stringify(rsp.status)}`;
  }
  const res: ModelResponse = { status, output };
  if (reason !== undefined) res.reason = reason;
  if (rsp.usage) res.usage = { inputTokens: rsp.usage.input_tokens ?? 0, outputTokens: rsp.usage.output_tokens ?? 0 };
  return res;
}

function toModelError(err: unknown, signal: AbortSignal | undefined, timeoutMs: number): ModelError {
  if (err instanceof ModelError) return err;
  if (err instanceof OpenAI.APIConnectionTimeoutError) {
    return new ModelTimeoutError(`model call timed out after ${timeoutMs} ms`, { timeoutMs, cause: err });
  }
  if (err instanceof OpenAI.APIUserAbortError || signal?.aborted) return abortedError(signal, err);
  if (err instanceof OpenAI.APIConnectionError) {
    return new ModelError(`cannot reach the model server: ${err.message}`, { code: 'network', cause: err });
  }
  if (err instanceof OpenAI.APIError && typeof err.status === 'number') {
    return new ModelError(`the model server answered HTTP ${err.status}: ${err.message}`, {
      code: 'http',
      status: err.status,
      cause: err,
    });
  }
  const msg = err instanceof Error ? err.message : String(err);
  return new ModelError(`the model server's answer could not be read: ${msg}`, { code: 'bad_response', cause: err });
}

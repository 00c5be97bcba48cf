/**
 * A ModelClient for tests: replays a script, one step per `respond` call.
 *
 * A step is
 *   - a ModelResponse, returned as is (deep-copied);
 *   - `{ throw: err }`, rejected with err;
 *   - `{ delayMs, then: step }`, the step after a delay — honours `req.signal` (rejects
 *     like the openai client does on abort) and the client's `timeoutMs` (rejects with
 *     ModelTimeoutError when the delay is longer), so timeouts can be simulated;
 *   - `(req) => ScriptStep | Promise<ScriptStep>`, to decide from the history (an async
 *     function must not resolve to `{ delayMs, then: <function> }`: promises treat any
 *     object with a callable `then` as a thenable — return it from a plain function).
 * Running out of steps rejects with a clear error (a ModelError with code 'scripted').
 * Every request is recorded in `calls` (input and tools deep-copied at call time).
 */
import { abortedError, ModelError, ModelTimeoutError } from './errors.js';
import type { Item, ModelClient, ModelRequest, ModelResponse } from './types.js';

export type ScriptStep =
  ModelResponse | { throw: Error } | { delayMs: number; then: ScriptStep } | ((req: ModelRequest) => ScriptStep | Promise<ScriptStep>);

export interface ScriptedClient extends ModelClient {
  /** Every request received, oldest first (the signal is kept by reference). */
  readonly calls: ModelRequest[];
  /** Steps not yet used. */
  readonly remaining: number;
  /** Append steps to the script. */
  push(...steps: ScriptStep[]): void;
}

export interface ScriptedClientOptions {
  name?: string;
  /** Like the openai client's timeout: a delayed step longer than this rejects with ModelTimeoutError after it. */
  timeoutMs?: number;
}

export function createScriptedClient(steps: ScriptStep[], opts: ScriptedClientOptions = {}): ScriptedClient {
  const queue = [...steps];
  const calls: ModelRequest[] = [];
  return {
    name: opts.name ?? 'scripted',
    calls,
    get remaining() {
      return queue.length;
    },
    push(...more) {
      queue.push(...more);
    },
    async respond(req) {
      const n = calls.length + 1;
      calls.push({
        instructions: req.instructions,
        input: structuredClone(req.input),
        tools: structuredClone(req.tools),
        ...(req.signal ? { signal: req.signal } : {}),
      });
      const step = queue.shift();
      if (step === undefined) {
        throw new ModelError(
          `scripted client: no step left for model call #${n} (the script has ${n - 1}); last input item: ${JSON.stringify(req.input.at(-1) ?? null)}`,
          { code: 'scripted' },
        );
      }
      return run(step, req, opts.timeoutMs);
    },
  };
}

async function run(step: ScriptStep, req: ModelRequest, timeoutMs: number | undefined): Promise<ModelResponse> {
  if (req.signal?.aborted) throw abortedError(req.signal);
  if (typeof step === 'function') {
    // Not `await step(req)` unconditionally: a `{ delayMs, then: fn }` would be taken for a thenable.
    const next = step(req);
    return run(next instanceof Promise ? await next : next, req, timeoutMs);
  }
  if ('throw' in step) throw step.throw;
  if ('delayMs' in step) {
    const timedOut = timeoutMs !== undefined && step.delayMs > timeoutMs;
    await sleep(timedOut ? timeoutMs : step.delayMs, req.signal);
    if (timedOut) throw new ModelTimeoutError(`model call timed out after ${timeoutMs} ms (scripted)`, { timeoutMs });
    return run(step.then, req, timeoutMs);
  }
  return structuredClone(step);
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortedError(signal));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

// ---- item and response builders -------------------------------------------------------

let seq = 0;
const nextId = (prefix: string) => `${prefix}_scripted_${++seq}`;

/** A function call. `args` that is a string is sent raw (use it for malformed JSON); anything else is JSON-encoded. */
export function fnCall(name: string, args: unknown, callId?: string): Extract<Item, { type: 'function_call' }> {
  return {
    type: 'function_call',
    call_id: callId ?? nextId('call'),
    name,
    arguments: typeof args === 'string' ? args : JSON.stringify(args ?? {}),
    id: nextId('fc'),
  };
}

/** An assistant message. */
export function message(text: string): Extract<Item, { type: 'message' }> {
  return { type: 'message', role: 'assistant', content: text, id: nextId('msg') };
}

/** A reasoning item with a summary and (opaque) encrypted content. */
export function reasoning(text: string, encrypted: string | null = `enc:${text}`): Extract<Item, { type: 'reasoning' }> {
  return { type: 'reasoning', id: nextId('rs'), summary: text ? [{ type: 'summary_text', text }] : [], encrypted_content: encrypted };
}

/** A completed response with these output items. */
export function completed(...output: Item[]): ModelResponse {
  return { status: 'completed', output, usage: { inputTokens: 10, outputTokens: 5 } };
}

/** An incomplete response (nothing in it may be dispatched), e.g. cut at max_output_tokens. */
export function incomplete(reason = 'max_output_tokens', ...output: Item[]): ModelResponse {
  return { status: 'incomplete', reason, output, usage: { inputTokens: 10, outputTokens: 5 } };
}

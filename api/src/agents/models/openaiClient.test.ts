/**
 * The real `openai` package ↔ a local fake Responses API server (test/helpers/fakeOpenAI.ts).
 * The test plays the agent loop: it owns the history and sends every item back.
 */
import { createServer } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startFakeOpenAI, wireFunctionCall, wireMessage, wireReasoning, type FakeOpenAI } from '../../../test/helpers/fakeOpenAI.js';
import { createOpenAIClient, ModelError, ModelTimeoutError, parseToolArgs, toStrictJsonSchema } from './openaiClient.js';
import type { Item, ModelClient, ToolSpec } from './types.js';

const ReadFileArgs = z.object({
  path: z.string().describe('path inside the project'),
  maxBytes: z.number().int().positive().optional(),
});
const SubmitPlanArgs = z.object({
  entry: z.object({ command: z.string(), args: z.array(z.string()).optional() }),
  hardware: z.enum(['cpu', 'cuda', 'rocm']),
  notes: z.string().nullable(),
});
const tools: ToolSpec[] = [
  { name: 'read_file', description: 'Read a file of the project (bounded).', parameters: toStrictJsonSchema(ReadFileArgs) },
  { name: 'submit_plan', description: 'Submit the plan.', parameters: toStrictJsonSchema(SubmitPlanArgs) },
];
const instructions = 'You are the planner.';
const user: Item = { type: 'message', role: 'user', content: 'train it for 2 epochs' };

let fake: FakeOpenAI;
let client: ModelClient;
const warnings: string[] = [];

beforeEach(async () => {
  fake = await startFakeOpenAI();
  warnings.length = 0;
  client = createOpenAIClient({
    apiKey: 'sk-test',
    baseURL: fake.baseURL,
    model: 'gpt-test',
    timeoutMs: 2_000,
    maxRetries: 0,
    onWarning: (m) => warnings.push(m),
  });
});
afterEach(async () => {
  await fake.close();
});

describe('openai client: request shape', () => {
  it('POSTs /v1/responses with store:false, no parallel calls, encrypted reasoning and strict tools', async () => {
    fake.enqueue({ output: [wireMessage('hello')] });
    const res = await client.respond({ instructions, input: [user], tools });

    expect(client.name).toBe('openai:gpt-test');
    expect(res).toEqual({
      status: 'completed',
      output: [{ type: 'message', role: 'assistant', content: 'hello', id: expect.any(String) }],
      usage: { inputTokens: 120, outputTokens: 40 },
    });
    expect(fake.requests).toHaveLength(1);
    const [r] = fake.requests;
    expect(r!.method).toBe('POST');
    expect(r!.path).toBe('/v1/responses');
    expect(r!.headers.authorization).toBe('Bearer sk-test');
    const body = r!.body;
    expect(body).toMatchObject({
      model: 'gpt-test',
      instructions,
      store: false,
      parallel_tool_calls: false,
      include: ['reasoning.encrypted_content'],
      tool_choice: 'auto',
      input: [{ type: 'message', role: 'user', content: 'train it for 2 epochs' }],
    });
    expect(body.stream).toBeFalsy();
    expect(body.tools).toHaveLength(2);
    for (const t of body.tools) {
      expect(t).toMatchObject({ type: 'function', strict: true });
      expect(t.parameters.additionalProperties).toBe(false);
      expect([...t.parameters.required].sort()).toEqual(Object.keys(t.parameters.properties).sort());
    }
    expect(body.tools[0]).toEqual({
      type: 'function',
      name: 'read_file',
      description: 'Read a file of the project (bounded).',
      strict: true,
      parameters: {
        type: 'object',
        properties: {
          path: { type: 'string', description: 'path inside the project' },
          maxBytes: { type: ['integer', 'null'], exclusiveMinimum: 0, maximum: Number.MAX_SAFE_INTEGER },
        },
        required: ['path', 'maxBytes'],
        additionalProperties: false,
      },
    });
    // nested objects are strict too
    expect(body.tools[1].parameters.properties.entry).toMatchObject({
      additionalProperties: false,
      required: ['command', 'args'],
      properties: { args: { type: ['array', 'null'] } },
    });
  });
});

describe('openai client: a multi-step exchange, caller-owned history', () => {
  it('carries reasoning items (encrypted_content verbatim) and call outputs back in input', async () => {
    const rs1 = wireReasoning('Need to look at the entry point first.', 'gAAAAB-opaque-blob-1==');
    const call1 = wireFunctionCall('read_file', { path: 'train.py', maxBytes: null }, 'call_A1');
    const rs2 = wireReasoning('Now I can plan.', 'gAAAAB-opaque-blob-2==');
    const call2 = wireFunctionCall(
      'submit_plan',
      { entry: { command: 'python train.py', args: ['--epochs', '2'] }, hardware: 'cpu', notes: null },
      'call_B2',
    );
    fake.enqueue({ output: [rs1, call1] }, { output: [rs2, call2] }, (body) => ({
      output: [wireMessage(`Planned after ${body.input.length} items.`)],
    }));

    const history: Item[] = [user];

    // step 1
    const r1 = await client.respond({ instructions, input: history, tools });
    expect(r1.status).toBe('completed');
    expect(r1.output).toEqual([
      {
        type: 'reasoning',
        id: rs1.id,
        summary: [{ type: 'summary_text', text: 'Need to look at the entry point first.' }],
        encrypted_content: 'gAAAAB-opaque-blob-1==',
      },
      { type: 'function_call', id: call1.id, call_id: 'call_A1', name: 'read_file', arguments: call1.arguments },
    ]);
    history.push(...r1.output);
    const fc1 = r1.output[1] as Extract<Item, { type: 'function_call' }>;
    const args1 = parseToolArgs(ReadFileArgs, fc1.arguments);
    expect(args1).toEqual({ ok: true, value: { path: 'train.py' } }); // the strict-mode null is dropped
    history.push({ type: 'function_call_output', call_id: fc1.call_id, output: 'import torch\n…' });

    // step 2
    const r2 = await client.respond({ instructions, input: history, tools });
    history.push(...r2.output);
    const fc2 = r2.output[1] as Extract<Item, { type: 'function_call' }>;
    expect(parseToolArgs(SubmitPlanArgs, fc2.arguments)).toEqual({
      ok: true,
      value: { entry: { command: 'python train.py', args: ['--epochs', '2'] }, hardware: 'cpu', notes: null },
    });
    history.push({ type: 'function_call_output', call_id: fc2.call_id, output: '{"ok":true}' });

    // step 3: final message
    const r3 = await client.respond({ instructions, input: history, tools });
    expect(r3.status).toBe('completed');
    expect(r3.output).toEqual([{ type: 'message', role: 'assistant', content: 'Planned after 7 items.', id: expect.any(String) }]);

    const [b1, b2, b3] = fake.bodies;
    expect(b1.input).toHaveLength(1);
    // The second request: the reasoning item exactly as the server sent it (minus nothing
    // it needs), then the call, then its output.
    expect(b2.input).toEqual([
      { type: 'message', role: 'user', content: 'train it for 2 epochs' },
      { type: 'reasoning', id: rs1.id, summary: rs1.summary, encrypted_content: 'gAAAAB-opaque-blob-1==' },
      { type: 'function_call', id: call1.id, call_id: 'call_A1', name: 'read_file', arguments: call1.arguments },
      { type: 'function_call_output', call_id: 'call_A1', output: 'import torch\n…' },
    ]);
    expect(b3.input.map((i: any) => i.type)).toEqual([
      'message',
      'reasoning',
      'function_call',
      'function_call_output',
      'reasoning',
      'function_call',
      'function_call_output',
    ]);
    expect(b3.input[4].encrypted_content).toBe('gAAAAB-opaque-blob-2==');
    for (const b of fake.bodies)
      expect(b).toMatchObject({ store: false, parallel_tool_calls: false, include: ['reasoning.encrypted_content'] });
    expect(fake.pending).toBe(0);
    expect(fake.unexpected).toBe(0);
  });

  it('sends an earlier assistant message back as an output message with its id', async () => {
    fake.enqueue(
      { output: [wireReasoning('think', 'enc-x'), wireMessage('Which entry point: a.py or b.py?', 'msg_1')] },
      { output: [wireMessage('ok')] },
    );
    const r1 = await client.respond({ instructions, input: [user], tools });
    await client.respond({ instructions, input: [user, ...r1.output, { type: 'message', role: 'user', content: 'a.py' }], tools });
    expect(fake.bodies[1].input[2]).toEqual({
      type: 'message',
      id: 'msg_1',
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: 'Which entry point: a.py or b.py?', annotations: [] }],
    });
    expect(fake.bodies[1].input[3]).toEqual({ type: 'message', role: 'user', content: 'a.py' });
  });
});

describe('openai client: odd responses are passed through faithfully', () => {
  it('incomplete → status incomplete with the reason (partial output kept, not to be dispatched)', async () => {
    fake.enqueue({
      status: 'incomplete',
      incomplete_details: { reason: 'max_output_tokens' },
      output: [wireReasoning('long thoughts', 'enc-i'), wireFunctionCall('read_file', '{"path": "tra', 'call_cut')],
    });
    const res = await client.respond({ instructions, input: [user], tools });
    expect(res.status).toBe('incomplete');
    expect(res.reason).toBe('max_output_tokens');
    expect(res.output.map((o) => o.type)).toEqual(['reasoning', 'function_call']);
  });

  it('malformed arguments and an unknown tool come through unchanged (validation is the loop’s job)', async () => {
    fake.enqueue({
      output: [
        wireFunctionCall('read_file', '{"path": "train.py",,}', 'call_bad'),
        wireFunctionCall('rm_rf', { path: '/' }, 'call_unknown'),
      ],
    });
    const res = await client.respond({ instructions, input: [user], tools });
    expect(res.status).toBe('completed');
    expect(res.output).toMatchObject([
      { type: 'function_call', call_id: 'call_bad', name: 'read_file', arguments: '{"path": "train.py",,}' },
      { type: 'function_call', call_id: 'call_unknown', name: 'rm_rf', arguments: '{"path":"/"}' },
    ]);
    const parsed = parseToolArgs(ReadFileArgs, (res.output[0] as any).arguments);
    expect(parsed.ok).toBe(false);
    expect(!parsed.ok && parsed.error).toMatch(/not valid JSON/);
  });

  it('a duplicate call id comes through as two calls (the loop rejects the second)', async () => {
    fake.enqueue({
      output: [
        wireFunctionCall('read_file', { path: 'a.py', maxBytes: null }, 'call_dup'),
        wireFunctionCall('read_file', { path: 'b.py', maxBytes: null }, 'call_dup'),
      ],
    });
    const res = await client.respond({ instructions, input: [user], tools });
    expect(res.output.filter((o) => o.type === 'function_call' && o.call_id === 'call_dup')).toHaveLength(2);
  });

  it('unknown output item types are left out of output, with a warning, and never crash', async () => {
    fake.enqueue({
      output: [
        { type: 'web_search_call', id: 'ws_1', status: 'completed', action: { type: 'search', query: 'x' } },
        { type: 'some_future_item', id: 'fut_1', payload: { a: 1 } },
        {
          id: 'msg_r',
          type: 'message',
          role: 'assistant',
          status: 'completed',
          content: [{ type: 'refusal', refusal: 'I cannot help with that.' }],
        },
        wireReasoning('no encrypted content', null),
      ],
    });
    const res = await client.respond({ instructions, input: [user], tools });
    expect(res.output).toEqual([
      { type: 'message', role: 'assistant', content: 'I cannot help with that.', id: 'msg_r' },
      {
        type: 'reasoning',
        id: expect.any(String),
        summary: [{ type: 'summary_text', text: 'no encrypted content' }],
        encrypted_content: null,
      },
    ]);
    expect(warnings).toHaveLength(2);
    expect(warnings[1]).toMatch(/some_future_item/);
  });

  it('failed → status failed with the server’s error message', async () => {
    fake.enqueue({ status: 'failed', error: { code: 'server_error', message: 'The model crashed.' }, output: [] });
    const res = await client.respond({ instructions, input: [user], tools });
    expect(res).toMatchObject({ status: 'failed', reason: 'The model crashed.', output: [] });
  });
});

describe('openai client: errors reject with ModelError / ModelTimeoutError', () => {
  it('a slow server → ModelTimeoutError within the timeout', async () => {
    const quick = createOpenAIClient({ apiKey: 'k', baseURL: fake.baseURL, model: 'm', timeoutMs: 300, maxRetries: 0 });
    fake.enqueue({ delayMs: 5_000, then: { output: [wireMessage('too late')] } });
    const t0 = Date.now();
    const err = await quick.respond({ instructions, input: [user], tools }).catch((e: unknown) => e);
    const elapsed = Date.now() - t0;
    expect(err).toBeInstanceOf(ModelTimeoutError);
    expect(err).toBeInstanceOf(ModelError);
    expect((err as Error).name).toBe('ModelTimeoutError');
    expect(elapsed).toBeGreaterThanOrEqual(250); // not before its timeout (the answer would come after 5 s)
  });

  it("the caller's signal: AbortSignal.timeout → ModelTimeoutError, a plain abort → ModelError 'aborted'", async () => {
    fake.enqueue({ delayMs: 5_000 }, { delayMs: 5_000 });
    const e1 = await client.respond({ instructions, input: [user], tools, signal: AbortSignal.timeout(200) }).catch((e: unknown) => e);
    expect((e1 as Error).name).toBe('ModelTimeoutError');
    const ac = new AbortController();
    setTimeout(() => ac.abort(new Error('job cancelled')), 100);
    const e2 = await client.respond({ instructions, input: [user], tools, signal: ac.signal }).catch((e: unknown) => e);
    expect(e2).toBeInstanceOf(ModelError);
    expect((e2 as Error).name).toBe('ModelError');
    expect((e2 as ModelError).code).toBe('aborted');
    // already aborted: no request at all
    const e3 = await client.respond({ instructions, input: [user], tools, signal: AbortSignal.abort() }).catch((e: unknown) => e);
    expect((e3 as ModelError).code).toBe('aborted');
    expect(fake.requests).toHaveLength(2);
  });

  it('HTTP 500 → ModelError with the status (maxRetries: 0 → one request)', async () => {
    fake.enqueue({ status: 500 });
    const err = await client.respond({ instructions, input: [user], tools }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelError);
    expect((err as Error).name).toBe('ModelError');
    expect(err).toMatchObject({ code: 'http', status: 500 });
    expect(fake.requests).toHaveLength(1);
  });

  it('by default the package retries once: 500 then 200 succeeds; 500 twice fails after two requests', async () => {
    const retrying = createOpenAIClient({ apiKey: 'k', baseURL: fake.baseURL, model: 'm', timeoutMs: 2_000 });
    fake.enqueue({ status: 500, retryAfterMs: 1 }, { output: [wireMessage('second try')] });
    const ok = await retrying.respond({ instructions, input: [user], tools });
    expect(ok.output[0]).toMatchObject({ content: 'second try' });
    expect(fake.requests).toHaveLength(2);

    fake.enqueue({ status: 503, retryAfterMs: 1 }, { status: 503, retryAfterMs: 1 });
    const err = await retrying.respond({ instructions, input: [user], tools }).catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'ModelError', code: 'http', status: 503 });
    expect(fake.requests).toHaveLength(4);
  });

  it('a 400 from the server (here: reasoning sent back without encrypted_content) → ModelError 400', async () => {
    const err = await client
      .respond({
        instructions,
        input: [
          user,
          { type: 'reasoning', id: 'rs_x', summary: [], encrypted_content: null },
          { type: 'message', role: 'user', content: 'go on' },
        ],
        tools,
      })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'ModelError', code: 'http', status: 400 });
    expect((err as Error).message).toMatch(/not persisted when `store` is set to false/);
  });

  it('nothing listening → ModelError network', async () => {
    const port = await new Promise<number>((resolve) => {
      const s = createServer();
      s.listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    const dead = createOpenAIClient({ apiKey: 'k', baseURL: `http://127.0.0.1:${port}/v1`, model: 'm', timeoutMs: 1_000, maxRetries: 0 });
    const err = await dead.respond({ instructions, input: [user], tools }).catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'ModelError', code: 'network' });
  });

  it('a 200 that is not a Response object → ModelError bad_response', async () => {
    fake.enqueue({ status: 200, body: { hello: 'world' } });
    const err = await client.respond({ instructions, input: [user], tools }).catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'ModelError', code: 'bad_response' });
  });
});

import { describe, expect, it } from 'vitest';
import { ModelError, ModelTimeoutError } from './errors.js';
import { completed, createScriptedClient, fnCall, incomplete, message, reasoning } from './scriptedClient.js';
import type { Item, ModelRequest } from './types.js';

const req = (input: Item[] = [{ type: 'message', role: 'user', content: 'hi' }], signal?: AbortSignal): ModelRequest => ({
  instructions: 'be useful',
  input,
  tools: [
    { name: 'read_file', description: 'read', parameters: { type: 'object', properties: {}, required: [], additionalProperties: false } },
  ],
  ...(signal ? { signal } : {}),
});

describe('scripted client', () => {
  it('replays responses in order and records every request (deep-copied)', async () => {
    const r = reasoning('look first', 'enc-1');
    const c = fnCall('read_file', { path: 'a.py' }, 'call_1');
    const client = createScriptedClient([completed(r, c), completed(message('done'))]);
    expect(client.name).toBe('scripted');
    expect(client.remaining).toBe(2);

    const history: Item[] = [{ type: 'message', role: 'user', content: 'hi' }];
    const r1 = await client.respond(req(history));
    expect(r1).toEqual({ status: 'completed', output: [r, c], usage: { inputTokens: 10, outputTokens: 5 } });
    r1.output.length = 0; // mutating a returned response does not touch the script
    history.push(r, c, { type: 'function_call_output', call_id: 'call_1', output: 'x' });
    const r2 = await client.respond(req(history));
    expect(r2.output).toEqual([{ type: 'message', role: 'assistant', content: 'done', id: expect.any(String) }]);

    expect(client.calls).toHaveLength(2);
    expect(client.calls[0]!.input).toHaveLength(1); // copied at call time, not a live reference
    expect(client.calls[1]!.input).toHaveLength(4);
    expect(client.calls[1]!.instructions).toBe('be useful');
    expect(client.remaining).toBe(0);
  });

  it('builders: fnCall encodes objects and keeps strings raw; reasoning carries encrypted content', () => {
    expect(fnCall('t', { a: 1 }, 'c1')).toMatchObject({ type: 'function_call', name: 't', call_id: 'c1', arguments: '{"a":1}' });
    expect(fnCall('t', '{"a":').arguments).toBe('{"a":');
    expect(fnCall('t', {}).call_id).not.toBe(fnCall('t', {}).call_id);
    expect(reasoning('why', 'ENC')).toMatchObject({
      type: 'reasoning',
      summary: [{ type: 'summary_text', text: 'why' }],
      encrypted_content: 'ENC',
    });
    expect(incomplete()).toMatchObject({ status: 'incomplete', reason: 'max_output_tokens', output: [] });
  });

  it('a { throw } step rejects with that error', async () => {
    const boom = new Error('boom');
    const client = createScriptedClient([{ throw: boom }, completed(message('after'))]);
    await expect(client.respond(req())).rejects.toBe(boom);
    await expect(client.respond(req())).resolves.toMatchObject({ status: 'completed' });
  });

  it('a function step decides from the history (sync or async), and may return another step', async () => {
    const client = createScriptedClient([
      (r) => completed(message(`saw ${r.input.length} items`)),
      async (r) => completed(message(`last: ${(r.input.at(-1) as { content: string }).content}`)),
      () => ({ delayMs: 10, then: (r: ModelRequest) => completed(message(r.instructions)) }),
      () => ({ throw: new Error('from a function') }),
    ]);
    expect((await client.respond(req())).output[0]).toMatchObject({ content: 'saw 1 items' });
    expect((await client.respond(req())).output[0]).toMatchObject({ content: 'last: hi' });
    expect((await client.respond(req())).output[0]).toMatchObject({ content: 'be useful' });
    await expect(client.respond(req())).rejects.toThrow('from a function');
  });

  it('a delayed step honours the signal: abort → ModelError aborted, AbortSignal.timeout → ModelTimeoutError', async () => {
    const client = createScriptedClient([
      { delayMs: 5_000, then: completed(message('late')) },
      { delayMs: 5_000, then: completed(message('late')) },
      { delayMs: 20, then: completed(message('in time')) },
    ]);
    const t0 = Date.now();
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 30);
    const e1 = await client.respond(req(undefined, ac.signal)).catch((e: unknown) => e);
    expect(e1).toMatchObject({ name: 'ModelError', code: 'aborted' });
    const e2 = await client.respond(req(undefined, AbortSignal.timeout(30))).catch((e: unknown) => e);
    expect(e2).toBeInstanceOf(ModelTimeoutError);
    expect(Date.now() - t0).toBeLessThan(1_000);
    await expect(client.respond(req(undefined, new AbortController().signal))).resolves.toMatchObject({ output: [{ content: 'in time' }] });
  });

  it("a delay longer than the client's timeoutMs → ModelTimeoutError after timeoutMs", async () => {
    const client = createScriptedClient(
      [
        { delayMs: 10_000, then: completed() },
        { delayMs: 5, then: completed() },
      ],
      { timeoutMs: 50 },
    );
    const t0 = Date.now();
    const err = await client.respond(req()).catch((e: unknown) => e);
    expect((err as Error).name).toBe('ModelTimeoutError');
    expect(Date.now() - t0).toBeLessThan(1_000);
    await expect(client.respond(req())).resolves.toMatchObject({ status: 'completed' });
  });

  it('running out of steps rejects with a clear error', async () => {
    const client = createScriptedClient([completed(message('only one'))]);
    await client.respond(req());
    const err = await client.respond(req()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelError);
    expect((err as Error).message).toMatch(/no step left for model call #2 \(the script has 1\)/);
    client.push(completed(message('more')));
    await expect(client.respond(req())).resolves.toMatchObject({ output: [{ content: 'more' }] });
  });

  it('replays odd outputs as given: malformed args, unknown tool, duplicate ids, incomplete', async () => {
    const script = [
      completed(fnCall('read_file', '{"path":', 'c1')),
      completed(fnCall('no_such_tool', {}, 'c2')),
      completed(fnCall('read_file', { path: 'a' }, 'dup'), fnCall('read_file', { path: 'b' }, 'dup')),
      incomplete('max_output_tokens', fnCall('read_file', { path: 'a' }, 'c3')),
    ];
    const client = createScriptedClient(script);
    const outs = [];
    for (let i = 0; i < script.length; i++) outs.push(await client.respond(req()));
    expect(outs).toEqual(script);
  });
});

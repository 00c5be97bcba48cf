/**
 * The one interface every model client implements (openai, builtin, scripted).
 * Items follow the OpenAI Responses API shapes, because that is the richest format
 * we speak; the caller owns the history (store: false) and sends every item back,
 * reasoning items with their encrypted content included.
 */

/** A function tool: JSON Schema parameters in strict mode (every property required, optional ones nullable, no additional properties). */
export interface ToolSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

export type Item =
  | { type: 'message'; role: 'user' | 'assistant' | 'system' | 'developer'; content: string; id?: string }
  | { type: 'reasoning'; id: string; summary: { type: 'summary_text'; text: string }[]; encrypted_content?: string | null }
  | { type: 'function_call'; call_id: string; name: string; arguments: string; id?: string }
  | { type: 'function_call_output'; call_id: string; output: string };

export interface ModelRequest {
  /** System/developer instructions for this agent. */
  instructions: string;
  /** The whole history so far, oldest first. */
  input: Item[];
  tools: ToolSpec[];
  signal?: AbortSignal;
}

export interface ModelResponse {
  /** `incomplete`: the output was cut (e.g. max tokens): nothing in it may be dispatched. */
  status: 'completed' | 'incomplete' | 'failed';
  output: Item[];
  /** Why it is incomplete or failed, when the server says. */
  reason?: string;
  usage?: { inputTokens: number; outputTokens: number };
}

export interface ModelClient {
  /** e.g. "builtin", "openai:gpt-5-mini", "scripted" — recorded as the plan's author. */
  readonly name: string;
  respond(req: ModelRequest): Promise<ModelResponse>;
}

export type { Item, ModelClient, ModelRequest, ModelResponse, ToolSpec } from './types.js';
export { ModelError, ModelTimeoutError, abortedError, type ModelErrorCode } from './errors.js';
export { createOpenAIClient, type OpenAIClientOptions } from './openaiClient.js';
export { createScriptedClient, type ScriptStep, type ScriptedClient } from './scriptedClient.js';
export { toStrictJsonSchema, normalizeStrictArgs, parseToolArgs, type ToolArgsResult } from './strictSchema.js';

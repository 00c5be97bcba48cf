import type { Config } from '../config.js';
import { createBuiltinClient } from './builtin/builtinModel.js';
import type { ModelClient } from './models/types.js';

/** `openai` when OPENAI_API_KEY is set (any compatible server via OPENAI_BASE_URL), else `builtin`. */
export async function modelFor(config: Config): Promise<ModelClient> {
  if (!config.openai.apiKey) return createBuiltinClient();
  const { createOpenAIClient } = await import('./models/openaiClient.js');
  return createOpenAIClient({
    apiKey: config.openai.apiKey,
    model: config.openai.model,
    timeoutMs: config.agents.turnSec * 1000,
    ...(config.openai.baseUrl ? { baseURL: config.openai.baseUrl } : {}),
  });
}

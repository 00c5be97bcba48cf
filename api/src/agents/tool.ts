import { z } from 'zod';
import type { Prisma } from '../db/client.js';
import type { Resources } from '../domain/resources.js';
import type { ModelClient, ToolSpec } from './models/types.js';

type Tx = Parameters<Parameters<Prisma['$transaction']>[0]>[0];

export interface ToolContext {
  r: Resources;
  model: ModelClient;
  jobId: string;
  runId: string;
  callId: string;
  agent: AgentDef;
}

export interface ToolResult {
  output: unknown;
  /** `wait`: the run pauses (e.g. a question to the user); `finish`: the run is done. */
  control?: 'wait' | 'finish';
  /** Job events the effect recorded; the loop announces them after commit. */
  eventIds?: string[];
}

export interface ToolDef<A = any> {
  name: string;
  description: string;
  schema: z.ZodType<A>;
  /**
   * Side-effecting tools write an Action row (idempotency key = the call id) in the same
   * transaction as their effect, so a crash leaves either both or neither.
   */
  sideEffect?: (args: A, ctx: ToolContext, tx: Tx) => Promise<ToolResult>;
  /** Read-only tools: safe to run again after a crash. */
  read?: (args: A, ctx: ToolContext) => Promise<ToolResult>;
  /** Scope and limit checks beyond the schema; a string is the error returned to the model. */
  check?: (args: A, ctx: ToolContext) => Promise<string | null>;
  /** After the action committed (outside the transaction): emit events, kick off work. */
  after?: (args: A, result: ToolResult, ctx: ToolContext) => Promise<void>;
}

export interface AgentDef {
  name: string;
  instructions: string;
  tools: ToolDef[];
}

export function defineTool<S extends z.ZodType>(def: ToolDef<z.infer<S>> & { schema: S }): ToolDef<z.infer<S>> {
  return def;
}

/**
 * JSON Schema for a tool in strict mode: every property required, optional ones
 * nullable, no additional properties (what the Responses API's strict tools demand).
 */
export function toolSpec(tool: ToolDef): ToolSpec {
  return { name: tool.name, description: tool.description, parameters: strictify(z.toJSONSchema(tool.schema, { target: 'draft-7' }) as Record<string, unknown>) };
}

function strictify(schema: Record<string, unknown>): Record<string, unknown> {
  const s: Record<string, unknown> = { ...schema };
  delete s.$schema;
  if (s.type === 'object' && s.properties && typeof s.properties === 'object') {
    const props = s.properties as Record<string, Record<string, unknown>>;
    const required = new Set((s.required as string[] | undefined) ?? []);
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(props)) {
      let p = strictify(v);
      if (!required.has(k)) p = { anyOf: [p, { type: 'null' }] };
      out[k] = p;
    }
    s.properties = out;
    s.required = Object.keys(props);
    s.additionalProperties = false;
  }
  if (s.items && typeof s.items === 'object') s.items = strictify(s.items as Record<string, unknown>);
  for (const key of ['anyOf', 'oneOf', 'allOf']) {
    if (Array.isArray(s[key])) s[key] = (s[key] as Record<string, unknown>[]).map(strictify);
  }
  return s;
}

import { z } from 'zod';
import type { Tx } from '../db/types.js';
import type { Resources } from '../domain/resources.js';
import { toStrictJsonSchema } from './models/strictSchema.js';
import type { ModelClient, ToolSpec } from './models/types.js';

export interface ToolContext {
  r: Resources;
  model: ModelClient;
  jobId: string;
  runId: string;
  callId: string;
  /** Who holds the job's agent lock for this run; every side effect verifies it (runAction). */
  holder: string;
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
  sideEffect?: (args: A, ctx: ToolContext, tx: Tx, prepared: unknown) => Promise<ToolResult>;
  /**
   * Work a side effect needs that must not run inside its transaction (reading blobs, running a
   * Python check, writing content-addressed blobs — on the embedded database, one connection, a
   * query outside the transaction would wait for it to end). It runs just before, again on a retry:
   * it must be idempotent. Its result is the side effect's `prepared`.
   */
  prepare?: (args: A, ctx: ToolContext) => Promise<unknown>;
  /** Read-only tools: safe to run again after a crash. */
  read?: (args: A, ctx: ToolContext) => Promise<ToolResult>;
  /**
   * A read whose answer depends only on the job's files (list_files, read_file, …): the same call
   * twice in one run can only be a loop, so the loop refuses the repeat and points at the output
   * the model already has.
   */
  stable?: boolean;
  /** Scope and limit checks beyond the schema; a string is the error returned to the model. */
  check?: (args: A, ctx: ToolContext) => Promise<string | null>;
  /**
   * The control (`wait` / `finish`) the effect returns. A crash between the action's commit
   * and its saved result loses the returned ToolResult; recovery records the Action's
   * outcome and needs this to stop the run the same way (e.g. ask_user → wait for the
   * answer instead of calling the model again, which would ask a second question). A
   * function of the call's arguments when it depends on them (take_action's kinds).
   */
  recoveredControl?: ToolResult['control'] | ((args: A) => ToolResult['control']);
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

/** The tool as the model sees it: strict JSON Schema parameters (models/strictSchema.ts). */
export function toolSpec(tool: ToolDef): ToolSpec {
  return { name: tool.name, description: tool.description, parameters: toStrictJsonSchema(tool.schema) as Record<string, unknown> };
}

/**
 * A planner conversation made of recorded tool outputs, for the unit tests of the builtin planner's
 * rules (api/src/agents/builtin/planner/*.test.ts): the task message as the pipeline writes it, the
 * three facts every plan starts from (list_files, find_dependencies, network_capacity, shaped like
 * the real tools' outputs), files read whole, other tools' outputs and the user's answers; and the
 * table run on it up to a rule.
 */
import type { EntryPoint, ProjectFacts } from '../../src/agents/planner/analyzeProject.js';
import type { WorkerClass } from '../../src/domain/workers/networkCapacity.js';
import type { Item } from '../../src/agents/models/types.js';
import { planningOf, type Planning, type PlannerRule } from '../../src/agents/builtin/planner/planning.js';
import { PLANNER_RULES } from '../../src/agents/builtin/planner/rules.js';

export interface Recorded {
  request: string;
  preference?: string;
  /** Paths of the upload (files read are added). */
  files?: string[];
  facts?: Partial<ProjectFacts>;
  classes?: WorkerClass[];
  /** read_file outputs: each file whole, in one page. */
  reads?: Record<string, string>;
  /** Other tools' outputs, in order: [tool name, output]. */
  tools?: [string, unknown][];
  /** The user's answers to questions (each as the pipeline words it: "question: answer"). */
  answers?: string[];
}

/** One CPU worker with torch, as network_capacity reports it. */
export const CPU_WORKER: WorkerClass = {
  accelVendor: 'none',
  count: 1,
  workloads: ['python', 'shell', 'torch-cpu'],
  pythonVersions: ['3.11.2'],
  torchVersions: ['2.1.0'],
  numpyVersions: ['1.24.2'],
  maxMemoryMiB: 16000,
  maxAccelMemoryMiB: 0,
  accelerators: [],
  modules: null,
  installers: 1,
};
export const NVIDIA_WORKER: WorkerClass = {
  ...CPU_WORKER,
  accelVendor: 'nvidia',
  workloads: ['python', 'shell', 'torch-cpu', 'torch-cuda'],
  accelerators: ['NVIDIA H100'],
  maxAccelMemoryMiB: 80000,
};

/** An entry point as find_dependencies reports it. */
export const entry = (path: string, over: Partial<EntryPoint> = {}): EntryPoint => ({
  path,
  kind: 'main-guard',
  cli: 'argparse',
  flags: [],
  positionals: [],
  savesCheckpoint: false,
  hardwiredCuda: [],
  reportsMetrics: [],
  ...over,
});

export function conversation(r: Recorded): Item[] {
  const items: Item[] = [
    {
      type: 'message',
      role: 'user',
      content: `Job title: test\nRequest: ${r.request}\nHardware preference: ${r.preference ?? 'any'}\nSpending cap: none`,
    },
  ];
  let n = 0;
  const tool = (name: string, output: unknown) => {
    const id = `call_${++n}`;
    items.push(
      { type: 'function_call', call_id: id, name, arguments: '{}' },
      { type: 'function_call_output', call_id: id, output: JSON.stringify(output) },
    );
  };
  const files = [...new Set([...(r.files ?? []), ...Object.keys(r.reads ?? {}), ...(r.facts?.entryPoints ?? []).map((e) => e.path)])];
  tool('list_files', { files: files.map((path) => ({ path, size: r.reads?.[path]?.length ?? 100 })), total: files.length });
  const facts: ProjectFacts = {
    pins: [],
    usage: [],
    imports: [],
    importsByFile: {},
    localModules: [],
    entryPoints: [],
    cudaSources: [],
    dataFolders: [],
    usesTorch: false,
    notes: [],
    ...r.facts,
  };
  tool('find_dependencies', facts);
  const classes = r.classes ?? [CPU_WORKER];
  tool('network_capacity', {
    classes,
    summary: classes.length
      ? classes
          .map((c) => `${c.count} ${c.accelVendor === 'none' ? 'CPU' : c.accelVendor} worker(s) (${c.workloads.join(', ')})`)
          .join('; ')
      : 'no worker online',
  });
  for (const [path, content] of Object.entries(r.reads ?? {})) tool('read_file', { path, offset: 0, content, nextOffset: null });
  for (const [name, output] of r.tools ?? []) tool(name, output);
  for (const a of r.answers ?? []) items.push({ type: 'message', role: 'user', content: a });
  return items;
}

/** A tool call as the planner answers it. */
export interface Answer {
  name: string;
  args: Record<string, unknown>;
}

/**
 * The table run on the conversation up to `upTo` (included): the first answer of a rule (a tool
 * call), or the draft as the rules left it when none answered.
 */
export function runRules(r: Recorded, upTo: PlannerRule = PLANNER_RULES.at(-1)!): { answer: Answer | null; planning: Planning } {
  const planning = planningOf(conversation(r));
  if (Array.isArray(planning)) throw new Error('the recorded conversation lacks a fact');
  const end = PLANNER_RULES.indexOf(upTo);
  if (end < 0) throw new Error('not a rule of the table');
  for (const rule of PLANNER_RULES.slice(0, end + 1)) {
    const items = rule(planning);
    const call = items?.find((i): i is Extract<Item, { type: 'function_call' }> => i.type === 'function_call');
    if (call) return { answer: { name: call.name, args: JSON.parse(call.arguments) as Record<string, unknown> }, planning };
  }
  return { answer: null, planning };
}

/**
 * The builtin planner's state. `planningOf` reads the conversation so far (the tool outputs, the
 * request, the user's answers) after the three facts every plan starts from — the files, the
 * project's facts, the network's capacity — and returns a `Planning`: that reading, and a draft of
 * the plan with every part at its "nothing decided" value. The rules of the table (rules.ts) then
 * run in order; each reads what the rules before it decided, adds its part to the draft, and
 * either lets the next rule go on (undefined) or answers with the one tool call the plan needs
 * next (a file to read, a question, a refusal, or submit_plan from the last rule).
 */
import { randomUUID } from 'node:crypto';
import type { EntryPoint, Pin, ProjectFacts } from '../../planner/analyzeProject.js';
import type { TorchApiCheck } from '../../planner/torchApis.js';
import type { Ask } from '../../planner/contract.js';
import type { AskDisposition } from '../../../domain/jobs/planSchema.js';
import type { ShardsSpec } from '../../../domain/jobs/shards.js';
import type { WorkerClass } from '../../../domain/workers/networkCapacity.js';
import type { Item } from '../../models/types.js';
import { emptyAskPlan, type AskPlan } from './disposeAsks.js';
import type { RunScale } from './workload.js';

/** Each tool's outputs in the order they came (JSON parsed where it parses). */
export type Outputs = Map<string, unknown[]>;

export function toolOutputs(history: Item[]): Outputs {
  const names = new Map<string, string>();
  const out: Outputs = new Map();
  for (const i of history) {
    if (i.type === 'function_call') names.set(i.call_id, i.name);
    if (i.type === 'function_call_output') {
      const name = names.get(i.call_id);
      if (!name) continue;
      let v: unknown;
      try {
        v = JSON.parse(i.output);
      } catch {
        v = i.output;
      }
      out.set(name, [...(out.get(name) ?? []), v]);
    }
  }
  return out;
}

export const call = (name: string, args: Record<string, unknown>): Item[] => [
  { type: 'function_call', call_id: `call_${randomUUID()}`, name, arguments: JSON.stringify(args) },
];
export const say = (text: string): Item[] => [{ type: 'message', role: 'assistant', content: text }];
/** The user's messages, in order (the task first, then the answers to questions). */
export const userTexts = (history: Item[]) =>
  history.filter((i): i is Extract<Item, { type: 'message' }> => i.type === 'message' && i.role === 'user').map((m) => m.content);

/** How much of one file the builtin planner reads, page by page (a 5 MB script is not read whole). */
export const READ_ALL_CHARS = 200_000;

export type Threshold = { name: string; op: string; value: number };
export type Hardware = { workload: string; accelVendor?: string };
/** `network: 'download'`: a data download, the only kind of step that gets the network (dataDownloads.ts). */
export type PipelineStep = { name: string; command: string; produces: string[]; network?: 'download'; urls?: string[] };

/** A rule of the table: undefined lets the next rule go on; items are the planner's answer. */
export type PlannerRule = (p: Planning) => Item[] | undefined;

export interface Planning {
  // ── What the conversation says ──
  out: Outputs;
  last: <T>(name: string) => T | undefined;
  /** The task message as the job gives it, the request in it, its hardware preference. */
  task: string;
  request: string;
  preference: string;
  /** How many questions were asked, and the answer to the one whose text holds `marker`. */
  asked: number;
  answerTo: (marker: string) => string | undefined;
  facts: ProjectFacts;
  cap: { classes: WorkerClass[]; summary: string };
  online: boolean;
  uploaded: Set<string>;
  /** A file as read so far (its pages joined; '' when it came back binary or unreadable), or undefined. */
  readOf: (path: string) => string | undefined;
  /** The read_file call the next missing page of a file needs (up to READ_ALL_CHARS), or null when it is all here. */
  readCall: (path: string) => { path: string; offset?: number } | null;
  /** Does `reader`'s source name a file `products` (a preparation script's literal outputs) holds? */
  readsAny: (reader: string, products: string[]) => boolean;

  // ── The draft, in the order the rules decide it ──
  /** torchPins: pins the workers' versions do not meet; the torch check whose calls the plan migrates. */
  blocking: Pin[];
  versionMigrate: TorchApiCheck | null;
  /** entryPoint: what runs and its source (read whole). Every rule after entryPoint may use it. */
  entry: EntryPoint;
  source: string;
  /** configChoice: a configurator's config file and its settings. */
  configFile: string | null;
  configSettings: Record<string, string>;
  /** pipelineSteps: the steps before the run and the preparation script they run. */
  before: PipelineStep[];
  prepareScript: string | null;
  /** hardwareChoice. */
  hardware: Hardware;
  migrate: boolean;
  toAmd: boolean;
  torchPin: Pin | undefined;
  minTorch: string | null;
  /** commandArgs and runOutputs: the command's arguments and what the run keeps. */
  args: string[];
  positionals: number;
  checkpoint: string | null;
  resumable: { path: string; flag?: string } | null;
  resultFiles: string[];
  outputs: Set<string>;
  writes: string[];
  /** requestAsks: the request's asks and how they are honoured. */
  asks: Ask[];
  localFiles: string[];
  metrics: Threshold[];
  askPlan: AskPlan;
  /** startCommand and smokeRun. */
  runner: string;
  command: string;
  bounded: string;
  smoke: { command: string; timeoutSec: number; scale: RunScale } | null;
  /** dataDownloads: the plan's words on each data download (which URLs, and why its step has the network). */
  downloads: string[];
  /** distributedLaunch: a DDP script under the launcher — its process count (the plan's hardware.devices) and the plan's words on it. */
  launch: { processes: number; words: string } | null;
  /** sharding and requestedSweep. */
  sharding: { spec: ShardsSpec | null; reason: string } | null;
  sweepDispositions: AskDisposition[];
  /** settleAsks: every ask's disposition, in the request's order. */
  dispositions: AskDisposition[];
  /** evaluation. */
  evaluate: { checkpoint: string; command: string; metrics: Threshold[]; reports: string[] } | undefined;
  evalFile: string | null;
  runMetrics: Threshold[];
  /** dependencies. */
  install: string[];
  /** preparationSteps. */
  preparation: Record<string, unknown> | null;
}

/** Before the entry point is chosen (no rule before entryPoint reads it). */
const NO_ENTRY: EntryPoint = { path: '', flags: [], savesCheckpoint: false, hardwiredCuda: [], reportsMetrics: [] };

/** The planner's state from the conversation, or the call for a fact it still lacks. */
export function planningOf(history: Item[]): Planning | Item[] {
  const out = toolOutputs(history);
  const last = <T>(name: string) => out.get(name)?.at(-1) as T | undefined;
  if (!last('list_files')) return call('list_files', {});
  if (!last('find_dependencies')) return call('find_dependencies', {});
  if (!last('network_capacity')) return call('network_capacity', {});
  const userText = userTexts(history);
  const task = userText[0] ?? '';
  const answers = userText.slice(1);
  const cap = last<{ classes: WorkerClass[]; summary: string }>('network_capacity')!;
  // A file is read page by page, each page once; one that came back binary or unreadable reads as ''.
  type Page = { path?: string; offset?: number; content?: string; nextOffset?: number };
  const pagesOf = (p: string) =>
    ((out.get('read_file') ?? []) as Page[])
      .filter((x) => x && typeof x === 'object' && x.path === p)
      .sort((a, b) => (a.offset ?? 0) - (b.offset ?? 0));
  const readOf = (p: string) => {
    const pages = pagesOf(p);
    return pages.length ? pages.map((x) => x.content ?? '').join('') : undefined;
  };
  const readCall = (p: string): { path: string; offset?: number } | null => {
    const pages = pagesOf(p);
    if (pages.length === 0) return { path: p };
    const next = pages.at(-1)!.nextOffset;
    return typeof next === 'number' && next < READ_ALL_CHARS && !pages.some((x) => x.offset === next) ? { path: p, offset: next } : null;
  };
  return {
    out,
    last,
    task,
    request: /Request:\s*([\s\S]*?)(?:\n[A-Z][\w ]+:|$)/.exec(task)?.[1]?.trim() ?? task,
    preference: /Hardware preference:\s*(\w+)/.exec(task)?.[1] ?? 'any',
    asked: (out.get('ask_user') ?? []).length,
    answerTo: (marker) => answers.find((a) => a.includes(marker)),
    facts: last<ProjectFacts>('find_dependencies')!,
    cap,
    online: cap.classes.length > 0,
    uploaded: new Set((last<{ files: { path: string }[] }>('list_files')?.files ?? []).map((f) => f.path)),
    readOf,
    readCall,
    readsAny: (reader, products) => products.some((f) => (readOf(reader) ?? '').includes(f.split('/').pop()!)),
    blocking: [],
    versionMigrate: null,
    entry: NO_ENTRY,
    source: '',
    configFile: null,
    configSettings: {},
    before: [],
    prepareScript: null,
    downloads: [],
    hardware: { workload: 'python' },
    migrate: false,
    toAmd: false,
    torchPin: undefined,
    minTorch: null,
    args: [],
    positionals: 0,
    checkpoint: null,
    resumable: null,
    resultFiles: [],
    outputs: new Set(['outputs']),
    writes: [],
    asks: [],
    localFiles: [],
    metrics: [],
    askPlan: emptyAskPlan([]),
    runner: '',
    command: '',
    bounded: '',
    smoke: null,
    launch: null,
    sharding: null,
    sweepDispositions: [],
    dispositions: [],
    evaluate: undefined,
    evalFile: null,
    runMetrics: [],
    install: [],
    preparation: null,
  };
}

/** The folder of a path ('' at the root). */
export const folderOf = (p: string) => p.split('/').slice(0, -1).join('/');

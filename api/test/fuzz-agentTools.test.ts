/**
 * The agents' tools, fuzzed through the real loop (runAgentTurn with a scripted model): every
 * tool of the planner, the supervisor and the preparer is called with arguments that are
 * malformed JSON, the wrong JSON types, extra fields, values generated from the tool's own JSON
 * Schema (what the model is shown) with hostile strings and numbers, and out-of-scope values
 * (another job's task and attempt, another user's worker, paths outside the project).
 *
 * The turn never throws; the call is run (DONE) or refused (REJECTED with an error the model
 * reads), never a tool crash ("The tool failed: …" from an unexpected error); and a refused
 * call — or any call of a read-only tool — wrote nothing but the run's own items and their
 * agent.* job events (the database and blob snapshot is otherwise unchanged).
 *
 * The preparer's tools act only on a job in PREPARING whose required step's candidate was
 * REJECTED (a revision pending). Such a job is made without workers or a model: the plan is
 * accepted through acceptPlan, the stage (advancePreparation) queues the reference, a protocol
 * double completes it, the rejected candidate is written as the stage writes it (its static
 * checks computed once, for real, on a tree that does not compile) and the stage itself
 * decides REJECTED. A fresh one is made whenever a call moved the job on (an accepted patch,
 * give_up). Besides the schema-generated arguments, propose_patch gets hostile unified diffs:
 * paths outside the project (../, absolute, a/../../x, NUL, backslashes, very long names,
 * prototype names), the evaluation script and frozen files (also as ./x and x//y), /dev/null
 * deletions, creations of existing files, diffs that do not apply, huge hunks, binary content,
 * many files, duplicate sections, CRLF. An accepted patch makes exactly one CANDIDATE code
 * version whose paths are canonical and inside the project, whose protected files are
 * byte-identical to the rejected candidate's, and whose change is the one the tool reported.
 * The tools are also called with no revision pending (a job planning, preparing on its
 * reference, another user's job, a failed one): refused or an error, nothing written.
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { createTwoFilesPatch } from 'diff';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { runAgentTurn } from '../src/agents/loop.js';
import { completed, createScriptedClient, fnCall, message } from '../src/agents/models/scriptedClient.js';
import { PLANNER } from '../src/agents/planner/planner.js';
import { PREPARER } from '../src/agents/preparer.js';
import { SUPERVISOR } from '../src/agents/supervisor/supervisor.js';
import { toolSpec, type AgentDef } from '../src/agents/tool.js';
import { checkTree, normalizeUploadPath, type ManifestEntry } from '../src/domain/blobs/paths.js';
import { acceptPlan } from '../src/domain/jobs/acceptPlan.js';
import { applyTransition, commitTransition, transition } from '../src/domain/jobs/jobLifecycle.js';
import { PlanSchema } from '../src/domain/jobs/planSchema.js';
import { changedPaths, manifestFromTree } from '../src/domain/preparation/codeTrees.js';
import { advancePreparation, pendingRevision } from '../src/domain/preparation/stage.js';
import { findPython } from '../src/preparation/findPython.js';
import { runStaticChecks } from '../src/preparation/runStaticChecks.js';
import { createJobAt, insertOnlineWorker } from './helpers/agents.js';
import { startTestApi } from './helpers/api.js';
import { fuzzParams, fuzzTimeout, hostileInt, hostileJson, hostilePath, hostileString, snapshotter } from './helpers/fuzz.js';
import { addTask, CPU_CAPS, createJobWithFile, createWorkerToken, ProtocolWorker } from './helpers/protocolClient.js';

const api = await startTestApi({}, { model: null });
const r = api.server.resources;
const prisma = api.server.db.prisma;
const user = await api.signUp();
const other = await api.signUp();
const myWorker = await insertOnlineWorker(prisma, user.userId);
const theirWorker = await insertOnlineWorker(prisma, other.userId);
// Out of scope: another user's job with a task.
const theirJob = await createJobWithFile(api, other.token);
const theirTask = await addTask(api, theirJob);
const snap = await snapshotter(api.databaseUrl, [path.join(api.dataDir, 'blobs')], {
  ignoreColumns: ['updatedAt', 'agentLockHolder', 'agentLockUntil'],
});

const FILES = { 'main.py': 'import numpy\nprint(1)\n', 'README.md': 'run main.py\n' };

/** A job for one call: the planner's in PLANNING; the supervisor's with a task of its own. */
async function jobFor(agent: AgentDef) {
  const { jobId } = await createJobAt(api.url, user.token, FILES);
  await transition(r, jobId, 'startPlanning', { reason: null });
  let taskId: string | null = null;
  if (agent === SUPERVISOR) {
    const cv = await prisma.codeVersion.findFirstOrThrow({ where: { jobId } });
    taskId = (await addTask(api, { jobId, codeVersionId: cv.id })).id;
  }
  return { jobId, taskId };
}

// ---------------------------------------------------------------- arguments from the JSON Schema

type Schema = {
  type?: string | string[];
  properties?: Record<string, Schema>;
  items?: Schema;
  enum?: unknown[];
  anyOf?: Schema[];
  minimum?: number;
  maximum?: number;
};

/** Values of a field by name: real ids of this job and out-of-scope ones. */
function realFor(name: string, own: { taskId: string | null }): unknown[] {
  if (/taskId$/i.test(name)) return [own.taskId, theirTask.id, randomUUID()].filter(Boolean);
  if (/workerId$/i.test(name)) return [myWorker.id, theirWorker.id, randomUUID()];
  if (/attemptId$/i.test(name)) return [randomUUID()];
  if (name === 'path' || name === 'files')
    return [
      'main.py',
      'train.py',
      '../../etc/passwd',
      '/etc/passwd',
      'README.md',
      'nope.py',
      'weights.bin',
      '__proto__',
      'constructor',
      'toString',
    ];
  if (name === 'diff')
    return [FIX_PATCH, FIX_PATCH.replaceAll('\n', '\r\n'), createTwoFilesPatch('a/eval.py', 'b/eval.py', 'import sys\n', 'import os\n')];
  return [];
}

function fromSchema(s: Schema, name: string, own: { taskId: string | null }, depth = 0): fc.Arbitrary<unknown> {
  if (s.anyOf) return fc.oneof(...s.anyOf.map((x) => fromSchema(x, name, own, depth)));
  if (s.enum)
    return fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...s.enum) }, { weight: 1, arbitrary: hostileString({ maxLength: 10 }) });
  const types = Array.isArray(s.type) ? s.type : [s.type ?? 'string'];
  const real = realFor(name, own);
  const arbs = types.map((t): fc.Arbitrary<unknown> => {
    switch (t) {
      case 'null':
        return fc.constant(null);
      case 'boolean':
        return fc.boolean();
      case 'integer':
        return fc.oneof(fc.integer({ min: s.minimum ?? -5, max: Math.min(s.maximum ?? 100, 1e6) }), hostileInt());
      case 'number':
        return fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), hostileInt());
      case 'array':
        return fc.array(fromSchema(s.items ?? {}, name, own, depth + 1), { maxLength: depth > 2 ? 1 : 4 });
      case 'object': {
        const rec: Record<string, fc.Arbitrary<unknown>> = {};
        for (const [k, v] of Object.entries(s.properties ?? {})) rec[k] = fromSchema(v, k, own, depth + 1);
        return fc.record(rec);
      }
      default:
        return name === 'path' ? fc.oneof(hostilePath(), hostileString()) : hostileString();
    }
  });
  return real.length
    ? fc.oneof({ weight: 2, arbitrary: fc.oneof(...arbs) }, { weight: 1, arbitrary: fc.constantFrom(...real) })
    : fc.oneof(...arbs);
}

/** The `arguments` string a model might send for this tool. */
function argumentsArb(schema: Schema, own: { taskId: string | null }): fc.Arbitrary<string> {
  const valid = fromSchema(schema, '', own) as fc.Arbitrary<Record<string, unknown>>;
  return fc.oneof(
    { weight: 6, arbitrary: valid.map((v) => JSON.stringify(v)) },
    // Extra fields (the strict schema forbids them), some shaped like prototype pollution.
    {
      weight: 1,
      arbitrary: fc
        .tuple(valid, fc.constantFrom('extra', '__proto__', 'constructor'), hostileJson())
        .map(([v, k, x]) =>
          JSON.stringify(v).replace(/^\{/, `{${JSON.stringify(k)}:${JSON.stringify(x) ?? 'null'}${Object.keys(v).length ? ',' : ''}`),
        ),
    },
    // The wrong JSON altogether.
    { weight: 1, arbitrary: hostileJson().map((v) => JSON.stringify(v) ?? 'null') },
    // Not JSON: cut, doubled, prose, empty.
    {
      weight: 1,
      arbitrary: fc.tuple(valid, fc.double({ min: 0, max: 1, noNaN: true })).map(([v, f]) => {
        const t = JSON.stringify(v);
        return t.slice(0, Math.floor(t.length * f));
      }),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom('', '{', '}{', 'null', '[]', '{"a":1}{"b":2}', 'Sure! Here are the arguments:', '{"question": "x\u0000"}'),
    },
  );
}

// ---------------------------------------------------------------- the property

interface Called {
  problems: string[];
  status: string | null;
  output: unknown;
}

/**
 * One call through the loop. A refused call, and any call of a read-only tool, must have
 * written nothing but the run's own items and agent.* events.
 */
async function callTool(agent: AgentDef, tool: string, args: string, job: { jobId: string }): Promise<Called> {
  const before = await snap.take();
  const lastEvent = (await prisma.jobEvent.findFirst({ orderBy: { id: 'desc' }, select: { id: true } }))?.id ?? 0n;
  const model = createScriptedClient([completed(fnCall(tool, args)), completed(message('done'))]);
  const problems: string[] = [];
  let res;
  try {
    res = await runAgentTurn(r, { jobId: job.jobId, agent, model, input: [{ type: 'message', role: 'user', content: 'go' }] });
  } catch (err) {
    return { problems: [`the turn threw: ${(err as Error).stack?.slice(0, 600)}`], status: null, output: null };
  }
  const items = await prisma.agentItem.findMany({ where: { runId: res.runId }, orderBy: { seq: 'asc' } });
  const call = items.find((i) => i.type === 'function_call');
  const out = items.find((i) => i.type === 'function_call_output');
  const output = JSON.stringify(out?.payload ?? null);
  const readOnly = !agent.tools.find((t) => t.name === tool)?.sideEffect;
  // A final job ends the turn before the model is asked: no call at all, and nothing written.
  const endedFinal = !call && res.stopReason === 'job_final';
  if ((!call || !out) && !endedFinal) problems.push(`no call/output saved (stop: ${res.stopReason})`);
  else if (/The tool failed/.test(output)) problems.push(`tool crashed: ${output.slice(0, 400)}`);
  else if (endedFinal || out!.status === 'REJECTED' || readOnly) {
    // The run's own items are saved and announced (agent.* job events); nothing else.
    const changed = snap.diff(before, await snap.take(), ['AgentRun', 'AgentItem', 'JobEvent']);
    const events = await prisma.jobEvent.findMany({ where: { id: { gt: lastEvent } }, select: { kind: true } });
    for (const e of events) if (!e.kind.startsWith('agent.')) changed.push(`job event ${e.kind}`);
    if (changed.length)
      problems.push(
        `${out?.status === 'REJECTED' ? 'refused' : endedFinal ? 'ended (job final)' : 'read-only'} (${output.slice(0, 200)}) but wrote: ${changed.join('; ')}`,
      );
  }
  return { problems, status: out?.status ?? null, output: parsed((out?.payload as { output?: string } | null)?.output) };
}

/** A saved output (JSON text, or text cut at the loop's limit). */
function parsed(text: string | undefined): unknown {
  try {
    return JSON.parse(text ?? 'null');
  } catch {
    return text;
  }
}

function fail(tool: string, args: string, problems: string[]): void {
  if (problems.length) throw new Error(`${tool}(${args.slice(0, 600)}):\n  ${problems.join('\n  ')}`);
}

describe('fuzz: agent tools', () => {
  for (const agent of [PLANNER, SUPERVISOR]) {
    for (const tool of agent.tools) {
      it(
        `${agent.name}.${tool.name}: run or refused with a typed error; a refusal writes nothing`,
        async () => {
          const schema = toolSpec(tool).parameters as Schema;
          const own = { taskId: randomUUID() as string | null };
          await fc.assert(
            fc.asyncProperty(argumentsArb(schema, own), async (args) => {
              const job = await jobFor(agent);
              own.taskId = job.taskId;
              const text = args.replaceAll(/"__OWN_TASK__"/g, JSON.stringify(job.taskId));
              fail(tool.name, text, (await callTool(agent, tool.name, text, job)).problems);
            }),
            fuzzParams(3),
          );
        },
        fuzzTimeout(),
      );
    }
  }
  it('planner.check_dependencies with files named like prototype members (a regression example: "own.thirdParty is not iterable")', async () => {
    const job = await jobFor(PLANNER);
    const args = JSON.stringify({ files: ['__proto__', 'constructor', 'main.py'], workload: 'python', accelVendor: null });
    const res = await callTool(PLANNER, 'check_dependencies', args, job);
    fail('check_dependencies', args, res.problems);
    expect(res.status).toBe('DONE');
  });
});

// ---------------------------------------------------------------- the preparer

/** The project: the evaluation script and two frozen files (one empty) are protected; weights.bin is binary. */
const PREP_FILES: Record<string, string> = {
  'train.py': 'import torch\n\ndevice = "cuda"\nx = torch.ones(3).cuda()\nprint(x.sum())\n',
  'eval.py': 'import sys\nprint("accuracy", 1.0)\n',
  'config/frozen.json': '{"lr": 0.1}\n',
  'config/empty.txt': '',
  'weights.bin': '\u0000\u0001\u0002binary\u0000',
  'README.md': 'Train with train.py.\r\nEvaluate with eval.py.\r\n',
};
const PROTECTED = ['config/empty.txt', 'config/frozen.json', 'eval.py'];
/** The rejected candidate: the migration of train.py, with a syntax error the static checks report. */
const REJECTED_TREE: Record<string, string> = {
  'train.py': 'import torch\n\ndevice = "cpu"\nx = torch.ones(3).to(device\nprint(x.sum())\n',
};
const CANDIDATE_TEXT: Record<string, string> = {
  ...Object.fromEntries(Object.entries(PREP_FILES).filter(([p]) => p !== 'weights.bin')),
  ...REJECTED_TREE,
};
/** The patch a good model would send. */
const FIX_PATCH = createTwoFilesPatch(
  'a/train.py',
  'b/train.py',
  REJECTED_TREE['train.py']!,
  REJECTED_TREE['train.py']!.replace('.to(device\n', '.to(device)\n'),
);
const PREP_PLAN = PlanSchema.parse({
  summary: 'Make the CUDA script device-agnostic for the CPU worker, check it against the reference, then run it.',
  asks: [],
  steps: ['Reference run', 'Migrate (required)', 'Full run'],
  command: 'python train.py',
  hardware: { workload: 'python' },
  outputs: ['outputs'],
  acceptance: {
    requiredFiles: [],
    metrics: [],
    evaluate: { checkpoint: 'outputs/model.pt', command: 'python eval.py --checkpoint outputs/model.pt' },
  },
  preparation: {
    workload: { command: 'python train.py', timeoutSec: 60 },
    reference: { workload: 'python' },
    target: { workload: 'python' },
    steps: [{ name: 'migrate', kind: 'migration', transformation: 'pytorch-device-agnostic', required: true }],
    revisionBudget: 10,
    frozenFiles: ['config/frozen.json', 'config/empty.txt'],
  },
});
const STATIC_CHECKS = await runStaticChecks(CANDIDATE_TEXT, { target: 'cpu', python: (await findPython())!.path });
if (STATIC_CHECKS.ok) throw new Error('the rejected candidate was meant not to compile');

const preparerUser = await api.signUp();
/** A job that stays on its reference: the reference is meant for an NVIDIA worker, and none is online (no fallback: the step is not the PyTorch migration). */
const IDLE_PLAN = PlanSchema.parse({
  ...PREP_PLAN,
  preparation: {
    ...PREP_PLAN.preparation,
    reference: { workload: 'cuda-cxx', accelVendor: 'nvidia' },
    steps: [{ ...PREP_PLAN.preparation!.steps[0]!, transformation: 'cuda-to-hip' }],
  },
});
const double = new ProtocolWorker(api, await createWorkerToken(api, preparerUser.token, 'prep-double'), 'prep-double');
await double.hello({ capabilities: CPU_CAPS });

/** A job of the preparer's user, PREPARING with `stage`: the reference queued, run, or the candidate rejected. */
async function preparingJob(stage: 'reference-queued' | 'reference-done' | 'pending'): Promise<string> {
  const { jobId } = await createJobAt(api.url, preparerUser.token, PREP_FILES);
  await transition(r, jobId, 'startPlanning', { reason: null });
  const plan = stage === 'reference-queued' ? IDLE_PLAN : PREP_PLAN;
  await commitTransition(r, jobId, async (tx, now) => ({
    eventIds: (await acceptPlan(tx, now, { jobId, author: 'scripted', plan })).eventIds,
  }));
  expect(await advancePreparation(r, jobId)).toEqual({ state: 'waiting', on: 'the reference run' });
  if (stage === 'reference-queued') return jobId;
  const [a] = await double.claim();
  if (a?.task.jobId !== jobId || a.task.kind !== 'REFERENCE') throw new Error(`the double claimed ${JSON.stringify(a?.task)}`);
  expect((await double.complete(a, { exitCode: 0 })).__typename).toBe('Attempt');
  // The candidate of revision 0, as advanceCandidate writes it (transformation → version → static checks).
  const original = await prisma.codeVersion.findFirstOrThrow({ where: { jobId, status: 'ORIGINAL' } });
  const manifest = await manifestFromTree(r, original.manifest as unknown as ManifestEntry[], REJECTED_TREE, preparerUser.userId);
  const cv = await prisma.codeVersion.create({
    data: {
      jobId,
      step: 'migrate',
      revision: 0,
      parentId: original.id,
      status: 'CANDIDATE',
      origin: 'pytorch-device-agnostic',
      manifest: manifest as never,
      fileCount: manifest.length,
      totalBytes: BigInt(manifest.reduce((n, e) => n + e.size, 0)),
    },
  });
  await prisma.codeVersion.update({ where: { id: cv.id }, data: { staticChecks: STATIC_CHECKS as never } });
  if (stage === 'reference-done') return jobId;
  // The stage records the reference and decides: REJECTED, a revision pending.
  expect(await advancePreparation(r, jobId)).toMatchObject({ state: 'revision', step: 'migrate', revision: 1 });
  return jobId;
}

let pendingJob: string | null = null;
/** A job with a revision pending: the last one while no call moved it on, else a fresh one. */
async function pendingJobNow(): Promise<string> {
  if (!pendingJob || !(await pendingRevision(r, pendingJob))) pendingJob = await preparingJob('pending');
  return pendingJob;
}

/** Jobs with no revision pending: planning, preparing on its reference (queued, or finished and not yet advanced), another user's, failed. */
const notPending = {
  planning: (await jobFor(PLANNER)).jobId,
  referenceQueued: await preparingJob('reference-queued'),
  referenceDone: await preparingJob('reference-done'),
  theirs: theirJob.jobId,
  failed: await (async () => {
    const jobId = await preparingJob('reference-queued');
    await commitTransition(r, jobId, async (tx, now) => applyTransition(tx, now, jobId, 'fail', { reason: 'failed for the test' }));
    return jobId;
  })(),
};

/** What an accepted patch must have made: one canonical CANDIDATE inside the project, protected files untouched, the change it reported. */
async function checkAccepted(
  jobId: string,
  before: NonNullable<Awaited<ReturnType<typeof pendingRevision>>>,
  versionsBefore: number,
  output: unknown,
): Promise<string[]> {
  const problems: string[] = [];
  const versions = await prisma.codeVersion.findMany({ where: { jobId }, orderBy: { createdAt: 'asc' } });
  if (versions.length !== versionsBefore + 1) problems.push(`${versions.length - versionsBefore} code versions made, not 1`);
  const cv = versions.find((v) => v.step === before.step.name && v.revision === before.revision);
  if (!cv) return [...problems, `no code version for ${before.step.name} revision ${before.revision}`];
  if (cv.status !== 'CANDIDATE' || cv.origin !== 'agent patch' || cv.parentId !== before.candidate.id)
    problems.push(`made ${cv.status} ${cv.origin} from ${cv.parentId}`);
  const manifest = cv.manifest as unknown as ManifestEntry[];
  for (const e of manifest) {
    let canonical: string | null = null;
    try {
      canonical = normalizeUploadPath(e.path);
    } catch {
      /* reported below */
    }
    if (canonical !== e.path)
      problems.push(`the candidate has a path outside the project or not canonical: ${JSON.stringify(e.path.slice(0, 200))}`);
  }
  try {
    checkTree(manifest);
  } catch (err) {
    problems.push(`the candidate's tree is invalid: ${(err as Error).message}`);
  }
  const parent = new Map(before.candidate.manifest.map((e) => [e.path, e]));
  const now = new Map(manifest.map((e) => [e.path, e]));
  // Protected files, and the binary file no text patch can change, are byte-identical (same blob, size and mode).
  for (const p of [...PROTECTED, 'weights.bin'])
    if (JSON.stringify(parent.get(p)) !== JSON.stringify(now.get(p)))
      problems.push(`${p} changed: ${JSON.stringify(parent.get(p))} → ${JSON.stringify(now.get(p))}`);
  if (cv.fileCount !== manifest.length || cv.totalBytes !== BigInt(manifest.reduce((n, e) => n + e.size, 0)))
    problems.push('fileCount/totalBytes do not match the manifest');
  const reported = (output as { changed?: string[] }).changed ?? [];
  const real = changedPaths(before.candidate.manifest, manifest);
  if (JSON.stringify([...reported].sort()) !== JSON.stringify(real))
    problems.push(
      `reported changed ${JSON.stringify(reported).slice(0, 300)} but the candidate differs in ${JSON.stringify(real).slice(0, 300)}`,
    );
  if (!real.length) problems.push('accepted a patch that changes nothing');
  return problems;
}

/** One preparer call on a job with a revision pending; an accepted call is checked as above. */
async function callPreparer(tool: string, args: string): Promise<Called> {
  const jobId = await pendingJobNow();
  const before = (await pendingRevision(r, jobId))!;
  const versionsBefore = await prisma.codeVersion.count({ where: { jobId } });
  const res = await callTool(PREPARER, tool, args, { jobId });
  if (res.status === 'DONE' && tool === 'propose_patch')
    res.problems.push(...(await checkAccepted(jobId, before, versionsBefore, res.output)));
  if (res.status === 'DONE' && tool === 'give_up') {
    const job = await prisma.job.findUniqueOrThrow({ where: { id: jobId } });
    if (job.status !== 'FAILED') res.problems.push(`give_up left the job ${job.status}`);
  }
  if (res.status === 'DONE' && tool === 'read_candidate_file') {
    // What it reads is the rejected candidate's text, never anything outside it.
    const o = res.output as { path?: string; content?: string; files?: { path: string }[]; error?: string };
    if (o.content !== undefined && CANDIDATE_TEXT[o.path!]?.slice(0, 20_000) !== o.content)
      res.problems.push(`read ${JSON.stringify(o.path)} as ${JSON.stringify(o.content.slice(0, 100))}`);
    if (o.files && JSON.stringify(o.files.map((f) => f.path)) !== JSON.stringify(before.candidate.manifest.map((e) => e.path)))
      res.problems.push(`listed ${JSON.stringify(o.files)}`);
  }
  return res;
}
// ---------------------------------------------------------------- hostile unified diffs

/** Paths a diff may name: the candidate's, the protected ones (also spelled ./x and x//y), and ones outside it. */
const DIFF_PATHS = [
  'train.py',
  'README.md',
  'new.py',
  'src/new_module.py',
  'weights.bin',
  'missing.py',
  'eval.py',
  'config/frozen.json',
  'config/empty.txt',
  './eval.py',
  'config//frozen.json',
  'config/./empty.txt',
  'x/../eval.py',
  '../outside.py',
  '../../etc/passwd',
  '/etc/passwd',
  '/tmp/abs.py',
  'a/../../x.py',
  'src/../../x.py',
  '..',
  '.',
  '',
  'x\u0000y.py',
  'dir\\evil.py',
  '..\\..\\evil.py',
  'C:\\evil.py',
  'C:/evil.py',
  `${'p'.repeat(1100)}.py`,
  `${'d/'.repeat(70)}f.py`,
  '__proto__',
  'constructor',
  'toString',
  'hasOwnProperty',
  'train.py/inner.py',
  'config',
  '\u202eyp.lave',
  ' eval.py',
  'e\u0301.py',
];

type Op = 'modify' | 'stale' | 'create' | 'delete' | 'delete-partial' | 'headers-only' | 'huge' | 'binary' | 'git-binary';

/** One file section of a diff. */
function section(path: string, op: Op, n: number, prefix: boolean): string {
  const before = Object.hasOwn(CANDIDATE_TEXT, path) ? CANDIDATE_TEXT[path]! : '';
  const [a, b] = prefix ? [`a/${path}`, `b/${path}`] : [path, path];
  switch (op) {
    case 'modify':
      return createTwoFilesPatch(a, b, before, `${before}# revised ${n}\n`);
    case 'stale':
      return createTwoFilesPatch(a, b, `not what the candidate has ${n}\n${before}x\n`, `changed ${n}\n`);
    case 'create':
      return createTwoFilesPatch('/dev/null', b, '', `print(${n})\n`);
    case 'delete':
      return createTwoFilesPatch(a, '/dev/null', before, '');
    case 'delete-partial':
      return createTwoFilesPatch(a, '/dev/null', before, before.split('\n').slice(1).join('\n'));
    case 'headers-only':
      return `--- ${a}\n+++ ${n % 2 ? '/dev/null' : b}\n`;
    case 'huge':
      return createTwoFilesPatch(a, b, before, `${before}${'y = 1  # padding padding padding\n'.repeat(200 + n * 40)}`);
    case 'binary':
      return createTwoFilesPatch(a, b, before, `${before}\u0000\u0001\u00ff\ufffd${String.fromCharCode(0xd800)}\n`);
    case 'git-binary':
      return `diff --git ${a} ${b}\nindex 1111111..2222222 100644\nGIT binary patch\nliteral 5\nMcmZ?wbaZA&6aWDd000\n\nliteral 0\nHcmV?d00001\n\n`;
  }
}

const sectionArb = fc.record({
  path: fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...DIFF_PATHS) }, { weight: 1, arbitrary: hostilePath() }),
  op: fc.constantFrom<Op>(
    'modify',
    'modify',
    'stale',
    'create',
    'delete',
    'delete-partial',
    'headers-only',
    'huge',
    'binary',
    'git-binary',
  ),
  n: fc.integer({ min: 0, max: 40 }),
  prefix: fc.boolean(),
});

/** A whole diff: sections, some doubled, many new files, CRLF line ends, git headers, a cut tail. */
const diffArb = fc
  .record({
    sections: fc.array(sectionArb, { minLength: 1, maxLength: 4 }),
    duplicate: fc.boolean(),
    manyFiles: fc.oneof({ weight: 4, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.integer({ min: 50, max: 3_000 }) }),
    crlf: fc.boolean(),
    cut: fc.oneof({ weight: 5, arbitrary: fc.constant(1) }, { weight: 1, arbitrary: fc.double({ min: 0, max: 1, noNaN: true }) }),
  })
  .map(({ sections, duplicate, manyFiles, crlf, cut }) => {
    let text = sections.map((s) => section(s.path, s.op, s.n, s.prefix)).join('');
    if (duplicate) text += section(sections[0]!.path, sections[0]!.op, sections[0]!.n, sections[0]!.prefix);
    for (let i = 0; i < manyFiles; i++) text += `--- /dev/null\n+++ b/many/f${i}.py\n@@ -0,0 +1 @@\n+x = ${i}\n`;
    if (crlf) text = text.replaceAll('\n', '\r\n');
    return text.slice(0, Math.max(1, Math.ceil(text.length * cut)));
  });

/**
 * What the fuzzing found, kept as fixed examples: the call, on which job, and the outcome it must
 * have (besides the property). Before the fixes each of these got through or crashed.
 */
const create = (path: string, body = 'x = 1\n') => `--- /dev/null\n+++ b/${path}\n@@ -0,0 +1 @@\n+${body}`;
const REGRESSIONS: {
  name: string;
  tool: string;
  args: unknown;
  on?: 'referenceDone' | 'planning' | 'referenceQueued';
  expect: 'DONE' | 'REJECTED';
  says: RegExp;
}[] = [
  // Paths the upload rules refuse were written into the candidate as they were.
  {
    name: 'a path 71 folders deep',
    tool: 'propose_patch',
    args: { diff: create(`${'d/'.repeat(70)}f.py`), summary: 's' },
    expect: 'REJECTED',
    says: /deeper than 64 levels/,
  },
  {
    name: 'a name over 1,024 characters',
    tool: 'propose_patch',
    args: { diff: create(`${'p'.repeat(1100)}.py`), summary: 's' },
    expect: 'REJECTED',
    says: /longer than 1024/,
  },
  {
    name: 'a NUL byte in a name',
    tool: 'propose_patch',
    args: { diff: create('x\u0000y.py'), summary: 's' },
    expect: 'REJECTED',
    says: /NUL character/,
  },
  {
    name: 'a backslash in a name',
    tool: 'propose_patch',
    args: { diff: create('dir\\evil.py'), summary: 's' },
    expect: 'REJECTED',
    says: /backslashes/,
  },
  // The evaluation script and a frozen file, spelled so that the exact-name check missed them (a second entry the worker writes over the real one).
  {
    name: 'creating ./eval.py',
    tool: 'propose_patch',
    args: { diff: create('./eval.py'), summary: 's' },
    expect: 'REJECTED',
    says: /creates eval\.py, which the candidate already has/,
  },
  {
    name: 'creating config//frozen.json',
    tool: 'propose_patch',
    args: { diff: create('config//frozen.json', '{}'), summary: 's' },
    expect: 'REJECTED',
    says: /creates config\/frozen\.json, which the candidate already has/,
  },
  {
    name: 'changing ./eval.py',
    tool: 'propose_patch',
    args: { diff: createTwoFilesPatch('a/./eval.py', 'b/./eval.py', PREP_FILES['eval.py']!, 'print("accuracy", 1.0)\n'), summary: 's' },
    expect: 'REJECTED',
    says: /touches eval\.py/,
  },
  // A file inside a file: a tree no worker can write.
  {
    name: 'train.py/inner.py',
    tool: 'propose_patch',
    args: { diff: create('train.py/inner.py'), summary: 's' },
    expect: 'REJECTED',
    says: /both a file and a directory/,
  },
  // A "new" file over an existing one (the binary one was replaced by text; a text one got the lines prepended).
  {
    name: 'creating weights.bin',
    tool: 'propose_patch',
    args: { diff: create('weights.bin'), summary: 's' },
    expect: 'REJECTED',
    says: /binary or large file/,
  },
  {
    name: 'creating train.py',
    tool: 'propose_patch',
    args: { diff: create('train.py'), summary: 's' },
    expect: 'REJECTED',
    says: /already has/,
  },
  // Deletions were reported but never made (the file stayed in the candidate); now they are made, and a protected file (even an empty one) is refused.
  {
    name: 'deleting README.md',
    tool: 'propose_patch',
    args: { diff: createTwoFilesPatch('a/README.md', '/dev/null', PREP_FILES['README.md']!, ''), summary: 's' },
    expect: 'DONE',
    says: /"changed":\["README\.md"\]/,
  },
  {
    name: 'deleting the empty frozen file',
    tool: 'propose_patch',
    args: { diff: '--- a/config/empty.txt\n+++ /dev/null\n', summary: 's' },
    expect: 'REJECTED',
    says: /touches config\/empty\.txt/,
  },
  {
    name: 'deleting half of train.py',
    tool: 'propose_patch',
    args: { diff: createTwoFilesPatch('a/train.py', '/dev/null', REJECTED_TREE['train.py']!, 'import torch\n'), summary: 's' },
    expect: 'REJECTED',
    says: /do not remove the whole file/,
  },
  // Names of Object.prototype members: a crash ("The tool failed"), or a file silently lost.
  {
    name: 'changing constructor',
    tool: 'propose_patch',
    args: { diff: '--- a/constructor\n+++ b/constructor\n@@ -1 +1 @@\n-a\n+b\n', summary: 's' },
    expect: 'REJECTED',
    says: /does not apply to constructor/,
  },
  {
    name: 'creating __proto__',
    tool: 'propose_patch',
    args: { diff: create('__proto__'), summary: 's' },
    expect: 'DONE',
    says: /"changed":\["__proto__"\]/,
  },
  {
    name: 'reading constructor',
    tool: 'read_candidate_file',
    args: { path: 'constructor' },
    expect: 'DONE',
    says: /No text file constructor/,
  },
  // With no revision pending: give_up failed a job the stage was still running, or crashed on one not preparing.
  {
    name: 'give_up while planning',
    tool: 'give_up',
    args: { reason: 'r' },
    on: 'planning',
    expect: 'REJECTED',
    says: /No revision is pending/,
  },
  {
    name: 'give_up on the reference',
    tool: 'give_up',
    args: { reason: 'r' },
    on: 'referenceQueued',
    expect: 'REJECTED',
    says: /No revision is pending/,
  },
  // Strings PostgreSQL cannot store (jsonb: the Action's arguments; text: the job's reason): a crash after the check had passed.
  { name: 'give_up with a NUL', tool: 'give_up', args: { reason: 'cannot\u0000fix' }, expect: 'REJECTED', says: /NUL/ },
  { name: 'give_up with a lone surrogate', tool: 'give_up', args: { reason: 'cannot \ud800 fix' }, expect: 'DONE', says: /FAILED/ },
  {
    name: 'a patch that writes a NUL',
    tool: 'propose_patch',
    args: {
      diff: createTwoFilesPatch('a/train.py', 'b/train.py', REJECTED_TREE['train.py']!, `${REJECTED_TREE['train.py']!}# \u0000\n`),
      summary: 's',
    },
    expect: 'REJECTED',
    says: /NUL/,
  },
  // Reading made the stage's next move (recorded the reference, decided the candidate): a read that wrote.
  {
    name: 'reading before the stage decided',
    tool: 'read_candidate_file',
    args: {},
    on: 'referenceDone',
    expect: 'DONE',
    says: /No revision is pending/,
  },
];

describe('fuzz: preparer tools', () => {
  for (const tool of PREPARER.tools) {
    it(
      `preparer.${tool.name} (revision pending): run or refused with a typed error; a refusal writes nothing; an accepted patch stays inside the project`,
      async () => {
        const schema = toolSpec(tool).parameters as Schema;
        await fc.assert(
          fc.asyncProperty(argumentsArb(schema, { taskId: null }), async (args) =>
            fail(tool.name, args, (await callPreparer(tool.name, args)).problems),
          ),
          fuzzParams(4),
        );
      },
      fuzzTimeout(),
    );
  }

  it(
    'preparer.propose_patch: hostile unified diffs are refused with a reason, or make one candidate inside the project with its protected files intact',
    async () => {
      await fc.assert(
        fc.asyncProperty(diffArb, fc.constantFrom('fix the syntax error', 'x'), async (diff, summary) => {
          const args = JSON.stringify({ diff, summary });
          fail('propose_patch', args, (await callPreparer('propose_patch', args)).problems);
        }),
        fuzzParams(30),
      );
    },
    fuzzTimeout(120_000),
  );

  it(
    'the regression examples',
    async () => {
      for (const ex of REGRESSIONS) {
        const args = JSON.stringify(ex.args);
        const res = ex.on
          ? await callTool(PREPARER, ex.tool, args, {
              jobId: ex.on === 'referenceDone' ? await preparingJob('reference-done') : notPending[ex.on],
            })
          : await callPreparer(ex.tool, args);
        if (res.status !== ex.expect || !ex.says.test(JSON.stringify(res.output)))
          res.problems.push(`expected ${ex.expect} saying ${ex.says}, got ${res.status}: ${JSON.stringify(res.output).slice(0, 300)}`);
        fail(`${ex.tool} [${ex.name}]`, args, res.problems);
      }
    },
    fuzzTimeout(),
  );

  it(
    "the preparer's tools with no revision pending: refused or an error, nothing written",
    async () => {
      const toolArb = fc.constantFrom(...PREPARER.tools).chain((tool) =>
        fc.tuple(
          fc.constant(tool.name),
          fc.oneof(
            argumentsArb(toolSpec(tool).parameters as Schema, { taskId: null }),
            diffArb.map((diff) => JSON.stringify({ diff, summary: 's' })),
          ),
        ),
      );
      await fc.assert(
        fc.asyncProperty(
          toolArb,
          fc.constantFrom(...(Object.keys(notPending) as (keyof typeof notPending)[])),
          async ([tool, args], which) => {
            const jobId = notPending[which];
            const status = (await prisma.job.findUniqueOrThrow({ where: { id: jobId } })).status;
            const res = await callTool(PREPARER, tool, args, { jobId });
            if (res.status === 'DONE' && tool !== 'similar_preparations' && !/No revision is pending/.test(JSON.stringify(res.output)))
              res.problems.push(`ran with no revision pending (${which}): ${JSON.stringify(res.output).slice(0, 300)}`);
            const after = (await prisma.job.findUniqueOrThrow({ where: { id: jobId } })).status;
            if (after !== status) res.problems.push(`the job went ${status} → ${after}`);
            fail(`${tool} on ${which}`, args, res.problems);
          },
        ),
        fuzzParams(20),
      );
    },
    fuzzTimeout(),
  );

  it('covers every tool of the planner, the supervisor and the preparer', () => {
    expect(PLANNER.tools.length + SUPERVISOR.tools.length).toBeGreaterThan(10);
    expect(PREPARER.tools.map((t) => t.name).sort()).toEqual(['give_up', 'propose_patch', 'read_candidate_file', 'similar_preparations']);
  });
});

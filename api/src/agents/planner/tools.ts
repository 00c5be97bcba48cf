/**
 * The planner's tools. Read-only tools may run again after a crash; side-effecting
 * ones (ask_user, submit_plan, give_up) are thin adapters over the job engine
 * (domain/jobs/), committed inside the loop's Action transaction.
 */
import { z } from 'zod';
import { acceptPlan, fixedCriteriaProblem } from '../../domain/jobs/acceptPlan.js';
import { askUser } from '../../domain/jobs/askUser.js';
import { loadJob } from '../../domain/jobs/jobQueries.js';
import { applyTransition } from '../../domain/jobs/jobLifecycle.js';
import { isCollected, PlanSchema, WORKLOADS } from '../../domain/jobs/planSchema.js';
import { defineTool, type ToolDef } from '../tool.js';
import { shardsProblem } from '../../domain/jobs/shards.js';
import { analyzeProject } from './analyzeProject.js';
import { readPythonFacts } from './readPythonFacts.js';
import { resolveImports } from './resolveImports.js';
import { networkCapacity, workersTorch } from '../../domain/workers/networkCapacity.js';
import { apiPython } from '../../domain/preparation/compareTaskOutputs.js';
import { checkTorchApis } from './torchApis.js';
import { loadManifest, loadSources, readText } from '../../domain/jobs/projectFiles.js';
import { listSettings } from './settings/listSettings.js';
import type { Setting } from './contract.js';
import { settingsVersion } from '../../domain/preparation/settingsVersion.js';
import { asksProblem } from './asksCoverage.js';

const READ_LIMIT = 20_000;
/** The most a read_file answer may take as JSON: below the loop's cap on a tool output (16,000 characters). */
const READ_PAGE_JSON = 15_000;

export const listFiles = defineTool({
  name: 'list_files',
  stable: true,
  description: "List the project's files with their sizes.",
  schema: z.object({}),
  read: async (_a, ctx) => {
    const { manifest } = await loadManifest(ctx.r, ctx.jobId);
    return { output: { files: manifest.slice(0, 1000).map((f) => ({ path: f.path, size: f.size })), total: manifest.length } };
  },
});

export const readFileTool = defineTool({
  name: 'read_file',
  stable: true,
  description: `Read a text file of the project (at most ${READ_LIMIT} characters from an offset).`,
  schema: z.object({ path: z.string().min(1).max(1024), offset: z.number().int().min(0).optional() }),
  check: async (a, ctx) => {
    const { manifest } = await loadManifest(ctx.r, ctx.jobId);
    return manifest.some((f) => f.path === a.path) ? null : `No file ${a.path} in the project. Use list_files.`;
  },
  read: async (a, ctx) => {
    const { manifest } = await loadManifest(ctx.r, ctx.jobId);
    const text = await readText(
      ctx.r,
      manifest.find((f) => f.path === a.path)!,
    );
    if (text === null) return { output: { path: a.path, binary: true, note: 'binary or too large to read' } };
    const start = a.offset ?? 0;
    // A page whose JSON fits the loop's cap on a tool output (escapes make source text longer): never cut mid-JSON.
    let end = Math.min(text.length, start + READ_LIMIT);
    const page = () => ({
      path: a.path,
      offset: start,
      content: text.slice(start, end),
      totalChars: text.length,
      truncated: end < text.length,
      ...(end < text.length ? { nextOffset: end } : {}),
    });
    while (end > start + 1000 && JSON.stringify(page()).length > READ_PAGE_JSON) end = start + Math.floor((end - start) * 0.8);
    return { output: page() };
  },
});

/** The project's facts: its sources read with Python's `ast` when the API machine has a Python, else with patterns. */
async function projectFacts(r: Parameters<typeof loadSources>[0], jobId: string) {
  const sources = await loadSources(r, jobId);
  const parsed = await readPythonFacts(sources);
  const facts = analyzeProject(sources, parsed ?? {});
  if (!parsed) facts.notes.push('No Python interpreter on the API machine: entry points and flags were read with patterns, not parsed.');
  return facts;
}

export const findDependencies = defineTool({
  name: 'find_dependencies',
  stable: true,
  description:
    'Find dependency pins (requirements.txt, pyproject, environment.yml), imports, entry points (`__main__` blocks and top-level scripts) with their argparse/click/typer flags, CUDA/HIP sources, data folders.',
  schema: z.object({}),
  read: async (_a, ctx) => {
    return { output: await projectFacts(ctx.r, ctx.jobId) };
  },
});

/**
 * A page of settings fits the loop's cap on a tool output (16,000 characters) with room to spare:
 * a large project (nanoGPT: 80 settings with their help texts) is read in a few pages (`offset`).
 */
const SETTINGS_PAGE_CHARS = 12_000;
const HELP_CHARS = 160;

/** A setting as the tool answers it: no empty optional fields (the contract's own stay, null or not), long help and expressions cut. */
const REQUIRED_FIELDS = new Set(['id', 'name', 'kind', 'file', 'type', 'default', 'help']);
function compactSetting(s: Setting): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(s)) {
    if (!REQUIRED_FIELDS.has(k) && (v === null || v === undefined || (Array.isArray(v) && v.length === 0))) continue;
    out[k] = typeof v === 'string' && (k === 'help' || k === 'expression') && v.length > HELP_CHARS ? `${v.slice(0, HELP_CHARS)}…` : v;
  }
  return out;
}

export const listSettingsTool = defineTool({
  name: 'list_settings',
  stable: true,
  description:
    'The settings a user can change, read from the source (never run): argparse/click/typer/fire flags and positionals (name, flag, type, default, help, choices, nargs), nanoGPT-style configurator globals (`--name=value`), module-level constants of literal value — also one number inside an expression such as `dt = 0.1*dx*dx` (kind constant with `expression`; changed only by a set-settings rewrite of its span) — keys of JSON/YAML/TOML/INI config files with the entry points that read them (`readBy`; `override` when the command line can set them), and environment variables the code reads. Give `entry` (a .py path) to get only what that entry point can be told: its own settings, the constants and flags of the project modules it imports, the config files it reads, its env variables. Match each setting the user asks for to one of these by name or help text; when none fits, refuse naming the settings there are. `problems` lists files that could not be read (syntax errors, too large, configs that do not parse). A long answer comes in pages: call again with `offset` = `next` until `next` is null.',
  schema: z.object({
    entry: z
      .string()
      .min(1)
      .max(1024)
      .optional()
      .describe('The entry point (a .py file of the project) to narrow to; omit for the whole project.'),
    offset: z.number().int().min(0).optional().describe("The first setting of the page (the previous answer's `next`)."),
  }),
  check: async (a, ctx) => {
    if (!a.entry) return null;
    const { manifest } = await loadManifest(ctx.r, ctx.jobId);
    return manifest.some((f) => f.path === a.entry) ? null : `No file ${a.entry} in the project. Use list_files.`;
  },
  read: async (a, ctx) => {
    const surface = await listSettings(await loadSources(ctx.r, ctx.jobId), { entry: a.entry ?? null });
    const start = Math.min(a.offset ?? 0, surface.settings.length);
    const page: Record<string, unknown>[] = [];
    let size = JSON.stringify(surface.problems).length + 200;
    for (const s of surface.settings.slice(start)) {
      const c = compactSetting(s);
      const n = JSON.stringify(c).length + 1;
      if (page.length > 0 && size + n > SETTINGS_PAGE_CHARS) break;
      page.push(c);
      size += n;
    }
    const end = start + page.length;
    return {
      output: {
        entry: surface.entry,
        total: surface.settings.length,
        offset: start,
        next: end < surface.settings.length ? end : null,
        settings: page,
        problems: surface.problems,
      },
    };
  },
});

/** How long a planner waits for a worker this process is starting before it plans without one. */
export const WORKER_STARTING_WAIT_MS = 30_000;

export const networkCapacityTool = defineTool({
  name: 'network_capacity',
  description:
    'The classes of workers online now and what they can run (workloads, Python/PyTorch versions, memory, accelerators, how many install Python packages).',
  schema: z.object({}),
  read: async (_a, ctx) => {
    let cap = await networkCapacity(ctx.r);
    // Right after `npm start` the local worker is still starting: plan for it, not for nothing.
    if (cap.classes.length === 0 && ctx.r.workerStarting) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([ctx.r.workerStarting, new Promise<void>((res) => (timer = setTimeout(res, WORKER_STARTING_WAIT_MS)))]);
      clearTimeout(timer);
      cap = await networkCapacity(ctx.r);
    }
    // The module lists are long: check_dependencies resolves imports against them.
    return {
      output: {
        ...cap,
        classes: cap.classes.map(({ modules, ...c }) => ({
          ...c,
          modules: modules === null ? 'not reported' : `${modules.length} importable modules (use check_dependencies)`,
        })),
      },
    };
  },
});

export const checkDependencies = defineTool({
  name: 'check_dependencies',
  description:
    "Resolve every third-party import of the files that will run (followed through the project's own modules) against the online workers of a hardware class: present, installable (a requirements line names it and a worker installs packages: put the returned lines in the plan's install.pip) or unavailable (explain or ask before the run).",
  schema: z.object({
    files: z
      .array(z.string().min(1).max(500))
      .min(1)
      .max(20)
      .describe('The Python files the plan runs (entry point, pipeline steps, evaluation script).'),
    workload: z.enum(WORKLOADS),
    accelVendor: z.enum(['nvidia', 'amd', 'apple']).optional(),
    missingAtRunTime: z
      .array(
        z
          .string()
          .regex(/^[A-Za-z_]\w*$/, 'a top-level module name')
          .max(100),
      )
      .max(20)
      .optional()
      .describe(
        "Top-level modules a run of this job could not import (a replan's evidence: `missing module: X`): checked even when no file imports them visibly, never taken as present.",
      ),
  }),
  read: async (a, ctx) => {
    const facts = await projectFacts(ctx.r, ctx.jobId);
    const cap = await networkCapacity(ctx.r);
    const classes = cap.classes.filter((c) => c.workloads.includes(a.workload) && (!a.accelVendor || c.accelVendor === a.accelVendor));
    return { output: resolveImports(facts, a.files, classes, a.missingAtRunTime ?? []) };
  },
});

export const checkTorchApisTool = defineTool({
  name: 'check_torch_apis',
  description:
    "Find the project's PyTorch calls newer than the online workers' torch (for a workload) and whether the pytorch-version-compat migration rewrites each: verdict none (run as it is), migratable (a plan whose required preparation step is that migration runs it, checked by a bounded run), blocked (no rewrite: a worker with a newer torch is needed), unknown (no worker with torch). Use it when a torch pin is newer than the workers' version, before offering the user any choice.",
  schema: z.object({ workload: z.enum(WORKLOADS) }),
  read: async (a, ctx) => {
    const cap = await networkCapacity(ctx.r);
    return {
      output: await checkTorchApis(await loadSources(ctx.r, ctx.jobId), workersTorch(cap, a.workload), a.workload, await apiPython()),
    };
  },
});

export const askUserTool = defineTool({
  name: 'ask_user',
  recoveredControl: 'wait', // see ToolDef.recoveredControl
  description:
    'Ask the user a question when something is unclear; planning waits for the answer. Offer choices when there are a few clear options: an answer must then name one of them (one that names none is refused and the question asked again); leave choices out when any answer in words will do.',
  schema: z.object({ question: z.string().min(1).max(2000), choices: z.array(z.string().min(1).max(300)).max(10).optional() }),
  sideEffect: async (a, ctx, tx) => {
    const { questionId, eventIds } = await askUser(tx, ctx.r.now(), {
      jobId: ctx.jobId,
      agentRunId: ctx.runId,
      callId: ctx.callId,
      text: a.question,
      choices: a.choices ?? [],
    });
    return { output: { questionId, status: 'asked; planning continues when the user answers' }, control: 'wait', eventIds };
  },
});

export const giveUp = defineTool({
  name: 'give_up',
  recoveredControl: 'finish', // see ToolDef.recoveredControl
  description: 'Stop the job with an explanation in plain words when it cannot be run (name the file, pin or hardware that blocks it).',
  schema: z.object({ reason: z.string().min(1).max(2000) }),
  sideEffect: async (a, ctx, tx) => {
    const { eventIds } = await applyTransition(tx, ctx.r.now(), ctx.jobId, 'fail', { reason: a.reason });
    return { output: { status: 'FAILED' }, control: 'finish', eventIds };
  },
});

export const submitPlan = defineTool({
  name: 'submit_plan',
  recoveredControl: 'finish', // see ToolDef.recoveredControl
  description: 'Submit the plan: the command, hardware, outputs and acceptance criteria. It creates the run; the criteria are then fixed.',
  schema: PlanSchema,
  check: async (plan, ctx) => {
    const job = await loadJob(ctx.r, ctx.jobId);
    // A second plan only after the run supervisor handed the job back (replan), with the same criteria.
    if (job.currentPlanId && job.status !== 'PLANNING')
      return 'A plan was already accepted for this job; its acceptance criteria are fixed.';
    const fixed = fixedCriteriaProblem(job.acceptanceCriteria, plan);
    if (fixed) return fixed;
    // Invariant 12: every ask of the request has a disposition.
    const unanswered = asksProblem(job.request, plan.asks);
    if (unanswered) return unanswered;
    if (plan.settings?.length) {
      if (plan.preparation || plan.service)
        return `Settings are rewritten only for a plan that runs the code without ${plan.preparation ? 'preparation steps' : 'a service'} yet: pass them as flags or overrides, or drop \`settings\`.`;
      const made = await settingsVersion(ctx.r, ctx.jobId, plan.settings, { write: false });
      if (!made.ok) return made.problem;
    }
    for (const f of plan.acceptance.requiredFiles)
      if (!isCollected(plan, f)) return `Required file ${f} is not among the outputs to collect.`;
    if (plan.acceptance.evaluate && !isCollected(plan, plan.acceptance.evaluate.checkpoint)) {
      return `The checkpoint ${plan.acceptance.evaluate.checkpoint} is not among the outputs to collect.`;
    }
    if (plan.shards) {
      const problem = shardsProblem(plan.shards, plan);
      if (problem) return problem;
    }
    if (plan.smoke && plan.preparation)
      return 'A plan with preparation steps needs no smoke run: the preparation runs already test the code on the target hardware. Drop `smoke`.';
    // A service runs the uploaded code as it is, as one long-lived SERVICE task: no preparation
    // stage, no smoke run (it has no bounded workload: readiness is its check). Its setup steps
    // (`before`: initialising a database, preparing data) run first and hand it what they produce.
    if (plan.service) {
      const extra = { preparation: plan.preparation, smoke: plan.smoke };
      const drop = Object.entries(extra)
        .filter(([, v]) => v)
        .map(([k]) => `\`${k}\``);
      if (drop.length)
        return `A service plan runs the code as uploaded, as one SERVICE task checked by its readiness path (after its setup steps in \`before\`, if any): drop ${drop.join(' and ')}.`;
    }
    if (plan.before?.length) {
      if (plan.preparation)
        return 'A plan cannot have both preparation steps and a pipeline (`before`) yet: run the pipeline without preparation, or prepare a single command.';
      const names = plan.before.map((b) => b.name);
      if (new Set(names).size !== names.length) return `Pipeline step names must be unique (${names.join(', ')}).`;
    }
    const cap = await networkCapacity(ctx.r);
    // With no worker online at all (e.g. right after start), the run waits in the queue and
    // the job says why; with workers online that cannot run it, the planner must ask or stop.
    if (cap.classes.length === 0) return null;
    const fits = cap.classes.some(
      (c) => c.workloads.includes(plan.hardware.workload) && (!plan.hardware.accelVendor || c.accelVendor === plan.hardware.accelVendor),
    );
    if (!fits)
      return `No online worker can run workload ${plan.hardware.workload}${plan.hardware.accelVendor ? ` on ${plan.hardware.accelVendor}` : ''}. Online: ${cap.summary}. Ask the user or choose hardware that exists.`;
    return null;
  },
  // The settings' code is made (its blobs written: content-addressed, so a retry writes nothing new) before the transaction that stores the plan with it.
  prepare: async (plan, ctx) => ({
    made: plan.settings?.length ? await settingsVersion(ctx.r, ctx.jobId, plan.settings, { write: true }) : null,
    withoutWorkers: (await networkCapacity(ctx.r)).classes.length === 0,
  }),
  sideEffect: async (plan, ctx, tx, prepared) => {
    const { made, withoutWorkers } = prepared as { made: Awaited<ReturnType<typeof settingsVersion>> | null; withoutWorkers: boolean };
    if (made && !made.ok) throw new Error(made.problem);
    const accepted = await acceptPlan(tx, ctx.r.now(), {
      jobId: ctx.jobId,
      author: ctx.model.name,
      plan,
      settings: made?.version ?? null,
      withoutWorkers,
    });
    const status = accepted.preparing ? 'accepted; preparing the code (reference run first)' : 'accepted; the run is queued';
    return {
      output: { planId: accepted.planId, version: accepted.version, taskId: accepted.taskId, status },
      control: 'finish',
      eventIds: accepted.eventIds,
    };
  },
  after: async (plan, _res, ctx) => {
    if (plan.preparation) await ctx.r.events.emit({ type: 'preparation.step', jobId: ctx.jobId });
    else await ctx.r.events.emit({ type: 'tasks.available' });
  },
});

export const plannerReadTools: ToolDef[] = [
  listFiles,
  readFileTool,
  findDependencies,
  listSettingsTool,
  networkCapacityTool,
  checkDependencies,
  checkTorchApisTool,
];

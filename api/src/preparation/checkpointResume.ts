/**
 * The `checkpoint-resume` transformation: PyTorch training code with no resume path made to save
 * its state between loop iterations into CHATGPU_CHECKPOINT_DIR (the folder the worker uploads and
 * restores on the next attempt) and to resume from the newest complete checkpoint, skipping exactly
 * the iterations done. The rewrite is python/checkpoint_resume.py (CPython's `ast`; a few lines
 * spliced into the untouched source); the saving and restoring is the runtime helper
 * worker/python/chatgpu/resume.py, which every task has on its PYTHONPATH.
 *
 * The evidence that resuming changes nothing is not static: the step's candidate run is
 * `resumeCheckCommand(workload)` (chatgpu.resume_check), which runs the bounded workload
 * uninterrupted and again SIGKILLed half-way and resumed in a fresh process, and fails unless the
 * final state, the outputs and the logged losses are bitwise equal (within the step's tolerance where
 * the device's kernels are not deterministic: CUDA, ROCm, MPS).
 *
 * A program the rewriter cannot handle comes back unchanged with an `error` hazard saying why (no
 * recognisable loop, state it cannot name, a data position it cannot restore); one that already
 * resumes comes back unchanged with an `info` hazard.
 */
import { runProcess } from './pythonAst.js';
import { inRepo } from '../paths.js';
import type { CodeTree, Edit, Hazard, TransformContext, TransformResult } from './types.js';

const REWRITER = inRepo('api/src/preparation/python/checkpoint_resume.py');
export const CHECKPOINT_RESUME = 'checkpoint-resume' as const;
const RULE = CHECKPOINT_RESUME;

interface RewriterOutput {
  status: 'changed' | 'unchanged' | 'refused';
  files: Record<string, string>;
  edits: Edit[];
  loop: { file: string; line: number; kind: 'for' | 'while'; objects: string[]; values: string[] } | null;
  refusals: { file: string; line: number; reason: string }[];
  notes: string[];
}

export interface CheckpointResumeResult extends TransformResult {
  status: RewriterOutput['status'];
  /** The loop made resumable and the names whose state it saves (objects: state dicts; values: loop-carried). */
  loop: RewriterOutput['loop'];
  /** Why the program was left as it is, when it was (a refusal or a resume path of its own). */
  reason: string | null;
}

const WITHOUT = 'Without it the run restarts from step 0 when its machine is lost (a drain or a lost lease).';

export async function checkpointResume(tree: CodeTree, _ctx: TransformContext, opts: { python: string }): Promise<CheckpointResumeResult> {
  const py = Object.fromEntries(Object.entries(tree).filter(([p]) => p.endsWith('.py')));
  const { code, stdout, stderr } = await runProcess(opts.python, [REWRITER], JSON.stringify({ files: py }), 120_000);
  if (code !== 0) throw new Error(`${opts.python} ${REWRITER} exited ${code}: ${stderr.slice(-2000)}`);
  const out = JSON.parse(stdout) as RewriterOutput;
  const base = { unconverted: [], numericsMayChange: false, numericsNotes: [] };
  if (out.status === 'changed') {
    const l = out.loop!;
    const notes: Hazard[] = [
      {
        file: l.file,
        line: l.line,
        severity: 'info',
        rule: RULE,
        what: `the ${l.kind} loop saves ${[...l.objects, ...l.values].join(', ')} and the RNG states between iterations and resumes from the newest checkpoint`,
        why: 'a lost machine then costs at most the work since the last checkpoint',
        fix: 'none needed; the kill-and-resume check decides whether it is kept',
      },
    ];
    return {
      ...base,
      status: 'changed',
      changed: true,
      tree: { ...tree, ...out.files },
      edits: out.edits,
      hazards: notes,
      loop: l,
      reason: null,
    };
  }
  const reason =
    out.status === 'refused'
      ? out.refusals.map((r) => `${r.file ? `${r.file}${r.line ? `:${r.line}` : ''}: ` : ''}${r.reason}`).join('; ')
      : out.notes.join('; ');
  const hazards: Hazard[] =
    out.status === 'refused'
      ? out.refusals.map((r) => ({
          file: r.file,
          line: r.line,
          severity: 'error' as const,
          rule: RULE,
          what: `not made resumable: ${r.reason}`,
          why: WITHOUT,
          fix: 'save and load the state yourself (chatgpu.checkpoint), or restructure the loop as the reason says',
        }))
      : out.notes.map((n) => ({
          file: '',
          line: 0,
          severity: 'info' as const,
          rule: RULE,
          what: n,
          why: 'the program resumes on its own',
          fix: 'none',
        }));
  return { ...base, status: out.status, changed: false, tree, edits: [], hazards, loop: null, reason };
}

/**
 * A value as one word for `sh -c` (the task's command runs under a shell). The planner's rules have
 * the same helper (agents/builtin/planner/flags.ts); the toolkit does not import from agents/.
 */
function shellWord(v: string): string {
  return /^[\w./:=+,@%-]+$/.test(v) ? v : `'${v.replace(/'/g, `'\\''`)}'`;
}

/**
 * The candidate run of a checkpoint-resume step: the bounded workload checked by
 * chatgpu.resume_check (uninterrupted; SIGKILLed after half its iterations and resumed; compared).
 * Its outputs are the uninterrupted run's, so the stage compares them with the reference as usual.
 * The step's numeric tolerance goes with it (--rtol/--atol): the check uses it where the run cannot be
 * bitwise equal (a CUDA, ROCm or MPS device without deterministic algorithms), and compares bitwise
 * elsewhere whatever it says.
 */
export function resumeCheckCommand(command: string, tolerance?: { rtol?: number; atol?: number } | null): string {
  const tol = (['rtol', 'atol'] as const)
    .filter((k) => typeof tolerance?.[k] === 'number' && Number.isFinite(tolerance[k]) && tolerance[k] >= 0)
    .map((k) => ` --${k} ${formatTolerance(tolerance![k]!)}`)
    .join('');
  return `python -m chatgpu.resume_check --report ${RESUME_CHECK_REPORT}${tol} -- ${shellWord(command)}`;
}

/** A tolerance as people write it (and Python reads it): 1e-6, 1.3e-6, 0.01. */
export function formatTolerance(x: number): string {
  return x !== 0 && Math.abs(x) < 1e-3 ? x.toExponential() : String(x);
}

/** Where the check's report goes (collected with the candidate's outputs; outside outputs/, so not compared). */
export const RESUME_CHECK_REPORT = '.chatgpu-resume-check.json';

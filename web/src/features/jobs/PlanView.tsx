/**
 * The plan for a person: its summary, the steps as a numbered list, the commands it runs
 * (the run, the evaluation), the hardware, outputs and acceptance criteria as sentences.
 * Anything in a shape this page does not know is shown by JsonView rather than dropped.
 */
import { formatTime } from '../../lib/format';
import { InlineCode } from '../ui/InlineCode';
import { JsonView } from '../ui/JsonView';

export interface PlanData {
  version: number;
  author: string;
  summary: string;
  steps: unknown;
  command: string;
  environment: unknown;
  requirements: unknown;
  outputs: unknown;
  acceptanceCriteria: unknown;
  pipeline?: unknown;
  smokeRun?: unknown;
  createdAt: string;
}

/** What runs, in order: the pipeline's steps, the smoke run, the full run, the evaluation. */
export function commandsOf(plan: PlanData): { label: string; command: string }[] {
  const out: { label: string; command: string }[] = [];
  if (Array.isArray(plan.pipeline)) {
    for (const s of plan.pipeline as { name?: unknown; command?: unknown }[]) {
      if (s && typeof s.command === 'string')
        out.push({ label: `Step ${typeof s.name === 'string' ? s.name : ''}`.trim(), command: s.command });
    }
  }
  const smoke = plan.smokeRun as { command?: unknown; scale?: { unit?: string; bounded?: number; full?: number } } | null | undefined;
  if (smoke && typeof smoke.command === 'string') {
    const sc = smoke.scale;
    out.push({
      label: `Smoke run${sc?.unit && sc.bounded && sc.full ? ` (${sc.bounded} of ${sc.full} ${sc.unit}${sc.full === 1 ? '' : 's'}, for the estimate)` : ''}`,
      command: smoke.command,
    });
  }
  out.push({ label: 'Full run', command: plan.command });
  const e = (plan.acceptanceCriteria as { evaluate?: { command?: unknown } } | null)?.evaluate;
  if (e && typeof e.command === 'string') out.push({ label: 'Evaluation of the checkpoint', command: e.command });
  return out;
}

interface Threshold {
  name: string;
  op: string;
  value: number;
}

const OP: Record<string, string> = { '<': '<', '<=': '≤', '>': '>', '>=': '≥' };

const isThreshold = (t: unknown): t is Threshold =>
  !!t &&
  typeof t === 'object' &&
  typeof (t as Threshold).name === 'string' &&
  typeof (t as Threshold).op === 'string' &&
  typeof (t as Threshold).value === 'number';

/** The acceptance criteria (planSchema's `acceptance`) as one sentence each; null when the shape is unknown. */
export function criteriaLines(c: unknown): { text: string; code?: string }[] | null {
  if (Array.isArray(c)) {
    // Older plans: a list of { description }.
    const lines = c.map((x) =>
      x && typeof x === 'object' && typeof (x as { description?: unknown }).description === 'string'
        ? (x as { description: string }).description
        : null,
    );
    return lines.every((l) => l !== null) ? lines.map((text) => ({ text: text! })) : null;
  }
  if (!c || typeof c !== 'object') return null;
  const a = c as {
    exitCode?: number;
    requiredFiles?: string[];
    metrics?: unknown[];
    evaluate?: { checkpoint?: string; command?: string; metrics?: unknown[]; reports?: string[] };
  };
  const out: { text: string; code?: string }[] = [];
  out.push({ text: `The run exits with code ${a.exitCode ?? 0}.` });
  if (a.requiredFiles?.length)
    out.push({
      text: `${a.requiredFiles.length === 1 ? 'This file exists' : 'These files exist'} when it ends: ${a.requiredFiles.join(', ')}.`,
    });
  for (const t of a.metrics ?? []) if (isThreshold(t)) out.push({ text: `Its last reported ${t.name} is ${OP[t.op] ?? t.op} ${t.value}.` });
  const e = a.evaluate;
  if (e) {
    out.push({
      text: `The checkpoint${e.checkpoint ? ` ${e.checkpoint}` : ''} is reloaded and evaluated on a worker (the last command above).`,
    });
    for (const t of e.metrics ?? [])
      if (isThreshold(t)) out.push({ text: `The evaluation's ${t.name} is ${OP[t.op] ?? t.op} ${t.value}.` });
    if (e.reports?.length) out.push({ text: `The evaluation reports ${e.reports.join(', ')}.` });
  }
  return out;
}

/** The hardware requirements in words: "CPU (torch-cpu), at least 4 GiB memory". */
export function hardwareLine(r: unknown): string | null {
  if (!r || typeof r !== 'object') return null;
  const h = r as {
    workload?: string;
    accelVendor?: string | null;
    minMemoryMiB?: number;
    minAccelMemoryMiB?: number;
    minTorch?: string;
    timeoutSec?: number;
  };
  if (!h.workload) return null;
  const vendor =
    h.accelVendor && h.accelVendor !== 'none'
      ? (({ nvidia: 'NVIDIA GPU', amd: 'AMD GPU', apple: 'Apple GPU' } as Record<string, string>)[h.accelVendor] ?? h.accelVendor)
      : 'CPU';
  const parts = [`${vendor} (${h.workload})`];
  if (h.minMemoryMiB) parts.push(`at least ${Math.round(h.minMemoryMiB / 1024)} GiB memory`);
  if (h.minAccelMemoryMiB) parts.push(`at least ${Math.round(h.minAccelMemoryMiB / 1024)} GiB GPU memory`);
  if (h.minTorch) parts.push(`PyTorch ${h.minTorch} or newer`);
  return parts.join(', ');
}

export function PlanView({ plan }: { plan: PlanData | null | undefined }) {
  if (!plan) return <p className="muted">No plan yet: the planner writes one after reading your files.</p>;
  const steps = Array.isArray(plan.steps) && plan.steps.every((s) => typeof s === 'string') ? (plan.steps as string[]) : null;
  const criteria = criteriaLines(plan.acceptanceCriteria);
  const hardware = hardwareLine(plan.requirements);
  const outputs = Array.isArray(plan.outputs) && plan.outputs.every((o) => typeof o === 'string') ? (plan.outputs as string[]) : null;
  const env =
    plan.environment && typeof plan.environment === 'object' && Object.keys(plan.environment).length > 0 ? plan.environment : null;
  return (
    <div className="stack plan" data-testid="plan">
      <p>{plan.summary}</p>
      <h3>Steps</h3>
      {steps ? (
        <ol className="plan-steps" data-testid="plan-steps">
          {steps.map((s, i) => (
            <li key={i}>
              <InlineCode text={s} />
            </li>
          ))}
        </ol>
      ) : (
        <JsonView value={plan.steps} />
      )}
      <h3>Commands, in order</h3>
      <ol className="plan-steps" data-testid="plan-commands">
        {commandsOf(plan).map((c, i) => (
          <li key={i}>
            {c.label}
            <pre className="command">
              <code>{c.command}</code>
            </pre>
          </li>
        ))}
      </ol>
      <dl className="kv">
        <dt>Hardware</dt>
        <dd>{hardware ?? <JsonView value={plan.requirements} />}</dd>
        <dt>Outputs</dt>
        <dd>{outputs ? outputs.length ? outputs.join(', ') : <span className="muted">none</span> : <JsonView value={plan.outputs} />}</dd>
        {env ? (
          <>
            <dt>Environment</dt>
            <dd>
              <JsonView value={env} />
            </dd>
          </>
        ) : null}
      </dl>
      <h3>Accepted when</h3>
      {criteria ? (
        <ul className="criteria" data-testid="criteria">
          {criteria.map((c, i) => (
            <li key={i}>
              {c.text}
              {c.code && (
                <pre className="command">
                  <code>{c.code}</code>
                </pre>
              )}
            </li>
          ))}
        </ul>
      ) : (
        <JsonView value={plan.acceptanceCriteria} />
      )}
      <p className="muted small">
        Version {plan.version} by {plan.author}, {formatTime(plan.createdAt)}
      </p>
    </div>
  );
}

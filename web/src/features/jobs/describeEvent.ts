/**
 * One line of plain words for a job event. Payload shapes grow with the API, so every
 * field is read defensively and unknown kinds fall back to their kind and key fields;
 * the full payload is always one click away in the timeline.
 */
import { formatBytes } from '../../lib/format';

type P = Record<string, unknown>;
const str = (v: unknown): string | undefined => (typeof v === 'string' && v ? v : typeof v === 'number' ? String(v) : undefined);
const pick = (p: P, ...keys: string[]) => keys.map((k) => str(p[k])).find((v) => v !== undefined);
const lower = (s: string | undefined) => s?.replace(/_/g, ' ').toLowerCase();

export function describeEvent(kind: string, payload: unknown): string {
  const p = (payload && typeof payload === 'object' ? payload : {}) as P;
  const reason = pick(p, 'reason', 'statusReason', 'message');
  switch (kind) {
    case 'job.created':
      return `Submitted${p.files != null ? ` ${str(p.files)} files` : ''}${typeof p.bytes === 'number' ? ` (${formatBytes(p.bytes)})` : ''}`;
    case 'job.status':
      return `Job ${lower(pick(p, 'status')) ?? 'changed'}${reason ? ` — ${reason}` : ''}`;
    case 'plan.created':
      return `Plan${p.version != null ? ` v${str(p.version)}` : ''}${pick(p, 'author') ? ` by ${pick(p, 'author')}` : ''}${pick(p, 'summary') ? `: ${pick(p, 'summary')}` : ''}`;
    case 'question.asked':
      return `Question: ${pick(p, 'text', 'question') ?? 'the planner needs an answer'}`;
    case 'question.answered':
      return `Answered: ${pick(p, 'answer') ?? ''}`;
    case 'task.created':
      return `Task ${pick(p, 'name', 'taskId') ?? ''}${pick(p, 'kind') ? ` (${lower(pick(p, 'kind'))})` : ''} created`;
    case 'task.status':
      return `Task ${pick(p, 'name', 'taskId') ?? ''} ${lower(pick(p, 'status')) ?? 'changed'}${reason ? ` — ${reason}` : ''}`;
    case 'attempt.status': {
      const n = pick(p, 'number');
      const w = pick(p, 'workerName', 'worker');
      return `Attempt${n ? ` #${n}` : ''}${w ? ` on ${w}` : ''} ${lower(pick(p, 'status')) ?? 'changed'}${reason ? ` — ${reason}` : ''}`;
    }
    case 'attempt.resumed':
      return `Attempt${pick(p, 'number') ? ` #${pick(p, 'number')}` : ''} ${resumedWords(p)}`;
    case 'attempt.stalled':
      return `Attempt${pick(p, 'attempt') ? ` #${pick(p, 'attempt')}` : ''} stalled — no log line or metric for ${pick(p, 'minutes') ?? '?'} min while its worker is alive`;
    case 'worker.flapping':
      return `Worker ${pick(p, 'worker', 'workerId') ?? ''} is flapping — it lost ${pick(p, 'lost') ?? '?'} attempts in ${pick(p, 'windowMin') ?? '?'} min`;
    case 'trust.check':
      return `Trust check${pick(p, 'task') ? ` of ${pick(p, 'task')}` : ''} (${lower(pick(p, 'step')) ?? 'decided'})${reason ? ` — ${reason}` : ''}`;
    case 'revision.requested':
      return `The supervisor asked the preparation agent for revision ${pick(p, 'revision') ?? '?'} of ${pick(p, 'step') ?? 'a step'}${pick(p, 'text') ? ` — ${pick(p, 'text')}` : ''}`;
    case 'agent.run':
      return `${pick(p, 'agent') ?? 'Agent'} ${lower(pick(p, 'status')) ?? 'started'}${pick(p, 'stopReason') ? ` — ${pick(p, 'stopReason')}` : ''}`;
    case 'agent.item':
      return agentItemTitle(p);
    case 'finding':
      return `Finding: ${pick(p, 'text', 'summary', 'content') ?? ''}`;
    case 'validation': {
      const step = pick(p, 'step');
      const ok = typeof p.ok === 'boolean' ? (p.ok ? 'passed' : 'failed') : lower(pick(p, 'outcome', 'status', 'result'));
      const problems = Array.isArray(p.problems) && p.problems.length ? ` — ${p.problems.map(String).join('; ')}` : '';
      return `Validation${step ? ` of the ${step}` : ''} ${ok ?? ''}${problems || (reason ? ` — ${reason}` : '')}`;
    }
    default: {
      const hint = pick(p, 'status', 'name', 'text', 'summary');
      return `${kind}${hint ? `: ${hint}` : ''}`;
    }
  }
}

/**
 * An `attempt.resumed` payload in the words `chatgpu watch` prints (api/src/cli/follow.ts resumedLine):
 * "resumed at step s of S from a checkpoint of <time> (work lost: t s)".
 */
export function resumedWords(p: P): string {
  const step = typeof p.step === 'number' ? ` at step ${p.step}${typeof p.of === 'number' ? ` of ${p.of}` : ''}` : '';
  const at = typeof p.checkpointAt === 'string' && !Number.isNaN(Date.parse(p.checkpointAt)) ? ` of ${utc(p.checkpointAt)}` : '';
  const lost = typeof p.workLostSec === 'number' ? ` (work lost: ${p.workLostSec} s)` : '';
  return `resumed${step} from a checkpoint${at}${lost}`;
}

const utc = (iso: string) => `${new Date(iso).toISOString().slice(0, 19).replace('T', ' ')} UTC`;

/** One line for an `agent.item` payload ({agent, type, status, name?, text?…}, see AgentActivity). */
export function agentItemTitle(p: P): string {
  const who = pick(p, 'agent') ?? 'agent';
  const status = pick(p, 'status');
  const flag = status && status !== 'DONE' ? ` (${status.toLowerCase()})` : '';
  const text = pick(p, 'text');
  const short = text ? (text.length > 80 ? `${text.slice(0, 80)}…` : text) : '';
  switch (pick(p, 'type')) {
    case 'function_call':
      // Saved PENDING before it runs; how it ended is on its result.
      return `${who} called ${pick(p, 'name') ?? 'a tool'}`;
    case 'function_call_output':
      return `${who} got a tool result${flag}`;
    case 'message':
      return p.role && p.role !== 'assistant' ? `${who} was told: ${short}` : `${who}: ${short}`;
    case 'reasoning':
      return `${who} thinks: ${short}`;
    case 'note':
      return `${who} note: ${short}`;
    default:
      return `${who} · ${lower(pick(p, 'type')) ?? 'step'}${flag}`;
  }
}

export const AGENT_KINDS = new Set(['agent.item', 'agent.run', 'finding', 'question.asked', 'question.answered', 'plan.created']);

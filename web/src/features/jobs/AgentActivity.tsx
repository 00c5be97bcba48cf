/**
 * The agents' steps as the API records them: every saved item of an agent run is an
 * `agent.item` job event with the payload
 *   { runId, agent, seq, type, status, name?, callId?, arguments?, output?, role?, text? }
 * (api/src/agents/loop.ts `itemEvent`), type one of function_call | function_call_output |
 * message | reasoning | note. A tool call is shown with its name and arguments, and its
 * result (the function_call_output with the same callId) right under it; the status of
 * the pair is the result's (DONE, REJECTED, UNCERTAIN), PENDING until it arrives.
 * `agent.run` (started, waiting, completed…) and `finding` events are listed in between.
 * Oldest first, like the timeline. A tool call reads as one line of words (toolCallWords.ts:
 * what was asked, what came back); its arguments and result as JSON are behind a disclosure.
 */
import { formatClock } from '../../lib/format';
import { StatusBadge } from '../ui/StatusBadge';
import { describeEvent } from './describeEvent';
import { callWords, resultWords } from './toolCallWords';
import type { JobEventItem } from './useJobActivity';

export interface AgentItemPayload {
  runId?: string;
  agent?: string;
  seq?: number;
  type?: string;
  status?: string;
  name?: string;
  callId?: string;
  arguments?: string;
  output?: string;
  role?: string;
  text?: string;
}

const KINDS = new Set(['agent.item', 'agent.run', 'finding']);
const obj = (p: unknown) => (p && typeof p === 'object' ? p : {}) as Record<string, unknown>;
const callKey = (p: AgentItemPayload) => `${p.runId ?? ''}:${p.callId ?? ''}`;

export function AgentActivity({ events }: { events: JobEventItem[] }) {
  const items = events.filter((e) => KINDS.has(e.kind));
  if (items.length === 0) return <p className="muted">No agent activity yet.</p>;
  // Results by call, so each call shows its own; names by call, for results without theirs.
  const results = new Map<string, { event: JobEventItem; p: AgentItemPayload }>();
  const calls = new Map<string, AgentItemPayload>();
  for (const e of items) {
    if (e.kind !== 'agent.item') continue;
    const p = obj(e.payload) as AgentItemPayload;
    if (p.type === 'function_call_output' && p.callId) results.set(callKey(p), { event: e, p });
    if (p.type === 'function_call' && p.callId) calls.set(callKey(p), p);
  }
  return (
    <ol className="timeline agent-activity" aria-label="Agent activity, oldest first" data-testid="agent-activity">
      {items.map((e) => {
        if (e.kind !== 'agent.item') {
          const p = obj(e.payload);
          return (
            <li key={e.id} data-kind={e.kind}>
              <Time at={e.createdAt} />
              <div>
                <strong>{describeEvent(e.kind, p)}</strong>
              </div>
            </li>
          );
        }
        const p = obj(e.payload) as AgentItemPayload;
        // A result whose call is listed is shown under the call.
        if (p.type === 'function_call_output' && p.callId && calls.has(callKey(p))) return null;
        const result = p.type === 'function_call' && p.callId ? results.get(callKey(p)) : undefined;
        return (
          <li key={e.id} data-kind={e.kind} data-item={p.type} data-tool={p.name ?? calls.get(callKey(p))?.name}>
            <Time at={e.createdAt} />
            <AgentItem p={p} result={result?.p} callName={p.callId ? calls.get(callKey(p))?.name : undefined} />
          </li>
        );
      })}
    </ol>
  );
}

function Time({ at }: { at: string }) {
  return (
    <time className="muted small" dateTime={at}>
      {formatClock(at)}
    </time>
  );
}

/** A badge only when a step did not simply complete: PENDING, REJECTED, UNCERTAIN. */
function Flag({ status }: { status?: string }) {
  return status && status !== 'DONE' ? <StatusBadge status={status} /> : null;
}

function AgentItem({ p, result, callName }: { p: AgentItemPayload; result?: AgentItemPayload; callName?: string }) {
  const who = p.agent ?? 'agent';
  switch (p.type) {
    case 'function_call': {
      const hasArgs = p.arguments !== undefined && p.arguments.trim() !== '' && p.arguments.trim() !== '{}';
      return (
        <div className="stack">
          <div data-testid="tool-line">
            <strong>{who}</strong> {callWords(p.name, p.arguments)} <span className="muted">→</span>{' '}
            {result ? resultWords(result.output) : <span className="muted">waiting for the result…</span>}{' '}
            <Flag status={result ? result.status : (p.status ?? 'PENDING')} />
          </div>
          <details className="small">
            <summary className="muted">
              <code>{p.name ?? 'tool'}</code> call as JSON
            </summary>
            {hasArgs && <Pretty label="Arguments" value={p.arguments!} />}
            {result && <Pretty label="Result" value={result.output ?? ''} />}
          </details>
        </div>
      );
    }
    case 'function_call_output':
      return (
        <div className="stack">
          <div data-testid="tool-line">
            <strong>{who}</strong> got the result of <code>{callName ?? 'a tool call'}</code> <span className="muted">→</span>{' '}
            {resultWords(p.output)} <Flag status={p.status} />
          </div>
          <details className="small">
            <summary className="muted">Result as JSON</summary>
            <Pretty label="Result" value={p.output ?? ''} />
          </details>
        </div>
      );
    case 'message': {
      const fromAgent = !p.role || p.role === 'assistant';
      // What the agent was told (its task, the user's answer) can be long: folded.
      return fromAgent ? (
        <div className="stack">
          <div>
            <strong>{who} says</strong> <Flag status={p.status} />
          </div>
          <pre className="agent-text">{p.text ?? ''}</pre>
        </div>
      ) : (
        <details>
          <summary>
            <strong>
              to {who} ({p.role})
            </strong>
            : <span className="muted">{firstLine(p.text)}</span>
          </summary>
          <pre className="agent-text">{p.text ?? ''}</pre>
        </details>
      );
    }
    case 'reasoning':
      return (
        <div className="stack">
          <strong>{who} thinks</strong>
          <pre className="agent-text muted">{p.text ?? ''}</pre>
        </div>
      );
    case 'note':
      return (
        <div className="stack">
          <div>
            <strong>{who} · note</strong> <Flag status={p.status} />
          </div>
          <pre className="agent-text">{p.text ?? ''}</pre>
        </div>
      );
    default:
      return (
        <div className="stack">
          <strong>
            {who} · {p.type ?? 'step'}
          </strong>
          {p.text && <pre className="agent-text">{p.text}</pre>}
        </div>
      );
  }
}

function firstLine(text: string | undefined): string {
  const line = (text ?? '').trim().split('\n')[0] ?? '';
  return line.length > 100 ? `${line.slice(0, 100)}…` : line;
}

/** Tool arguments and results arrive as strings, usually JSON: shown indented when they parse. */
export function prettyJson(s: string): string {
  const t = s.trim();
  if (!(t.startsWith('{') || t.startsWith('['))) return s;
  try {
    return JSON.stringify(JSON.parse(t), null, 2);
  } catch {
    return s;
  }
}

function Pretty({ label, value }: { label: string; value: string }) {
  return (
    <div>
      <div className="muted small">{label}</div>
      <pre className="agent-code" data-label={label}>
        {prettyJson(value)}
      </pre>
    </div>
  );
}

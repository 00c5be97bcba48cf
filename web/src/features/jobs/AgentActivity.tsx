import { formatClock } from '../../lib/format';
import { JsonView } from '../ui/JsonView';
import { agentItemTitle, describeEvent } from './describeEvent';
import type { JobEventItem } from './useJobActivity';

const ARG_KEYS = ['arguments', 'args', 'input', 'toolInput'];
const RESULT_KEYS = ['result', 'output', 'toolResult'];
const TEXT_KEYS = ['text', 'content', 'message', 'summary'];

/**
 * The agents' steps (model outputs, tool calls with arguments and results), runs and
 * findings, in order. Payloads are shown generically: the well-known parts (text,
 * arguments, result) get their own headings, anything else is listed below them.
 */
export function AgentActivity({ events }: { events: JobEventItem[] }) {
  const items = events.filter((e) => e.kind === 'agent.item' || e.kind === 'agent.run' || e.kind === 'finding');
  if (items.length === 0) return <p className="muted">No agent activity yet.</p>;
  return (
    <ol className="timeline" aria-label="Agent activity" data-testid="agent-activity">
      {items.map((e) => {
        const p = (e.payload && typeof e.payload === 'object' ? e.payload : {}) as Record<string, unknown>;
        const title = e.kind === 'agent.item' ? agentItemTitle(p) : describeEvent(e.kind, p);
        const text = TEXT_KEYS.map((k) => p[k]).find((v) => typeof v === 'string') as string | undefined;
        const args = ARG_KEYS.map((k) => p[k]).find((v) => v !== undefined);
        const result = RESULT_KEYS.map((k) => p[k]).find((v) => v !== undefined);
        const rest = Object.fromEntries(
          Object.entries(p).filter(([k]) => ![...ARG_KEYS, ...RESULT_KEYS, ...TEXT_KEYS, 'agent', 'role', 'type', 'name', 'tool', 'status'].includes(k)),
        );
        return (
          <li key={e.id} data-kind={e.kind}>
            <time className="muted small" dateTime={e.createdAt}>
              {formatClock(e.createdAt)}
            </time>
            <div className="stack">
              <strong>{title}</strong>
              {text && e.kind === 'agent.item' && <pre>{text}</pre>}
              {args !== undefined && (
                <details>
                  <summary>Arguments</summary>
                  <JsonView value={parseMaybeJson(args)} />
                </details>
              )}
              {result !== undefined && (
                <details>
                  <summary>Result</summary>
                  <JsonView value={parseMaybeJson(result)} />
                </details>
              )}
              {Object.keys(rest).length > 0 && (
                <details>
                  <summary className="muted small">Details</summary>
                  <JsonView value={rest} />
                </details>
              )}
            </div>
          </li>
        );
      })}
    </ol>
  );
}

/** Tool arguments usually arrive as a JSON string. */
function parseMaybeJson(v: unknown): unknown {
  if (typeof v !== 'string') return v;
  const t = v.trim();
  if (!(t.startsWith('{') || t.startsWith('['))) return v;
  try {
    return JSON.parse(t);
  } catch {
    return v;
  }
}

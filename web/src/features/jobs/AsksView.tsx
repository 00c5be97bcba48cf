/**
 * Each ask of the request with what became of it (the plan's dispositions and the job's status):
 * done, planned, not done or refused, with how or why in the planner's words.
 */
import { InlineCode } from '../ui/InlineCode';

export interface AskOutcomeData {
  ask: string;
  kind: string;
  outcome: string;
  detail: string;
  line: string;
}

const MARK: Record<string, string> = { done: '✓', planned: '·', 'not-done': '✗', refused: '✗' };

export function AsksView({ asks }: { asks: readonly AskOutcomeData[] }) {
  if (asks.length === 0) return null;
  return (
    <>
      <h3>What you asked</h3>
      <table className="asks" data-testid="asks">
        <tbody>
          {asks.map((a, i) => (
            <tr key={i} className={`ask-${a.outcome}`}>
              <td aria-label={a.outcome}>{MARK[a.outcome] ?? '·'}</td>
              <td>
                <q>{a.ask}</q>
              </td>
              <td>{a.outcome.replace('-', ' ')}</td>
              <td className="muted">
                <InlineCode text={a.detail} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

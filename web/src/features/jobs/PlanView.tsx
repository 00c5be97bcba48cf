import { formatTime } from '../../lib/format';
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
  createdAt: string;
}

export function PlanView({ plan }: { plan: PlanData | null | undefined }) {
  if (!plan) return <p className="muted">No plan yet: the planner writes one after reading your files.</p>;
  return (
    <div className="stack" data-testid="plan">
      <p>{plan.summary}</p>
      <dl className="kv">
        <dt>Command</dt>
        <dd>
          <code>{plan.command}</code>
        </dd>
        <dt>Hardware</dt>
        <dd>
          <JsonView value={plan.requirements} />
        </dd>
        <dt>Outputs</dt>
        <dd>
          <JsonView value={plan.outputs} />
        </dd>
        <dt>Acceptance</dt>
        <dd>
          <JsonView value={plan.acceptanceCriteria} />
        </dd>
        <dt>Steps</dt>
        <dd>
          <JsonView value={plan.steps} />
        </dd>
        {plan.environment && typeof plan.environment === 'object' && Object.keys(plan.environment).length > 0 ? (
          <>
            <dt>Environment</dt>
            <dd>
              <JsonView value={plan.environment} />
            </dd>
          </>
        ) : null}
      </dl>
      <p className="muted small">
        Version {plan.version} by {plan.author}, {formatTime(plan.createdAt)}
      </p>
    </div>
  );
}

import { formatCad } from '../../lib/format';

export function CostMeter({ cost, cap }: { cost: number; cap: number | null | undefined }) {
  const frac = cap ? Math.min(1, cost / cap) : 0;
  return (
    <div data-testid="cost">
      <div className="spread">
        <span>
          <strong>{formatCad(cost)}</strong> <span className="muted">so far</span>
        </span>
        <span className="muted">{cap ? `cap ${formatCad(cap)}` : 'no cap'}</span>
      </div>
      {cap ? (
        <div
          className={`progress${frac >= 0.9 ? ' over' : ''}`}
          role="progressbar"
          aria-label="Cost against cap"
          aria-valuemin={0}
          aria-valuemax={100}
          aria-valuenow={Math.round(frac * 100)}
          style={{ marginTop: 6 }}
        >
          <div style={{ width: `${frac * 100}%` }} />
        </div>
      ) : null}
    </div>
  );
}

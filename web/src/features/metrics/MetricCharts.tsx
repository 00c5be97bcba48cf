/**
 * The job's metrics as small SVG charts (chartModel.ts says what goes where): one chart per
 * metric family with a line per attempt (the smoke run dashed beside the run, each shard,
 * each retry), epoch marks on the step axis, and the evaluation's values as a table. They
 * come from the attempts' stored points and grow live from the job's subscription, so they
 * stay after the job ends. Plain SVG (no chart library): a path of at most 2,000 vertices
 * per line (decimated beyond that) draws 100,000 points in a few ms.
 */
import { useEffect, useMemo, useState } from 'react';
import type { MetricStore } from './MetricStore';
import { buildCharts, decimate, formatValue, niceTicks, type Chart, type EvalRow, type MetricSource, type SourceRole } from './chartModel';

export interface StoreSource {
  attemptId: string;
  label: string;
  role: SourceRole;
  store: MetricStore;
}

const W = 480;
const H = 200;
const PAD = { l: 48, r: 10, t: 12, b: 30 };
const COLORS = ['var(--accent)', '#d97706', '#1a7f37', '#c026d3', '#0891b2', '#c5221f', '#6d28d9', '#4d7c0f'];

export default function MetricCharts({ sources }: { sources: StoreSource[] }) {
  const [version, setVersion] = useState(0);
  useEffect(() => {
    const bump = () => setVersion((v) => v + 1);
    const offs = sources.map((s) => s.store.subscribe(bump));
    return () => offs.forEach((off) => off());
  }, [sources]);

  const { charts, evals } = useMemo(() => {
    const input: MetricSource[] = sources.map((s) => ({
      attemptId: s.attemptId,
      label: s.label,
      role: s.role,
      // The store's own arrays (they only grow; `version` says when): no copy of 100,000 points per frame.
      series: [...s.store.series.values()],
    }));
    return buildCharts(input);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [sources, version]);

  const loading = sources.some((s) => s.store.loading);
  const errors = sources.filter((s) => s.store.error);
  return (
    <div data-testid="metrics">
      {errors.map((s) => (
        <p key={s.attemptId} className="error-text small" role="alert">
          Could not load earlier points of {s.label}: {s.store.error}
        </p>
      ))}
      {charts.length === 0 && evals.length === 0 && <p className="muted">{loading ? 'Loading metrics…' : 'No metrics reported yet.'}</p>}
      {charts.length > 0 && (
        <div className="metric-grid">
          {charts.map((c) => (
            <ChartView key={c.family} chart={c} />
          ))}
        </div>
      )}
      {evals.length > 0 && <EvalTable rows={evals} />}
    </div>
  );
}

function ChartView({ chart }: { chart: Chart }) {
  let x0 = Infinity,
    x1 = -Infinity,
    y0 = Infinity,
    y1 = -Infinity;
  for (const l of chart.lines) {
    for (let i = 0; i < l.xs.length; i++) {
      const x = l.xs[i]!,
        y = l.ys[i]!;
      if (!Number.isFinite(y)) continue;
      if (x < x0) x0 = x;
      if (x > x1) x1 = x;
      if (y < y0) y0 = y;
      if (y > y1) y1 = y;
    }
  }
  if (!Number.isFinite(x0)) return null;
  if (x1 === x0) x1 = x0 + 1;
  if (y1 === y0) {
    const d = Math.abs(y0) * 0.1 || 1;
    y0 -= d;
    y1 += d;
  }
  const yTicks = niceTicks(y0, y1, 4);
  const xTicks = niceTicks(x0, x1, 5).filter((t) => Number.isInteger(t));
  const sx = (x: number) => PAD.l + ((x - x0) / (x1 - x0)) * (W - PAD.l - PAD.r);
  const sy = (y: number) => H - PAD.b - ((y - y0) / (y1 - y0)) * (H - PAD.t - PAD.b);
  // Epoch labels are thinned to at most ~8 so they stay readable; every mark keeps its line.
  const every = Math.max(1, Math.ceil(chart.epochs.length / 8));
  const summary = chart.lines.map((l) => `${l.label}: ${l.ys.length} points, latest ${formatValue(l.ys[l.ys.length - 1]!)}`).join('; ');

  return (
    <figure className="panel chart" style={{ margin: 0 }} data-testid={`chart-${chart.family}`}>
      <figcaption>
        <strong>{chart.family}</strong>
      </figcaption>
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label={`${chart.family} by ${chart.xLabel}. ${summary}`} className="chart-svg">
        {yTicks.map((t) => (
          <g key={`y${t}`}>
            <line x1={PAD.l} x2={W - PAD.r} y1={sy(t)} y2={sy(t)} className="grid" />
            <text x={PAD.l - 6} y={sy(t)} className="tick" textAnchor="end" dominantBaseline="middle">
              {formatValue(t)}
            </text>
          </g>
        ))}
        {xTicks.map((t) => (
          <text key={`x${t}`} x={sx(t)} y={H - PAD.b + 14} className="tick" textAnchor="middle">
            {formatValue(t)}
          </text>
        ))}
        <text x={W - PAD.r} y={H - 4} className="tick" textAnchor="end">
          {chart.xLabel}
        </text>
        {chart.epochs.map((m, i) => (
          <g key={`e${m.x}:${m.epoch}`} data-epoch={m.epoch}>
            <line x1={sx(m.x)} x2={sx(m.x)} y1={PAD.t} y2={H - PAD.b} className="epoch" />
            {i % every === 0 && (
              // Near the right edge the label goes left of its mark, inside the chart.
              <text
                x={sx(m.x) > W - 70 ? sx(m.x) - 3 : sx(m.x) + 3}
                y={PAD.t + 9}
                className="tick"
                textAnchor={sx(m.x) > W - 70 ? 'end' : 'start'}
              >
                epoch {formatValue(m.epoch)}
              </text>
            )}
          </g>
        ))}
        {chart.lines.map((l, i) => {
          const [xs, ys] = decimate(l.xs, l.ys);
          let d = '';
          let pen = 'M';
          for (let k = 0; k < xs.length; k++) {
            if (!Number.isFinite(ys[k]!)) {
              pen = 'M';
              continue;
            }
            d += `${pen}${sx(xs[k]!).toFixed(1)},${sy(ys[k]!).toFixed(1)}`;
            pen = 'L';
          }
          const color = COLORS[i % COLORS.length];
          return (
            <g key={l.key}>
              <path
                d={d}
                fill="none"
                stroke={color}
                strokeWidth={1.6}
                strokeDasharray={l.role === 'smoke' ? '5 4' : undefined}
                data-series={l.label}
                data-role={l.role}
                data-points={l.ys.length}
              />
              {/* A lone point would be invisible as a path. */}
              {xs.length === 1 && <circle cx={sx(xs[0]!)} cy={sy(ys[0]!)} r={3} fill={color} />}
            </g>
          );
        })}
      </svg>
      <ul className="legend small">
        {chart.lines.map((l, i) => (
          <li key={l.key} data-series={l.label}>
            <svg width="18" height="8" aria-hidden="true">
              <line
                x1="0"
                x2="18"
                y1="4"
                y2="4"
                stroke={COLORS[i % COLORS.length]}
                strokeWidth="2"
                strokeDasharray={l.role === 'smoke' ? '4 3' : undefined}
              />
            </svg>{' '}
            {l.label}{' '}
            <span className="muted">
              latest {formatValue(l.ys[l.ys.length - 1]!)} · {l.ys.length} points
            </span>
          </li>
        ))}
      </ul>
    </figure>
  );
}

function EvalTable({ rows }: { rows: EvalRow[] }) {
  return (
    <table aria-label="Evaluation metrics" data-testid="eval-metrics" style={{ marginTop: 12 }}>
      <thead>
        <tr>
          <th>Evaluation</th>
          <th>Value</th>
          <th>From</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((r) => (
          <tr key={`${r.source}:${r.name}`} data-metric={r.name}>
            <td>{r.name}</td>
            <td className="mono">{formatValue(r.value)}</td>
            <td className="muted">
              {r.source}
              {r.step !== null ? ` · step ${r.step}` : ''}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

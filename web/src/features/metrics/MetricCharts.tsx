/**
 * One small uPlot chart per reported metric (loss, accuracy, gpu_util…). uPlot (≈20 KB
 * gzip, canvas) redraws 100k points in a few ms; this module and uPlot are lazy-loaded.
 */
import { useEffect, useRef, useSyncExternalStore } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { MetricStore, Series } from './MetricStore';

export default function MetricCharts({ store }: { store: MetricStore }) {
  useSyncExternalStore(store.subscribe, store.getVersion);
  const series = [...store.series.values()].sort((a, b) => order(a.name) - order(b.name) || a.name.localeCompare(b.name));
  const error = store.error && (
    <p className="error-text small" role="alert">
      Could not load earlier points: {store.error}
    </p>
  );
  if (series.length === 0) {
    return (
      <>
        {error}
        <p className="muted">{store.loading ? 'Loading metrics…' : 'No metrics reported yet.'}</p>
      </>
    );
  }
  return (
    <div className="metric-grid">
      {error}
      {series.map((s) => (
        <Chart key={s.name} series={s} version={store.getVersion()} />
      ))}
    </div>
  );
}

// Loss first, utilization last, the rest alphabetical.
const order = (n: string) => (/loss/i.test(n) ? 0 : /util|gpu|cpu|mem/i.test(n) ? 2 : 1);

function Chart({ series, version }: { series: Series; version: number }) {
  const el = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);

  useEffect(() => {
    const host = el.current!;
    const css = getComputedStyle(document.documentElement);
    const text = css.getPropertyValue('--muted').trim() || '#666';
    const line = css.getPropertyValue('--line').trim() || '#ddd';
    const axis = { stroke: text, grid: { stroke: line, width: 1 }, ticks: { stroke: line, width: 1 } };
    plot.current = new uPlot(
      {
        width: Math.max(280, host.clientWidth),
        height: 180,
        legend: { show: true },
        scales: { x: { time: false } },
        axes: [axis, { ...axis, size: 56 }],
        series: [{ label: 'step' }, { label: series.name, stroke: css.getPropertyValue('--accent').trim() || '#3451d1', width: 1.5 }],
      },
      [series.xs, series.ys],
      host,
    );
    const ro = new ResizeObserver(() => plot.current?.setSize({ width: Math.max(280, host.clientWidth), height: 180 }));
    ro.observe(host);
    return () => {
      ro.disconnect();
      plot.current?.destroy();
      plot.current = null;
    };
  }, [series]);

  useEffect(() => {
    plot.current?.setData([series.xs.slice(), series.ys.slice()]);
  }, [series, version]);

  const last = series.ys[series.ys.length - 1];
  return (
    <figure className="panel chart" style={{ margin: 0 }} data-testid={`chart-${series.name}`}>
      <figcaption className="spread">
        <strong>{series.name}</strong>
        <span className="muted small">
          latest {last === undefined ? '—' : Number(last.toPrecision(5))} · {series.ys.length} points
        </span>
      </figcaption>
      <div ref={el} />
    </figure>
  );
}

/**
 * A virtualized log tail: only the rows in view (plus a small overscan) are in the DOM,
 * so 100,000 lines cost the same to render as 50. Follow mode keeps the newest line in
 * view until the user scrolls up; search filters to matching lines (case-insensitive)
 * and is extended incrementally as lines stream in.
 *
 * For people: `CHATGPU_METRIC {json}` lines (the charts draw them) are hidden until the
 * "Metric lines" toggle shows them; long lines wrap (a line's height is its length over the
 * columns that fit, exact for a monospace font: tabs count as 8, `break-all`), or scroll
 * sideways with Wrap off; the worker's own lines (stream `system`) carry a "worker" tag.
 */
import { useEffect, useLayoutEffect, useMemo, useRef, useState, useSyncExternalStore, type ReactNode } from 'react';
import { formatNumber } from '../../lib/format';
import type { LogStore } from './LogStore';

const ROW = 18;
const OVERSCAN = 20;
/** Left of the text: the line number (64 px, padding included) and the row's 8 px right padding. */
const GUTTER = 64 + 8;
const METRIC_PREFIX = 'CHATGPU_METRIC ';

/** How many rows `text` takes at `cols` columns (tabs as 8), after `lead` columns of something else. */
export function rowsOf(text: string, cols: number, lead = 0): number {
  let n = text.length + lead;
  for (let i = text.indexOf('\t'); i >= 0; i = text.indexOf('\t', i + 1)) n += 7;
  return Math.max(1, Math.ceil(n / Math.max(1, cols)));
}

export default function LogViewer({ store, label }: { store: LogStore; label: string }) {
  const version = useSyncExternalStore(store.subscribe, store.getVersion);
  const viewport = useRef<HTMLDivElement>(null);
  const [follow, setFollow] = useState(true);
  const [scrollTop, setScrollTop] = useState(0);
  const [height, setHeight] = useState(420);
  const [query, setQuery] = useState('');
  const [search, setSearch] = useState('');
  const [showMetrics, setShowMetrics] = useState(false);
  const [wrap, setWrap] = useState(true);
  const [cols, setCols] = useState(120);
  const probe = useRef<HTMLSpanElement>(null);

  useEffect(() => {
    const t = setTimeout(() => setSearch(query.trim().toLowerCase()), 120);
    return () => clearTimeout(t);
  }, [query]);

  // Indexes of the lines shown (search matches, metric lines left out unless asked for),
  // extended as lines arrive rather than rescanned. Null: every line.
  const matches = useRef<{ key: string; scanned: number; idx: number[]; metrics: number }>({ key: '', scanned: 0, idx: [], metrics: 0 });
  const shown = useMemo(() => {
    const key = `${showMetrics ? 1 : 0}:${search}`;
    const m = matches.current.key === key ? matches.current : { key, scanned: 0, idx: [] as number[], metrics: 0 };
    for (let i = m.scanned; i < store.length; i++) {
      const t = store.texts[i]!;
      const metric = t.startsWith(METRIC_PREFIX);
      if (metric) m.metrics++;
      if (metric && !showMetrics) continue;
      if (search && !t.toLowerCase().includes(search)) continue;
      m.idx.push(i);
    }
    m.scanned = store.length;
    matches.current = m;
    return { idx: !search && (showMetrics || m.metrics === 0) ? null : m.idx.slice(), metrics: m.metrics };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [search, showMetrics, version, store]);
  const matchIdx = shown.idx;
  const hiddenMetrics = showMetrics ? 0 : shown.metrics;

  const count = matchIdx ? matchIdx.length : store.length;
  // Row tops (in px) of the shown lines when wrapping; each line is as tall as its rows.
  const tops = useMemo(() => {
    if (!wrap) return null;
    const t = new Float64Array(count + 1);
    for (let r = 0; r < count; r++) {
      const i = matchIdx ? matchIdx[r]! : r;
      // The "worker" tag of a system line takes about 8 columns.
      t[r + 1] = t[r]! + rowsOf(store.texts[i]!, cols, store.streams[i] === 'system' ? 8 : 0) * ROW;
    }
    return t;
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [wrap, count, cols, matchIdx, version, store]);
  const total = tops ? tops[count]! : count * ROW;

  // The columns that fit: the viewport's width over one character of the log's font.
  useLayoutEffect(() => {
    const el = viewport.current;
    const p = probe.current;
    if (!el || !p) return;
    const measure = () => {
      const ch = p.getBoundingClientRect().width / 100 || 7.5;
      setCols(Math.max(10, Math.floor((el.clientWidth - GUTTER) / ch)));
    };
    measure();
    const ro = new ResizeObserver(measure);
    ro.observe(el);
    return () => ro.disconnect();
  }, []);

  useLayoutEffect(() => {
    const el = viewport.current;
    if (!el) return;
    setHeight(el.clientHeight);
    if (follow && el.scrollTop !== el.scrollHeight - el.clientHeight) {
      el.scrollTop = el.scrollHeight;
      setScrollTop(el.scrollTop);
    }
  }, [follow, count, total]);

  // Only the reader's own scrolling (wheel, touch, keys, dragging the scrollbar) turns follow
  // mode off or on again. Scroll events the page causes itself — following new lines, the
  // height shrinking under a search filter — must never switch it off.
  const lastGesture = useRef(0);
  const gesture = () => {
    lastGesture.current = performance.now();
  };
  const onScroll = () => {
    const el = viewport.current!;
    setScrollTop(el.scrollTop);
    if (performance.now() - lastGesture.current > 400) return;
    const atBottom = el.scrollTop + el.clientHeight >= el.scrollHeight - ROW;
    if (follow !== atBottom) setFollow(atBottom);
  };

  // The first row at or above the top of the view (binary search over the row tops when wrapping).
  const rowAt = (y: number) => {
    if (!tops) return Math.floor(y / ROW);
    let lo = 0;
    let hi = count;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (tops[mid]! <= y) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  };
  const start = Math.max(0, rowAt(scrollTop) - OVERSCAN);
  const end = Math.min(count, rowAt(scrollTop + height) + 1 + OVERSCAN);
  const rows: ReactNode[] = [];
  for (let r = start; r < end; r++) {
    const i = matchIdx ? matchIdx[r]! : r;
    const stream = store.streams[i]!;
    const text = store.texts[i]!;
    // Metric lines (shown on demand; the charts draw them) are dimmed.
    const metric = text.startsWith(METRIC_PREFIX) ? ' metric' : '';
    const top = tops ? tops[r]! : r * ROW;
    const h = tops ? tops[r + 1]! - top : ROW;
    rows.push(
      <div
        key={store.seqs[i]}
        className={`line ${stream}${metric}`}
        style={{ top, height: h }}
        data-seq={store.seqs[i]}
        title={store.times[i]}
      >
        <span className="ln">{store.seqs[i]}</span>
        <span className="text">
          {stream === 'system' && <span className="src">worker</span>}
          {search ? highlight(text, search) : text}
        </span>
      </div>,
    );
  }

  return (
    <div className="logview" aria-label={label} role="region">
      <div className="toolbar">
        <input
          type="search"
          placeholder="Search the log"
          aria-label="Search the log"
          value={query}
          onChange={(e) => setQuery(e.target.value)}
        />
        <button type="button" aria-pressed={follow} onClick={() => setFollow((f) => !f)} title="Keep the newest line in view">
          Follow
        </button>
        <button type="button" aria-pressed={wrap} onClick={() => setWrap((w) => !w)} title="Wrap long lines (off: scroll sideways)">
          Wrap
        </button>
        <button
          type="button"
          aria-pressed={showMetrics}
          onClick={() => setShowMetrics((m) => !m)}
          title="Show the CHATGPU_METRIC lines the charts are drawn from"
        >
          Metric lines
        </button>
        <span className="small" data-testid="log-count">
          {search ? `${formatNumber(count)} matching of ${lines(store.length)}` : lines(store.length)}
          {hiddenMetrics > 0 ? ` · ${formatNumber(hiddenMetrics)} metric line${hiddenMetrics === 1 ? '' : 's'} hidden` : ''}
          {store.loading ? ' · loading earlier lines…' : ''}
        </span>
        {store.error && <span className="small error-text">Could not load: {store.error}</span>}
      </div>
      <span ref={probe} className="probe" aria-hidden="true">
        {'M'.repeat(100)}
      </span>
      <div
        className={`viewport${wrap ? ' wrap' : ''}`}
        ref={viewport}
        onScroll={onScroll}
        onWheel={gesture}
        onTouchMove={gesture}
        onKeyDown={gesture}
        onMouseDown={gesture}
        tabIndex={0}
        data-testid="log-viewport"
      >
        {count === 0 ? (
          <div className="state" style={{ color: '#8b949e' }}>
            {store.loading
              ? 'Loading…'
              : search
                ? 'No line matches.'
                : hiddenMetrics > 0
                  ? 'Only metric lines so far (the charts show them).'
                  : 'No output yet.'}
          </div>
        ) : (
          <div style={{ height: total, position: 'relative' }}>{rows}</div>
        )}
      </div>
    </div>
  );
}

const lines = (n: number) => `${formatNumber(n)} line${n === 1 ? '' : 's'}`;

function highlight(text: string, q: string): ReactNode {
  const lower = text.toLowerCase();
  const parts: ReactNode[] = [];
  let at = 0;
  for (let i = lower.indexOf(q); i >= 0; i = lower.indexOf(q, i + q.length)) {
    parts.push(text.slice(at, i), <mark key={i}>{text.slice(i, i + q.length)}</mark>);
    at = i + q.length;
  }
  parts.push(text.slice(at));
  return parts;
}

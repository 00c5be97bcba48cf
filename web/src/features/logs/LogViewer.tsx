/**
 * A virtualized log tail: only the rows in view (plus a small overscan) are in the DOM,
 * so 100,000 lines cost the same to render as 50. Follow mode keeps the newest line in
 * view until the user scrolls up; search filters to matching lines (case-insensitive)
 * and is extended incrementally as lines stream in.
 */
import { useEffect, useLayoutEffect, useMemo, useRef, useState, useSyncExternalStore, type ReactNode } from 'react';
import { formatNumber } from '../../lib/format';
import type { LogStore } from './LogStore';

const ROW = 18;
const OVERSCAN = 20;

export default function LogViewer({ store, label }: { store: LogStore; label: string }) {
  const version = useSyncExternalStore(store.subscribe, store.getVersion);
  const viewport = useRef<HTMLDivElement>(null);
  const [follow, setFollow] = useState(true);
  const [scrollTop, setScrollTop] = useState(0);
  const [height, setHeight] = useState(420);
  const [query, setQuery] = useState('');
  const [search, setSearch] = useState('');

  useEffect(() => {
    const t = setTimeout(() => setSearch(query.trim().toLowerCase()), 120);
    return () => clearTimeout(t);
  }, [query]);

  // Matching line indexes, extended as lines arrive rather than rescanned.
  const matches = useRef<{ q: string; scanned: number; idx: number[] }>({ q: '', scanned: 0, idx: [] });
  const matchIdx = useMemo(() => {
    if (!search) return null;
    const m = matches.current.q === search ? matches.current : { q: search, scanned: 0, idx: [] as number[] };
    for (let i = m.scanned; i < store.length; i++) if (store.texts[i]!.toLowerCase().includes(search)) m.idx.push(i);
    m.scanned = store.length;
    matches.current = m;
    return m.idx.slice();
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [search, version, store]);

  const count = matchIdx ? matchIdx.length : store.length;
  const total = count * ROW;

  useLayoutEffect(() => {
    const el = viewport.current;
    if (!el) return;
    setHeight(el.clientHeight);
    if (follow && el.scrollTop !== el.scrollHeight - el.clientHeight) {
      el.scrollTop = el.scrollHeight;
      setScrollTop(el.scrollTop);
    }
  }, [follow, count]);

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

  const start = Math.max(0, Math.floor(scrollTop / ROW) - OVERSCAN);
  const end = Math.min(count, Math.ceil((scrollTop + height) / ROW) + OVERSCAN);
  const rows: ReactNode[] = [];
  for (let r = start; r < end; r++) {
    const i = matchIdx ? matchIdx[r]! : r;
    const stream = store.streams[i]!;
    // Metric lines (the worker also turns them into chart points) are dimmed: the charts show them.
    const metric = store.texts[i]!.startsWith('CHATGPU_METRIC ') ? ' metric' : '';
    rows.push(
      <div key={store.seqs[i]} className={`line ${stream}${metric}`} style={{ top: r * ROW }} data-seq={store.seqs[i]} title={store.times[i]}>
        <span className="ln">{store.seqs[i]}</span>
        <span>{search ? highlight(store.texts[i]!, search) : store.texts[i]}</span>
      </div>,
    );
  }

  return (
    <div className="logview" aria-label={label} role="region">
      <div className="toolbar">
        <input type="search" placeholder="Search the log" aria-label="Search the log" value={query} onChange={(e) => setQuery(e.target.value)} />
        <button type="button" aria-pressed={follow} onClick={() => setFollow((f) => !f)} title="Keep the newest line in view">
          Follow
        </button>
        <span className="small" data-testid="log-count">
          {matchIdx ? `${formatNumber(matchIdx.length)} matching of ${lines(store.length)}` : lines(store.length)}
          {store.loading ? ' · loading earlier lines…' : ''}
        </span>
        {store.error && <span className="small error-text">Could not load: {store.error}</span>}
      </div>
      <div
        className="viewport"
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
            {store.loading ? 'Loading…' : search ? 'No line matches.' : 'No output yet.'}
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

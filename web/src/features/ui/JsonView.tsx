/**
 * Renders arbitrary JSON from the API readably: objects as key/value lists with
 * humanised keys, short arrays of scalars inline, long strings as preformatted text.
 */
import { humanizeKey } from '../../lib/format';

export function JsonView({ value, depth = 0 }: { value: unknown; depth?: number }) {
  if (value === null || value === undefined) return <span className="muted">none</span>;
  if (typeof value === 'string') {
    return value.includes('\n') || value.length > 120 ? <pre>{value}</pre> : <span>{value}</span>;
  }
  if (typeof value === 'number' || typeof value === 'boolean') return <span className="mono">{String(value)}</span>;
  if (Array.isArray(value)) {
    if (value.length === 0) return <span className="muted">none</span>;
    if (value.every((v) => v === null || typeof v !== 'object')) return <span>{value.map(String).join(', ')}</span>;
    return (
      <ol className="json" style={{ paddingLeft: 18, margin: 0 }}>
        {value.map((v, i) => (
          <li key={i}>
            <JsonView value={v} depth={depth + 1} />
          </li>
        ))}
      </ol>
    );
  }
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length === 0) return <span className="muted">none</span>;
  return (
    <dl className="kv json">
      {entries.map(([k, v]) => (
        <div key={k} style={{ display: 'contents' }}>
          <dt className="k">{humanizeKey(k)}</dt>
          <dd>{depth > 5 ? <code>{JSON.stringify(v)}</code> : <JsonView value={v} depth={depth + 1} />}</dd>
        </div>
      ))}
    </dl>
  );
}

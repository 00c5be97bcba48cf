import { useState } from 'react';
import { downloadBlob } from '../../lib/blobs';
import { formatBytes } from '../../lib/format';
import type { TaskData } from './TasksView';

/** Files the attempts produced, newest task first, each downloadable with the session token. */
export function Outputs({ tasks }: { tasks: TaskData[] }) {
  const [busy, setBusy] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const rows = tasks.flatMap((t) =>
    t.attempts.filter((a) => a.outputs.length > 0).flatMap((a) => a.outputs.map((o) => ({ ...o, task: t.name, attempt: a.number, status: a.status, key: `${a.id}:${o.path}` }))),
  );
  if (rows.length === 0) return <p className="muted">No outputs yet.</p>;
  const download = async (sha: string, path: string, key: string) => {
    setBusy(key);
    setError(null);
    try {
      await downloadBlob(sha, path);
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(null);
    }
  };
  return (
    <>
      {error && (
        <p className="error-text" role="alert">
          {error}
        </p>
      )}
      <table aria-label="Outputs" data-testid="outputs">
        <thead>
          <tr>
            <th>File</th>
            <th>Size</th>
            <th>From</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {rows.map((o) => (
            <tr key={o.key}>
              <td>
                <code>{o.path}</code>
              </td>
              <td>{formatBytes(o.size)}</td>
              <td className="small muted">
                {o.task} #{o.attempt} ({o.status.toLowerCase()})
              </td>
              <td>
                <button type="button" onClick={() => void download(o.sha256, o.path, o.key)} disabled={busy === o.key} aria-label={`Download ${o.path}`}>
                  {busy === o.key ? 'Downloading…' : 'Download'}
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

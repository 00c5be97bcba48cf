import { useState } from 'react';
import { downloadBlob, downloadOutputsArchive } from '../../lib/blobs';
import { formatBytes } from '../../lib/format';
import { NotebookView } from '../files/NotebookView';
import { ValidationBadge } from '../ui/ValidationBadge';

export interface OutputFile {
  path: string;
  sha256: string;
  size: number;
}

/**
 * The job's downloadable results (Job.outputs: files of its succeeded run and evaluation
 * tasks), each downloadable with the session token, and all of them as one archive. An
 * executed notebook (.ipynb) can also be viewed read-only below the list.
 */
export function Outputs({
  jobId,
  outputs,
  status,
  validation,
}: {
  jobId: string;
  outputs: readonly OutputFile[];
  status: string;
  validation: { badge: string; reason?: string | null };
}) {
  const [busy, setBusy] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [viewing, setViewing] = useState<string | null>(null);
  if (outputs.length === 0) {
    return (
      <p className="muted">
        {status === 'SUCCEEDED' || status === 'FAILED' || status === 'CANCELLED'
          ? 'This job produced no outputs.'
          : 'No outputs yet: they appear when a run succeeds.'}
      </p>
    );
  }
  const run = async (key: string, fn: () => Promise<void>) => {
    setBusy(key);
    setError(null);
    try {
      await fn();
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(null);
    }
  };
  const total = outputs.reduce((s, o) => s + o.size, 0);
  const shown = outputs.find((o) => o.path === viewing);
  return (
    <>
      {error && (
        <p className="error-text" role="alert">
          {error}
        </p>
      )}
      <div className="spread" style={{ marginBottom: 8 }}>
        <span className="muted small">
          {outputs.length} file{outputs.length === 1 ? '' : 's'}, {formatBytes(total)}{' '}
          <ValidationBadge badge={validation.badge} reason={validation.reason} inlineReason />
        </span>
        <button type="button" onClick={() => void run('*', () => downloadOutputsArchive(jobId))} disabled={busy === '*'}>
          {busy === '*' ? 'Preparing…' : 'Download all (.tar.gz)'}
        </button>
      </div>
      <table aria-label="Outputs" data-testid="outputs">
        <thead>
          <tr>
            <th>File</th>
            <th>Size</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {outputs.map((o) => (
            <tr key={o.path}>
              <td>
                <code>{o.path}</code>
              </td>
              <td>{formatBytes(o.size)}</td>
              <td>
                <button
                  type="button"
                  onClick={() => void run(o.path, () => downloadBlob(o.sha256, o.path))}
                  disabled={busy === o.path}
                  aria-label={`Download ${o.path}`}
                >
                  {busy === o.path ? 'Downloading…' : 'Download'}
                </button>
                {isNotebook(o.path) && (
                  <button
                    type="button"
                    className="nb-view-button"
                    onClick={() => setViewing(viewing === o.path ? null : o.path)}
                    aria-expanded={viewing === o.path}
                    aria-label={`${viewing === o.path ? 'Hide' : 'View'} ${o.path}`}
                  >
                    {viewing === o.path ? 'Hide' : 'View'}
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {shown && <NotebookView key={shown.path} path={shown.path} sha256={shown.sha256} size={shown.size} />}
    </>
  );
}

const isNotebook = (path: string) => path.toLowerCase().endsWith('.ipynb');

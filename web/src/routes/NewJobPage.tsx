import { useMutation } from '@apollo/client/react';
import { useRef, useState, type DragEvent, type FormEvent } from 'react';
import { graphql } from '../gql';
import { putBlob, sha256Hex } from '../lib/blobs';
import { formatBytes } from '../lib/format';
import { navigate } from '../lib/router';
import { filesFromDataTransfer, filesFromInput, toSelection, type Selection } from '../features/files/collectFiles';
import { FileTree } from '../features/files/FileTree';

const CreateJob = graphql(`
  mutation CreateJob($input: CreateJobInput!) {
    createJob(input: $input) {
      __typename
      ... on Job {
        id
        status
      }
      ... on ValidationError {
        message
        issues {
          path
          message
        }
      }
      ... on NotFoundError {
        message
      }
    }
  }
`);

const HARDWARE = [
  { value: '', label: 'No preference (the planner decides)' },
  { value: 'any', label: 'Any hardware' },
  { value: 'cpu', label: 'CPU only' },
  { value: 'nvidia', label: 'NVIDIA GPU (CUDA)' },
  { value: 'amd', label: 'AMD GPU (ROCm)' },
  { value: 'apple', label: 'Apple silicon (MPS)' },
];

type Phase =
  | { kind: 'idle' }
  | { kind: 'hashing'; done: number; total: number }
  | { kind: 'uploading'; sent: number; total: number }
  | { kind: 'creating' };

const UPLOAD_CONCURRENCY = 4;

const REQUEST_EXAMPLE =
  'e.g. Train it for 20 epochs with a learning rate of 0.001 and give me the model and its accuracy on the test set. Stop if the loss is still above 0.5.';

export default function NewJobPage() {
  const [selection, setSelection] = useState<Selection | null>(null);
  const [over, setOver] = useState(false);
  const [title, setTitle] = useState('');
  const [request, setRequest] = useState('');
  const [cap, setCap] = useState('');
  const [hardware, setHardware] = useState('');
  const [phase, setPhase] = useState<Phase>({ kind: 'idle' });
  const [error, setError] = useState<string | null>(null);
  const [createJob] = useMutation(CreateJob);
  const fileInput = useRef<HTMLInputElement>(null);
  const folderInput = useRef<HTMLInputElement>(null);
  const abort = useRef<AbortController | null>(null);

  const accept = (sel: Selection) => {
    setError(null);
    if (!sel.archive && sel.files.length === 0) return setError('Nothing to upload: the selection has no files.');
    setSelection(sel);
    if (!title) setTitle(sel.root ?? sel.archive?.name.replace(/\.(zip|tar\.gz|tgz)$/i, '') ?? '');
  };

  const onDrop = async (e: DragEvent) => {
    e.preventDefault();
    setOver(false);
    accept(toSelection(await filesFromDataTransfer(e.dataTransfer)));
  };

  const busy = phase.kind !== 'idle';
  const list = selection?.archive
    ? [{ path: selection.archive.name, size: selection.archive.size }]
    : (selection?.files.map((f) => ({ path: f.path, size: f.file.size })) ?? []);
  const totalBytes = list.reduce((s, f) => s + f.size, 0);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (!selection) return setError('Add your project files first.');
    setError(null);
    const ctrl = new AbortController();
    abort.current = ctrl;
    try {
      // 1. Hash every file (content addressing), 2. upload each distinct blob once,
      // 3. create the job from the manifest (or the archive's hash).
      const items = selection.archive ? [{ path: selection.archive.name, file: selection.archive }] : selection.files;
      const hashed: { path: string; sha256: string; file: File }[] = [];
      setPhase({ kind: 'hashing', done: 0, total: items.length });
      for (const it of items) {
        hashed.push({ path: it.path, file: it.file, sha256: await sha256Hex(await it.file.arrayBuffer()) });
        setPhase({ kind: 'hashing', done: hashed.length, total: items.length });
      }
      const unique = [...new Map(hashed.map((h) => [h.sha256, h])).values()];
      const total = unique.reduce((s, u) => s + u.file.size, 0);
      const progress = new Map<string, number>();
      const report = () => setPhase({ kind: 'uploading', sent: [...progress.values()].reduce((a, b) => a + b, 0), total });
      report();
      let next = 0;
      await Promise.all(
        Array.from({ length: Math.min(UPLOAD_CONCURRENCY, unique.length) }, async () => {
          while (next < unique.length) {
            const u = unique[next++]!;
            await putBlob(u.sha256, u.file, (n) => (progress.set(u.sha256, n), report()), ctrl.signal);
            progress.set(u.sha256, u.file.size);
            report();
          }
        }),
      );
      setPhase({ kind: 'creating' });
      const capNum = cap.trim() ? Number(cap) : null;
      const input = {
        title: title.trim(),
        request: request.trim(),
        spendingCapCad: capNum,
        hardwarePreference: hardware || null,
        ...(selection.archive
          ? { archive: { sha256: hashed[0]!.sha256 } }
          : { files: hashed.map((h) => ({ path: h.path, sha256: h.sha256 })) }),
      };
      const r = (await createJob({ variables: { input } })).data?.createJob;
      if (r?.__typename === 'Job') return navigate(`/jobs/${encodeURIComponent(r.id)}`);
      const issues = r?.__typename === 'ValidationError' ? r.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ') : '';
      setError(`${r?.message ?? 'No answer from the API.'}${issues ? ` (${issues})` : ''}`);
    } catch (err) {
      setError((err as Error).message);
    } finally {
      abort.current = null;
      setPhase({ kind: 'idle' });
    }
  };

  // Why Submit is greyed, said beside it (the first thing missing).
  const why = !selection
    ? 'Add your project’s files first (step 1).'
    : !title.trim()
      ? 'Give the job a title.'
      : !request.trim()
        ? 'Say what should happen.'
        : null;

  return (
    <>
      <h1>New job</h1>
      <p className="muted">Upload your project, say what you want done, and the planner takes it from there.</p>
      <form onSubmit={submit} aria-label="New job">
        <section className="panel">
          <h2>1. Project files</h2>
          <div
            className={`dropzone${over ? ' over' : ''}`}
            data-testid="dropzone"
            onDragOver={(e) => {
              e.preventDefault();
              setOver(true);
            }}
            onDragLeave={() => setOver(false)}
            onDrop={(e) => void onDrop(e)}
          >
            <p>
              <strong>Drop files, a folder, or an archive (.zip, .tar.gz) here</strong>
            </p>
            <div className="row" style={{ justifyContent: 'center' }}>
              <button type="button" onClick={() => fileInput.current?.click()} disabled={busy}>
                Choose files…
              </button>
              <button type="button" onClick={() => folderInput.current?.click()} disabled={busy}>
                Choose a folder…
              </button>
            </div>
            <input
              ref={fileInput}
              type="file"
              multiple
              hidden
              data-testid="file-input"
              onChange={(e) => e.target.files && accept(toSelection(filesFromInput(e.target.files)))}
            />
            <input
              ref={folderInput}
              type="file"
              hidden
              {...({ webkitdirectory: '' } as Record<string, string>)}
              onChange={(e) => e.target.files && accept(toSelection(filesFromInput(e.target.files)))}
            />
          </div>
          {selection && (
            <div className="stack" style={{ marginTop: 12 }}>
              <div className="spread">
                <span data-testid="selection-summary">
                  {selection.archive
                    ? `Archive ${selection.archive.name} (${formatBytes(selection.archive.size)}) — the API unpacks it.`
                    : `${list.length} file${list.length === 1 ? '' : 's'}, ${formatBytes(totalBytes)}${selection.root ? ` from folder ${selection.root}/` : ''}`}
                  {selection.skipped > 0 && <span className="muted"> · {selection.skipped} skipped (.git, caches)</span>}
                </span>
                <button type="button" className="link" onClick={() => setSelection(null)} disabled={busy}>
                  Clear
                </button>
              </div>
              <FileTree files={list} label="Files to upload" />
            </div>
          )}
        </section>
        <section className="panel">
          <h2>2. Describe the job</h2>
          <div className="field">
            <label htmlFor="title">Title</label>
            <input
              id="title"
              required
              maxLength={200}
              value={title}
              onChange={(e) => setTitle(e.target.value)}
              style={{ width: '100%' }}
              placeholder="e.g. Spiral classifier, 20 epochs"
            />
          </div>
          <div className="field">
            <label htmlFor="request">
              What should happen? <span className="hint">Plain words: what to run, what you want back, how to tell it worked.</span>
            </label>
            <textarea
              id="request"
              required
              maxLength={20000}
              value={request}
              onChange={(e) => setRequest(e.target.value)}
              placeholder={REQUEST_EXAMPLE}
            />
          </div>
          <div className="row">
            <div className="field">
              <label htmlFor="cap">
                Spending cap (CAD) <span className="hint">optional</span>
              </label>
              <input
                id="cap"
                type="number"
                min="0.01"
                step="0.01"
                inputMode="decimal"
                value={cap}
                onChange={(e) => setCap(e.target.value)}
                placeholder="no cap"
              />
            </div>
            <div className="field">
              <label htmlFor="hardware">Hardware preference</label>
              <select id="hardware" value={hardware} onChange={(e) => setHardware(e.target.value)}>
                {HARDWARE.map((h) => (
                  <option key={h.value} value={h.value}>
                    {h.label}
                  </option>
                ))}
              </select>
            </div>
          </div>
        </section>
        {phase.kind !== 'idle' && <PhaseView phase={phase} />}
        {error && (
          <p className="error-text" role="alert">
            {error}
          </p>
        )}
        <div className="row">
          <button type="submit" className="primary" disabled={busy || why !== null} aria-describedby={why ? 'submit-why' : undefined}>
            Submit job
          </button>
          {why && !busy && (
            <span id="submit-why" className="muted small" data-testid="submit-why">
              {why}
            </span>
          )}
          {busy && (
            <button type="button" onClick={() => abort.current?.abort()}>
              Cancel upload
            </button>
          )}
        </div>
      </form>
    </>
  );
}

function PhaseView({ phase }: { phase: Phase }) {
  const [label, frac] =
    phase.kind === 'hashing'
      ? [`Reading files ${phase.done}/${phase.total}…`, phase.total ? phase.done / phase.total : 1]
      : phase.kind === 'uploading'
        ? [`Uploading ${formatBytes(phase.sent)} of ${formatBytes(phase.total)}…`, phase.total ? phase.sent / phase.total : 1]
        : ['Creating the job…', 1];
  return (
    <div className="panel" aria-live="polite" data-testid="upload-progress">
      <div className="spread small">
        <span>{label}</span>
        <span>{Math.round(frac * 100)}%</span>
      </div>
      <div className="progress" role="progressbar" aria-valuemin={0} aria-valuemax={100} aria-valuenow={Math.round(frac * 100)}>
        <div style={{ width: `${frac * 100}%` }} />
      </div>
    </div>
  );
}

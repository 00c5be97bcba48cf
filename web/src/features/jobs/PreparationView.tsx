import { useState } from 'react';
import { downloadBlob } from '../../lib/blobs';
import { formatTime } from '../../lib/format';
import { SimulatedBadge } from '../ui/SimulatedBadge';
import { StatusBadge } from '../ui/StatusBadge';

/** A PreparationRecord as the job page reads it (see the JobPreparation query). */
export interface PreparationRecordData {
  id: string;
  step: string;
  kind: string;
  revision: number;
  required: boolean;
  transformation: string;
  outcome: string;
  reason: string;
  hardware: unknown;
  workload?: string | null;
  accelerator?: string | null;
  simulatedAccelerator?: string | null;
  staticChecks?: unknown;
  numericalCheck?: unknown;
  timings?: unknown;
  evidenceSha?: string | null;
  diff?: string | null;
  createdAt: string;
}

interface PreparationSpec {
  workload?: { command?: string };
  reference?: { workload?: string; accelVendor?: string | null };
  target?: { workload?: string; accelVendor?: string | null };
  steps?: { name: string; kind: string; transformation: string; required: boolean }[];
  revisionBudget?: number | null;
}

interface Feedback {
  file: string;
  line: number;
  col: number;
  severity: string;
  message: string;
  tool: string;
}

interface Tensor {
  name: string;
  ok: boolean;
  problem?: string | null;
  shape_reference?: number[];
  dtype_reference?: string;
  max_abs_error?: number | string | null;
  max_rel_error?: number | string | null;
  mismatched_fraction?: number | null;
}

/**
 * The preparation stage of a job: the reference, then each step of the plan with its
 * candidates (revisions), each with the diff, the static checks, the comparison with the
 * reference, the timing samples, the outcome and its reason, and the evidence bundle.
 */
export function PreparationView({ spec, records, status }: { spec: unknown; records: readonly PreparationRecordData[]; status: string }) {
  const s = (spec ?? null) as PreparationSpec | null;
  if (!s) return <p className="muted">No preparation: the plan runs the code as it was uploaded.</p>;
  const env = (e: PreparationSpec['target']) => `${e?.workload ?? '?'}${e?.accelVendor ? ` (${e.accelVendor})` : ''}`;
  const steps = [{ name: 'reference', kind: 'reference', transformation: 'the unchanged code', required: true }, ...(s.steps ?? [])];
  return (
    <div className="stack" data-testid="preparation">
      <p className="small muted" style={{ margin: 0 }}>
        Bounded workload <code>{s.workload?.command}</code> · reference on {env(s.reference)} · target {env(s.target)} · revision budget{' '}
        {s.revisionBudget ?? 3}
      </p>
      {steps.map((step) => {
        const mine = records.filter((r) => r.step === step.name).sort((a, b) => a.revision - b.revision);
        return (
          <div key={step.name} className="prep-step" data-step={step.name}>
            <div className="spread">
              <h3 style={{ margin: 0 }}>
                {step.name}{' '}
                <span className="muted small">
                  {step.kind} · {step.transformation} · {step.required ? 'required' : 'optional'}
                </span>
              </h3>
              {mine.length === 0 && (
                <span className="muted small">
                  {status === 'PREPARING' ? 'pending' : step.name === 'reference' ? 'taken as planned' : 'not reached'}
                </span>
              )}
            </div>
            {mine.map((r) => (
              <RecordView key={r.id} record={r} />
            ))}
          </div>
        );
      })}
    </div>
  );
}

function RecordView({ record: r }: { record: PreparationRecordData }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const checks = r.staticChecks as { ok: boolean; feedback: Feedback[]; unavailable: string[] } | null | undefined;
  const report = r.numericalCheck as
    | {
        ok: boolean;
        files: { path: string; ok: boolean; kind: string; problem?: string | null; tensors?: Tensor[] }[];
        suspicious: string[];
      }
    | null
    | undefined;
  const timings = r.timings as
    | {
        samples: { a: number[]; b: number[] };
        statistics: { speedup: number | null; interval: [number, number] | null; decision: string; pValue: number | null };
      }
    | null
    | undefined;
  const worker = (r.hardware as { worker?: string } | null)?.worker;
  return (
    <div className="prep-record" data-testid="prep-record" data-outcome={r.outcome}>
      <p style={{ margin: '6px 0' }}>
        <StatusBadge status={r.outcome} /> {r.revision > 0 && <span className="muted small">revision {r.revision} · </span>}
        <span className="muted small">
          {r.transformation}
          {worker && ` · on ${worker}`} · {formatTime(r.createdAt)}
        </span>{' '}
        <SimulatedBadge accelerator={r.simulatedAccelerator} />
      </p>
      <p style={{ margin: '4px 0' }}>{r.reason}</p>
      {r.diff && (
        <details>
          <summary>Diff</summary>
          <DiffView diff={r.diff} />
        </details>
      )}
      {checks && (
        <details open={!checks.ok}>
          <summary>
            Static checks: {checks.ok ? 'passed' : 'failed'}
            {checks.unavailable.length > 0 && ` (not run: ${checks.unavailable.join('; ')})`}
          </summary>
          {checks.feedback.length > 0 && (
            <ul className="mono small">
              {checks.feedback.map((f, i) => (
                <li key={i} className={f.severity === 'error' ? 'tone-bad' : 'tone-warn'}>
                  {f.file}:{f.line}:{f.col} {f.severity}: {f.message} [{f.tool}]
                </li>
              ))}
            </ul>
          )}
        </details>
      )}
      {report && <ComparisonTable report={report} />}
      {timings && <TimingPlot samples={timings.samples} statistics={timings.statistics} />}
      {r.evidenceSha && (
        <p style={{ margin: '6px 0' }}>
          <button
            type="button"
            disabled={busy}
            onClick={() => {
              setBusy(true);
              setError(null);
              downloadBlob(r.evidenceSha!, `evidence-${r.step}${r.revision ? `-r${r.revision}` : ''}.tar.gz`)
                .catch((e: Error) => setError(e.message))
                .finally(() => setBusy(false));
            }}
          >
            {busy ? 'Downloading…' : 'Download evidence (.tar.gz)'}
          </button>
          {error && <span className="error-text"> {error}</span>}
        </p>
      )}
    </div>
  );
}

/** A unified diff, one line per row, added and removed lines coloured, file headers in bold. */
export function DiffView({ diff }: { diff: string }) {
  const lines = diff.split('\n');
  return (
    <pre className="diff" aria-label="Diff" data-testid="diff">
      {lines.map((l, i) => {
        const cls =
          l.startsWith('+++') || l.startsWith('---') || l.startsWith('Index:') || l.startsWith('====')
            ? 'diff-file'
            : l.startsWith('@@')
              ? 'diff-hunk'
              : l.startsWith('+')
                ? 'diff-add'
                : l.startsWith('-')
                  ? 'diff-del'
                  : 'diff-ctx';
        return (
          <div key={i} className={cls}>
            {l || ' '}
          </div>
        );
      })}
    </pre>
  );
}

function num(v: unknown): string {
  if (typeof v === 'number') return v === 0 ? '0' : Math.abs(v) < 1e-3 || Math.abs(v) >= 1e4 ? v.toExponential(2) : v.toPrecision(3);
  return v === null || v === undefined ? '–' : String(v);
}

function ComparisonTable({
  report,
}: {
  report: {
    ok: boolean;
    files: { path: string; ok: boolean; kind: string; problem?: string | null; tensors?: Tensor[] }[];
    suspicious: string[];
  };
}) {
  const rows = report.files.flatMap((f) =>
    f.tensors?.length
      ? f.tensors.map((t) => ({ file: f.path, t }))
      : [{ file: f.path, t: { name: f.kind, ok: f.ok, problem: f.problem } as Tensor }],
  );
  return (
    <details open={!report.ok}>
      <summary>Comparison with the reference: {report.ok ? 'within tolerance' : 'outside tolerance'}</summary>
      {report.suspicious.map((s, i) => (
        <p key={i} className="small tone-warn" style={{ margin: '4px 0' }}>
          {s}
        </p>
      ))}
      {rows.length > 0 && (
        <table aria-label="Comparison" data-testid="comparison">
          <thead>
            <tr>
              <th>File</th>
              <th>Tensor</th>
              <th>Shape</th>
              <th>Dtype</th>
              <th>Max abs error</th>
              <th>Max rel error</th>
              <th>Outside tolerance</th>
            </tr>
          </thead>
          <tbody>
            {rows.slice(0, 200).map(({ file, t }, i) => (
              <tr key={i} className={t.ok ? undefined : 'tone-bad'}>
                <td className="mono small">{file}</td>
                <td className="mono small">{t.name}</td>
                <td className="small">{t.shape_reference ? `[${t.shape_reference.join(', ')}]` : '–'}</td>
                <td className="small">{t.dtype_reference ?? '–'}</td>
                <td className="small">{num(t.max_abs_error)}</td>
                <td className="small">{num(t.max_rel_error)}</td>
                <td className="small">
                  {t.mismatched_fraction === undefined || t.mismatched_fraction === null
                    ? (t.problem ?? '–')
                    : `${(t.mismatched_fraction * 100).toFixed(2)} %`}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </details>
  );
}

/** Timing samples of both versions as dots on one axis (seconds), medians marked, and the decision. */
function TimingPlot({
  samples,
  statistics,
}: {
  samples: { a: number[]; b: number[] };
  statistics: { speedup: number | null; interval: [number, number] | null; decision: string; pValue: number | null };
}) {
  const all = [...samples.a, ...samples.b];
  if (all.length === 0) return null;
  const lo = Math.min(...all);
  const hi = Math.max(...all);
  const w = 360;
  const x = (v: number) => 40 + ((v - lo) / (hi - lo || 1)) * (w - 60);
  const median = (xs: number[]) => [...xs].sort((p, q) => p - q)[Math.floor(xs.length / 2)] ?? 0;
  const row = (xs: number[], y: number, color: string, label: string) => (
    <g>
      <text x={0} y={y + 4} fontSize={11} fill="currentColor">
        {label}
      </text>
      {xs.map((v, i) => (
        <circle key={i} cx={x(v)} cy={y} r={3.5} fill={color} opacity={i === 0 ? 0.35 : 0.85}>
          <title>{`${label} run ${i + 1}${i === 0 ? ' (warm-up, dropped)' : ''}: ${v.toFixed(3)} s`}</title>
        </circle>
      ))}
      <line x1={x(median(xs.slice(1)))} x2={x(median(xs.slice(1)))} y1={y - 8} y2={y + 8} stroke={color} strokeWidth={2} />
    </g>
  );
  return (
    <details open>
      <summary>
        Timing: {statistics.decision}
        {statistics.speedup !== null && `, median speedup ${statistics.speedup.toFixed(3)}×`}
        {statistics.interval && ` (99 % interval ${statistics.interval[0].toFixed(3)}–${statistics.interval[1].toFixed(3)})`}
        {statistics.pValue !== null && `, p = ${statistics.pValue.toPrecision(2)}`}
      </summary>
      <svg width={w} height={70} role="img" aria-label="Timing samples" data-testid="timing-plot">
        {row(samples.a, 18, 'var(--muted)', 'accepted')}
        {row(samples.b, 42, 'var(--accent)', 'candidate')}
        <text x={40} y={66} fontSize={10} fill="currentColor">
          {lo.toFixed(2)} s
        </text>
        <text x={w - 20} y={66} fontSize={10} fill="currentColor" textAnchor="end">
          {hi.toFixed(2)} s
        </text>
      </svg>
    </details>
  );
}

/**
 * A worker's probed capabilities (worker/src/probe/types.ts shape), readable: CPU, RAM,
 * accelerators with runtime, Python and PyTorch backends, toolchains. Fields are read
 * defensively (null = unknown); the raw JSON stays one click away.
 */
import { formatBytes } from '../../lib/format';
import { JsonView } from '../ui/JsonView';

type Caps = {
  os?: string;
  arch?: string;
  hostname?: string;
  cpu?: { model?: string; cores?: number };
  memoryMiB?: number;
  diskFreeMiB?: number;
  accelerators?: {
    vendor?: string;
    index?: number;
    name?: string;
    memoryMiB?: number | null;
    runtime?: string | null;
    arch?: string | null;
    driver?: string | null;
  }[];
  pythons?: {
    path?: string;
    version?: string;
    torch?: { version?: string; cuda?: string | null; hip?: string | null; cudaAvailable?: boolean; mpsAvailable?: boolean } | null;
  }[];
  python?: string | null;
  toolchains?: { nvcc?: string | null; hipcc?: string | null };
  sandbox?: string;
  ownJobsOnly?: boolean;
  sandboxReason?: string;
  probeErrors?: string[];
};

/** The worker's isolation in words (worker/src/sandbox.ts resolveSandbox). */
function sandboxLabel(c: Caps): string {
  if (c.sandbox === 'bwrap') return 'bubblewrap (each task isolated)';
  if (c.sandbox !== 'none') return c.sandbox ?? '';
  return c.ownJobsOnly
    ? "none: bubblewrap is not installed, so it runs only its owner's own jobs, as plain processes"
    : "none (--sandbox none, its owner's choice): every task runs as a plain process on that machine";
}

const mib = (n: number | null | undefined) => (typeof n === 'number' ? formatBytes(n * 1024 * 1024) : '—');

export function Capabilities({ value }: { value: unknown }) {
  const c = (value && typeof value === 'object' ? value : {}) as Caps;
  const chosen = c.pythons?.find((p) => p.path === c.python) ?? c.pythons?.[0];
  const torch = chosen?.torch;
  const backends = torch
    ? [torch.cuda && `CUDA ${torch.cuda}`, torch.hip && `ROCm ${torch.hip}`, torch.mpsAvailable && 'MPS', 'CPU'].filter(Boolean).join(', ')
    : null;
  const tools = [c.toolchains?.nvcc && `nvcc ${c.toolchains.nvcc}`, c.toolchains?.hipcc && `hipcc ${c.toolchains.hipcc}`].filter(Boolean);
  if (Object.keys(c).length === 0) return <span className="muted">Not probed yet.</span>;
  return (
    <div className="small">
      <dl className="kv">
        <dt>CPU</dt>
        <dd>
          {c.cpu?.cores ?? '?'} cores{c.cpu?.model ? ` · ${c.cpu.model}` : ''}
          {c.os ? ` · ${c.os}/${c.arch ?? ''}` : ''}
        </dd>
        <dt>Memory</dt>
        <dd>
          {mib(c.memoryMiB)} RAM{typeof c.diskFreeMiB === 'number' ? ` · ${mib(c.diskFreeMiB)} disk free` : ''}
        </dd>
        <dt>GPUs</dt>
        <dd>
          {c.accelerators?.length ? (
            <ul style={{ margin: 0, paddingLeft: 16 }}>
              {c.accelerators.map((a, i) => (
                <li key={i}>
                  {a.name ?? a.vendor} · {mib(a.memoryMiB)}
                  {a.runtime ? ` · ${a.runtime}` : ''}
                  {a.arch ? ` · ${a.arch}` : ''}
                </li>
              ))}
            </ul>
          ) : (
            'none'
          )}
        </dd>
        <dt>Python</dt>
        <dd>
          {chosen ? `${chosen.version ?? '?'}${torch ? ` · PyTorch ${torch.version} (${backends})` : ' · no PyTorch'}` : 'none found'}
        </dd>
        {tools.length > 0 && (
          <>
            <dt>Toolchains</dt>
            <dd>{tools.join(', ')}</dd>
          </>
        )}
        {c.sandbox && (
          <>
            <dt>Sandbox</dt>
            <dd title={c.sandboxReason}>
              <span className={`badge tone-${c.sandbox === 'none' ? 'warn' : 'ok'}`} data-testid="sandbox-badge" data-sandbox={c.sandbox}>
                {c.sandbox === 'none' ? 'no sandbox' : 'sandboxed'}
              </span>{' '}
              <span className={c.sandbox === 'none' ? 'tone-warn' : undefined} data-testid="worker-sandbox">
                {sandboxLabel(c)}
              </span>
            </dd>
          </>
        )}
        {c.probeErrors && c.probeErrors.length > 0 && (
          <>
            <dt>Probe notes</dt>
            <dd className="tone-warn">{c.probeErrors.join('; ')}</dd>
          </>
        )}
      </dl>
      <details>
        <summary className="muted">All capabilities</summary>
        <JsonView value={value} />
      </details>
    </div>
  );
}

/**
 * The network overview: online workers across the whole network, one card per class
 * (Query.networkCapacity: grouped by accelerator vendor, no owner or machine details).
 */
import { formatBytes } from '../../lib/format';

export interface WorkerClassData {
  accelVendor: string;
  count: number;
  accelerators: readonly string[];
  maxAccelMemoryMiB: number;
  maxMemoryMiB: number;
  workloads: readonly string[];
  torchVersions: readonly string[];
  pythonVersions: readonly string[];
}

const LABEL: Record<string, string> = { nvidia: 'NVIDIA GPU', amd: 'AMD GPU', apple: 'Apple silicon', none: 'CPU only' };
const ORDER = ['nvidia', 'amd', 'apple', 'none'];
const mib = (n: number) => formatBytes(n * 1024 * 1024);

export function NetworkOverview({ classes }: { classes: readonly WorkerClassData[] }) {
  if (classes.length === 0) return <p className="muted">No workers are online in the network right now.</p>;
  const sorted = [...classes].sort((a, b) => rank(a.accelVendor) - rank(b.accelVendor) || a.accelVendor.localeCompare(b.accelVendor));
  const total = classes.reduce((s, c) => s + c.count, 0);
  return (
    <>
      <div className="row" data-testid="overview" style={{ alignItems: 'stretch' }}>
        {sorted.map((c) => (
          <div key={c.accelVendor} className="panel" style={{ margin: 0, minWidth: 200, maxWidth: 360 }} data-class={c.accelVendor}>
            <div className="muted small">{LABEL[c.accelVendor] ?? c.accelVendor}</div>
            <div style={{ fontSize: 22, fontWeight: 700 }}>
              {c.count} <span className="muted small">online</span>
            </div>
            <dl className="kv small" style={{ margin: '6px 0 0' }}>
              {c.accelerators.length > 0 && (
                <>
                  <dt>GPUs</dt>
                  <dd>
                    {c.accelerators.join(', ')}
                    {c.maxAccelMemoryMiB > 0 && ` · up to ${mib(c.maxAccelMemoryMiB)}`}
                  </dd>
                </>
              )}
              <dt>Memory</dt>
              <dd>up to {mib(c.maxMemoryMiB)}</dd>
              <dt>PyTorch</dt>
              <dd>{c.torchVersions.length ? c.torchVersions.join(', ') : 'none'}</dd>
              <dt>Python</dt>
              <dd>{c.pythonVersions.length ? c.pythonVersions.join(', ') : 'none'}</dd>
              <dt>Runs</dt>
              <dd>{c.workloads.join(', ') || 'nothing yet'}</dd>
            </dl>
          </div>
        ))}
      </div>
      <p className="muted small" style={{ marginBottom: 0 }}>
        {total} worker{total === 1 ? '' : 's'} online in total.
      </p>
    </>
  );
}

const rank = (v: string) => (ORDER.indexOf(v) === -1 ? ORDER.length : ORDER.indexOf(v));

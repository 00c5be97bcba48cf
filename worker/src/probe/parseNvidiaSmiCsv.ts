import { archFromComputeCap, guessNvidiaArch } from './nvidiaArch.js';
import { nvidiaSmiFailure } from './nvidiaSmiFailure.js';
import { isMissing, toMiB, type NvidiaGpu, type NvidiaSmiResult } from './gpuTypes.js';

/** The fields the worker queries, in this order (`--format=csv,noheader,nounits`). */
export const NVIDIA_QUERY_FIELDS = ['index', 'name', 'memory.total', 'driver_version', 'compute_cap'] as const;
/** Drivers before ~510 reject `compute_cap`; the probe retries with these. */
export const NVIDIA_QUERY_FIELDS_OLD = ['index', 'name', 'memory.total', 'driver_version'] as const;

// Header names nvidia-smi prints differ from the names one queries (`gpu_name` prints as `name`).
const ALIASES: Record<string, string> = { gpu_name: 'name', 'clocks.gr': 'clocks.current.graphics' };

/**
 * Parses `nvidia-smi --query-gpu=… --format=csv[,noheader][,nounits]`.
 *
 * With a header, columns are found by name (units like "[MiB]" stripped), so any field list works
 * (including the ~250-field "all fields" query). Without one, `fields` gives the column order.
 * Values may carry units ("81559 MiB") or not; "[N/A]" and friends become null.
 */
export function parseNvidiaSmiCsv(text: string, fields?: readonly string[]): NvidiaSmiResult {
  const empty = (error: string | null): NvidiaSmiResult => ({ driver: null, cuda: null, gpus: [], error });
  const failure = nvidiaSmiFailure(text);
  if (failure) return empty(failure);

  const lines = text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l.length > 0);
  if (lines.length === 0) return empty('nvidia-smi printed nothing');

  let columns: string[];
  let rows: string[];
  const first = splitRow(lines[0]!).map(headerName);
  if (first.includes('name') || first.includes('memory.total') || first.includes('driver_version')) {
    columns = first;
    rows = lines.slice(1);
  } else if (fields) {
    columns = fields.map((f) => ALIASES[f] ?? f);
    rows = lines;
  } else {
    return empty('nvidia-smi CSV without a header and no field list');
  }

  const gpus: NvidiaGpu[] = [];
  for (const [i, line] of rows.entries()) {
    const cells = splitRow(line);
    if (cells.length < 2) continue;
    const get = (f: string): string | null => {
      const at = columns.indexOf(f);
      const v = at >= 0 ? cells[at] : undefined;
      return isMissing(v) ? null : (v as string).trim();
    };
    const name = get('name');
    if (!name) continue;
    const indexText = get('index');
    const index = indexText !== null && /^\d+$/.test(indexText) ? Number(indexText) : i;
    const computeCap = get('compute_cap');
    gpus.push({
      index,
      name,
      memoryMiB: toMiB(get('memory.total')) ?? memorySum(get),
      driver: get('driver_version'),
      cuda: null,
      computeCap,
      arch: archFromComputeCap(computeCap) ?? guessNvidiaArch(name),
      migEnabled: /^enabled$/i.test(get('mig.mode.current') ?? ''),
      migDevices: [],
    });
  }
  if (gpus.length === 0) return empty('nvidia-smi CSV had no GPU rows');
  const driver = gpus.find((g) => g.driver)?.driver ?? null;
  return { driver, cuda: null, gpus, error: null };
}

/** Queries without memory.total (e.g. netdata's) still give used + free (+ reserved). */
function memorySum(get: (f: string) => string | null): number | null {
  const used = toMiB(get('memory.used'));
  const free = toMiB(get('memory.free'));
  if (used === null || free === null) return null;
  return used + free + (toMiB(get('memory.reserved')) ?? 0);
}

function splitRow(line: string): string[] {
  return line.split(',').map((c) => c.trim());
}

/** "memory.total [MiB]" → "memory.total" */
function headerName(h: string): string {
  const bare = h.replace(/\s*\[[^\]]*\]\s*$/, '').trim();
  return ALIASES[bare] ?? bare;
}

/** What the vendor-tool parsers return, before it becomes `Accelerator`s. */

export interface NvidiaGpu {
  index: number;
  name: string;
  memoryMiB: number | null;
  driver: string | null;
  /** The highest CUDA version the driver supports ("12.2"), from the table header or XML. */
  cuda: string | null;
  /** "8.9" when the tool reports it (query field `compute_cap`, driver ≥ 510). */
  computeCap: string | null;
  /** "sm_89": from `computeCap`, else guessed from the product name / architecture. */
  arch: string | null;
  /** MIG mode on; `migDevices` lists the instances CUDA will actually see. */
  migEnabled: boolean;
  migDevices: { index: number; memoryMiB: number | null }[];
}

export interface NvidiaSmiResult {
  driver: string | null;
  cuda: string | null;
  gpus: NvidiaGpu[];
  /** Set when the output is the tool's own failure message (e.g. a broken driver) or unreadable. */
  error: string | null;
}

export interface AmdGpu {
  index: number;
  name: string | null;
  memoryMiB: number | null;
  /** "gfx942" (without feature flags like ":sramecc+:xnack-"). */
  arch: string | null;
  driver: string | null;
  deviceId: string | null;
}

export interface AmdProbeResult {
  gpus: AmdGpu[];
  driver: string | null;
  error: string | null;
}

/** Tool output values that mean "no value". */
export function isMissing(v: string | undefined | null): boolean {
  if (v == null) return true;
  const t = v.trim();
  return (
    t === '' || /^\[?(N\/A|Not Supported|Unknown Error|Insufficient Permissions|Requested functionality has been deprecated)\]?$/i.test(t)
  );
}

/** "81559 MiB" | "81559" | "80 GiB" | "64289 MB" → MiB; null when not a number. */
export function toMiB(v: string | undefined | null, defaultUnit: 'MiB' | 'B' | 'KB' = 'MiB'): number | null {
  if (isMissing(v)) return null;
  const m = /^\s*([0-9]+(?:\.[0-9]+)?)\s*([KMGT]i?B|B)?\s*$/i.exec(v as string);
  if (!m) return null;
  const n = Number(m[1]);
  if (!Number.isFinite(n)) return null;
  const unit = (m[2] ?? defaultUnit).toUpperCase();
  const factor: Record<string, number> = {
    B: 1 / (1024 * 1024),
    KB: 1 / 1024,
    KIB: 1 / 1024,
    MB: 1, // the vendor tools print "MB" for MiB (amd-smi's "64289 MB" is 62.8 GiB of HBM)
    MIB: 1,
    GB: 1024,
    GIB: 1024,
    TB: 1024 * 1024,
    TIB: 1024 * 1024,
  };
  const f = factor[unit];
  return f === undefined ? null : Math.round(n * f);
}

/** Strip the ESC[..m colour codes some ROCm tools print even when not on a terminal. */
export function stripAnsi(s: string): string {
  // eslint-disable-next-line no-control-regex
  return s.replace(/\u001b\[[0-9;]*[A-Za-z]/g, '');
}

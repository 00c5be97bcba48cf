/**
 * Parses macOS `sysctl` output, "key: value" per line (`sysctl machdep.cpu hw.memsize`), and the
 * Linux style "key = value". Returns the keys found; `appleChip` and `memsize` read the two we use.
 */
export function parseSysctl(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split(/\r?\n/)) {
    const m = /^([a-z][\w.]*)\s*(?::|=)\s*(.*?)\s*$/i.exec(line);
    if (m && m[1]!.includes('.')) out.set(m[1]!, m[2]!);
  }
  return out;
}

export interface SysctlInfo {
  /** machdep.cpu.brand_string, e.g. "Apple M1 Pro" or "Intel(R) Core(TM) i9-9880H CPU @ 2.30GHz" */
  cpuBrand: string | null;
  /** hw.memsize in MiB */
  memoryMiB: number | null;
  /** physical cores when stated (machdep.cpu.core_count or hw.physicalcpu) */
  cores: number | null;
  /** "apple-m1" for Apple silicon, else null */
  appleArch: string | null;
}

export function sysctlInfo(text: string): SysctlInfo {
  const kv = parseSysctl(text);
  const cpuBrand = kv.get('machdep.cpu.brand_string') || null;
  const mem = Number(kv.get('hw.memsize'));
  const cores = Number(kv.get('machdep.cpu.core_count') ?? kv.get('hw.physicalcpu'));
  return {
    cpuBrand,
    memoryMiB: Number.isFinite(mem) && mem > 0 ? Math.round(mem / (1024 * 1024)) : null,
    cores: Number.isInteger(cores) && cores > 0 ? cores : null,
    appleArch: appleArch(cpuBrand),
  };
}

/** "Apple M2 Max" → "apple-m2"; null for non-Apple CPUs. */
export function appleArch(brand: string | null | undefined): string | null {
  const m = /^Apple (M\d+)/i.exec(brand?.trim() ?? '');
  return m ? `apple-${m[1]!.toLowerCase()}` : null;
}

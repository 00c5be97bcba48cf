import { normalizeGfx } from './amdArch.js';

/**
 * Parses `python -m torch.utils.collect_env` — what users paste into bug reports, and a useful
 * cross-check of a machine's PyTorch setup. Fields PyTorch prints as "N/A", "None", "No CUDA" or
 * "Could not collect" become null.
 */
export interface CollectEnv {
  torchVersion: string | null;
  /** "CUDA used to build PyTorch", e.g. "11.7" */
  cudaBuild: string | null;
  /** "ROCM used to build PyTorch", e.g. "6.3.42131-fa1d09cbd" */
  rocmBuild: string | null;
  /** True also on ROCm builds, where the HIP device is exposed through torch.cuda. */
  cudaAvailable: boolean | null;
  cudaRuntime: string | null;
  hipRuntime: string | null;
  nvidiaDriver: string | null;
  pythonVersion: string | null;
  os: string | null;
  gpus: { index: number; name: string; arch: string | null }[];
  /** The line after "CPU:" when it is a model name (macOS prints the chip there). */
  cpu: string | null;
  /** "[pip3] numpy==2.3.3" → { numpy: "2.3.3" } */
  packages: Record<string, string>;
}

export function parseCollectEnv(text: string): CollectEnv {
  const lines = text.split(/\r?\n/);
  const field = (label: string): string | null => {
    const prefix = `${label}:`;
    const line = lines.find((l) => l.startsWith(prefix));
    if (line === undefined) return null;
    const v = line.slice(prefix.length).trim();
    return /^(N\/A|None|No CUDA|Could not collect|)$/i.test(v) ? null : v;
  };

  const avail = field('Is CUDA available');
  const gpus = parseGpus(lines);

  const cpuAt = lines.findIndex((l) => l.trim() === 'CPU:');
  const cpuLine = cpuAt >= 0 ? (lines[cpuAt + 1]?.trim() ?? '') : '';
  const cpu = cpuLine && !/^[\w ()]+:\s/.test(cpuLine) ? cpuLine : null;

  const packages: Record<string, string> = {};
  for (const l of lines) {
    if (/Could not collect/i.test(l)) continue;
    const m = /^\[(?:pip3?|conda)\]\s+([\w.-]+)(?:==|\s+)([\w.+-]+)/.exec(l);
    if (m && !(m[1]! in packages)) packages[m[1]!] = m[2]!;
  }

  return {
    torchVersion: field('PyTorch version'),
    cudaBuild: field('CUDA used to build PyTorch'),
    rocmBuild: field('ROCM used to build PyTorch'),
    cudaAvailable: avail === null ? null : /^true$/i.test(avail),
    cudaRuntime: field('CUDA runtime version'),
    hipRuntime: field('HIP runtime version'),
    nvidiaDriver: field('Nvidia driver version'),
    pythonVersion: field('Python version')?.split(/\s/)[0] ?? null,
    os: field('OS'),
    gpus,
    cpu,
    packages,
  };
}

/**
 * "GPU models and configuration: GPU 0: NVIDIA GeForce RTX 4090" for one GPU; with several the label
 * line is empty and "GPU n: …" lines follow. ROCm prints "AMD Radeon RX 5700 XT (gfx1010:xnack-)".
 */
function parseGpus(lines: string[]): CollectEnv['gpus'] {
  const label = 'GPU models and configuration:';
  const at = lines.findIndex((l) => l.startsWith(label));
  if (at < 0) return [];
  const entries: string[] = [];
  const first = lines[at]!.slice(label.length).trim();
  if (first) entries.push(first);
  for (const l of lines.slice(at + 1)) {
    if (/^GPU \d+:/.test(l.trim())) entries.push(l.trim());
    else break;
  }
  return entries
    .filter((e) => !/^(N\/A|None|No CUDA|Could not collect)$/i.test(e))
    .map((e, i) => {
      const m = /^GPU (\d+):\s*(.*)$/.exec(e);
      const body = (m ? m[2]! : e).trim();
      const gfx = /\((gfx[0-9a-f]+[^)]*)\)\s*$/i.exec(body);
      return {
        index: m ? Number(m[1]) : i,
        name: gfx ? body.slice(0, gfx.index).trim() : body,
        arch: gfx ? normalizeGfx(gfx[1]) : null,
      };
    });
}

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
  const gpus = parseGpus(field('GPU models and configuration'));

  const cpuAt = lines.findIndex((l) => l.trim() === 'CPU:');
  const cpuLine = cpuAt >= 0 ? lines[cpuAt + 1]?.trim() ?? '' : '';
  const cpu = cpuLine && !/^[\w ()]+:\s/.test(cpuLine) ? cpuLine : null;

  const packages: Record<string, string> = {};
  for (const l of lines) {
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
 * "GPU 0: NVIDIA GeForce RTX 4090" (one per line when several; the first shares the label line) or,
 * on ROCm, "AMD Radeon RX 5700 XT (gfx1010:xnack-)".
 */
function parseGpus(first: string | null): CollectEnv['gpus'] {
  if (!first) return [];
  // Later GPUs of a multi-GPU machine follow on their own lines; the caller gives only the first,
  // so the common single-line forms are handled here and the rest by splitting on "GPU n:".
  const parts = first.split(/(?=GPU \d+:)/).map((p) => p.trim()).filter(Boolean);
  return parts.map((p, i) => {
    const m = /^GPU (\d+):\s*(.*)$/.exec(p);
    const body = (m ? m[2]! : p).trim();
    const gfx = /\((gfx[0-9a-f]+[^)]*)\)\s*$/i.exec(body);
    return {
      index: m ? Number(m[1]) : i,
      name: gfx ? body.slice(0, gfx.index).trim() : body,
      arch: gfx ? normalizeGfx(gfx[1]) : null,
    };
  });
}

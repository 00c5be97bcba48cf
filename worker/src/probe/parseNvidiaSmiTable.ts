import { guessNvidiaArch } from './nvidiaArch.js';
import { nvidiaSmiFailure } from './nvidiaSmiFailure.js';
import type { NvidiaGpu, NvidiaSmiResult } from './gpuTypes.js';

/**
 * Parses the default `nvidia-smi` table (a fallback when `--query-gpu` fails, and the only place
 * besides the XML that states the driver's CUDA version). Each GPU takes two or three rows:
 *
 *   |   0  NVIDIA H100 80GB HBM3          On  |   00000000:18:00.0 Off |                    0 |
 *   | N/A   30C    P0            100W /  700W |       1MiB /  81559MiB |      0%      Default |
 *
 * Long names are truncated by the tool ("NVIDIA GeForce RTX 4080 ..."); they are kept as printed.
 */
export function parseNvidiaSmiTable(text: string): NvidiaSmiResult {
  const failure = nvidiaSmiFailure(text);
  if (failure) return { driver: null, cuda: null, gpus: [], error: failure };

  const driver = /Driver Version:\s*([0-9][\w.-]*)/.exec(text)?.[1] ?? null;
  const cudaRaw = /CUDA Version:\s*([0-9][\w.]*|N\/A)/.exec(text)?.[1] ?? null;
  const cuda = cudaRaw && cudaRaw !== 'N/A' ? cudaRaw : null;

  const lines = text.split(/\r?\n/);
  const gpus: NvidiaGpu[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    // The GPU section ends where the MIG or process section begins.
    if (/^\|\s*(Processes|MIG devices):/.test(line)) break;
    const m = /^\|\s+(\d+)\s+(.+?)\s+(On|Off|N\/A)\s+\|[^|]*\|[^|]*\|\s*$/.exec(line);
    if (!m) continue;
    const next = lines[i + 1] ?? '';
    const mem = /(\d+)\s*MiB\s*\/\s*(\d+)\s*MiB/.exec(next);
    const name = m[2]!.trim();
    gpus.push({
      index: Number(m[1]),
      name,
      memoryMiB: mem ? Number(mem[2]) : null,
      driver,
      cuda,
      computeCap: null,
      arch: guessNvidiaArch(name),
      migEnabled: /\|\s*Enabled\s*\|\s*$/.test(lines[i + 2] ?? ''),
      migDevices: [],
    });
  }
  if (gpus.length === 0 && !driver) {
    return { driver: null, cuda: null, gpus: [], error: 'unrecognised nvidia-smi output' };
  }
  return { driver, cuda, gpus, error: gpus.length === 0 ? 'nvidia-smi listed no GPUs' : null };
}

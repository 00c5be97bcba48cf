import { guessNvidiaArch } from './nvidiaArch.js';
import { nvidiaSmiFailure } from './nvidiaSmiFailure.js';
import { isMissing, toMiB, type NvidiaGpu, type NvidiaSmiResult } from './gpuTypes.js';
import { child, childText, parseXml } from './parseXml.js';

/**
 * Parses `nvidia-smi -q -x` (DTD v10–v12). GPUs are listed in index order; `minor_number` is the
 * /dev/nvidiaN number, not the CUDA index, so it is not used as one. With MIG on, the GPU's own
 * memory is reported and its instances are listed in `migDevices` (each is what CUDA sees).
 */
export function parseNvidiaSmiXml(text: string): NvidiaSmiResult {
  const failure = nvidiaSmiFailure(text);
  if (failure) return { driver: null, cuda: null, gpus: [], error: failure };
  let log;
  try {
    log = child(parseXml(text), 'nvidia_smi_log');
  } catch (err) {
    return { driver: null, cuda: null, gpus: [], error: `unreadable nvidia-smi XML: ${(err as Error).message}` };
  }
  if (!log) return { driver: null, cuda: null, gpus: [], error: 'no <nvidia_smi_log> in nvidia-smi XML' };

  const value = (v: string | null) => (isMissing(v) ? null : v);
  const driver = value(childText(log, 'driver_version'));
  const cuda = value(childText(log, 'cuda_version'));
  const gpus: NvidiaGpu[] = log.children
    .filter((c) => c.name === 'gpu')
    .map((gpu, index) => {
      const name = value(childText(gpu, 'product_name')) ?? 'NVIDIA GPU';
      const migDevices = (child(gpu, 'mig_devices')?.children ?? [])
        .filter((c) => c.name === 'mig_device')
        .map((d, i) => {
          const idx = childText(d, 'index');
          return {
            index: idx && /^\d+$/.test(idx) ? Number(idx) : i,
            memoryMiB: toMiB(childText(d, 'fb_memory_usage', 'total')),
          };
        });
      return {
        index,
        name,
        memoryMiB: toMiB(childText(gpu, 'fb_memory_usage', 'total')),
        driver,
        cuda,
        computeCap: null,
        arch: guessNvidiaArch(name, value(childText(gpu, 'product_architecture'))),
        migEnabled: /^enabled$/i.test(childText(gpu, 'mig_mode', 'current_mig') ?? ''),
        migDevices,
      };
    });
  return { driver, cuda, gpus, error: gpus.length === 0 ? 'nvidia-smi XML listed no GPUs' : null };
}

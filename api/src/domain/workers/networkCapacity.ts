import type { Db } from '../../db/client.js';
import { chosenPython } from './torchVersion.js';
import { devicesOf, slotCores } from './devices.js';

export interface WorkerClass {
  accelVendor: string;
  count: number;
  workloads: string[];
  pythonVersions: string[];
  torchVersions: string[];
  numpyVersions: string[];
  maxMemoryMiB: number;
  maxAccelMemoryMiB: number;
  accelerators: string[];
  /**
   * Top-level modules every worker of the class can import (intersection of what their
   * chosen Python reports); null when none of them reports it (older workers).
   */
  modules: string[] | null;
  /** How many of the class install Python packages in a setup phase (capabilities.install). */
  installers: number;
  /** The most devices of the class one worker has (its accelerators of the vendor; 0 for the CPU class) and the most cores of one slot: a distributed launch's process count (domain/workers/devices.ts). */
  maxDevices?: number;
  maxSlotCores?: number;
}

/** Online workers grouped by accelerator vendor, with what they can run. */
export async function networkCapacity(r: { prisma: Pick<Db, 'worker'> }): Promise<{ classes: WorkerClass[]; summary: string }> {
  const workers = await r.prisma.worker.findMany({
    where: { status: 'ONLINE' },
    select: { accelVendor: true, workloads: true, memoryMiB: true, accelMemMiB: true, capabilities: true, cpuCores: true, slots: true },
  });
  const classes = new Map<string, WorkerClass>();
  for (const w of workers) {
    const c = classes.get(w.accelVendor) ?? {
      accelVendor: w.accelVendor,
      count: 0,
      workloads: [],
      pythonVersions: [],
      torchVersions: [],
      numpyVersions: [],
      maxMemoryMiB: 0,
      maxAccelMemoryMiB: 0,
      accelerators: [],
      modules: null,
      installers: 0,
    };
    c.count++;
    c.workloads = [...new Set([...c.workloads, ...w.workloads])].sort();
    c.maxMemoryMiB = Math.max(c.maxMemoryMiB, w.memoryMiB);
    c.maxAccelMemoryMiB = Math.max(c.maxAccelMemoryMiB, w.accelMemMiB);
    c.maxDevices = Math.max(c.maxDevices ?? 0, w.accelVendor === 'none' ? 0 : devicesOf(w, w.accelVendor));
    c.maxSlotCores = Math.max(c.maxSlotCores ?? 0, slotCores(w));
    const caps = w.capabilities as { accelerators?: { name: string }[]; install?: { enabled?: boolean } };
    const chosen = chosenPython(w.capabilities);
    if (caps.install?.enabled === true) c.installers++;
    if (chosen?.modules) c.modules = c.modules === null ? [...chosen.modules].sort() : c.modules.filter((m) => chosen.modules!.includes(m));
    if (chosen) {
      c.pythonVersions = [...new Set([...c.pythonVersions, chosen.version])].sort();
      if (chosen.torch) c.torchVersions = [...new Set([...c.torchVersions, chosen.torch.version])].sort();
      if (chosen.numpy) c.numpyVersions = [...new Set([...c.numpyVersions, chosen.numpy])].sort();
    }
    c.accelerators = [...new Set([...c.accelerators, ...(caps.accelerators ?? []).map((a) => a.name)])].sort();
    classes.set(w.accelVendor, c);
  }
  const list = [...classes.values()].sort((a, b) => a.accelVendor.localeCompare(b.accelVendor));
  const summary = list.length
    ? list
        .map(
          (c) =>
            `${c.count} ${c.accelVendor === 'none' ? 'CPU' : c.accelVendor.toUpperCase()} worker(s) (${c.workloads.filter((x) => x !== 'shell').join(', ')}${c.torchVersions.length ? `; torch ${c.torchVersions.join('/')}` : ''})`,
        )
        .join('; ')
    : 'no workers online';
  return { classes: list, summary };
}

/** The torch version a transformation targets for a workload: the one of the first online class that runs it. */
export function workersTorch(cap: { classes: WorkerClass[] }, workload: string): string | null {
  return cap.classes.find((c) => c.workloads.includes(workload))?.torchVersions.at(-1) ?? null;
}

import { z } from 'zod';
import type { Prisma as P } from '../../generated/prisma/client.js';
import { SimulatedAcceleratorRefusedError, ValidationError } from '../errors.js';
import type { Resources } from '../resources.js';
import { NETWORK_POLICIES } from './networkPolicy.js';

/** What a worker reports about itself (worker/src/probe/types.ts is the producer). Lenient: unknown keys kept. */
export const CapabilitiesSchema = z
  .object({
    os: z.string().max(100).optional(),
    arch: z.string().max(100).optional(),
    hostname: z.string().max(255).optional(),
    cpu: z
      .object({ model: z.string().max(300), cores: z.number().int().min(0).max(4096) })
      .partial()
      .optional(),
    memoryMiB: z.number().min(0).max(1e9).optional(),
    /** The worker's --memory-limit: the most one task may use. */
    taskMemoryLimitMiB: z.number().int().min(1).max(1e9).optional(),
    diskFreeMiB: z.number().min(0).optional(),
    accelerators: z
      .array(
        z
          .object({
            vendor: z.enum(['nvidia', 'amd', 'apple']),
            name: z.string().max(300),
            memoryMiB: z.number().min(0).nullable().optional(),
            runtime: z.string().max(100).nullable().optional(),
            simulated: z.boolean().optional(),
          })
          .passthrough(),
      )
      .max(64)
      .optional(),
    workloads: z
      .array(z.enum(['python', 'torch-cpu', 'torch-cuda', 'torch-rocm', 'torch-mps', 'cuda-cxx', 'hip-cxx', 'shell']))
      .max(16)
      .optional(),
    /** The owner's --allow-network: which tasks may have the network there (the claim places by it; absent: downloads). */
    allowNetwork: z.enum(NETWORK_POLICIES).optional(),
    /** --simulate-accelerator (tests and demos): the class advertised; numerics run on the CPU. */
    simulatedAccelerator: z
      .object({ spec: z.string().min(1).max(200) })
      .passthrough()
      .nullable()
      .optional(),
  })
  .passthrough();

export type WorkerCapabilities = z.infer<typeof CapabilitiesSchema>;

/**
 * A worker introduces itself: created on first hello (per worker token and name),
 * updated afterwards. OFFLINE comes back ONLINE; PAUSED and DRAINING stay as the owner
 * left them.
 */
export async function workerHello(
  r: Resources,
  who: { userId: string; workerTokenId: string },
  input: { name: string; version: string; slots: number; capabilities?: unknown },
) {
  const parsed = CapabilitiesSchema.safeParse(input.capabilities ?? {});
  if (!parsed.success) {
    throw new ValidationError(
      'Invalid capabilities.',
      parsed.error.issues.map((i) => ({ path: ['capabilities', ...i.path.map(String)], message: i.message })),
    );
  }
  const caps = parsed.data;
  if (JSON.stringify(caps).length > 256 * 1024)
    throw new ValidationError('Capabilities are too large.', [{ path: ['capabilities'], message: 'over 256 KiB' }]);
  const accels = caps.accelerators ?? [];
  // A simulated accelerator is labelled on the worker row (and from there on its attempts and the
  // preparation records); a production API takes such a worker only when its operator allows it.
  const simulated = caps.simulatedAccelerator?.spec ?? (accels.some((a) => a.simulated) ? `${accels[0]!.vendor}:${accels[0]!.name}` : null);
  if (simulated && !r.config.allowSimulatedAccelerators) throw new SimulatedAcceleratorRefusedError(simulated);
  const data = {
    capabilities: caps as P.InputJsonValue,
    workloads: caps.workloads ?? ['shell'],
    accelVendor: accels[0]?.vendor ?? 'none',
    accelMemMiB: Math.round(Math.max(0, ...accels.map((a) => a.memoryMiB ?? 0))),
    // What its tasks may use: the machine's RAM, or less when the owner limits each task
    // (a task needing more would be killed there: it is placed elsewhere, and the supervisor
    // compares memory as the task saw it).
    memoryMiB: taskMemoryMiB(caps, input.slots),
    cpuCores: caps.cpu?.cores ?? 0,
    simulatedAccelerator: simulated,
    slots: input.slots,
    version: input.version,
    lastSeenAt: r.now(),
  };
  const existing = await r.prisma.worker.findUnique({ where: { tokenId_name: { tokenId: who.workerTokenId, name: input.name } } });
  let worker;
  if (existing) {
    // OFFLINE comes back ONLINE by a conditional update, never from the status read above:
    // a pause committed meanwhile stays.
    await r.prisma.worker.updateMany({ where: { id: existing.id, status: 'OFFLINE' }, data: { status: 'ONLINE' } });
    worker = await r.prisma.worker.update({ where: { id: existing.id }, data });
  } else {
    worker = await r.prisma.worker.create({
      data: { ...data, ownerId: who.userId, tokenId: who.workerTokenId, name: input.name, status: 'ONLINE' },
    });
  }
  await r.prisma.workerToken.update({ where: { id: who.workerTokenId }, data: { lastUsedAt: r.now() } });
  await r.events.emit({ type: 'worker.changed', workerId: worker.id, ownerId: who.userId });
  await r.events.emit({ type: 'tasks.available' });
  return worker;
}

/** The memory the placement counts for a worker: its RAM, bounded by the per-task limit × slots. */
export function taskMemoryMiB(caps: { memoryMiB?: number | undefined; taskMemoryLimitMiB?: number | undefined }, slots: number): number {
  const ram = Math.round(caps.memoryMiB ?? 0);
  if (!caps.taskMemoryLimitMiB) return ram;
  const limited = caps.taskMemoryLimitMiB * Math.max(slots, 1);
  return ram > 0 ? Math.min(ram, limited) : limited;
}

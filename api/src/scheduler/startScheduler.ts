import cron from 'node-cron';
import type { Resources } from '../domain/resources.js';
import { runTick } from './tick.js';

/**
 * Runs the tick every TICK_INTERVAL_SEC seconds with node-cron (`noOverlap`: a slow
 * tick is never run twice at once in one process; the advisory lock covers the others).
 */
export function startScheduler(r: Resources): { stop(): Promise<void> } {
  const sec = Math.min(Math.max(r.config.scheduler.tickIntervalSec, 1), 59);
  let running: Promise<void> | null = null;
  let stopped = false;
  const task = cron.schedule(
    `*/${sec} * * * * *`,
    async () => {
      if (stopped) return;
      running = (async () => {
        try {
          await runTick(r, r.now());
        } catch (err) {
          if (!stopped) r.log.error('scheduler tick failed', { message: (err as Error).message });
        }
      })();
      await running;
      running = null;
    },
    {
      noOverlap: true,
      name: 'chatgpu-tick',
      // A tick still running when the next is due is expected under load: skip it quietly.
      logger: {
        info: () => {},
        debug: () => {},
        warn: (m: string) => {
          if (!m.includes('overlap')) r.log.warn(`scheduler: ${m}`);
        },
        error: (m: string | Error) => r.log.error(`scheduler: ${m instanceof Error ? m.message : m}`),
      },
    },
  );
  return {
    stop: async () => {
      stopped = true;
      await task.stop();
      await running; // a tick in progress finishes before the database closes
      await task.destroy?.();
    },
  };
}

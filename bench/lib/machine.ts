/**
 * The machine a figure came from (every benchmark prints it), and CPU accounting of the
 * local PostgreSQL from /proc (Linux only; null elsewhere).
 */
import { readdir, readFile } from 'node:fs/promises';
import os from 'node:os';
import { postgresInfo } from './db.js';

export interface Machine {
  cpu: string;
  cores: number;
  ramGiB: number;
  os: string;
  node: string;
  postgres: string;
  postgresSettings: Record<string, string>;
  /** 1-minute load average when the benchmark started: other work on the machine skews figures. */
  loadAvg1m: number;
}

export async function machineInfo(adminUrl: string): Promise<Machine> {
  const pgInfo = await postgresInfo(adminUrl);
  return {
    cpu: os.cpus()[0]?.model.trim() ?? 'unknown',
    cores: os.availableParallelism(),
    ramGiB: Math.round((os.totalmem() / 1024 ** 3) * 10) / 10,
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
    postgres: pgInfo.version,
    postgresSettings: pgInfo.settings,
    loadAvg1m: Math.round(os.loadavg()[0]! * 100) / 100,
  };
}

export function describeMachine(m: Machine): string {
  const s = m.postgresSettings;
  return (
    `machine: ${m.cpu}, ${m.cores} cores, ${m.ramGiB} GiB RAM, ${m.os}; Node ${m.node}; ` +
    `PostgreSQL ${m.postgres} (shared_buffers ${s.shared_buffers ?? '?'}, synchronous_commit ${s.synchronous_commit ?? '?'}); ` +
    `load average at start ${m.loadAvg1m}`
  );
}

const TICKS_PER_SEC = 100; // USER_HZ on Linux

/** CPU seconds (user + system) used so far by every process named `postgres`; null when /proc is unreadable. */
export async function postgresCpuSeconds(): Promise<number | null> {
  if (process.platform !== 'linux') return null;
  try {
    let ticks = 0;
    for (const pid of await readdir('/proc')) {
      if (!/^\d+$/.test(pid)) continue;
      const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
      const close = stat.lastIndexOf(')');
      if (close < 0 || !stat.slice(0, close).includes('(postgres')) continue;
      const fields = stat.slice(close + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14 and 15 of stat)
    }
    return ticks / TICKS_PER_SEC;
  } catch {
    return null;
  }
}

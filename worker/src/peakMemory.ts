/**
 * The peak resident memory of a running command and everything it started, sampled from
 * /proc (Linux): every `intervalMs` the process tree under `pid` (children of every thread,
 * recursively, as bwrap and setpriv put a few processes between the worker and the task) and
 * the sum of their VmRSS. A sampled peak: a spike shorter than the interval can be missed,
 * which is why the smoke run reports it as "peak memory (sampled)". Elsewhere (no /proc) it
 * reports nothing.
 */
import { readdirSync, readFileSync } from 'node:fs';

export interface PeakMemoryWatch {
  /** Stops sampling; the peak in MiB, or null when nothing could be read. */
  stop(): number | null;
}

export function watchPeakMemory(pid: number, intervalMs = 1000): PeakMemoryWatch {
  let peakKiB = 0;
  const sample = () => {
    const kib = treeRssKiB(pid);
    if (kib > peakKiB) peakKiB = kib;
  };
  sample();
  const timer = setInterval(sample, intervalMs);
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
      return peakKiB > 0 ? Math.round(peakKiB / 1024) : null;
    },
  };
}

/** Sum of VmRSS (KiB) of `root` and its descendants; 0 when /proc has none of them. */
export function treeRssKiB(root: number): number {
  let total = 0;
  const seen = new Set<number>();
  const stack = [root];
  while (stack.length) {
    const pid = stack.pop()!;
    if (seen.has(pid)) continue;
    seen.add(pid);
    total += rssKiB(pid);
    stack.push(...childrenOf(pid));
  }
  return total;
}

function rssKiB(pid: number): number {
  try {
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0; // gone, or not ours to read
  }
}

/** The children of every thread of `pid`, from /proc; [] when it is gone or elsewhere. */
export function childrenOf(pid: number): number[] {
  const out: number[] = [];
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tids) {
    try {
      for (const c of readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').split(' ')) if (c.trim()) out.push(Number(c));
    } catch {
      /* the thread ended */
    }
  }
  return out;
}

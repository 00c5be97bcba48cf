/**
 * The processes a test started, found by walking parent links in /proc from one root pid —
 * never a machine-wide search by name, which would see other tests' (or users') processes.
 */
import { readdirSync, readFileSync } from 'node:fs';

export interface ProcessId {
  pid: number;
  ppid: number;
  /** Start time in clock ticks since boot: with the pid, names one process (pids are reused). */
  start: string;
  cmdline: string;
}

function stat(pid: number): { ppid: number; start: string } | null {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // "pid (comm) state ppid …": comm may hold spaces and parentheses; fields follow the last ')'.
    const fields = s.slice(s.lastIndexOf(')') + 2).split(' ');
    return { ppid: Number(fields[1]), start: fields[19]! };
  } catch {
    return null;
  }
}

/** Every live descendant of `root` (not `root` itself). */
export function descendants(root: number): ProcessId[] {
  const children = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid)) continue;
    const s = stat(pid);
    if (s) children.set(s.ppid, [...(children.get(s.ppid) ?? []), pid]);
  }
  const out: ProcessId[] = [];
  const queue = [...(children.get(root) ?? [])];
  while (queue.length) {
    const pid = queue.shift()!;
    const s = stat(pid);
    if (!s) continue;
    let cmdline = '';
    try {
      cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
    } catch {
      /* exited meanwhile */
    }
    out.push({ pid, ppid: s.ppid, start: s.start, cmdline });
    queue.push(...(children.get(pid) ?? []));
  }
  return out;
}

/**
 * The subtree of `procs` (from `descendants`) under the child of `root` whose tree holds a
 * process matching `re` — e.g. one task run of a worker, without the worker's other helpers.
 */
export function subtreeOf(root: number, procs: readonly ProcessId[], re: RegExp): ProcessId[] {
  const byPid = new Map(procs.map((p) => [p.pid, p]));
  const hit = procs.find((p) => re.test(p.cmdline));
  if (!hit) return [];
  let top = hit;
  while (top.ppid !== root && byPid.has(top.ppid)) top = byPid.get(top.ppid)!;
  const keep = new Set([top.pid]);
  for (const p of procs) if (keep.has(p.ppid)) keep.add(p.pid); // descendants come after their parents
  return procs.filter((p) => keep.has(p.pid));
}

/** Those of `procs` still running (same pid and start time; a zombie counts as gone). */
export function stillRunning(procs: readonly ProcessId[]): ProcessId[] {
  return procs.filter((p) => {
    try {
      const s = readFileSync(`/proc/${p.pid}/stat`, 'utf8');
      const fields = s.slice(s.lastIndexOf(')') + 2).split(' ');
      return fields[19] === p.start && fields[0] !== 'Z';
    } catch {
      return false;
    }
  });
}

/** The live members of process group `pgid` anywhere on the machine (a zombie counts as gone). */
export function processGroup(pgid: number): ProcessId[] {
  const out: ProcessId[] = [];
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid)) continue;
    try {
      const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = s.slice(s.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) !== pgid || fields[0] === 'Z') continue;
      out.push({
        pid,
        ppid: Number(fields[1]),
        start: fields[19]!,
        cmdline: readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim(),
      });
    } catch {
      /* exited meanwhile */
    }
  }
  return out;
}

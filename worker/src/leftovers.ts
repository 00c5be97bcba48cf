/**
 * No leftovers of an attempt once it has ended, even when the worker itself was killed.
 *
 * While a program runs, `runs/<attemptId>.json` in the data folder names its process group (the
 * program is spawned detached: its pid is the group's id) and the leader's start time (pids are
 * reused; the start time tells the same process from a new one). When the program's leader exits,
 * whatever is left in its group is killed (`trackRun`): a `sleep 1000 &` of the task does not
 * outlive its attempt. At the end of the attempt (`untrackRun`) the record goes.
 *
 * A worker killed with SIGKILL runs none of that. Without the sandbox its tasks live on (bwrap's
 * --die-with-parent ends a sandboxed one with the worker), so at the next start `cleanLeftovers`
 * kills each recorded group, removes the record, the attempt's spool files (unsent log frames,
 * the checkpoint copy) and its run folder: the API has lost those leases meanwhile and retries the
 * tasks elsewhere, so nothing of them is ever sent. A process that left its group (setsid) is
 * not found this way; the sandbox's PID namespace is what reaches those.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

interface RunRecord {
  attemptId: string;
  /** the program's pid, which is also its process group's id */
  pid: number;
  /** the leader's start time (clock ticks since boot, /proc/PID/stat field 22); null where there is no /proc */
  start: string | null;
}

const runsDir = (dataDir: string) => path.join(dataDir, 'runs');
const recordPath = (dataDir: string, attemptId: string) => path.join(runsDir(dataDir), `${attemptId.replace(/[^\w.-]/g, '_')}.json`);

/** The start time of `pid` (field 22 of /proc/PID/stat), null when it is gone or there is no /proc. */
export function processStartTime(pid: number): string | null {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // "pid (comm) state ppid …": comm may hold spaces and parentheses; fields follow the last ')'.
    return s.slice(s.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

/** Signals every process of the group `pgid`; false when none was left. */
export function killProcessGroup(pgid: number, signal: NodeJS.Signals = 'SIGKILL'): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}

/**
 * Records a started program and ends whatever is left of its process group as soon as its leader
 * exits. Call right after the spawn (detached: the child leads its own group).
 */
export function trackRun(dataDir: string, attemptId: string, child: ChildProcess): void {
  const pid = child.pid;
  if (!pid) return;
  child.once('exit', () => killProcessGroup(pid));
  const record: RunRecord = { attemptId, pid, start: processStartTime(pid) };
  try {
    mkdirSync(runsDir(dataDir), { recursive: true, mode: 0o700 });
    writeFileSync(recordPath(dataDir, attemptId), JSON.stringify(record), { mode: 0o600 });
  } catch {
    /* no record (a full disk): the run still goes on; only a crash of the worker would leave it behind */
  }
}

/** The attempt has ended: its group is gone (killed again, for a program that never exited) and its record removed. */
export function untrackRun(dataDir: string, attemptId: string, pid: number | undefined): void {
  if (pid) killProcessGroup(pid);
  rmSync(recordPath(dataDir, attemptId), { force: true });
}

/**
 * At start-up, before any claim: kills the process groups of the runs a previous worker left
 * recorded (a leader that is a different process now is never signalled), and removes their
 * records, run folders and every spool file (no attempt of an earlier worker process is live).
 */
export function cleanLeftovers(dataDir: string): { killed: string[]; removed: string[] } {
  const killed: string[] = [];
  const removed: string[] = [];
  let names: string[] = [];
  try {
    names = readdirSync(runsDir(dataDir)).filter((n) => n.endsWith('.json'));
  } catch {
    /* none recorded */
  }
  for (const name of names) {
    const file = path.join(runsDir(dataDir), name);
    let r: RunRecord | null = null;
    try {
      r = JSON.parse(readFileSync(file, 'utf8')) as RunRecord;
    } catch {
      /* half-written by a worker killed while writing it: nothing to signal */
    }
    if (r && Number.isInteger(r.pid) && r.pid > 1) {
      const now = processStartTime(r.pid);
      // The leader still runs (same start time), or is gone while members of its group may be
      // left: a pgid is not reused while any member lives. A new process with the pid: not ours.
      const ours = now === null || now === r.start;
      if (ours && killProcessGroup(r.pid)) killed.push(r.attemptId);
      rmSync(path.join(dataDir, 'attempts', path.basename(r.attemptId)), { recursive: true, force: true });
    }
    rmSync(file, { force: true });
    if (r) removed.push(r.attemptId);
  }
  // The spool holds only what attempts of a running worker still have to send.
  try {
    for (const n of readdirSync(path.join(dataDir, 'spool'))) rmSync(path.join(dataDir, 'spool', n), { recursive: true, force: true });
  } catch {
    /* no spool yet */
  }
  return { killed, removed };
}

import { execFile } from 'node:child_process';
import type { ExecFn, ExecResult } from './types.js';

/** Output beyond this is cut: a probe never needs more, and a runaway tool must not eat memory. */
const MAX_BUFFER = 8 * 1024 * 1024;

/**
 * The real `ExecFn`: runs a command without a shell, kills it after `timeoutMs`, and resolves with
 * whatever happened. It never rejects, so a missing or hanging tool cannot crash a probe.
 */
export const execCommand: ExecFn = (file, args, opts) =>
  new Promise<ExecResult>((resolve) => {
    try {
      execFile(
        file,
        args,
        {
          timeout: opts.timeoutMs,
          killSignal: 'SIGKILL',
          maxBuffer: MAX_BUFFER,
          env: opts.env ?? process.env,
          encoding: 'utf8',
          windowsHide: true,
        },
        (err, stdout, stderr) => {
          const out = String(stdout ?? '');
          const errText = String(stderr ?? '');
          if (!err) {
            resolve({ code: 0, stdout: out, stderr: errText, error: null });
            return;
          }
          const e = err as NodeJS.ErrnoException & { killed?: boolean; signal?: string | null; code?: unknown };
          if (e.code === 'ENOENT') {
            resolve({ code: null, stdout: out, stderr: errText, error: 'not found' });
          } else if (e.killed || e.signal === 'SIGKILL') {
            resolve({ code: null, stdout: out, stderr: errText, error: `timeout after ${opts.timeoutMs} ms` });
          } else if (typeof e.code === 'number') {
            resolve({ code: e.code, stdout: out, stderr: errText, error: null });
          } else {
            resolve({ code: null, stdout: out, stderr: errText, error: String(e.code ?? e.message) });
          }
        },
      );
    } catch (err) {
      resolve({ code: null, stdout: '', stderr: '', error: (err as Error).message });
    }
  });

/** One line describing why a command gave no usable output, for `probeErrors`. */
export function describeFailure(label: string, r: ExecResult): string {
  if (r.error) return `${label}: ${r.error}`;
  const detail = firstLine(r.stderr) || firstLine(r.stdout) || 'no output';
  return `${label}: exit ${r.code}: ${detail}`;
}

function firstLine(s: string): string {
  const line =
    s
      .split('\n')
      .map((l) => l.trim())
      .find((l) => l.length > 0) ?? '';
  return line.length > 300 ? `${line.slice(0, 300)}…` : line;
}

import type { ReactNode } from 'react';
import { CopyField } from '../ui/CopyField';

/**
 * The one-line start command the API builds for a new worker token secret (createWorkerToken,
 * rotateWorkerToken), shown once with a copy button and why the secret travels in the environment.
 */
export function WorkerCommand({ command, testId, children }: { command: string; testId: string; children: ReactNode }) {
  return (
    <div className="stack" style={{ marginTop: 12 }}>
      {children}
      {/* The test id marks the command alone: `[data-testid=…] code` is the command, not the note's code samples. */}
      <div data-testid={testId}>
        <CopyField value={command} label="Worker start command" />
      </div>
      <p className="muted small">
        The token is passed in the environment, not as an argument, so other users of the machine cannot read it with <code>ps</code>. To
        keep it in a file instead: save it with <code>umask 077</code> and start the worker with <code>--token-file PATH</code>.
      </p>
    </div>
  );
}

/**
 * "no sandbox": an attempt whose worker isolates nothing — npm start's local worker without
 * bubblewrap (it runs only its owner's own jobs) or a worker whose owner chose --sandbox none.
 * Said beside the attempt, and once above the job's tasks (NoSandboxNotice).
 */
export function NoSandboxBadge({ sandbox }: { sandbox: string | null | undefined }) {
  if (sandbox !== 'none' && sandbox !== 'none-own-jobs') return null;
  const title =
    sandbox === 'none-own-jobs'
      ? "This worker has no sandbox (bubblewrap is not installed): it runs only its owner's own jobs, as plain processes with its user's access."
      : "This worker's owner turned its sandbox off (--sandbox none): tasks run as plain processes on that machine.";
  return (
    <span className="badge tone-warn" data-testid="no-sandbox" title={title}>
      no sandbox
    </span>
  );
}

/** One sentence above the tasks when any attempt ran without a sandbox. */
export function NoSandboxNotice({ attempts }: { attempts: { sandbox?: string | null; workerName: string }[] }) {
  const own = [...new Set(attempts.filter((a) => a.sandbox === 'none-own-jobs').map((a) => a.workerName))];
  const off = [...new Set(attempts.filter((a) => a.sandbox === 'none').map((a) => a.workerName))];
  if (own.length === 0 && off.length === 0) return null;
  return (
    <div className="small tone-warn" data-testid="no-sandbox-notice" role="note">
      {own.length > 0 && (
        <p>
          Ran without a sandbox on {own.join(', ')}: bubblewrap is not installed there, so that worker runs only your own jobs, as plain
          processes with your user's access to files and network. Install bubblewrap (Debian/Ubuntu:{' '}
          <code>sudo apt-get install bubblewrap</code>) and restart to isolate them.
        </p>
      )}
      {off.length > 0 && <p>Ran without a sandbox on {off.join(', ')}: its owner turned the sandbox off (--sandbox none).</p>}
    </div>
  );
}

/**
 * "simulated accelerator": work done by a worker started with --simulate-accelerator (tests and
 * demos). It was scheduled as that GPU class, but its numerics ran on the CPU; said wherever it shows.
 */
export function SimulatedBadge({ accelerator }: { accelerator: string | null | undefined }) {
  if (!accelerator) return null;
  return (
    <span
      className="badge tone-warn"
      data-testid="simulated-accelerator"
      title={`Scheduled as ${accelerator}; the numerics ran on the CPU (a test or demo worker, not a real GPU).`}
    >
      simulated accelerator {accelerator}
    </span>
  );
}

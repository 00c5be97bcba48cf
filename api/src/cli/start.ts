/** `chatgpu start [--host ADDRESS] [--port N] [--no-worker]`: the same as `npm start` (API, dashboard, local worker). */
export async function startCommand(argv: string[]): Promise<number> {
  const { main } = await import('../main.js');
  await main(argv);
  // The server keeps the process alive; main() exits on SIGINT/SIGTERM. A start that failed
  // (a port in use, a bad setting) said why and set the exit code.
  return typeof process.exitCode === 'number' ? process.exitCode : 0;
}

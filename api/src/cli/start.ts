/** `chatgpu start [--no-worker]`: the same as `npm start` (API, dashboard, local worker). */
export async function startCommand(argv: string[]): Promise<number> {
  const { main } = await import('../main.js');
  await main(argv);
  // The server keeps the process alive; main() exits on SIGINT/SIGTERM.
  return 0;
}

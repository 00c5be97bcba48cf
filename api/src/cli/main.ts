/**
 * `chatgpu` command dispatcher: parses only the subcommand name and hands the rest
 * of argv to the subcommand's module.
 */
const commands: Record<string, () => Promise<{ run(argv: string[]): Promise<number> }>> = {
  migrate: async () => ({ run: (await import('../preparation/migrateCommand.js')).migrateCommand }),
};

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  const load = name ? commands[name] : undefined;
  if (!load) {
    process.stderr.write(`usage: chatgpu <${Object.keys(commands).join('|')}> [options]\n`);
    return name ? 2 : 0;
  }
  return (await load()).run(rest);
}

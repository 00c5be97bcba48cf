/** Text whose `backticked` parts (commands, flags, paths in the agents' words) show as code. */
export function InlineCode({ text }: { text: string }) {
  return <>{text.split(/`([^`]+)`/).map((part, i) => (i % 2 ? <code key={i}>{part}</code> : part))}</>;
}

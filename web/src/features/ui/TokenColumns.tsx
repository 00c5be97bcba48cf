import { formatTime } from '../../lib/format';

/** The columns every token list shows (API tokens, worker tokens), so the two read the same. */
export function TokenHeadings() {
  return (
    <>
      <th>Name</th>
      <th>Starts with</th>
      <th>Created</th>
      <th>Last used</th>
    </>
  );
}

export function TokenCells({ token }: { token: { name: string; prefix: string; createdAt: string; lastUsedAt?: string | null } }) {
  return (
    <>
      <td>{token.name}</td>
      <td>
        <code>{token.prefix}…</code>
      </td>
      <td>{formatTime(token.createdAt)}</td>
      <td>{token.lastUsedAt ? formatTime(token.lastUsedAt) : 'never'}</td>
    </>
  );
}

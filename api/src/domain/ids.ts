import { decodeGlobalID } from '@pothos/plugin-relay';
import { NotFoundError } from './errors.js';

/** Row ids are UUIDs; an id from a client that is not one names nothing (not found, never an error). */
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(id: string): boolean {
  return UUID_RE.test(id);
}

/** An id that matches no row: scopes queries for callers who may see nothing. */
export const NOBODY_ID = '00000000-0000-0000-0000-000000000000';

/**
 * Decodes a Relay global id (base64 of "Type:uuid", the form the GraphQL API and the HTTP routes share) of the expected
 * type. Anything malformed, of another type or not a uuid is "not found" — the same answer as an id that belongs to someone else.
 */
export function decodeId(raw: string | number, typename: string): string {
  const s = String(raw);
  try {
    const { typename: t, id } = decodeGlobalID(s);
    if (t === typename && isUuid(id)) return id;
  } catch {
    /* fall through */
  }
  throw new NotFoundError(typename, s.slice(0, 80));
}

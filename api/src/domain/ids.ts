/** Row ids are UUIDs; an id from a client that is not one names nothing (not found, never an error). */
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(id: string): boolean {
  return UUID_RE.test(id);
}

/** An id that matches no row: scopes queries for callers who may see nothing. */
export const NOBODY_ID = '00000000-0000-0000-0000-000000000000';

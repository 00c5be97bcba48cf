import { decodeGlobalID } from '@pothos/plugin-relay';
import { NotFoundError } from '../domain/errors.js';
import { isUuid } from './principal.js';

/**
 * Decodes a Relay global id of the expected type. Anything malformed, of another type
 * or not a uuid is "not found" — the same answer as an id that belongs to someone else.
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

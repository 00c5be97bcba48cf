/**
 * Invariant 12 at the door: a plan is accepted only when every ask the request makes (as the asks
 * parser reads it) has a disposition in `plan.asks`. Any planner — the builtin rules or a real
 * model — is held to the same check, so a plan that silently drops "200 iterations" or "the
 * figures" is refused with the asks it left out, and the planner can answer them.
 */
import type { AskDisposition } from '../../domain/jobs/planSchema.js';
import type { Ask } from './contract.js';
import { parseAsks } from './asks/parseAsks.js';

/** Lower case, punctuation as spaces (but not inside numbers and names: 3e-4, n_embd, --lr), one space. */
export function normalizeAskText(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}._\-+=/$%]+/gu, ' ')
    .replace(/(^|\s)[.\-=]+|[.\-=]+(?=\s|$)/g, '$1')
    .replace(/\s+/g, ' ')
    .trim();
}

/** Does the disposition's quoted words cover the ask's (one contains the other)? */
export function covers(d: Pick<AskDisposition, 'ask'>, ask: Pick<Ask, 'text'>): boolean {
  const a = normalizeAskText(ask.text);
  const q = normalizeAskText(d.ask);
  if (!a || !q) return false;
  return q.includes(a) || (q.length >= 3 && a.includes(q));
}

/** The asks of `request` that no disposition covers, in the request's order. */
export function uncoveredAsks(request: string, dispositions: readonly Pick<AskDisposition, 'ask'>[]): Ask[] {
  return parseAsks(request).filter((ask) => !dispositions.some((d) => covers(d, ask)));
}

/** submit_plan's words for a plan that leaves asks out, or null. */
export function asksProblem(request: string, dispositions: readonly Pick<AskDisposition, 'ask'>[]): string | null {
  const missing = uncoveredAsks(request, dispositions);
  if (missing.length === 0) return null;
  return `The plan gives no disposition for ${missing.length === 1 ? 'this ask' : 'these asks'} of the request: ${missing.map((a) => `"${a.text}" (${a.kind})`).join(', ')}. Add each to \`asks\`, quoting the user's words: honoured (how) or refused (why, naming what the project has), or ask the user first.`;
}

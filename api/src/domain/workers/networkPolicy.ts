/**
 * A worker's network policy as placement sees it: the owner's `--allow-network`, advertised as
 * capabilities.allowNetwork (worker/src/downloadCache.ts networkFor enforces it on the worker):
 *   never     — no task gets the network;
 *   downloads — only a step the plan marks as a data download (requirements.download);
 *   always    — any task that asks for it (requirements.network).
 * A worker that advertises none gets the worker's default, downloads. The claim's SQL
 * (db/sql/claimTasks.ts networkFits) reads the same fields the same way.
 */

export const NETWORK_POLICIES = ['never', 'downloads', 'always'] as const;
export type NetworkPolicy = (typeof NETWORK_POLICIES)[number];
export const DEFAULT_NETWORK_POLICY: NetworkPolicy = 'downloads';

/** The policy a worker with these capabilities advertises (absent or unknown: the default). */
export function networkPolicyOf(capabilities: unknown): NetworkPolicy {
  const p = (capabilities as { allowNetwork?: unknown } | null)?.allowNetwork;
  return NETWORK_POLICIES.includes(p as NetworkPolicy) ? (p as NetworkPolicy) : DEFAULT_NETWORK_POLICY;
}

/** What a task asks of the network: none, a data download (requirements.download), or the network for anything else. */
export function networkNeed(requirements: unknown): 'none' | 'download' | 'any' {
  const req = (requirements ?? {}) as { network?: unknown; download?: unknown };
  if (req.network !== true) return 'none';
  return typeof req.download === 'object' && req.download !== null && !Array.isArray(req.download) ? 'download' : 'any';
}

/** Does a worker with this policy give the task the network it needs? */
export function networkAllows(policy: NetworkPolicy, need: ReturnType<typeof networkNeed>): boolean {
  return need === 'none' || policy === 'always' || (policy === 'downloads' && need === 'download');
}

/** The URLs a data-download step fetches, as its plan recorded them (requirements.download.urls). */
export function downloadUrls(requirements: unknown): string[] {
  const urls = ((requirements ?? {}) as { download?: { urls?: unknown } }).download?.urls;
  return Array.isArray(urls) ? urls.filter((u): u is string => typeof u === 'string') : [];
}

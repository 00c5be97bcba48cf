/**
 * The owner's browser opens a service without handling its bearer token: the dashboard asks
 * for a ticket (openServiceInBrowser, the job's owner only) and opens the service URL with it;
 * the API answers that request with a signed HttpOnly cookie scoped to the service's path and
 * a redirect to the same URL without the ticket, so neither the app nor the browser's history
 * keeps a credential that still works.
 *
 * Ticket and cookie are `<expiry, unix seconds>.<HMAC-SHA256, base64url>` over their purpose,
 * the slug and the expiry, keyed by the service's stored token hash: nothing new is stored,
 * any API process can check them, and rotating the token ends every ticket and cookie at once.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const SERVICE_TICKET_PARAM = 'chatgpu_ticket';
export const SERVICE_COOKIE = 'chatgpu_svc';
/** A ticket is used by the browser right away: it only has to survive one redirect. */
export const SERVICE_TICKET_SEC = 60;
export const SERVICE_COOKIE_SEC = 12 * 3600;

type Purpose = 'ticket' | 'cookie';
interface Keyed {
  slug: string;
  accessTokenHash: string;
}

function mac(s: Keyed, purpose: Purpose, exp: number): string {
  return createHmac('sha256', s.accessTokenHash).update(`chatgpu-service-${purpose}:${s.slug}:${exp}`).digest('base64url');
}

export function signServiceCredential(s: Keyed, purpose: Purpose, now: Date): { value: string; expiresAt: Date } {
  const exp = Math.floor(now.getTime() / 1000) + (purpose === 'ticket' ? SERVICE_TICKET_SEC : SERVICE_COOKIE_SEC);
  return { value: `${exp}.${mac(s, purpose, exp)}`, expiresAt: new Date(exp * 1000) };
}

/** Whether `value` is a live ticket or cookie of this service (and this token generation). */
export function verifyServiceCredential(s: Keyed, purpose: Purpose, value: string, now: Date): boolean {
  const m = /^(\d{1,12})\.([A-Za-z0-9_-]{43})$/.exec(value);
  if (!m) return false;
  const exp = Number(m[1]);
  if (exp * 1000 <= now.getTime()) return false;
  return timingSafeEqual(Buffer.from(m[2]!), Buffer.from(mac(s, purpose, exp)));
}

/**
 * Every value of one cookie in a Cookie header. All are tried: a cookie of the same name set
 * for a parent domain (by a page of another service under the same suffix) cannot shadow ours.
 */
export function cookieValues(header: string | undefined, name: string): string[] {
  const found: string[] = [];
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) found.push(part.slice(eq + 1).trim());
  }
  return found;
}

/** A Cookie header without ours (the app gets its own cookies, never the service's credential); undefined when none is left. */
export function withoutServiceCookie(header: string | undefined): string | undefined {
  const kept = (header ?? '')
    .split(';')
    .map((p) => p.trim())
    .filter((p) => p && p.slice(0, p.indexOf('=')).trim() !== SERVICE_COOKIE);
  return kept.length ? kept.join('; ') : undefined;
}

/**
 * Which of an app's Set-Cookie headers reach the browser. On its own host (services.ts) the
 * app keeps its cookies, except one named like ours and one with a Domain attribute (that
 * would reach every service under the suffix); on the API origin (bearer clients) none do:
 * they would be the dashboard's.
 */
export function appSetCookies(values: string | string[] | undefined, onServiceHost: boolean): string[] {
  if (!onServiceHost || values === undefined) return [];
  return (Array.isArray(values) ? values : [values]).filter((v) => {
    const [pair = '', ...attrs] = v.split(';');
    if (pair.slice(0, pair.indexOf('=')).trim() === SERVICE_COOKIE) return false;
    return !attrs.some((a) => /^\s*domain\s*=/i.test(a));
  });
}

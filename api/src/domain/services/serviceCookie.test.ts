import { describe, expect, it } from 'vitest';
import { hashToken, newToken } from '../auth/secrets.js';
import {
  appSetCookies,
  cookieValues,
  SERVICE_COOKIE_SEC,
  SERVICE_TICKET_SEC,
  signServiceCredential,
  verifyServiceCredential,
  withoutServiceCookie,
} from './serviceCookie.js';

const svc = { slug: '0123456789abcdef', accessTokenHash: hashToken(newToken('service').token) };
const now = new Date('2026-12-03T12:00:00Z');
const later = (sec: number) => new Date(now.getTime() + sec * 1000);

describe('service ticket and cookie', () => {
  it('a ticket lives a minute, a cookie 12 h; each only for its own purpose, slug and token', () => {
    const ticket = signServiceCredential(svc, 'ticket', now);
    const cookie = signServiceCredential(svc, 'cookie', now);
    expect(ticket.expiresAt).toEqual(later(SERVICE_TICKET_SEC));
    expect(cookie.expiresAt).toEqual(later(SERVICE_COOKIE_SEC));
    expect(verifyServiceCredential(svc, 'ticket', ticket.value, later(SERVICE_TICKET_SEC - 1))).toBe(true);
    expect(verifyServiceCredential(svc, 'ticket', ticket.value, later(SERVICE_TICKET_SEC))).toBe(false);
    expect(verifyServiceCredential(svc, 'cookie', cookie.value, later(SERVICE_COOKIE_SEC - 1))).toBe(true);
    expect(verifyServiceCredential(svc, 'cookie', cookie.value, later(SERVICE_COOKIE_SEC))).toBe(false);
    // A ticket is not a cookie (nor the reverse), another slug's is not this one's, a rotated token ends both.
    expect(verifyServiceCredential(svc, 'cookie', ticket.value, now)).toBe(false);
    expect(verifyServiceCredential(svc, 'ticket', cookie.value, now)).toBe(false);
    expect(verifyServiceCredential({ ...svc, slug: 'fedcba9876543210' }, 'cookie', cookie.value, now)).toBe(false);
    expect(verifyServiceCredential({ ...svc, accessTokenHash: hashToken(newToken('service').token) }, 'cookie', cookie.value, now)).toBe(
      false,
    );
  });

  it('a later expiry written into a cookie, or a malformed one, does not verify', () => {
    const [exp, mac] = signServiceCredential(svc, 'cookie', now).value.split('.') as [string, string];
    expect(verifyServiceCredential(svc, 'cookie', `${Number(exp) + 3600}.${mac}`, now)).toBe(false);
    for (const bad of ['', 'x', `${exp}.`, `${exp}.${mac}x`, `.${mac}`, `${exp}.${mac.slice(1)}!`, `-1.${mac}`])
      expect(verifyServiceCredential(svc, 'cookie', bad, now)).toBe(false);
  });

  it("reads every chatgpu_svc cookie (a parent-domain one cannot shadow ours) and leaves the app's own cookies to it", () => {
    expect(cookieValues('a=1; chatgpu_svc=v1; chatgpu_svc=v2', 'chatgpu_svc')).toEqual(['v1', 'v2']);
    expect(cookieValues('xchatgpu_svc=1', 'chatgpu_svc')).toEqual([]);
    expect(cookieValues(undefined, 'chatgpu_svc')).toEqual([]);
    expect(withoutServiceCookie('a=1; chatgpu_svc=v1;b=2')).toBe('a=1; b=2');
    expect(withoutServiceCookie('chatgpu_svc=v1')).toBeUndefined();
    expect(withoutServiceCookie(undefined)).toBeUndefined();
  });

  it("passes the app's host-only cookies on its own host only; never one named like ours or one for a parent domain", () => {
    const set = [
      'a=1; Path=/; HttpOnly',
      'chatgpu_svc=forged; Path=/',
      'b=2; Domain=svc.localhost; Path=/',
      'c=3;domain=.svc.localhost',
      'd=4; SameSite=Lax',
    ];
    expect(appSetCookies(set, true)).toEqual(['a=1; Path=/; HttpOnly', 'd=4; SameSite=Lax']);
    expect(appSetCookies('a=1', true)).toEqual(['a=1']);
    expect(appSetCookies(set, false)).toEqual([]);
    expect(appSetCookies(undefined, true)).toEqual([]);
  });
});

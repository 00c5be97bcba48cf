/**
 * Where a hosted service answers browsers: an origin of its own, never the dashboard's.
 *
 * A hosted app's pages are the user's code. Served on the dashboard's origin they would run
 * same-origin with it: read the visitor's session token from localStorage, call /graphql as
 * them, read other services' answers with the visitor's cookies. So each service gets its own
 * host, `<slug>.<suffix>` (SERVICE_PUBLIC_URL gives scheme, suffix and port; the default is
 * `http://svc.localhost:<port>` — Chromium, Firefox and curl resolve every `*.localhost` name
 * to the loopback), and the API routes a request by its Host header before anything else:
 * on a service host nothing but that service is served (no dashboard, no /graphql, no blobs).
 *
 * The same-origin policy then separates the dashboard from every service and the services
 * from each other; the browser cookie of a service is host-only, so it is never sent to
 * another service or to the dashboard.
 *
 * `/svc/<slug>/…` on the API's own origin stays for programs (the CLI, scripts, resolvers that
 * do not map `*.localhost`): bearer token only, no cookies either way, and every answer carries
 * `Content-Security-Policy: sandbox` (serviceTunnel.ts).
 */

import { isIpAddress } from '../../config.js';

const SLUG = /^[0-9a-f]{16}$/;

/** The configured service base (SERVICE_PUBLIC_URL), else `svc.` under the API's public host, else svc.localhost on the bound port. */
export function serviceBase(configured: string | undefined, apiPublicUrl: string | undefined, port: number): URL {
  if (configured) return new URL(configured);
  if (apiPublicUrl) {
    const u = new URL(apiPublicUrl);
    // An address has no subdomains: services then go under svc.localhost on the same port.
    const host = isIpAddress(u.hostname) ? 'localhost' : u.hostname;
    return new URL(`${u.protocol}//svc.${host}${u.port ? `:${u.port}` : ''}/`);
  }
  return new URL(`http://svc.localhost:${port}/`);
}

/** The browser URL of a service: `<scheme>//<slug>.<suffix>[:port]/`. */
export function serviceOriginUrl(base: URL, slug: string): string {
  return `${base.protocol}//${slug}.${base.hostname}${base.port ? `:${base.port}` : ''}/`;
}

/** The programs' URL on the API origin (bearer token only). */
export function serviceApiUrl(apiBaseUrl: string, slug: string): string {
  return `${apiBaseUrl.replace(/\/+$/, '')}/svc/${slug}/`;
}

/**
 * The slug a Host header names when it is a service host (`<16 hex>.<suffix>`, any port: a
 * reverse proxy may listen on another one), else null. Only the host name decides.
 */
export function slugOfHost(base: URL, host: string | undefined): string | null {
  if (!host) return null;
  const name = host.toLowerCase().replace(/:\d+$/, '').replace(/\.$/, '');
  const suffix = `.${base.hostname}`;
  if (!name.endsWith(suffix)) return null;
  const slug = name.slice(0, -suffix.length);
  // A label that is not a slug under the suffix is still a service host: it is refused, never served the dashboard.
  return SLUG.test(slug) ? slug : slug.includes('.') ? null : '';
}

/**
 * Every HTTP route the API serves, and who may call it (invariant 7). server.ts dispatches
 * with these patterns, and api/test/authzMatrix.test.ts enumerates this table: a route added
 * here without an entry in the test's expectations fails it, and a path written in server.ts
 * or http/* that no route here matches fails it too.
 *
 * GraphQL fields are not listed here: the authorization matrix enumerates them from the
 * printed schema (schema.graphql).
 */
export interface HttpRoute {
  /** HTTP methods served; `WS` is the graphql-ws upgrade on the same path. */
  methods: readonly ('GET' | 'HEAD' | 'PUT' | 'POST' | 'WS')[];
  pattern: RegExp;
  /** Who may call it, in words; the test holds the exact expectations. */
  access: string;
}

export const HTTP_ROUTES = {
  healthz: {
    methods: ['GET'],
    pattern: /^\/healthz$/,
    access: 'public by design: liveness for load balancers; says only ok and the database kind',
  },
  graphql: {
    methods: ['GET', 'POST', 'WS'],
    pattern: /^\/graphql$/,
    access: 'per field (scope-auth on each field; the field matrix)',
  },
  blob: {
    methods: ['GET', 'HEAD', 'PUT'],
    pattern: /^\/blobs\/([^/]+)$/,
    access:
      'GET/HEAD: a user who may read the blob (uploaded it, or it is in their jobs), a worker while it holds a lease that needs it; PUT: any user or worker token, X-ChatGPU-Attempt only for a live attempt of that worker token',
  },
  service: {
    methods: ['GET', 'POST'],
    pattern: /^\/svc\/([^/]+)(?:\/(.*))?$/,
    access:
      "on the API's origin, for programs: the service's access token only (Authorization: Bearer cgv_…): none → 401 (a browser's top-level navigation → 308 to the service's own host), any other token → 403, a cookie or ticket is no credential here; never reaching a worker; then 410 stopped, 503 + Retry-After not ready, 413 body over SVC_MAX_REQUEST_BYTES; answers carry Content-Security-Policy: sandbox and no Set-Cookie; every method is proxied the same way",
  },
  /**
   * Not a path: every request whose Host is `<slug>.<SERVICE_PUBLIC_URL's host>` (serviceOrigin.ts)
   * goes to that service, whatever its path, before any route below is looked at.
   */
  serviceHost: {
    methods: ['GET', 'POST'],
    pattern: /^\//,
    access:
      "on the service's own host (Host <slug>.svc.…): the bearer token, or the owner's browser cookie (host-only, HttpOnly, SameSite=Lax) that openServiceInBrowser's ticket is exchanged for (303) — the cookie only from the service's own pages or a top-level navigation (Sec-Fetch-Site), else 403; none → 401, any other token or cookie → 403, never reaching a worker; nothing else (dashboard, /graphql, blobs) is served on such a host",
  },
  serviceTunnel: {
    methods: ['GET', 'WS'],
    pattern: /^\/svc-tunnel$/,
    access:
      'WS: a worker token holding the SERVICE attempt named in X-ChatGPU-Attempt with its fencing token (else 401/404/409); plain GET: 426 for everyone',
  },
  outputsArchive: {
    methods: ['GET'],
    pattern: /^\/jobs\/([^/]+)\/outputs\.tar\.gz$/,
    access: "the job's owner (a user token)",
  },
  dashboard: {
    methods: ['GET', 'HEAD'],
    pattern: /^\//,
    access:
      'public by design: the built dashboard (static files, index.html for client-side routes); it holds no data, which comes through /graphql',
  },
} as const satisfies Record<string, HttpRoute>;

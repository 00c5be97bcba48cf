import { SERVICE_TICKET_PARAM } from '../../domain/services/serviceCookie.js';
import { openServiceInBrowser, rotateServiceToken, stopService } from '../../domain/services/services.js';
import { serviceApiUrl, serviceOriginUrl } from '../../domain/services/serviceOrigin.js';
import { builder } from '../builder.js';
import { decodeId } from '../../domain/ids.js';
import { requireUser } from '../principal.js';
import { ConflictError, NotFoundError } from './errors.js';

export const ServiceRef = builder.prismaObject('Service', {
  description: "A job's hosted HTTP endpoint (DESIGN §10): reachable at `url` with its access token once its readiness check passed.",
  fields: (t) => ({
    id: t.exposeID('id'),
    slug: t.exposeString('slug'),
    url: t.string({
      description:
        "Where it answers, on a host of its own (`<slug>.<SERVICE_PUBLIC_URL's host>`): never the dashboard's origin, so its pages cannot script the dashboard or another service. Requests need `Authorization: Bearer <token>`, or in the owner's browser the cookie of openServiceInBrowser.",
      resolve: (s, _a, ctx) => serviceOriginUrl(ctx.serviceBase!, s.slug),
    }),
    apiUrl: t.string({
      description:
        "The same service under the API's own address, for programs whose resolver does not reach `url` (e.g. `*.localhost` outside browsers and curl): the bearer token only, no cookies, answers sandboxed (Content-Security-Policy: sandbox).",
      resolve: (s, _a, ctx) => serviceApiUrl(ctx.baseUrl ?? '', s.slug),
    }),
    ready: t.boolean({
      description: "Requests reach the app: the current attempt's readiness check passed and its tunnel is up.",
      resolve: (s) => s.ready && !s.stoppedAt,
    }),
    status: t.string({
      description: 'STOPPED, READY, or STARTING (not ready: starting, or moving to another worker).',
      resolve: (s) => (s.stoppedAt ? 'STOPPED' : s.ready ? 'READY' : 'STARTING'),
    }),
    readyAt: t.expose('readyAt', { type: 'DateTime', nullable: true, description: 'When it last became ready.' }),
    stoppedAt: t.expose('stoppedAt', { type: 'DateTime', nullable: true }),
    tokenRotatedAt: t.expose('tokenRotatedAt', {
      type: 'DateTime',
      nullable: true,
      description: 'When the current token was issued; null: none issued yet (rotate to get one).',
    }),
    requestCount: t.expose('requestCount', { type: 'BigInt', description: 'Requests answered by the app (counted every few seconds).' }),
    errorCount: t.expose('errorCount', { type: 'BigInt', description: 'Of those, 5xx answers, resets and timeouts.' }),
    meanLatencyMs: t.float({
      nullable: true,
      description: 'Mean time to the response head through the tunnel, in ms.',
      resolve: (s) => (s.requestCount > 0n ? Math.round((s.latencyMsSum / Number(s.requestCount)) * 10) / 10 : null),
    }),
    readinessChecks: t.expose('readinessCheckCount', {
      type: 'BigInt',
      description: "The worker's readiness checks of the app (counted every few seconds; they are not in the app's log).",
    }),
    readinessFailures: t.expose('readinessFailureCount', {
      type: 'BigInt',
      description: 'Of those, checks without a 2xx answer in time (before the app was up, or since).',
    }),
    spec: t.expose('spec', { type: 'JSON', description: 'Readiness check, duration and servers, as planned.' }),
  }),
});

builder.prismaObjectField('Job', 'service', (t) =>
  t.prismaField({
    type: 'Service',
    nullable: true,
    description: 'The hosted endpoint, when the job is a service.',
    resolve: (query, job, _a, ctx) => ctx.prisma.service.findFirst({ ...query, where: { jobId: job.id }, orderBy: { createdAt: 'desc' } }),
  }),
);

const ServiceToken = builder.objectRef<{ token: string; service: { id: string } }>('ServiceToken').implement({
  fields: (t) => ({
    token: t.exposeString('token', {
      description: 'The access token. Shown once; only its hash is kept. The previous token stops working at once.',
    }),
    service: t.prismaField({
      type: 'Service',
      resolve: (query, p, _a, ctx) => ctx.prisma.service.findUniqueOrThrow({ ...query, where: { id: p.service.id } }),
    }),
  }),
});

const ServiceBrowserLink = builder.objectRef<{ url: string; expiresAt: Date }>('ServiceBrowserLink').implement({
  fields: (t) => ({
    url: t.exposeString('url', {
      description:
        "Open it in the browser now: the service URL with a one-minute ticket, exchanged on the service's own host for an HttpOnly cookie of that host only (until the token is rotated, or 12 h).",
    }),
    expiresAt: t.expose('expiresAt', { type: 'DateTime' }),
  }),
});

builder.mutationFields((t) => ({
  rotateServiceToken: t.field({
    type: ServiceToken,
    description: "Issues a new access token for the job's service (the first one, or a replacement).",
    authScopes: { user: true },
    args: {
      jobId: t.arg.id(),
      firstOnly: t.arg.boolean({
        required: false,
        description: "Only if none was issued yet (else ConflictError): two clients fetching the first token do not void each other's.",
      }),
    },
    errors: { types: [NotFoundError, ConflictError] },
    resolve: async (_p, { jobId, firstOnly }, ctx) =>
      rotateServiceToken(ctx, requireUser(ctx), decodeId(jobId, 'Job'), { firstOnly: firstOnly ?? false }),
  }),
  openServiceInBrowser: t.field({
    type: ServiceBrowserLink,
    description: "A link that opens the job's service in the owner's browser without handling its token.",
    authScopes: { user: true },
    args: { jobId: t.arg.id() },
    errors: { types: [NotFoundError, ConflictError] },
    resolve: async (_p, { jobId }, ctx) => {
      const l = await openServiceInBrowser(ctx, requireUser(ctx), decodeId(jobId, 'Job'));
      return {
        url: `${serviceOriginUrl(ctx.serviceBase!, l.slug)}?${SERVICE_TICKET_PARAM}=${encodeURIComponent(l.ticket)}`,
        expiresAt: l.expiresAt,
      };
    },
  }),
  stopService: t.prismaField({
    type: 'Service',
    description: 'Stops the service: it stops answering (410), its worker is told to stop, and the job ends SUCCEEDED.',
    authScopes: { user: true },
    args: { jobId: t.arg.id() },
    errors: { types: [NotFoundError, ConflictError] },
    resolve: async (query, _p, { jobId }, ctx) => {
      const s = await stopService(ctx, requireUser(ctx), decodeId(jobId, 'Job'));
      return ctx.prisma.service.findUniqueOrThrow({ ...query, where: { id: s.id } });
    },
  }),
}));

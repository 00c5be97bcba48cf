/**
 * Rule: a request for an endpoint makes the project an HTTP app to host as a SERVICE. Read the
 * Python files and the README/Makefile, find the app (the README's own serve command's app spec
 * first, else planner/serviceApp.ts) and the README's setup steps before it (serviceSetup.ts),
 * resolve what its start command imports like any dependency, and submit a plan with `service`
 * (readiness on the app's health path, or /; until stopped unless the request gives a duration)
 * and the setup steps as `before`. Every rule after this one plans a run.
 */
import type { Ask } from '../../planner/contract.js';
import { parseAsks } from '../../planner/asks/parseAsks.js';
import { importsOf, type DependencyCheck } from '../../planner/resolveImports.js';
import { ENDPOINT_REQUEST, requestedDuration } from '../../planner/serviceApp.js';
import type { AskDisposition } from '../../../domain/jobs/planSchema.js';
import { call, type PlannerRule } from './planning.js';
import { serviceDocs, servicePlanParts, withSetupSteps } from './serviceSetup.js';

export const hostedService: PlannerRule = (p) => {
  const { request, out, facts } = p;
  if (!ENDPOINT_REQUEST.test(request)) return undefined;
  const files = ((out.get('list_files')?.at(-1) as { files?: { path: string }[] } | undefined)?.files ?? []).map((f) => f.path);
  const read = new Map<string, string>();
  const tried = new Set<string>(); // a binary or unreadable file is asked for once
  for (const o of out.get('read_file') ?? []) {
    const r = o as { path?: string; content?: string };
    if (r.path) tried.add(r.path);
    if (r.path && typeof r.content === 'string') read.set(r.path, r.content);
  }
  for (const f of [...files.filter((x) => x.endsWith('.py')).slice(0, 10), ...serviceDocs(files)])
    if (!tried.has(f)) return call('read_file', { path: f });
  const found = servicePlanParts(read, request);
  if ('reason' in found) return call('give_up', { reason: found.reason });
  const { app, before } = found;
  const hardware = { workload: facts.usesTorch ? 'torch-cpu' : 'python' };
  let install: string[] = [];
  if ([...importsOf(facts, [app.file]).keys()].some((m) => m !== 'torch' && m !== 'numpy') || app.servers.length) {
    const deps = out.get('check_dependencies')?.at(-1) as DependencyCheck | undefined;
    if (!deps) return call('check_dependencies', { files: [app.file], workload: hardware.workload });
    if (deps.unavailable.length)
      return call('give_up', { reason: deps.summary ?? `Unavailable on the workers: ${deps.unavailable.join(', ')}.` });
    install = deps.install;
  }
  const durationSec = requestedDuration(request);
  const setup = before.map((b) => `\`${b.command}\``).join(', then ');
  return call('submit_plan', {
    summary: `Serve ${app.file} (${app.framework}) as an HTTP endpoint on a ${hardware.workload} worker: ${setup ? `first ${setup} (the README's setup, its products handed to the service), then ` : ''}\`${app.command}\`${found.specFrom ? ` (the app as ${found.specFrom} starts it)` : ''} listening on $PORT, reachable at its URL with its access token once ${app.readinessPath} answers 2xx, ${durationSec ? `for ${durationSec} s` : 'until you stop it'}.${install.length ? ` A setup phase installs ${install.join(', ')} first.` : ''}`,
    steps: [
      ...before.map((b) => `Set up: \`${b.command}\`${b.produces.length ? ` (hands ${b.produces.join(', ')} to the service)` : ''}`),
      `Start \`${app.command}\` in the sandbox (its only network: the port the worker proxies to)`,
      `Serve it on a host of its own (<slug>.svc.…, and /svc/<slug>/ under the API's address for programs) once GET ${app.readinessPath} answers 2xx`,
      'Restart it on a compatible worker, at the same URL, if its worker is lost',
    ],
    command: app.command,
    environment: null,
    hardware: { workload: hardware.workload, accelVendor: null, minMemoryMiB: null, minAccelMemoryMiB: null },
    timeoutSec: null,
    outputs: ['outputs'],
    acceptance: { exitCode: 0, requiredFiles: [], metrics: [], evaluate: null },
    preparation: null,
    service: { readiness: { path: app.readinessPath, intervalSec: 1, timeoutSec: 5 }, durationSec, servers: app.servers },
    asks: withSetupSteps(serviceAsks(request, durationSec), request, found),
    ...(before.length ? { before } : {}),
    ...(install.length ? { install: { pip: install } } : {}),
  });
};

/** A hosted service's asks: how long it serves and where are honoured; settings and outputs are not changed for a service yet. */
export function serviceAsks(request: string, durationSec: number | null): AskDisposition[] {
  const honoured = (a: Ask, detail: string): AskDisposition => ({ ask: a.text, kind: a.kind, status: 'honoured', detail });
  return parseAsks(request).map((a) => {
    if (a.kind === 'limit' && a.maxSeconds && durationSec) return honoured(a, `served for ${durationSec} s`);
    if (a.kind === 'hardware' && a.hardware === 'cpu') return honoured(a, 'served from a CPU worker');
    // Where it listens: a service answers at its own URL (the API's proxy); the worker's port is private.
    if (a.kind === 'setting' && /^(port|host|address|bind|listen)$/i.test((a.phrase ?? '').replace(/^--/, '')))
      return honoured(
        a,
        `reachable at the service's URL (printed when it is ready); the app listens on the port the worker gives it, which the URL stands for — ${a.value ?? 'that address'} on the worker itself is not reachable from outside`,
      );
    if ((a.kind === 'output' || a.kind === 'other') && /\b(url|address|link|page|endpoint)\b/i.test(a.text))
      return honoured(a, "the service's URL and its API URL are printed once it is ready (`chatgpu service JOB`, the job page)");
    if ((a.kind === 'other' || a.kind === 'target') && /\b(serve|host|run|start|deploy|launch)\b/i.test(a.text))
      return honoured(a, 'served as an HTTP endpoint at its own URL');
    return {
      ask: a.text,
      kind: a.kind,
      status: 'refused',
      detail: `a hosted service runs the app as uploaded: its ${a.kind === 'setup' ? 'setup steps' : a.kind === 'setting' || a.kind === 'sweep' ? 'settings' : a.kind === 'output' ? 'outputs' : 'options'} are not changed by the builtin planner yet`,
    };
  });
}

/**
 * What a plan says about a hosted service (the plan's `service`): how the worker knows it is
 * ready and how long it stays up. The start command is the plan's `command`; the port is
 * always the worker's choice, given to the command as $PORT (the app must listen on it).
 */
import { z } from 'zod';
import type { ServiceRuntime } from './services.js';

/** How long an app may take to pass its first readiness check when its plan does not say. */
export const DEFAULT_START_TIMEOUT_SEC = 300;

export const ServiceSchema = z
  .object({
    readiness: z.object({
      path: z
        .string()
        .regex(/^\/[^\s]*$/, 'an absolute request path, e.g. /healthz')
        .max(500)
        .describe('Answers 2xx once the app can serve.'),
      intervalSec: z.number().min(0.2).max(300).nullish().describe('Seconds between checks (default 2).'),
      timeoutSec: z.number().min(0.2).max(300).nullish().describe('Seconds one check may take (default 5).'),
      startTimeoutSec: z
        .number()
        .min(1)
        .max(3600)
        .nullish()
        .describe(
          `Seconds the app may take from its start to its first 2xx; past that the attempt fails (default ${DEFAULT_START_TIMEOUT_SEC}).`,
        ),
    }),
    durationSec: z
      .number()
      .int()
      .min(60)
      .max(30 * 86400)
      .nullish()
      .describe('How long it stays up; null: until stopped (the spending cap applies as for any job).'),
    servers: z
      .array(z.string().min(1).max(100))
      .max(10)
      .nullish()
      .describe('Python modules the start command needs on the worker besides the app (e.g. flask, uvicorn); checked like any dependency.'),
  })
  .describe(
    'Only when the user asked for an endpoint/API: `command` starts an HTTP app listening on $PORT, run as a SERVICE until stopped or for durationSec.',
  );
export type ServiceSpec = z.infer<typeof ServiceSchema>;

/** The longest a SERVICE task's lease holder keeps it up without a duration (the task time limit). */
export const UNTIL_STOPPED_SEC = 7 * 86400;

/** What the worker needs (task requirements `service`). */
export function serviceRuntime(spec: ServiceSpec): ServiceRuntime {
  return {
    readinessPath: spec.readiness.path,
    intervalSec: spec.readiness.intervalSec ?? 2,
    timeoutSec: spec.readiness.timeoutSec ?? 5,
    startTimeoutSec: spec.readiness.startTimeoutSec ?? DEFAULT_START_TIMEOUT_SEC,
    durationSec: spec.durationSec ?? null,
  };
}

export const ServiceRuntimeSchema = z.object({
  readinessPath: z
    .string()
    .regex(/^\/[^\s]*$/)
    .max(500),
  intervalSec: z.number().min(0.2).max(300),
  timeoutSec: z.number().min(0.2).max(300),
  startTimeoutSec: z.number().min(1).max(3600).optional(),
  durationSec: z
    .number()
    .int()
    .min(1)
    .max(30 * 86400)
    .nullable(),
});

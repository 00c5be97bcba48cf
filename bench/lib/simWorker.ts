/**
 * A simulated worker machine: the worker protocol over GraphQL HTTP with a worker
 * token, sending the same operations with the same selections as the real worker
 * (worker/src/documents.ts), but running nothing: a claimed task is completed at once.
 */
import { gql } from './api.js';

const HELLO = `mutation WorkerHello($input: WorkerHelloInput!) {
  workerHello(input: $input) { __typename ... on WorkerHelloResult { workerId heartbeatIntervalSec leaseSec worker { status } } ... on ValidationError { message } } }`;
const CLAIM = `mutation ClaimTask($workerId: ID!, $waitMs: Int!, $max: Int!) {
  claimTask(workerId: $workerId, waitMs: $waitMs, max: $max) { __typename
    ... on MutationClaimTaskSuccess { data { attemptId number fencingToken leaseExpiresAt
      task { id jobId kind name command environment requirements files { path sha256 size mode } inputs { path sha256 size mode } } } }
    ... on Error { message code } } }`;
const HEARTBEAT = `mutation Heartbeat($workerId: ID!, $leases: [LeaseInput!]!, $telemetry: JSON) {
  heartbeat(workerId: $workerId, leases: $leases, telemetry: $telemetry) { __typename
    ... on HeartbeatResult { status renewed orders { kind attemptId reason } } ... on Error { message code } } }`;
const COMPLETE = `mutation CompleteAttempt($attemptId: ID!, $fencingToken: String!, $result: CompleteAttemptInput!) {
  completeAttempt(attemptId: $attemptId, fencingToken: $fencingToken, result: $result) { __typename ... on Attempt { id status } ... on Error { message code } } }`;
const COMPLETE_MANY = `mutation CompleteAttempts($completions: [CompletionInput!]!) {
  completeAttempts(completions: $completions) { __typename
    ... on MutationCompleteAttemptsSuccess { data { attemptId accepted status error { code message reason } } } ... on Error { message code } } }`;

export const SIM_CAPS = {
  os: 'linux',
  arch: 'x64',
  cpu: { model: 'Simulated CPU', cores: 8 },
  memoryMiB: 16384,
  workloads: ['shell', 'python'],
};

export interface Lease {
  attemptId: string;
  fencingToken: string;
  taskId: string;
}

export class SimWorker {
  workerId = '';
  /** Completions as the real worker sends them (worker/src/completions.ts): at once, or with the next request when one is in flight. */
  batch = true;
  private queue: { l: Lease; done: (err?: Error) => void }[] = [];
  private inFlight = false;
  constructor(
    readonly url: string,
    readonly token: string,
    readonly name: string,
  ) {}

  async hello(slots: number): Promise<void> {
    const r = await gql(this.url, HELLO, { input: { name: this.name, version: 'bench', slots, capabilities: SIM_CAPS } }, this.token);
    const h = r.data?.workerHello;
    if (h?.__typename !== 'WorkerHelloResult') throw new Error(`workerHello failed: ${JSON.stringify(r).slice(0, 500)}`);
    this.workerId = h.workerId;
  }

  async claim(waitMs: number, max: number, signal?: AbortSignal): Promise<Lease[]> {
    const r = await gql(this.url, CLAIM, { workerId: this.workerId, waitMs, max }, this.token, signal);
    const c = r.data?.claimTask;
    if (c?.__typename !== 'MutationClaimTaskSuccess') throw new Error(`claimTask failed: ${JSON.stringify(r).slice(0, 500)}`);
    return (c.data as { attemptId: string; fencingToken: string; task: { id: string } }[]).map((a) => ({
      attemptId: a.attemptId,
      fencingToken: a.fencingToken,
      taskId: a.task.id,
    }));
  }

  async heartbeat(leases: Lease[]): Promise<void> {
    const r = await gql(
      this.url,
      HEARTBEAT,
      {
        workerId: this.workerId,
        leases: leases.map((l) => ({ attemptId: l.attemptId, fencingToken: l.fencingToken })),
        telemetry: { running: leases.length },
      },
      this.token,
    );
    if (r.data?.heartbeat?.__typename !== 'HeartbeatResult') throw new Error(`heartbeat failed: ${JSON.stringify(r).slice(0, 500)}`);
  }

  async complete(l: Lease): Promise<void> {
    if (!this.batch) return this.completeOne(l);
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ l, done: (err) => (err ? reject(err) : resolve()) });
      void this.pump();
    });
  }

  private async pump(): Promise<void> {
    if (this.inFlight || this.queue.length === 0) return;
    this.inFlight = true;
    const batch = this.queue.splice(0, 64);
    try {
      const r = await gql(
        this.url,
        COMPLETE_MANY,
        { completions: batch.map(({ l }) => ({ attemptId: l.attemptId, fencingToken: l.fencingToken, result: { exitCode: 0 } })) },
        this.token,
      );
      const c = r.data?.completeAttempts;
      if (c?.__typename !== 'MutationCompleteAttemptsSuccess')
        throw new Error(`completeAttempts failed: ${JSON.stringify(r).slice(0, 500)}`);
      const by = new Map(
        (c.data as { attemptId: string; accepted: boolean; status: string | null; error: unknown }[]).map((d) => [d.attemptId, d]),
      );
      for (const { l, done } of batch) {
        const d = by.get(l.attemptId);
        done(d?.accepted && d.status === 'SUCCEEDED' ? undefined : new Error(`completion refused: ${JSON.stringify(d).slice(0, 300)}`));
      }
    } catch (err) {
      for (const { done } of batch) done(err as Error);
    } finally {
      this.inFlight = false;
      void this.pump();
    }
  }

  async completeOne(l: Lease): Promise<void> {
    const r = await gql(this.url, COMPLETE, { attemptId: l.attemptId, fencingToken: l.fencingToken, result: { exitCode: 0 } }, this.token);
    const a = r.data?.completeAttempt;
    if (a?.__typename !== 'Attempt' || a.status !== 'SUCCEEDED')
      throw new Error(`completeAttempt failed: ${JSON.stringify(r).slice(0, 500)}`);
  }
}

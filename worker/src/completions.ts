/**
 * Completions leave the worker in batches: a finished attempt's result is sent at once when
 * no completion request is in flight, and results that finish while one is in flight go
 * together in the next request (no timer, so a lone completion is never delayed). The API
 * fences each attempt of a batch on its own (completeAttempts): one stale member is refused
 * in its own result while the others are accepted. A failed request rejects every member
 * it carried; each caller decides whether to retry (runner.ts).
 */
import type { ApiClient } from './client.js';
import { graphql } from './gql/gql.js';
import type { CompleteAttemptInput } from './gql/graphql.js';

export const CompleteAttemptsDoc = graphql(`
  mutation CompleteAttempts($completions: [CompletionInput!]!) {
    completeAttempts(completions: $completions) {
      __typename
      ... on MutationCompleteAttemptsSuccess {
        data {
          attemptId
          accepted
          status
          error {
            code
            message
            reason
          }
        }
      }
      ... on Error {
        message
        code
      }
    }
  }
`);

/** The API's answer for one attempt: accepted with its status, or refused with why. */
export interface CompletionAnswer {
  accepted: boolean;
  status: string | null;
  error: { code: string; message: string; reason?: string | null } | null;
}

interface Pending {
  attemptId: string;
  fencingToken: string;
  result: CompleteAttemptInput;
  resolve: (a: CompletionAnswer) => void;
  reject: (e: unknown) => void;
}

/** At most this many attempts per request (the API takes 256). */
export const MAX_BATCH = 64;

export class Completions {
  private readonly queue: Pending[] = [];
  private inFlight = false;

  constructor(private readonly client: ApiClient) {}

  complete(attemptId: string, fencingToken: string, result: CompleteAttemptInput): Promise<CompletionAnswer> {
    return new Promise((resolve, reject) => {
      this.queue.push({ attemptId, fencingToken, result, resolve, reject });
      void this.pump();
    });
  }

  private async pump(): Promise<void> {
    if (this.inFlight || this.queue.length === 0) return;
    this.inFlight = true;
    const batch = this.queue.splice(0, MAX_BATCH);
    try {
      const r = await this.client.request(CompleteAttemptsDoc, {
        completions: batch.map((p) => ({ attemptId: p.attemptId, fencingToken: p.fencingToken, result: p.result })),
      });
      const c = r.completeAttempts;
      if (c.__typename !== 'MutationCompleteAttemptsSuccess')
        throw new Error(`completions refused: ${'message' in c ? c.message : 'unexpected answer'}`);
      const byId = new Map(c.data.map((d) => [d.attemptId, d]));
      for (const p of batch) {
        const d = byId.get(p.attemptId);
        if (d) p.resolve({ accepted: d.accepted, status: d.status ?? null, error: d.error ?? null });
        else p.reject(new Error(`the API did not answer for attempt ${p.attemptId}`));
      }
    } catch (err) {
      for (const p of batch) p.reject(err);
    } finally {
      this.inFlight = false;
      void this.pump();
    }
  }
}

/** The worker's GraphQL operations; typed by codegen into ./gql (npm run codegen). */
import { graphql } from './gql/index.js';

export const WorkerHelloDoc = graphql(`
  mutation WorkerHello($input: WorkerHelloInput!) {
    workerHello(input: $input) {
      __typename
      ... on WorkerHelloResult {
        workerId
        heartbeatIntervalSec
        leaseSec
        worker {
          status
        }
      }
      ... on Error {
        code
        message
      }
    }
  }
`);

export const ClaimTaskDoc = graphql(`
  mutation ClaimTask($workerId: ID!, $waitMs: Int!, $max: Int!) {
    claimTask(workerId: $workerId, waitMs: $waitMs, max: $max) {
      __typename
      ... on MutationClaimTaskSuccess {
        data {
          attemptId
          number
          fencingToken
          leaseExpiresAt
          task {
            id
            jobId
            kind
            name
            command
            environment
            requirements
            files {
              path
              sha256
              size
              mode
            }
            inputs {
              path
              sha256
              size
              mode
            }
            checkpoint {
              files {
                path
                sha256
                size
                mode
              }
              step
              attemptNumber
            }
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

export const HeartbeatDoc = graphql(`
  mutation Heartbeat($workerId: ID!, $leases: [LeaseInput!]!, $telemetry: JSON) {
    heartbeat(workerId: $workerId, leases: $leases, telemetry: $telemetry) {
      __typename
      ... on HeartbeatResult {
        status
        renewed
        orders {
          kind
          attemptId
          reason
        }
      }
      ... on Error {
        message
        code
      }
    }
  }
`);

export const AppendLogsDoc = graphql(`
  mutation AppendLogs($attemptId: ID!, $fencingToken: String!, $lines: LogLines!) {
    appendLogs(attemptId: $attemptId, fencingToken: $fencingToken, lines: $lines) {
      __typename
      ... on AppendResult {
        accepted
        lastSeq
      }
      ... on StaleAttemptError {
        reason
      }
      ... on Error {
        message
        code
      }
    }
  }
`);

export const ReportMetricsDoc = graphql(`
  mutation ReportMetrics($attemptId: ID!, $fencingToken: String!, $points: [MetricPointInput!]!) {
    reportMetrics(attemptId: $attemptId, fencingToken: $fencingToken, points: $points) {
      __typename
      ... on AppendResult {
        accepted
        lastSeq
      }
      ... on StaleAttemptError {
        reason
      }
      ... on Error {
        message
        code
      }
    }
  }
`);

export const CompleteAttemptDoc = graphql(`
  mutation CompleteAttempt($attemptId: ID!, $fencingToken: String!, $result: CompleteAttemptInput!) {
    completeAttempt(attemptId: $attemptId, fencingToken: $fencingToken, result: $result) {
      __typename
      ... on Attempt {
        id
        status
      }
      ... on Error {
        message
        code
      }
    }
  }
`);

export const SetPausedDoc = graphql(`
  mutation SetWorkerPaused($workerId: ID!, $paused: Boolean!) {
    setWorkerPaused(workerId: $workerId, paused: $paused) {
      __typename
      ... on Worker {
        status
      }
      ... on Error {
        message
      }
    }
  }
`);

export const SaveCheckpointDoc = graphql(`
  mutation SaveCheckpoint($attemptId: ID!, $fencingToken: String!, $checkpoint: CheckpointInput!) {
    saveCheckpoint(attemptId: $attemptId, fencingToken: $fencingToken, checkpoint: $checkpoint) {
      __typename
      ... on TaskCheckpoint {
        step
        savedAt
      }
      ... on StaleAttemptError {
        reason
      }
      ... on Error {
        message
        code
      }
    }
  }
`);

export const ReleaseDrainedAttemptDoc = graphql(`
  mutation ReleaseDrainedAttempt($attemptId: ID!, $fencingToken: String!, $checkpoint: CheckpointInput, $usage: JSON, $reason: String) {
    releaseDrainedAttempt(attemptId: $attemptId, fencingToken: $fencingToken, checkpoint: $checkpoint, usage: $usage, reason: $reason) {
      __typename
      ... on Attempt {
        id
        status
      }
      ... on StaleAttemptError {
        reason
      }
      ... on Error {
        message
        code
      }
    }
  }
`);

export const DrainOwnWorkerDoc = graphql(`
  mutation DrainOwnWorker($workerId: ID!) {
    drainOwnWorker(workerId: $workerId) {
      __typename
      ... on Worker {
        status
      }
      ... on Error {
        message
        code
      }
    }
  }
`);

export const SetWorkerHealthDoc = graphql(`
  mutation SetWorkerHealth($workerId: ID!, $healthy: Boolean!, $reason: String) {
    setWorkerHealth(workerId: $workerId, healthy: $healthy, reason: $reason) {
      __typename
      ... on Worker {
        status
        statusReason
      }
      ... on Error {
        message
        code
      }
    }
  }
`);

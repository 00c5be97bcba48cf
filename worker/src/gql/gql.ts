/* eslint-disable */
import * as types from './graphql.js';
import type { TypedDocumentNode as DocumentNode } from '@graphql-typed-document-node/core';

/**
 * Map of all GraphQL operations in the project.
 *
 * This map has several performance disadvantages:
 * 1. It is not tree-shakeable, so it will include all operations in the project.
 * 2. It is not minifiable, so the string of a GraphQL query will be multiple times inside the bundle.
 * 3. It does not support dead code elimination, so it will add unused operations.
 *
 * Therefore it is highly recommended to use the babel or swc plugin for production.
 * Learn more about it here: https://the-guild.dev/graphql/codegen/plugins/presets/preset-client#reducing-bundle-size
 */
type Documents = {
    "\n  mutation CompleteAttempts($completions: [CompletionInput!]!) {\n    completeAttempts(completions: $completions) {\n      __typename\n      ... on MutationCompleteAttemptsSuccess { data { attemptId accepted status error { code message reason } } }\n      ... on Error { message code }\n    }\n  }\n": typeof types.CompleteAttemptsDocument,
    "\n  mutation WorkerHello($input: WorkerHelloInput!) {\n    workerHello(input: $input) {\n      __typename\n      ... on WorkerHelloResult { workerId heartbeatIntervalSec leaseSec worker { status } }\n      ... on Error { code message }\n    }\n  }\n": typeof types.WorkerHelloDocument,
    "\n  mutation ClaimTask($workerId: ID!, $waitMs: Int!, $max: Int!) {\n    claimTask(workerId: $workerId, waitMs: $waitMs, max: $max) {\n      __typename\n      ... on MutationClaimTaskSuccess {\n        data {\n          attemptId\n          number\n          fencingToken\n          leaseExpiresAt\n          task {\n            id jobId kind name command environment requirements\n            files { path sha256 size mode }\n            inputs { path sha256 size mode }\n            checkpoint { files { path sha256 size mode } step attemptNumber }\n          }\n        }\n      }\n      ... on Error { message code }\n    }\n  }\n": typeof types.ClaimTaskDocument,
    "\n  mutation Heartbeat($workerId: ID!, $leases: [LeaseInput!]!, $telemetry: JSON) {\n    heartbeat(workerId: $workerId, leases: $leases, telemetry: $telemetry) {\n      __typename\n      ... on HeartbeatResult { status renewed orders { kind attemptId reason } }\n      ... on Error { message code }\n    }\n  }\n": typeof types.HeartbeatDocument,
    "\n  mutation AppendLogs($attemptId: ID!, $fencingToken: String!, $lines: LogLines!) {\n    appendLogs(attemptId: $attemptId, fencingToken: $fencingToken, lines: $lines) {\n      __typename\n      ... on AppendResult { accepted lastSeq }\n      ... on StaleAttemptError { reason }\n      ... on Error { message code }\n    }\n  }\n": typeof types.AppendLogsDocument,
    "\n  mutation ReportMetrics($attemptId: ID!, $fencingToken: String!, $points: [MetricPointInput!]!) {\n    reportMetrics(attemptId: $attemptId, fencingToken: $fencingToken, points: $points) {\n      __typename\n      ... on AppendResult { accepted lastSeq }\n      ... on StaleAttemptError { reason }\n      ... on Error { message code }\n    }\n  }\n": typeof types.ReportMetricsDocument,
    "\n  mutation CompleteAttempt($attemptId: ID!, $fencingToken: String!, $result: CompleteAttemptInput!) {\n    completeAttempt(attemptId: $attemptId, fencingToken: $fencingToken, result: $result) {\n      __typename\n      ... on Attempt { id status }\n      ... on Error { message code }\n    }\n  }\n": typeof types.CompleteAttemptDocument,
    "\n  mutation SetWorkerPaused($workerId: ID!, $paused: Boolean!) {\n    setWorkerPaused(workerId: $workerId, paused: $paused) {\n      __typename\n      ... on Worker { status }\n      ... on Error { message }\n    }\n  }\n": typeof types.SetWorkerPausedDocument,
    "\n  mutation SaveCheckpoint($attemptId: ID!, $fencingToken: String!, $checkpoint: CheckpointInput!) {\n    saveCheckpoint(attemptId: $attemptId, fencingToken: $fencingToken, checkpoint: $checkpoint) {\n      __typename\n      ... on TaskCheckpoint { step savedAt }\n      ... on StaleAttemptError { reason }\n      ... on Error { message code }\n    }\n  }\n": typeof types.SaveCheckpointDocument,
    "\n  mutation ReleaseDrainedAttempt($attemptId: ID!, $fencingToken: String!, $checkpoint: CheckpointInput, $usage: JSON, $reason: String) {\n    releaseDrainedAttempt(attemptId: $attemptId, fencingToken: $fencingToken, checkpoint: $checkpoint, usage: $usage, reason: $reason) {\n      __typename\n      ... on Attempt { id status }\n      ... on StaleAttemptError { reason }\n      ... on Error { message code }\n    }\n  }\n": typeof types.ReleaseDrainedAttemptDocument,
    "\n  mutation DrainOwnWorker($workerId: ID!) {\n    drainOwnWorker(workerId: $workerId) {\n      __typename\n      ... on Worker { status }\n      ... on Error { message code }\n    }\n  }\n": typeof types.DrainOwnWorkerDocument,
    "\n  mutation SetWorkerHealth($workerId: ID!, $healthy: Boolean!, $reason: String) {\n    setWorkerHealth(workerId: $workerId, healthy: $healthy, reason: $reason) {\n      __typename\n      ... on Worker { status statusReason }\n      ... on Error { message code }\n    }\n  }\n": typeof types.SetWorkerHealthDocument,
};
const documents: Documents = {
    "\n  mutation CompleteAttempts($completions: [CompletionInput!]!) {\n    completeAttempts(completions: $completions) {\n      __typename\n      ... on MutationCompleteAttemptsSuccess { data { attemptId accepted status error { code message reason } } }\n      ... on Error { message code }\n    }\n  }\n": types.CompleteAttemptsDocument,
    "\n  mutation WorkerHello($input: WorkerHelloInput!) {\n    workerHello(input: $input) {\n      __typename\n      ... on WorkerHelloResult { workerId heartbeatIntervalSec leaseSec worker { status } }\n      ... on Error { code message }\n    }\n  }\n": types.WorkerHelloDocument,
    "\n  mutation ClaimTask($workerId: ID!, $waitMs: Int!, $max: Int!) {\n    claimTask(workerId: $workerId, waitMs: $waitMs, max: $max) {\n      __typename\n      ... on MutationClaimTaskSuccess {\n        data {\n          attemptId\n          number\n          fencingToken\n          leaseExpiresAt\n          task {\n            id jobId kind name command environment requirements\n            files { path sha256 size mode }\n            inputs { path sha256 size mode }\n            checkpoint { files { path sha256 size mode } step attemptNumber }\n          }\n        }\n      }\n      ... on Error { message code }\n    }\n  }\n": types.ClaimTaskDocument,
    "\n  mutation Heartbeat($workerId: ID!, $leases: [LeaseInput!]!, $telemetry: JSON) {\n    heartbeat(workerId: $workerId, leases: $leases, telemetry: $telemetry) {\n      __typename\n      ... on HeartbeatResult { status renewed orders { kind attemptId reason } }\n      ... on Error { message code }\n    }\n  }\n": types.HeartbeatDocument,
    "\n  mutation AppendLogs($attemptId: ID!, $fencingToken: String!, $lines: LogLines!) {\n    appendLogs(attemptId: $attemptId, fencingToken: $fencingToken, lines: $lines) {\n      __typename\n      ... on AppendResult { accepted lastSeq }\n      ... on StaleAttemptError { reason }\n      ... on Error { message code }\n    }\n  }\n": types.AppendLogsDocument,
    "\n  mutation ReportMetrics($attemptId: ID!, $fencingToken: String!, $points: [MetricPointInput!]!) {\n    reportMetrics(attemptId: $attemptId, fencingToken: $fencingToken, points: $points) {\n      __typename\n      ... on AppendResult { accepted lastSeq }\n      ... on StaleAttemptError { reason }\n      ... on Error { message code }\n    }\n  }\n": types.ReportMetricsDocument,
    "\n  mutation CompleteAttempt($attemptId: ID!, $fencingToken: String!, $result: CompleteAttemptInput!) {\n    completeAttempt(attemptId: $attemptId, fencingToken: $fencingToken, result: $result) {\n      __typename\n      ... on Attempt { id status }\n      ... on Error { message code }\n    }\n  }\n": types.CompleteAttemptDocument,
    "\n  mutation SetWorkerPaused($workerId: ID!, $paused: Boolean!) {\n    setWorkerPaused(workerId: $workerId, paused: $paused) {\n      __typename\n      ... on Worker { status }\n      ... on Error { message }\n    }\n  }\n": types.SetWorkerPausedDocument,
    "\n  mutation SaveCheckpoint($attemptId: ID!, $fencingToken: String!, $checkpoint: CheckpointInput!) {\n    saveCheckpoint(attemptId: $attemptId, fencingToken: $fencingToken, checkpoint: $checkpoint) {\n      __typename\n      ... on TaskCheckpoint { step savedAt }\n      ... on StaleAttemptError { reason }\n      ... on Error { message code }\n    }\n  }\n": types.SaveCheckpointDocument,
    "\n  mutation ReleaseDrainedAttempt($attemptId: ID!, $fencingToken: String!, $checkpoint: CheckpointInput, $usage: JSON, $reason: String) {\n    releaseDrainedAttempt(attemptId: $attemptId, fencingToken: $fencingToken, checkpoint: $checkpoint, usage: $usage, reason: $reason) {\n      __typename\n      ... on Attempt { id status }\n      ... on StaleAttemptError { reason }\n      ... on Error { message code }\n    }\n  }\n": types.ReleaseDrainedAttemptDocument,
    "\n  mutation DrainOwnWorker($workerId: ID!) {\n    drainOwnWorker(workerId: $workerId) {\n      __typename\n      ... on Worker { status }\n      ... on Error { message code }\n    }\n  }\n": types.DrainOwnWorkerDocument,
    "\n  mutation SetWorkerHealth($workerId: ID!, $healthy: Boolean!, $reason: String) {\n    setWorkerHealth(workerId: $workerId, healthy: $healthy, reason: $reason) {\n      __typename\n      ... on Worker { status statusReason }\n      ... on Error { message code }\n    }\n  }\n": types.SetWorkerHealthDocument,
};

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 *
 *
 * @example
 * ```ts
 * const query = graphql(`query GetUser($id: ID!) { user(id: $id) { name } }`);
 * ```
 *
 * The query argument is unknown!
 * Please regenerate the types.
 */
export function graphql(source: string): unknown;

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation CompleteAttempts($completions: [CompletionInput!]!) {\n    completeAttempts(completions: $completions) {\n      __typename\n      ... on MutationCompleteAttemptsSuccess { data { attemptId accepted status error { code message reason } } }\n      ... on Error { message code }\n    }\n  }\n"): (typeof documents)["\n  mutation CompleteAttempts($completions: [CompletionInput!]!) {\n    completeAttempts(completions: $completions) {\n      __typename\n      ... on MutationCompleteAttemptsSuccess { data { attemptId accepted status error { code message reason } } }\n      ... on Error { message code }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation WorkerHello($input: WorkerHelloInput!) {\n    workerHello(input: $input) {\n      __typename\n      ... on WorkerHelloResult { workerId heartbeatIntervalSec leaseSec worker { status } }\n      ... on Error { code message }\n    }\n  }\n"): (typeof documents)["\n  mutation WorkerHello($input: WorkerHelloInput!) {\n    workerHello(input: $input) {\n      __typename\n      ... on WorkerHelloResult { workerId heartbeatIntervalSec leaseSec worker { status } }\n      ... on Error { code message }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ClaimTask($workerId: ID!, $waitMs: Int!, $max: Int!) {\n    claimTask(workerId: $workerId, waitMs: $waitMs, max: $max) {\n      __typename\n      ... on MutationClaimTaskSuccess {\n        data {\n          attemptId\n          number\n          fencingToken\n          leaseExpiresAt\n          task {\n            id jobId kind name command environment requirements\n            files { path sha256 size mode }\n            inputs { path sha256 size mode }\n            checkpoint { files { path sha256 size mode } step attemptNumber }\n          }\n        }\n      }\n      ... on Error { message code }\n    }\n  }\n"): (typeof documents)["\n  mutation ClaimTask($workerId: ID!, $waitMs: Int!, $max: Int!) {\n    claimTask(workerId: $workerId, waitMs: $waitMs, max: $max) {\n      __typename\n      ... on MutationClaimTaskSuccess {\n        data {\n          attemptId\n          number\n          fencingToken\n          leaseExpiresAt\n          task {\n            id jobId kind name command environment requirements\n            files { path sha256 size mode }\n            inputs { path sha256 size mode }\n            checkpoint { files { path sha256 size mode } step attemptNumber }\n          }\n        }\n      }\n      ... on Error { message code }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation Heartbeat($workerId: ID!, $leases: [LeaseInput!]!, $telemetry: JSON) {\n    heartbeat(workerId: $workerId, leases: $leases, telemetry: $telemetry) {\n      __typename\n      ... on HeartbeatResult { status renewed orders { kind attemptId reason } }\n      ... on Error { message code }\n    }\n  }\n"): (typeof documents)["\n  mutation Heartbeat($workerId: ID!, $leases: [LeaseInput!]!, $telemetry: JSON) {\n    heartbeat(workerId: $workerId, leases: $leases, telemetry: $telemetry) {\n      __typename\n      ... on HeartbeatResult { status renewed orders { kind attemptId reason } }\n      ... on Error { message code }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation AppendLogs($attemptId: ID!, $fencingToken: String!, $lines: LogLines!) {\n    appendLogs(attemptId: $attemptId, fencingToken: $fencingToken, lines: $lines) {\n      __typename\n      ... on AppendResult { accepted lastSeq }\n      ... on StaleAttemptError { reason }\n      ... on Error { message code }\n    }\n  }\n"): (typeof documents)["\n  mutation AppendLogs($attemptId: ID!, $fencingToken: String!, $lines: LogLines!) {\n    appendLogs(attemptId: $attemptId, fencingToken: $fencingToken, lines: $lines) {\n      __typename\n      ... on AppendResult { accepted lastSeq }\n      ... on StaleAttemptError { reason }\n      ... on Error { message code }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ReportMetrics($attemptId: ID!, $fencingToken: String!, $points: [MetricPointInput!]!) {\n    reportMetrics(attemptId: $attemptId, fencingToken: $fencingToken, points: $points) {\n      __typename\n      ... on AppendResult { accepted lastSeq }\n      ... on StaleAttemptError { reason }\n      ... on Error { message code }\n    }\n  }\n"): (typeof documents)["\n  mutation ReportMetrics($attemptId: ID!, $fencingToken: String!, $points: [MetricPointInput!]!) {\n    reportMetrics(attemptId: $attemptId, fencingToken: $fencingToken, points: $points) {\n      __typename\n      ... on AppendResult { accepted lastSeq }\n      ... on StaleAttemptError { reason }\n      ... on Error { message code }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation CompleteAttempt($attemptId: ID!, $fencingToken: String!, $result: CompleteAttemptInput!) {\n    completeAttempt(attemptId: $attemptId, fencingToken: $fencingToken, result: $result) {\n      __typename\n      ... on Attempt { id status }\n      ... on Error { message code }\n    }\n  }\n"): (typeof documents)["\n  mutation CompleteAttempt($attemptId: ID!, $fencingToken: String!, $result: CompleteAttemptInput!) {\n    completeAttempt(attemptId: $attemptId, fencingToken: $fencingToken, result: $result) {\n      __typename\n      ... on Attempt { id status }\n      ... on Error { message code }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation SetWorkerPaused($workerId: ID!, $paused: Boolean!) {\n    setWorkerPaused(workerId: $workerId, paused: $paused) {\n      __typename\n      ... on Worker { status }\n      ... on Error { message }\n    }\n  }\n"): (typeof documents)["\n  mutation SetWorkerPaused($workerId: ID!, $paused: Boolean!) {\n    setWorkerPaused(workerId: $workerId, paused: $paused) {\n      __typename\n      ... on Worker { status }\n      ... on Error { message }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation SaveCheckpoint($attemptId: ID!, $fencingToken: String!, $checkpoint: CheckpointInput!) {\n    saveCheckpoint(attemptId: $attemptId, fencingToken: $fencingToken, checkpoint: $checkpoint) {\n      __typename\n      ... on TaskCheckpoint { step savedAt }\n      ... on StaleAttemptError { reason }\n      ... on Error { message code }\n    }\n  }\n"): (typeof documents)["\n  mutation SaveCheckpoint($attemptId: ID!, $fencingToken: String!, $checkpoint: CheckpointInput!) {\n    saveCheckpoint(attemptId: $attemptId, fencingToken: $fencingToken, checkpoint: $checkpoint) {\n      __typename\n      ... on TaskCheckpoint { step savedAt }\n      ... on StaleAttemptError { reason }\n      ... on Error { message code }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ReleaseDrainedAttempt($attemptId: ID!, $fencingToken: String!, $checkpoint: CheckpointInput, $usage: JSON, $reason: String) {\n    releaseDrainedAttempt(attemptId: $attemptId, fencingToken: $fencingToken, checkpoint: $checkpoint, usage: $usage, reason: $reason) {\n      __typename\n      ... on Attempt { id status }\n      ... on StaleAttemptError { reason }\n      ... on Error { message code }\n    }\n  }\n"): (typeof documents)["\n  mutation ReleaseDrainedAttempt($attemptId: ID!, $fencingToken: String!, $checkpoint: CheckpointInput, $usage: JSON, $reason: String) {\n    releaseDrainedAttempt(attemptId: $attemptId, fencingToken: $fencingToken, checkpoint: $checkpoint, usage: $usage, reason: $reason) {\n      __typename\n      ... on Attempt { id status }\n      ... on StaleAttemptError { reason }\n      ... on Error { message code }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation DrainOwnWorker($workerId: ID!) {\n    drainOwnWorker(workerId: $workerId) {\n      __typename\n      ... on Worker { status }\n      ... on Error { message code }\n    }\n  }\n"): (typeof documents)["\n  mutation DrainOwnWorker($workerId: ID!) {\n    drainOwnWorker(workerId: $workerId) {\n      __typename\n      ... on Worker { status }\n      ... on Error { message code }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation SetWorkerHealth($workerId: ID!, $healthy: Boolean!, $reason: String) {\n    setWorkerHealth(workerId: $workerId, healthy: $healthy, reason: $reason) {\n      __typename\n      ... on Worker { status statusReason }\n      ... on Error { message code }\n    }\n  }\n"): (typeof documents)["\n  mutation SetWorkerHealth($workerId: ID!, $healthy: Boolean!, $reason: String) {\n    setWorkerHealth(workerId: $workerId, healthy: $healthy, reason: $reason) {\n      __typename\n      ... on Worker { status statusReason }\n      ... on Error { message code }\n    }\n  }\n"];

export function graphql(source: string) {
  return (documents as any)[source] ?? {};
}

export type DocumentType<TDocumentNode extends DocumentNode<any, any>> = TDocumentNode extends DocumentNode<  infer TType,  any>  ? TType  : never;
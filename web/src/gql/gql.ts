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
    "\n  query Me {\n    me {\n      id\n      email\n      displayName\n    }\n  }\n": typeof types.MeDocument,
    "\n  mutation AnswerQuestion($input: AnswerQuestionInput!) {\n    answerQuestion(input: $input) {\n      __typename\n      ... on Question {\n        id\n        status\n        answer\n        answeredAt\n      }\n      ... on ValidationError {\n        message\n        issues {\n          message\n        }\n      }\n      ... on Error {\n        message\n      }\n    }\n  }\n": typeof types.AnswerQuestionDocument,
    "\n  query JobEvents($id: ID!, $after: String, $first: Int) {\n    job(id: $id) {\n      id\n      events(after: $after, first: $first) {\n        id\n        kind\n        payload\n        createdAt\n      }\n    }\n  }\n": typeof types.JobEventsDocument,
    "\n  subscription JobActivity($jobId: ID!, $after: String) {\n    jobEvents(jobId: $jobId, after: $after) {\n      __typename\n      ... on JobEventEnvelope {\n        event {\n          id\n          kind\n          payload\n          createdAt\n        }\n      }\n      ... on LogLinesEvent {\n        attemptId\n        lines {\n          seq\n          stream\n          text\n          ts\n        }\n      }\n      ... on MetricPointsEvent {\n        attemptId\n        points {\n          seq\n          name\n          step\n          value\n        }\n      }\n    }\n  }\n": typeof types.JobActivityDocument,
    "\n  query AttemptLogPage($attemptId: ID!, $afterSeq: Int, $first: Int) {\n    attempt(id: $attemptId) {\n      id\n      logs(afterSeq: $afterSeq, first: $first) {\n        seq\n        stream\n        text\n        ts\n      }\n    }\n  }\n": typeof types.AttemptLogPageDocument,
    "\n  query AttemptMetricPage($attemptId: ID!, $afterSeq: Int, $first: Int) {\n    attempt(id: $attemptId) {\n      id\n      metricPoints(afterSeq: $afterSeq, first: $first) {\n        seq\n        name\n        step\n        value\n      }\n    }\n  }\n": typeof types.AttemptMetricPageDocument,
    "\n  mutation CreateWorkerToken($input: CreateTokenInput!) {\n    createWorkerToken(input: $input) {\n      __typename\n      ... on CreatedWorkerToken {\n        token\n        command\n        workerToken {\n          id\n          name\n          prefix\n        }\n      }\n      ... on ValidationError {\n        message\n      }\n    }\n  }\n": typeof types.CreateWorkerTokenDocument,
    "\n  query WorkerTokens {\n    me {\n      id\n      workerTokens {\n        ...WorkerTokenFields\n      }\n    }\n  }\n": typeof types.WorkerTokensDocument,
    "\n  fragment WorkerTokenFields on WorkerToken {\n    id\n    name\n    prefix\n    createdAt\n    lastUsedAt\n  }\n": typeof types.WorkerTokenFieldsFragmentDoc,
    "\n  mutation RotateWorkerToken($id: ID!) {\n    rotateWorkerToken(id: $id) {\n      __typename\n      ... on CreatedWorkerToken {\n        command\n        workerToken {\n          ...WorkerTokenFields\n        }\n      }\n      ... on NotFoundError {\n        message\n      }\n    }\n  }\n": typeof types.RotateWorkerTokenDocument,
    "\n  mutation RevokeWorkerToken($id: ID!) {\n    revokeWorkerToken(id: $id) {\n      __typename\n      ... on NotFoundError {\n        message\n      }\n    }\n  }\n": typeof types.RevokeWorkerTokenDocument,
    "\n  mutation SignUp($input: SignUpInput!) {\n    signUp(input: $input) {\n      __typename\n      ... on AuthPayload {\n        token\n      }\n      ... on ValidationError {\n        message\n        issues {\n          path\n          message\n        }\n      }\n      ... on ConflictError {\n        message\n      }\n    }\n  }\n": typeof types.SignUpDocument,
    "\n  mutation LogIn($input: LogInInput!) {\n    logIn(input: $input) {\n      __typename\n      ... on AuthPayload {\n        token\n      }\n      ... on ValidationError {\n        message\n        issues {\n          path\n          message\n        }\n      }\n      ... on AuthenticationError {\n        message\n      }\n    }\n  }\n": typeof types.LogInDocument,
    "\n  fragment JobFields on Job {\n    id\n    title\n    request\n    status\n    statusReason\n    costCad\n    lostCostCad\n    spendingCapCad\n    hardwarePreference\n    createdAt\n    updatedAt\n    startedAt\n    finishedAt\n    currentPlan {\n      id\n      version\n      author\n      summary\n      steps\n      command\n      environment\n      requirements\n      outputs\n      acceptanceCriteria\n      preparation\n      createdAt\n    }\n    questions {\n      id\n      text\n      choices\n      answer\n      status\n      createdAt\n      answeredAt\n    }\n    openQuestions {\n      id\n      text\n      choices\n      status\n      createdAt\n    }\n    outputs {\n      path\n      sha256\n      size\n    }\n    outputsValidated\n    originalCode {\n      id\n      fileCount\n      totalBytes\n      files {\n        path\n        size\n      }\n    }\n    frozenCode {\n      id\n      status\n      origin\n      fileCount\n    }\n  }\n": typeof types.JobFieldsFragmentDoc,
    "\n  query Job($id: ID!) {\n    job(id: $id) {\n      ...JobFields\n    }\n  }\n": typeof types.JobDocument,
    "\n  subscription JobUpdated($id: ID!) {\n    jobUpdated(id: $id) {\n      ...JobFields\n    }\n  }\n": typeof types.JobUpdatedDocument,
    "\n  query JobTasks($id: ID!) {\n    job(id: $id) {\n      id\n      tasks {\n        id\n        kind\n        name\n        status\n        statusReason\n        command\n        attemptCount\n        maxAttempts\n        createdAt\n        finishedAt\n        runAfter\n        attempts {\n          id\n          number\n          status\n          workerName\n          leaseExpiresAt\n          exitCode\n          errorClass\n          errorMessage\n          createdAt\n          startedAt\n          finishedAt\n          outputs {\n            path\n            sha256\n            size\n          }\n        }\n      }\n    }\n  }\n": typeof types.JobTasksDocument,
    "\n  query JobPreparation($id: ID!) {\n    job(id: $id) {\n      id\n      preparationRecords {\n        id\n        step\n        kind\n        revision\n        required\n        transformation\n        outcome\n        reason\n        hardware\n        workload\n        accelerator\n        staticChecks\n        numericalCheck\n        timings\n        evidenceSha\n        diff\n        createdAt\n      }\n    }\n  }\n": typeof types.JobPreparationDocument,
    "\n  mutation CancelJob($id: ID!) {\n    cancelJob(id: $id) {\n      __typename\n      ... on Job {\n        id\n        status\n        statusReason\n      }\n      ... on Error {\n        message\n      }\n    }\n  }\n": typeof types.CancelJobDocument,
    "\n  query Jobs($first: Int, $after: String, $last: Int, $before: String, $status: [JobStatus!]) {\n    jobs(first: $first, after: $after, last: $last, before: $before, status: $status) {\n      totalCount\n      pageInfo {\n        hasNextPage\n        hasPreviousPage\n        startCursor\n        endCursor\n      }\n      edges {\n        cursor\n        node {\n          id\n          title\n          status\n          costCad\n          spendingCapCad\n          createdAt\n          updatedAt\n        }\n      }\n    }\n  }\n": typeof types.JobsDocument,
    "\n  mutation CreateJob($input: CreateJobInput!) {\n    createJob(input: $input) {\n      __typename\n      ... on Job {\n        id\n        status\n      }\n      ... on ValidationError {\n        message\n        issues {\n          path\n          message\n        }\n      }\n      ... on NotFoundError {\n        message\n      }\n    }\n  }\n": typeof types.CreateJobDocument,
    "\n  query ApiTokens {\n    me {\n      id\n      apiTokens {\n        id\n        name\n        prefix\n        createdAt\n        lastUsedAt\n      }\n    }\n  }\n": typeof types.ApiTokensDocument,
    "\n  mutation CreateApiToken($input: CreateTokenInput!) {\n    createApiToken(input: $input) {\n      __typename\n      ... on CreatedApiToken {\n        token\n        apiToken {\n          id\n        }\n      }\n      ... on ValidationError {\n        message\n      }\n    }\n  }\n": typeof types.CreateApiTokenDocument,
    "\n  mutation RevokeApiToken($id: ID!) {\n    revokeApiToken(id: $id) {\n      __typename\n      ... on Error {\n        message\n      }\n    }\n  }\n": typeof types.RevokeApiTokenDocument,
    "\n  fragment WorkerFields on Worker {\n    id\n    name\n    status\n    capabilities\n    workloads\n    slots\n    version\n    lastSeenAt\n    createdAt\n    currentAttempts {\n      id\n      number\n      status\n    }\n  }\n": typeof types.WorkerFieldsFragmentDoc,
    "\n  query Workers($first: Int, $after: String) {\n    workers(first: $first, after: $after) {\n      totalCount\n      pageInfo {\n        hasNextPage\n        endCursor\n      }\n      edges {\n        cursor\n        node {\n          ...WorkerFields\n        }\n      }\n    }\n  }\n": typeof types.WorkersDocument,
    "\n  subscription WorkersChanged {\n    workersChanged {\n      ...WorkerFields\n    }\n  }\n": typeof types.WorkersChangedDocument,
    "\n  mutation PauseWorker($id: ID!) {\n    pauseWorker(id: $id) {\n      __typename\n      ... on Worker {\n        id\n        status\n      }\n      ... on NotFoundError {\n        message\n      }\n    }\n  }\n": typeof types.PauseWorkerDocument,
    "\n  mutation ResumeWorker($id: ID!) {\n    resumeWorker(id: $id) {\n      __typename\n      ... on Worker {\n        id\n        status\n      }\n      ... on NotFoundError {\n        message\n      }\n    }\n  }\n": typeof types.ResumeWorkerDocument,
    "\n  query NetworkCapacity {\n    networkCapacity {\n      accelVendor\n      count\n      accelerators\n      maxAccelMemoryMiB\n      maxMemoryMiB\n      workloads\n      torchVersions\n      pythonVersions\n    }\n  }\n": typeof types.NetworkCapacityDocument,
};
const documents: Documents = {
    "\n  query Me {\n    me {\n      id\n      email\n      displayName\n    }\n  }\n": types.MeDocument,
    "\n  mutation AnswerQuestion($input: AnswerQuestionInput!) {\n    answerQuestion(input: $input) {\n      __typename\n      ... on Question {\n        id\n        status\n        answer\n        answeredAt\n      }\n      ... on ValidationError {\n        message\n        issues {\n          message\n        }\n      }\n      ... on Error {\n        message\n      }\n    }\n  }\n": types.AnswerQuestionDocument,
    "\n  query JobEvents($id: ID!, $after: String, $first: Int) {\n    job(id: $id) {\n      id\n      events(after: $after, first: $first) {\n        id\n        kind\n        payload\n        createdAt\n      }\n    }\n  }\n": types.JobEventsDocument,
    "\n  subscription JobActivity($jobId: ID!, $after: String) {\n    jobEvents(jobId: $jobId, after: $after) {\n      __typename\n      ... on JobEventEnvelope {\n        event {\n          id\n          kind\n          payload\n          createdAt\n        }\n      }\n      ... on LogLinesEvent {\n        attemptId\n        lines {\n          seq\n          stream\n          text\n          ts\n        }\n      }\n      ... on MetricPointsEvent {\n        attemptId\n        points {\n          seq\n          name\n          step\n          value\n        }\n      }\n    }\n  }\n": types.JobActivityDocument,
    "\n  query AttemptLogPage($attemptId: ID!, $afterSeq: Int, $first: Int) {\n    attempt(id: $attemptId) {\n      id\n      logs(afterSeq: $afterSeq, first: $first) {\n        seq\n        stream\n        text\n        ts\n      }\n    }\n  }\n": types.AttemptLogPageDocument,
    "\n  query AttemptMetricPage($attemptId: ID!, $afterSeq: Int, $first: Int) {\n    attempt(id: $attemptId) {\n      id\n      metricPoints(afterSeq: $afterSeq, first: $first) {\n        seq\n        name\n        step\n        value\n      }\n    }\n  }\n": types.AttemptMetricPageDocument,
    "\n  mutation CreateWorkerToken($input: CreateTokenInput!) {\n    createWorkerToken(input: $input) {\n      __typename\n      ... on CreatedWorkerToken {\n        token\n        command\n        workerToken {\n          id\n          name\n          prefix\n        }\n      }\n      ... on ValidationError {\n        message\n      }\n    }\n  }\n": types.CreateWorkerTokenDocument,
    "\n  query WorkerTokens {\n    me {\n      id\n      workerTokens {\n        ...WorkerTokenFields\n      }\n    }\n  }\n": types.WorkerTokensDocument,
    "\n  fragment WorkerTokenFields on WorkerToken {\n    id\n    name\n    prefix\n    createdAt\n    lastUsedAt\n  }\n": types.WorkerTokenFieldsFragmentDoc,
    "\n  mutation RotateWorkerToken($id: ID!) {\n    rotateWorkerToken(id: $id) {\n      __typename\n      ... on CreatedWorkerToken {\n        command\n        workerToken {\n          ...WorkerTokenFields\n        }\n      }\n      ... on NotFoundError {\n        message\n      }\n    }\n  }\n": types.RotateWorkerTokenDocument,
    "\n  mutation RevokeWorkerToken($id: ID!) {\n    revokeWorkerToken(id: $id) {\n      __typename\n      ... on NotFoundError {\n        message\n      }\n    }\n  }\n": types.RevokeWorkerTokenDocument,
    "\n  mutation SignUp($input: SignUpInput!) {\n    signUp(input: $input) {\n      __typename\n      ... on AuthPayload {\n        token\n      }\n      ... on ValidationError {\n        message\n        issues {\n          path\n          message\n        }\n      }\n      ... on ConflictError {\n        message\n      }\n    }\n  }\n": types.SignUpDocument,
    "\n  mutation LogIn($input: LogInInput!) {\n    logIn(input: $input) {\n      __typename\n      ... on AuthPayload {\n        token\n      }\n      ... on ValidationError {\n        message\n        issues {\n          path\n          message\n        }\n      }\n      ... on AuthenticationError {\n        message\n      }\n    }\n  }\n": types.LogInDocument,
    "\n  fragment JobFields on Job {\n    id\n    title\n    request\n    status\n    statusReason\n    costCad\n    lostCostCad\n    spendingCapCad\n    hardwarePreference\n    createdAt\n    updatedAt\n    startedAt\n    finishedAt\n    currentPlan {\n      id\n      version\n      author\n      summary\n      steps\n      command\n      environment\n      requirements\n      outputs\n      acceptanceCriteria\n      preparation\n      createdAt\n    }\n    questions {\n      id\n      text\n      choices\n      answer\n      status\n      createdAt\n      answeredAt\n    }\n    openQuestions {\n      id\n      text\n      choices\n      status\n      createdAt\n    }\n    outputs {\n      path\n      sha256\n      size\n    }\n    outputsValidated\n    originalCode {\n      id\n      fileCount\n      totalBytes\n      files {\n        path\n        size\n      }\n    }\n    frozenCode {\n      id\n      status\n      origin\n      fileCount\n    }\n  }\n": types.JobFieldsFragmentDoc,
    "\n  query Job($id: ID!) {\n    job(id: $id) {\n      ...JobFields\n    }\n  }\n": types.JobDocument,
    "\n  subscription JobUpdated($id: ID!) {\n    jobUpdated(id: $id) {\n      ...JobFields\n    }\n  }\n": types.JobUpdatedDocument,
    "\n  query JobTasks($id: ID!) {\n    job(id: $id) {\n      id\n      tasks {\n        id\n        kind\n        name\n        status\n        statusReason\n        command\n        attemptCount\n        maxAttempts\n        createdAt\n        finishedAt\n        runAfter\n        attempts {\n          id\n          number\n          status\n          workerName\n          leaseExpiresAt\n          exitCode\n          errorClass\n          errorMessage\n          createdAt\n          startedAt\n          finishedAt\n          outputs {\n            path\n            sha256\n            size\n          }\n        }\n      }\n    }\n  }\n": types.JobTasksDocument,
    "\n  query JobPreparation($id: ID!) {\n    job(id: $id) {\n      id\n      preparationRecords {\n        id\n        step\n        kind\n        revision\n        required\n        transformation\n        outcome\n        reason\n        hardware\n        workload\n        accelerator\n        staticChecks\n        numericalCheck\n        timings\n        evidenceSha\n        diff\n        createdAt\n      }\n    }\n  }\n": types.JobPreparationDocument,
    "\n  mutation CancelJob($id: ID!) {\n    cancelJob(id: $id) {\n      __typename\n      ... on Job {\n        id\n        status\n        statusReason\n      }\n      ... on Error {\n        message\n      }\n    }\n  }\n": types.CancelJobDocument,
    "\n  query Jobs($first: Int, $after: String, $last: Int, $before: String, $status: [JobStatus!]) {\n    jobs(first: $first, after: $after, last: $last, before: $before, status: $status) {\n      totalCount\n      pageInfo {\n        hasNextPage\n        hasPreviousPage\n        startCursor\n        endCursor\n      }\n      edges {\n        cursor\n        node {\n          id\n          title\n          status\n          costCad\n          spendingCapCad\n          createdAt\n          updatedAt\n        }\n      }\n    }\n  }\n": types.JobsDocument,
    "\n  mutation CreateJob($input: CreateJobInput!) {\n    createJob(input: $input) {\n      __typename\n      ... on Job {\n        id\n        status\n      }\n      ... on ValidationError {\n        message\n        issues {\n          path\n          message\n        }\n      }\n      ... on NotFoundError {\n        message\n      }\n    }\n  }\n": types.CreateJobDocument,
    "\n  query ApiTokens {\n    me {\n      id\n      apiTokens {\n        id\n        name\n        prefix\n        createdAt\n        lastUsedAt\n      }\n    }\n  }\n": types.ApiTokensDocument,
    "\n  mutation CreateApiToken($input: CreateTokenInput!) {\n    createApiToken(input: $input) {\n      __typename\n      ... on CreatedApiToken {\n        token\n        apiToken {\n          id\n        }\n      }\n      ... on ValidationError {\n        message\n      }\n    }\n  }\n": types.CreateApiTokenDocument,
    "\n  mutation RevokeApiToken($id: ID!) {\n    revokeApiToken(id: $id) {\n      __typename\n      ... on Error {\n        message\n      }\n    }\n  }\n": types.RevokeApiTokenDocument,
    "\n  fragment WorkerFields on Worker {\n    id\n    name\n    status\n    capabilities\n    workloads\n    slots\n    version\n    lastSeenAt\n    createdAt\n    currentAttempts {\n      id\n      number\n      status\n    }\n  }\n": types.WorkerFieldsFragmentDoc,
    "\n  query Workers($first: Int, $after: String) {\n    workers(first: $first, after: $after) {\n      totalCount\n      pageInfo {\n        hasNextPage\n        endCursor\n      }\n      edges {\n        cursor\n        node {\n          ...WorkerFields\n        }\n      }\n    }\n  }\n": types.WorkersDocument,
    "\n  subscription WorkersChanged {\n    workersChanged {\n      ...WorkerFields\n    }\n  }\n": types.WorkersChangedDocument,
    "\n  mutation PauseWorker($id: ID!) {\n    pauseWorker(id: $id) {\n      __typename\n      ... on Worker {\n        id\n        status\n      }\n      ... on NotFoundError {\n        message\n      }\n    }\n  }\n": types.PauseWorkerDocument,
    "\n  mutation ResumeWorker($id: ID!) {\n    resumeWorker(id: $id) {\n      __typename\n      ... on Worker {\n        id\n        status\n      }\n      ... on NotFoundError {\n        message\n      }\n    }\n  }\n": types.ResumeWorkerDocument,
    "\n  query NetworkCapacity {\n    networkCapacity {\n      accelVendor\n      count\n      accelerators\n      maxAccelMemoryMiB\n      maxMemoryMiB\n      workloads\n      torchVersions\n      pythonVersions\n    }\n  }\n": types.NetworkCapacityDocument,
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
export function graphql(source: "\n  query Me {\n    me {\n      id\n      email\n      displayName\n    }\n  }\n"): (typeof documents)["\n  query Me {\n    me {\n      id\n      email\n      displayName\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation AnswerQuestion($input: AnswerQuestionInput!) {\n    answerQuestion(input: $input) {\n      __typename\n      ... on Question {\n        id\n        status\n        answer\n        answeredAt\n      }\n      ... on ValidationError {\n        message\n        issues {\n          message\n        }\n      }\n      ... on Error {\n        message\n      }\n    }\n  }\n"): (typeof documents)["\n  mutation AnswerQuestion($input: AnswerQuestionInput!) {\n    answerQuestion(input: $input) {\n      __typename\n      ... on Question {\n        id\n        status\n        answer\n        answeredAt\n      }\n      ... on ValidationError {\n        message\n        issues {\n          message\n        }\n      }\n      ... on Error {\n        message\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query JobEvents($id: ID!, $after: String, $first: Int) {\n    job(id: $id) {\n      id\n      events(after: $after, first: $first) {\n        id\n        kind\n        payload\n        createdAt\n      }\n    }\n  }\n"): (typeof documents)["\n  query JobEvents($id: ID!, $after: String, $first: Int) {\n    job(id: $id) {\n      id\n      events(after: $after, first: $first) {\n        id\n        kind\n        payload\n        createdAt\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription JobActivity($jobId: ID!, $after: String) {\n    jobEvents(jobId: $jobId, after: $after) {\n      __typename\n      ... on JobEventEnvelope {\n        event {\n          id\n          kind\n          payload\n          createdAt\n        }\n      }\n      ... on LogLinesEvent {\n        attemptId\n        lines {\n          seq\n          stream\n          text\n          ts\n        }\n      }\n      ... on MetricPointsEvent {\n        attemptId\n        points {\n          seq\n          name\n          step\n          value\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  subscription JobActivity($jobId: ID!, $after: String) {\n    jobEvents(jobId: $jobId, after: $after) {\n      __typename\n      ... on JobEventEnvelope {\n        event {\n          id\n          kind\n          payload\n          createdAt\n        }\n      }\n      ... on LogLinesEvent {\n        attemptId\n        lines {\n          seq\n          stream\n          text\n          ts\n        }\n      }\n      ... on MetricPointsEvent {\n        attemptId\n        points {\n          seq\n          name\n          step\n          value\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query AttemptLogPage($attemptId: ID!, $afterSeq: Int, $first: Int) {\n    attempt(id: $attemptId) {\n      id\n      logs(afterSeq: $afterSeq, first: $first) {\n        seq\n        stream\n        text\n        ts\n      }\n    }\n  }\n"): (typeof documents)["\n  query AttemptLogPage($attemptId: ID!, $afterSeq: Int, $first: Int) {\n    attempt(id: $attemptId) {\n      id\n      logs(afterSeq: $afterSeq, first: $first) {\n        seq\n        stream\n        text\n        ts\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query AttemptMetricPage($attemptId: ID!, $afterSeq: Int, $first: Int) {\n    attempt(id: $attemptId) {\n      id\n      metricPoints(afterSeq: $afterSeq, first: $first) {\n        seq\n        name\n        step\n        value\n      }\n    }\n  }\n"): (typeof documents)["\n  query AttemptMetricPage($attemptId: ID!, $afterSeq: Int, $first: Int) {\n    attempt(id: $attemptId) {\n      id\n      metricPoints(afterSeq: $afterSeq, first: $first) {\n        seq\n        name\n        step\n        value\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation CreateWorkerToken($input: CreateTokenInput!) {\n    createWorkerToken(input: $input) {\n      __typename\n      ... on CreatedWorkerToken {\n        token\n        command\n        workerToken {\n          id\n          name\n          prefix\n        }\n      }\n      ... on ValidationError {\n        message\n      }\n    }\n  }\n"): (typeof documents)["\n  mutation CreateWorkerToken($input: CreateTokenInput!) {\n    createWorkerToken(input: $input) {\n      __typename\n      ... on CreatedWorkerToken {\n        token\n        command\n        workerToken {\n          id\n          name\n          prefix\n        }\n      }\n      ... on ValidationError {\n        message\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query WorkerTokens {\n    me {\n      id\n      workerTokens {\n        ...WorkerTokenFields\n      }\n    }\n  }\n"): (typeof documents)["\n  query WorkerTokens {\n    me {\n      id\n      workerTokens {\n        ...WorkerTokenFields\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment WorkerTokenFields on WorkerToken {\n    id\n    name\n    prefix\n    createdAt\n    lastUsedAt\n  }\n"): (typeof documents)["\n  fragment WorkerTokenFields on WorkerToken {\n    id\n    name\n    prefix\n    createdAt\n    lastUsedAt\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation RotateWorkerToken($id: ID!) {\n    rotateWorkerToken(id: $id) {\n      __typename\n      ... on CreatedWorkerToken {\n        command\n        workerToken {\n          ...WorkerTokenFields\n        }\n      }\n      ... on NotFoundError {\n        message\n      }\n    }\n  }\n"): (typeof documents)["\n  mutation RotateWorkerToken($id: ID!) {\n    rotateWorkerToken(id: $id) {\n      __typename\n      ... on CreatedWorkerToken {\n        command\n        workerToken {\n          ...WorkerTokenFields\n        }\n      }\n      ... on NotFoundError {\n        message\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation RevokeWorkerToken($id: ID!) {\n    revokeWorkerToken(id: $id) {\n      __typename\n      ... on NotFoundError {\n        message\n      }\n    }\n  }\n"): (typeof documents)["\n  mutation RevokeWorkerToken($id: ID!) {\n    revokeWorkerToken(id: $id) {\n      __typename\n      ... on NotFoundError {\n        message\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation SignUp($input: SignUpInput!) {\n    signUp(input: $input) {\n      __typename\n      ... on AuthPayload {\n        token\n      }\n      ... on ValidationError {\n        message\n        issues {\n          path\n          message\n        }\n      }\n      ... on ConflictError {\n        message\n      }\n    }\n  }\n"): (typeof documents)["\n  mutation SignUp($input: SignUpInput!) {\n    signUp(input: $input) {\n      __typename\n      ... on AuthPayload {\n        token\n      }\n      ... on ValidationError {\n        message\n        issues {\n          path\n          message\n        }\n      }\n      ... on ConflictError {\n        message\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation LogIn($input: LogInInput!) {\n    logIn(input: $input) {\n      __typename\n      ... on AuthPayload {\n        token\n      }\n      ... on ValidationError {\n        message\n        issues {\n          path\n          message\n        }\n      }\n      ... on AuthenticationError {\n        message\n      }\n    }\n  }\n"): (typeof documents)["\n  mutation LogIn($input: LogInInput!) {\n    logIn(input: $input) {\n      __typename\n      ... on AuthPayload {\n        token\n      }\n      ... on ValidationError {\n        message\n        issues {\n          path\n          message\n        }\n      }\n      ... on AuthenticationError {\n        message\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment JobFields on Job {\n    id\n    title\n    request\n    status\n    statusReason\n    costCad\n    lostCostCad\n    spendingCapCad\n    hardwarePreference\n    createdAt\n    updatedAt\n    startedAt\n    finishedAt\n    currentPlan {\n      id\n      version\n      author\n      summary\n      steps\n      command\n      environment\n      requirements\n      outputs\n      acceptanceCriteria\n      preparation\n      createdAt\n    }\n    questions {\n      id\n      text\n      choices\n      answer\n      status\n      createdAt\n      answeredAt\n    }\n    openQuestions {\n      id\n      text\n      choices\n      status\n      createdAt\n    }\n    outputs {\n      path\n      sha256\n      size\n    }\n    outputsValidated\n    originalCode {\n      id\n      fileCount\n      totalBytes\n      files {\n        path\n        size\n      }\n    }\n    frozenCode {\n      id\n      status\n      origin\n      fileCount\n    }\n  }\n"): (typeof documents)["\n  fragment JobFields on Job {\n    id\n    title\n    request\n    status\n    statusReason\n    costCad\n    lostCostCad\n    spendingCapCad\n    hardwarePreference\n    createdAt\n    updatedAt\n    startedAt\n    finishedAt\n    currentPlan {\n      id\n      version\n      author\n      summary\n      steps\n      command\n      environment\n      requirements\n      outputs\n      acceptanceCriteria\n      preparation\n      createdAt\n    }\n    questions {\n      id\n      text\n      choices\n      answer\n      status\n      createdAt\n      answeredAt\n    }\n    openQuestions {\n      id\n      text\n      choices\n      status\n      createdAt\n    }\n    outputs {\n      path\n      sha256\n      size\n    }\n    outputsValidated\n    originalCode {\n      id\n      fileCount\n      totalBytes\n      files {\n        path\n        size\n      }\n    }\n    frozenCode {\n      id\n      status\n      origin\n      fileCount\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Job($id: ID!) {\n    job(id: $id) {\n      ...JobFields\n    }\n  }\n"): (typeof documents)["\n  query Job($id: ID!) {\n    job(id: $id) {\n      ...JobFields\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription JobUpdated($id: ID!) {\n    jobUpdated(id: $id) {\n      ...JobFields\n    }\n  }\n"): (typeof documents)["\n  subscription JobUpdated($id: ID!) {\n    jobUpdated(id: $id) {\n      ...JobFields\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query JobTasks($id: ID!) {\n    job(id: $id) {\n      id\n      tasks {\n        id\n        kind\n        name\n        status\n        statusReason\n        command\n        attemptCount\n        maxAttempts\n        createdAt\n        finishedAt\n        runAfter\n        attempts {\n          id\n          number\n          status\n          workerName\n          leaseExpiresAt\n          exitCode\n          errorClass\n          errorMessage\n          createdAt\n          startedAt\n          finishedAt\n          outputs {\n            path\n            sha256\n            size\n          }\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  query JobTasks($id: ID!) {\n    job(id: $id) {\n      id\n      tasks {\n        id\n        kind\n        name\n        status\n        statusReason\n        command\n        attemptCount\n        maxAttempts\n        createdAt\n        finishedAt\n        runAfter\n        attempts {\n          id\n          number\n          status\n          workerName\n          leaseExpiresAt\n          exitCode\n          errorClass\n          errorMessage\n          createdAt\n          startedAt\n          finishedAt\n          outputs {\n            path\n            sha256\n            size\n          }\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query JobPreparation($id: ID!) {\n    job(id: $id) {\n      id\n      preparationRecords {\n        id\n        step\n        kind\n        revision\n        required\n        transformation\n        outcome\n        reason\n        hardware\n        workload\n        accelerator\n        staticChecks\n        numericalCheck\n        timings\n        evidenceSha\n        diff\n        createdAt\n      }\n    }\n  }\n"): (typeof documents)["\n  query JobPreparation($id: ID!) {\n    job(id: $id) {\n      id\n      preparationRecords {\n        id\n        step\n        kind\n        revision\n        required\n        transformation\n        outcome\n        reason\n        hardware\n        workload\n        accelerator\n        staticChecks\n        numericalCheck\n        timings\n        evidenceSha\n        diff\n        createdAt\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation CancelJob($id: ID!) {\n    cancelJob(id: $id) {\n      __typename\n      ... on Job {\n        id\n        status\n        statusReason\n      }\n      ... on Error {\n        message\n      }\n    }\n  }\n"): (typeof documents)["\n  mutation CancelJob($id: ID!) {\n    cancelJob(id: $id) {\n      __typename\n      ... on Job {\n        id\n        status\n        statusReason\n      }\n      ... on Error {\n        message\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Jobs($first: Int, $after: String, $last: Int, $before: String, $status: [JobStatus!]) {\n    jobs(first: $first, after: $after, last: $last, before: $before, status: $status) {\n      totalCount\n      pageInfo {\n        hasNextPage\n        hasPreviousPage\n        startCursor\n        endCursor\n      }\n      edges {\n        cursor\n        node {\n          id\n          title\n          status\n          costCad\n          spendingCapCad\n          createdAt\n          updatedAt\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  query Jobs($first: Int, $after: String, $last: Int, $before: String, $status: [JobStatus!]) {\n    jobs(first: $first, after: $after, last: $last, before: $before, status: $status) {\n      totalCount\n      pageInfo {\n        hasNextPage\n        hasPreviousPage\n        startCursor\n        endCursor\n      }\n      edges {\n        cursor\n        node {\n          id\n          title\n          status\n          costCad\n          spendingCapCad\n          createdAt\n          updatedAt\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation CreateJob($input: CreateJobInput!) {\n    createJob(input: $input) {\n      __typename\n      ... on Job {\n        id\n        status\n      }\n      ... on ValidationError {\n        message\n        issues {\n          path\n          message\n        }\n      }\n      ... on NotFoundError {\n        message\n      }\n    }\n  }\n"): (typeof documents)["\n  mutation CreateJob($input: CreateJobInput!) {\n    createJob(input: $input) {\n      __typename\n      ... on Job {\n        id\n        status\n      }\n      ... on ValidationError {\n        message\n        issues {\n          path\n          message\n        }\n      }\n      ... on NotFoundError {\n        message\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ApiTokens {\n    me {\n      id\n      apiTokens {\n        id\n        name\n        prefix\n        createdAt\n        lastUsedAt\n      }\n    }\n  }\n"): (typeof documents)["\n  query ApiTokens {\n    me {\n      id\n      apiTokens {\n        id\n        name\n        prefix\n        createdAt\n        lastUsedAt\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation CreateApiToken($input: CreateTokenInput!) {\n    createApiToken(input: $input) {\n      __typename\n      ... on CreatedApiToken {\n        token\n        apiToken {\n          id\n        }\n      }\n      ... on ValidationError {\n        message\n      }\n    }\n  }\n"): (typeof documents)["\n  mutation CreateApiToken($input: CreateTokenInput!) {\n    createApiToken(input: $input) {\n      __typename\n      ... on CreatedApiToken {\n        token\n        apiToken {\n          id\n        }\n      }\n      ... on ValidationError {\n        message\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation RevokeApiToken($id: ID!) {\n    revokeApiToken(id: $id) {\n      __typename\n      ... on Error {\n        message\n      }\n    }\n  }\n"): (typeof documents)["\n  mutation RevokeApiToken($id: ID!) {\n    revokeApiToken(id: $id) {\n      __typename\n      ... on Error {\n        message\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment WorkerFields on Worker {\n    id\n    name\n    status\n    capabilities\n    workloads\n    slots\n    version\n    lastSeenAt\n    createdAt\n    currentAttempts {\n      id\n      number\n      status\n    }\n  }\n"): (typeof documents)["\n  fragment WorkerFields on Worker {\n    id\n    name\n    status\n    capabilities\n    workloads\n    slots\n    version\n    lastSeenAt\n    createdAt\n    currentAttempts {\n      id\n      number\n      status\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Workers($first: Int, $after: String) {\n    workers(first: $first, after: $after) {\n      totalCount\n      pageInfo {\n        hasNextPage\n        endCursor\n      }\n      edges {\n        cursor\n        node {\n          ...WorkerFields\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  query Workers($first: Int, $after: String) {\n    workers(first: $first, after: $after) {\n      totalCount\n      pageInfo {\n        hasNextPage\n        endCursor\n      }\n      edges {\n        cursor\n        node {\n          ...WorkerFields\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription WorkersChanged {\n    workersChanged {\n      ...WorkerFields\n    }\n  }\n"): (typeof documents)["\n  subscription WorkersChanged {\n    workersChanged {\n      ...WorkerFields\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation PauseWorker($id: ID!) {\n    pauseWorker(id: $id) {\n      __typename\n      ... on Worker {\n        id\n        status\n      }\n      ... on NotFoundError {\n        message\n      }\n    }\n  }\n"): (typeof documents)["\n  mutation PauseWorker($id: ID!) {\n    pauseWorker(id: $id) {\n      __typename\n      ... on Worker {\n        id\n        status\n      }\n      ... on NotFoundError {\n        message\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ResumeWorker($id: ID!) {\n    resumeWorker(id: $id) {\n      __typename\n      ... on Worker {\n        id\n        status\n      }\n      ... on NotFoundError {\n        message\n      }\n    }\n  }\n"): (typeof documents)["\n  mutation ResumeWorker($id: ID!) {\n    resumeWorker(id: $id) {\n      __typename\n      ... on Worker {\n        id\n        status\n      }\n      ... on NotFoundError {\n        message\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query NetworkCapacity {\n    networkCapacity {\n      accelVendor\n      count\n      accelerators\n      maxAccelMemoryMiB\n      maxMemoryMiB\n      workloads\n      torchVersions\n      pythonVersions\n    }\n  }\n"): (typeof documents)["\n  query NetworkCapacity {\n    networkCapacity {\n      accelVendor\n      count\n      accelerators\n      maxAccelMemoryMiB\n      maxMemoryMiB\n      workloads\n      torchVersions\n      pythonVersions\n    }\n  }\n"];

export function graphql(source: string) {
  return (documents as any)[source] ?? {};
}

export type DocumentType<TDocumentNode extends DocumentNode<any, any>> = TDocumentNode extends DocumentNode<  infer TType,  any>  ? TType  : never;
import { useMutation, useQuery, useSubscription } from '@apollo/client/react';
import { lazy, Suspense, useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { graphql } from '../gql';
import { formatBytes, formatCad, formatDuration, formatTime } from '../lib/format';
import { Link } from '../lib/router';
import { AgentActivity } from '../features/jobs/AgentActivity';
import { CostMeter } from '../features/jobs/CostMeter';
import { Outputs } from '../features/jobs/Outputs';
import { AsksView } from '../features/jobs/AsksView';
import { PlanView } from '../features/jobs/PlanView';
import { PreparationView } from '../features/jobs/PreparationView';
import { QuestionForm } from '../features/jobs/QuestionForm';
import { RunProgress } from '../features/jobs/RunProgress';
import { ServicePanel } from '../features/jobs/ServicePanel';
import { ShardGroupView, type ShardGroupData } from '../features/jobs/ShardGroup';
import { defaultAttempt, TasksView, type TaskData } from '../features/jobs/TasksView';
import { EventTimeline, StageBar } from '../features/jobs/Timeline';
import { useJobActivity, type JobEventItem } from '../features/jobs/useJobActivity';
import { FileTree } from '../features/files/FileTree';
import { SimulatedBadge } from '../features/ui/SimulatedBadge';
import { StatusBadge } from '../features/ui/StatusBadge';
import { ErrorState, Loading } from '../features/ui/States';
import { metricSourcesOf } from '../features/metrics/chartModel';

// The optional parts load on demand.
const LogViewer = lazy(() => import('../features/logs/LogViewer'));
const MetricCharts = lazy(() => import('../features/metrics/MetricCharts'));

const JobFields = graphql(`
  fragment JobFields on Job {
    id
    title
    request
    status
    statusReason
    costCad
    lostCostCad
    replicationCostCad
    agentCostCad
    spendingCapCad
    estimate {
      basis
      durationSec
      lowSec
      highSec
      costCad
      lowCad
      highCad
      peakMemoryMiB
      actualSec
      ratio
      unit
      boundedUnits
      fullUnits
    }
    hardwarePreference
    createdAt
    updatedAt
    startedAt
    finishedAt
    currentPlan {
      id
      version
      author
      summary
      steps
      command
      environment
      requirements
      outputs
      acceptanceCriteria
      preparation
      pipeline
      smokeRun
      createdAt
    }
    askOutcomes {
      ask
      kind
      outcome
      detail
      line
    }
    questions {
      id
      text
      choices
      answer
      status
      createdAt
      answeredAt
    }
    openQuestions {
      id
      text
      choices
      status
      createdAt
    }
    outputs {
      path
      sha256
      size
    }
    validation {
      badge
      label
      reason
    }
    originalCode {
      id
      fileCount
      totalBytes
      files {
        path
        size
      }
    }
    frozenCode {
      id
      status
      origin
      fileCount
    }
  }
`);
void JobFields;

const JobQuery = graphql(`
  query Job($id: ID!) {
    job(id: $id) {
      ...JobFields
    }
  }
`);

const JobUpdated = graphql(`
  subscription JobUpdated($id: ID!) {
    jobUpdated(id: $id) {
      ...JobFields
    }
  }
`);

const JobTasksQuery = graphql(`
  query JobTasks($id: ID!) {
    job(id: $id) {
      id
      tasks {
        id
        kind
        role
        name
        status
        statusReason
        command
        attemptCount
        maxAttempts
        createdAt
        finishedAt
        runAfter
        attempts {
          id
          number
          status
          workerName
          simulatedAccelerator
          sandbox
          leaseExpiresAt
          exitCode
          errorClass
          errorMessage
          createdAt
          startedAt
          finishedAt
          outputs {
            path
            sha256
            size
          }
        }
      }
      shardGroup {
        phase
        unit
        totalUnits
        total
        done
        running
        queued
        failed
        retried
        costCad
        checkCostCad
        lostCostCad
        mergeFile
        mergeRules
        merged
        check {
          id
          outcome
          reason
        }
        shards {
          index
          name
          size
          seed
          range
          command
          status
          attemptCount
          costCad
          task {
            id
          }
        }
      }
    }
  }
`);

const JobPreparationQuery = graphql(`
  query JobPreparation($id: ID!) {
    job(id: $id) {
      id
      preparationRecords {
        id
        step
        kind
        revision
        required
        transformation
        outcome
        reason
        hardware
        workload
        accelerator
        simulatedAccelerator
        staticChecks
        numericalCheck
        timings
        evidenceSha
        diff
        createdAt
      }
    }
  }
`);

const CancelJob = graphql(`
  mutation CancelJob($id: ID!) {
    cancelJob(id: $id) {
      __typename
      ... on Job {
        id
        status
        statusReason
      }
      ... on Error {
        message
      }
    }
  }
`);

const TERMINAL = new Set(['SUCCEEDED', 'FAILED', 'CANCELLED', 'STOPPED']);

export default function JobPage({ id }: { id: string }) {
  const job = useQuery(JobQuery, { variables: { id } });
  const tasks = useQuery(JobTasksQuery, { variables: { id } });
  const preparation = useQuery(JobPreparationQuery, { variables: { id } });
  useSubscription(JobUpdated, { variables: { id }, skip: !job.data?.job });
  const [cancel, cancelState] = useMutation(CancelJob);
  const [cancelError, setCancelError] = useState<string | null>(null);

  // Refetch what events say changed, at most every 300 ms however many arrive.
  const pending = useRef({ job: false, tasks: false, prep: false, timer: undefined as ReturnType<typeof setTimeout> | undefined });
  const schedule = useCallback(
    (what: { job?: boolean; tasks?: boolean; prep?: boolean }) => {
      const p = pending.current;
      p.job ||= !!what.job;
      p.tasks ||= !!what.tasks;
      p.prep ||= !!what.prep;
      if (p.timer) return;
      p.timer = setTimeout(() => {
        const { job: j, tasks: t, prep } = p;
        p.job = p.tasks = p.prep = false;
        p.timer = undefined;
        if (j) void job.refetch().catch(() => {});
        if (t) void tasks.refetch().catch(() => {});
        if (prep) void preparation.refetch().catch(() => {});
      }, 300);
    },
    [job, tasks, preparation],
  );
  useEffect(() => () => clearTimeout(pending.current.timer), []);

  const onEvent = useCallback(
    (e: JobEventItem) => {
      if (e.kind.startsWith('task.') || e.kind.startsWith('attempt.')) schedule({ tasks: true, job: true });
      // The shard group (in the tasks query) shows the adaptation check's record and the merge.
      else if (e.kind === 'preparation.record') schedule({ prep: true, job: true, tasks: true });
      else if (e.kind === 'shards.merged') schedule({ tasks: true, job: true });
      else if (e.kind.startsWith('question.') || e.kind.startsWith('plan.') || e.kind === 'job.status' || e.kind === 'validation')
        schedule({ job: true });
    },
    [schedule],
  );
  const onResync = useCallback(() => schedule({ job: true, tasks: true, prep: true }), [schedule]);
  const activity = useJobActivity(id, onEvent, onResync);

  const taskList = useMemo(() => (tasks.data?.job?.tasks ?? []) as TaskData[], [tasks.data]);
  const [picked, setPicked] = useState<string | null>(null);
  const auto = useMemo(() => defaultAttempt(taskList), [taskList]);
  const attemptId = picked ?? auto;
  const attempt = taskList.flatMap((t) => t.attempts.map((a) => ({ ...a, task: t.name }))).find((a) => a.id === attemptId);
  const shardGroup: ShardGroupData | null = tasks.data?.job?.shardGroup ?? null;
  // The shards' cost grows while they run: each cost change the job subscription brings refreshes the group.
  const liveCost = job.data?.job?.costCad;
  const sharded = shardGroup !== null;
  const scheduleRef = useRef(schedule);
  scheduleRef.current = schedule;
  useEffect(() => {
    if (sharded) scheduleRef.current({ tasks: true });
  }, [liveCost, sharded]);
  // Every attempt's metrics (smoke run, run, shards, evaluation), not only the one whose logs are shown.
  const sourceKey = metricSourcesOf(taskList)
    .map((m) => `${m.attemptId}=${m.label}`)
    .join('|');
  const metricStoreOf = activity.metricStore;
  const metricSources = useMemo(
    () => metricSourcesOf(taskList).map((m) => ({ ...m, store: metricStoreOf(m.attemptId) })),
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [sourceKey, metricStoreOf],
  );
  // The full run while it runs (the last attempt of the RUN task that is live), and the smoke run it is measured against.
  const liveRun = taskList
    .filter((t) => t.kind === 'RUN')
    .flatMap((t) => t.attempts)
    .filter((a) => a.status === 'RUNNING' || a.status === 'LEASED')
    .pop();
  const smokeAttempt = metricSources.filter((m) => m.role === 'smoke').pop();
  const logsRef = useRef<HTMLElement>(null);
  const showShardLogs = useCallback((attemptId: string) => {
    setPicked(attemptId);
    logsRef.current?.scrollIntoView({ block: 'start' });
  }, []);

  if (job.loading && !job.data) return <Loading label="Loading the job…" />;
  if (job.error && !job.data) return <ErrorState error={job.error} retry={() => void job.refetch()} />;
  const j = job.data?.job;
  if (!j) {
    return (
      <div className="state">
        <h1>Job not found</h1>
        <p>
          It does not exist or is not yours. <Link to="/jobs">Back to your jobs</Link>
        </p>
      </div>
    );
  }

  const openQuestions = j.openQuestions;
  const answered = j.questions.filter((q) => q.status !== 'OPEN');
  const doCancel = async () => {
    if (!confirm('Cancel this job? Running attempts are stopped.')) return;
    setCancelError(null);
    try {
      const r = (await cancel({ variables: { id: j.id } })).data?.cancelJob;
      if (r && r.__typename !== 'Job') setCancelError(r.message);
    } catch (err) {
      setCancelError((err as Error).message);
    }
  };

  return (
    <>
      <div className="spread">
        <div>
          <h1>
            {j.title} <StatusBadge status={j.status} />
          </h1>
          <p className="muted small">
            Submitted {formatTime(j.createdAt)}
            {j.startedAt && ` · started ${formatTime(j.startedAt)}`}
            {j.finishedAt && ` · finished ${formatTime(j.finishedAt)}`}
            {j.startedAt && j.finishedAt && ` · took ${formatDuration(new Date(j.finishedAt).getTime() - new Date(j.startedAt).getTime())}`}
            {j.hardwarePreference && ` · prefers ${j.hardwarePreference}`}
          </p>
        </div>
        {!TERMINAL.has(j.status) && (
          <button type="button" className="danger" onClick={() => void doCancel()} disabled={cancelState.loading}>
            {cancelState.loading ? 'Cancelling…' : 'Cancel job'}
          </button>
        )}
      </div>
      {cancelError && (
        <p className="error-text" role="alert">
          {cancelError}
        </p>
      )}
      <section className="panel" aria-label="Status">
        <StageBar status={j.status} events={activity.events} createdAt={j.createdAt} />
        {liveRun && (
          <RunProgress
            startedAt={liveRun.startedAt ?? liveRun.createdAt}
            runStore={metricSources.find((m) => m.attemptId === liveRun.id)?.store ?? null}
            smokeStore={smokeAttempt?.store ?? null}
            estimate={j.estimate ?? null}
            costCad={j.costCad}
          />
        )}
        {j.statusReason && (
          <p style={{ marginBottom: 0 }} data-testid="status-reason">
            {j.statusReason}
          </p>
        )}
      </section>

      <section className="panel" aria-label="Request">
        <h2>Request</h2>
        <p style={{ whiteSpace: 'pre-wrap', marginTop: 0 }}>{j.request}</p>
        <AsksView asks={j.askOutcomes} />
        {answered.length > 0 && (
          <>
            <h3>Questions answered</h3>
            <dl className="kv">
              {answered.map((q) => (
                <div key={q.id} style={{ display: 'contents' }}>
                  <dt>{q.text}</dt>
                  <dd>{q.answer ?? <span className="muted">{q.status.toLowerCase()}</span>}</dd>
                </div>
              ))}
            </dl>
          </>
        )}
      </section>

      <ServicePanel jobId={j.id} jobStatus={j.status} />

      {openQuestions.map((q) => (
        <QuestionForm key={q.id} question={q} onAnswered={() => schedule({ job: true })} />
      ))}

      {j.currentPlan?.preparation != null && (
        <section className="panel" aria-label="Preparation">
          <h2>Preparation</h2>
          <PreparationView spec={j.currentPlan.preparation} records={preparation.data?.job?.preparationRecords ?? []} status={j.status} />
        </section>
      )}

      {shardGroup && (
        <section className="panel" aria-label="Shards">
          <h2>Shards</h2>
          <ShardGroupView group={shardGroup} tasks={taskList} selected={attemptId} onSelect={showShardLogs} />
        </section>
      )}

      <section className="panel" aria-label="Metrics">
        <h2>Metrics</h2>
        {metricSources.length > 0 ? (
          <Suspense fallback={<Loading lines={2} label="Loading charts…" />}>
            <MetricCharts sources={metricSources} />
          </Suspense>
        ) : (
          <p className="muted">Metrics appear here once a run reports them.</p>
        )}
      </section>

      <div className="grid2">
        <div>
          <section className="panel">
            <h2>Tasks and attempts</h2>
            {tasks.loading && !tasks.data ? (
              <Loading lines={2} />
            ) : tasks.error && !tasks.data ? (
              <ErrorState error={tasks.error} retry={() => void tasks.refetch()} />
            ) : (
              <TasksView
                tasks={shardGroup ? taskList.filter((t) => t.kind !== 'SHARD') : taskList}
                selected={attemptId}
                onSelect={setPicked}
              />
            )}
          </section>
          <section className="panel" ref={logsRef}>
            <div className="spread">
              <h2>Logs</h2>
              {attempt && (
                <span className="muted small" data-testid="log-attempt">
                  {attempt.task} · attempt #{attempt.number} on {attempt.workerName}{' '}
                  <SimulatedBadge accelerator={attempt.simulatedAccelerator} /> · <StatusBadge status={attempt.status} />
                </span>
              )}
            </div>
            {attemptId ? (
              <Suspense fallback={<Loading lines={4} label="Loading the log viewer…" />}>
                <LogViewer key={attemptId} store={activity.logStore(attemptId)} label={`Log of attempt ${attempt?.number ?? ''}`} />
              </Suspense>
            ) : (
              <p className="muted">Logs appear here once an attempt starts.</p>
            )}
          </section>
          <section className="panel">
            <h2>Agent activity</h2>
            <AgentActivity events={activity.events} />
          </section>
        </div>
        <div>
          <section className="panel">
            <h2>Cost</h2>
            <CostMeter cost={j.costCad} cap={j.spendingCapCad} />
            {j.replicationCostCad > 0 && (
              <p className="muted small" data-testid="replication-cost" style={{ marginBottom: 0 }}>
                {formatCad(j.replicationCostCad)} of it re-ran sampled results on other owners' workers to check them (in the cost and the
                cap).
              </p>
            )}
            {j.agentCostCad > 0 && (
              <p className="muted small" data-testid="agent-cost" style={{ marginBottom: 0 }}>
                {formatCad(j.agentCostCad)} of it paid for the agents' model calls (planning and supervision; in the cost and the cap).
              </p>
            )}
            {j.lostCostCad > 0 && (
              <p className="muted small" data-testid="lost-cost" style={{ marginBottom: 0 }}>
                {formatCad(j.lostCostCad)} of work lost through no fault of yours (a worker stopped responding or failed), not charged.
              </p>
            )}
            {j.estimate && (
              <div data-testid="estimate" className="small" style={{ marginTop: 8 }}>
                <div>
                  <strong>Estimate of the full run:</strong> about {formatDuration(j.estimate.durationSec * 1000)} (
                  {formatDuration(j.estimate.lowSec * 1000)}–{formatDuration(j.estimate.highSec * 1000)}), {formatCad(j.estimate.costCad)} (
                  {formatCad(j.estimate.lowCad)}–{formatCad(j.estimate.highCad)})
                </div>
                {j.estimate.actualSec != null && (
                  <div data-testid="estimate-actual">
                    It took {formatDuration(j.estimate.actualSec * 1000)}
                    {j.estimate.ratio != null ? ` (${j.estimate.ratio}× the estimate)` : ''}.
                  </div>
                )}
                <div className="muted">{j.estimate.basis}</div>
              </div>
            )}
          </section>
          <section className="panel">
            <h2>Outputs</h2>
            <Outputs jobId={j.id} outputs={j.outputs} status={j.status} validation={j.validation} />
          </section>
          <section className="panel">
            <h2>Plan</h2>
            <PlanView plan={j.currentPlan} />
          </section>
          {j.originalCode && (
            <section className="panel">
              <h2>Files</h2>
              <p className="muted small">
                {j.originalCode.fileCount} files, {formatBytes(Number(j.originalCode.totalBytes))}
                {j.frozenCode && ` · frozen code: ${j.frozenCode.origin} (${j.frozenCode.status.toLowerCase()})`}
              </p>
              <FileTree files={j.originalCode.files} label="Uploaded files" />
            </section>
          )}
          <section className="panel">
            <h2>Timeline</h2>
            <EventTimeline events={activity.events} loading={activity.status.loading} error={activity.status.error} />
          </section>
        </div>
      </div>
    </>
  );
}

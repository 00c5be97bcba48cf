/**
 * Following a job live through the public API: the `jobEvents` subscription (status,
 * plan, agent steps, tasks and attempts, log lines, metric points) and `jobUpdated`
 * (the job's state, open questions). Used by `submit --wait` and `watch` (everything,
 * answers questions at the prompt; see followToEnd.ts) and `logs -f` (log lines only).
 *
 * Robustness: a dropped connection, an API restart or a database outage (UNAVAILABLE) is
 * a reconnect with backoff, not an end; log lines carry per-attempt seqs (0, 1, 2, …) — a
 * gap or a reconnect is filled from the `logs` query; events resume `after` the last seen
 * id (the job event's id is the cursor); a slow poll of
 * the job's state backs up the subscriptions; at the end, stored events and logs are
 * drained so nothing that happened before the terminal status is missed.
 */
import type { Client } from 'graphql-ws';
import { ApiError, type ApiClient, CliError, networkReason, unreachable, unwrap } from './apiClient.js';
import { compactJson, metricValue, oneLine, shortArgs, shortResult, TERMINAL_STATUSES } from './format.js';
import { metricLineText, progressLine, totalStepsOf } from './progress.js';
import type { Prompter } from './prompt.js';

export interface Printer {
  line(text: string): void;
}

export function printerFor(stream: NodeJS.WritableStream): Printer {
  return { line: (t) => void stream.write(t + '\n') };
}

/** A printer that can hold lines back (while a question is being asked) and let them out later. */
class HoldablePrinter implements Printer {
  private held: string[] | null = null;
  constructor(private readonly inner: Printer) {}
  line(text: string) {
    if (this.held) this.held.push(text);
    else this.inner.line(text);
  }
  /** Prints now, even while holding. */
  direct(text: string) {
    this.inner.line(text);
  }
  hold() {
    this.held ??= [];
  }
  release() {
    const lines = this.held ?? [];
    this.held = null;
    for (const l of lines) this.inner.line(l);
  }
}

export const JOB_STATE = /* GraphQL */ `
  fragment CliJobState on Job {
    id
    title
    status
    statusReason
    costCad
    openQuestions {
      id
      text
      choices
      status
    }
    estimate {
      durationSec
      unit
      boundedUnits
      fullUnits
    }
  }
`;

const JOB_UPDATED = /* GraphQL */ `
  subscription CliJobUpdated($id: ID!) {
    jobUpdated(id: $id) {
      ...CliJobState
    }
  }
  ${JOB_STATE}
`;

const JOB_STATE_QUERY = /* GraphQL */ `
  query CliJobState($id: ID!) {
    job(id: $id) {
      ...CliJobState
    }
  }
  ${JOB_STATE}
`;

const JOB_EVENTS = /* GraphQL */ `
  subscription CliJobEvents($jobId: ID!, $after: String) {
    jobEvents(jobId: $jobId, after: $after) {
      __typename
      ... on JobEventEnvelope {
        event {
          id
          kind
          payload
          createdAt
        }
      }
      ... on LogLinesEvent {
        attemptId
        lines {
          seq
          stream
          text
        }
      }
      ... on MetricPointsEvent {
        attemptId
        points {
          seq
          name
          step
          value
        }
      }
    }
  }
`;

const STORED_EVENTS = /* GraphQL */ `
  query CliStoredEvents($id: ID!, $after: String, $first: Int) {
    job(id: $id) {
      id
      events(after: $after, first: $first) {
        id
        kind
        payload
        createdAt
      }
    }
  }
`;

const TASKS = /* GraphQL */ `
  query CliTasks($id: ID!) {
    job(id: $id) {
      id
      tasks {
        id
        name
        kind
        role
        status
        attempts {
          id
          number
          status
          workerName
          startedAt
        }
      }
    }
  }
`;

// One attempt's logs by its id: large pages (the nested job → tasks → attempts path would
// multiply the query cost by every list on the way).
const LOG_PAGE = /* GraphQL */ `
  query CliLogPage($id: ID!, $afterSeq: Int, $first: Int) {
    attempt(id: $id) {
      id
      logs(afterSeq: $afterSeq, first: $first) {
        seq
        stream
        text
      }
    }
  }
`;

// The smoke run's points, for its last step (a smoke run is bounded: a few thousand points at most).
const JOB_ESTIMATE_TEXT = /* GraphQL */ `
  query CliJobEstimateText($id: ID!) {
    job(id: $id) {
      id
      estimateText
    }
  }
`;

const SMOKE_POINTS = /* GraphQL */ `
  query CliSmokePoints($id: ID!) {
    attempt(id: $id) {
      id
      metricPoints(first: 5000) {
        step
      }
    }
  }
`;

const PLAN = /* GraphQL */ `
  query CliPlan($id: ID!) {
    job(id: $id) {
      id
      acceptanceCriteria
      plans {
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
        asks {
          ask
          kind
          status
          detail
        }
        settings
      }
    }
  }
`;

const ANSWER = /* GraphQL */ `
  mutation CliAnswer($input: AnswerQuestionInput!) {
    answerQuestion(input: $input) {
      __typename
      ... on Question {
        id
        status
        answer
      }
      ... on Error {
        message
      }
    }
  }
`;

/** The job's state and open questions; null when it does not exist or is not yours. */
const SERVICE_URLS = /* GraphQL */ `
  query CliServiceUrls($id: ID!) {
    job(id: $id) {
      service {
        url
        apiUrl
        tokenRotatedAt
        stoppedAt
      }
    }
  }
`;

export async function fetchJobState(client: ApiClient, jobId: string): Promise<JobState | null> {
  return (await client.gql<{ job: JobState | null }>(JOB_STATE_QUERY, { id: jobId })).job;
}

export type AnswerResult = { __typename: string; message?: string; answer?: string | null };

/** Sends an answer; the result is the Question, or ConflictError / NotFoundError / ValidationError. */
export async function sendAnswer(client: ApiClient, questionId: string, answer: string): Promise<AnswerResult> {
  // Safe to send again after an outage: a repeat is refused as already answered (ConflictError).
  return (await client.gql<{ answerQuestion: AnswerResult }>(ANSWER, { input: { questionId, answer } }, { idempotent: true }))
    .answerQuestion;
}

/** The exit code of `submit --wait` / `watch` that stopped because a question cannot be answered here (no terminal, stdin at its end). */
export const NEEDS_ANSWER_EXIT = 3;

/** How to answer a question from another terminal. */
export function answerHint(jobId: string, q: { choices: string[] }): string {
  return q.choices.length ? `chatgpu answer ${jobId} --choice N` : `chatgpu answer ${jobId} "your answer"`;
}

/** A question as the prompt shows it: its text, then its choices numbered from 1. */
export function questionLines(q: { text: string; choices: string[] }): string[] {
  return [`? ${q.text}`, ...q.choices.map((c, i) => `    ${i + 1}) ${c}`)];
}

export interface JobState {
  id: string;
  title: string;
  status: string;
  statusReason: string | null;
  costCad: number | string;
  openQuestions: Question[];
  /** The full run's estimate (progress lines count against it). */
  estimate?: { durationSec: number; unit: string | null; boundedUnits: number | null; fullUnits: number | null } | null;
}

export interface Question {
  id: string;
  text: string;
  choices: string[];
  status?: string;
}

interface StoredEvent {
  id: string;
  kind: string;
  payload: any;
  createdAt?: string;
}

interface LogLine {
  seq: number;
  stream: string;
  text: string;
}

interface AttemptInfo {
  taskId?: string;
  taskName?: string;
  kind?: string;
  role?: string;
  number?: number;
  worker?: string;
  startedAt?: string | null;
}

type Activity =
  | { __typename: 'JobEventEnvelope'; event: StoredEvent }
  | { __typename: 'LogLinesEvent'; attemptId: string; lines: LogLine[] }
  | { __typename: 'MetricPointsEvent'; attemptId: string; points: { seq: number; name: string; step: number | null; value: number }[] };

// ───────────────────────────── log pages ─────────────────────────────

/**
 * Reads an attempt's log lines after `afterSeq`, page by page through `attempt(id)`;
 * a page size the server finds too costly (a stricter GRAPHQL_MAX_COST) is halved.
 */
export class LogReader {
  private pageSize = 5000;

  constructor(
    private readonly client: ApiClient,
    private readonly jobId: string,
  ) {}

  async *lines(attemptId: string, afterSeq: number): AsyncGenerator<LogLine> {
    let after = afterSeq;
    for (;;) {
      let page: LogLine[];
      try {
        const data = await this.client.gql<{ attempt: { id: string; logs: LogLine[] } | null }>(LOG_PAGE, {
          id: attemptId,
          afterSeq: after,
          first: this.pageSize,
        });
        page = data.attempt?.logs ?? [];
      } catch (err) {
        if (err instanceof ApiError && err.code === 'QUERY_TOO_COSTLY' && this.pageSize > 1) {
          this.pageSize = Math.max(1, Math.floor(this.pageSize / 2));
          continue;
        }
        throw err;
      }
      for (const l of page) {
        after = l.seq;
        yield l;
      }
      if (page.length < this.pageSize) return;
    }
  }
}

export interface TaskRow {
  id: string;
  name: string;
  kind: string;
  role: string;
  status: string;
  attempts: { id: string; number: number; status: string; workerName: string; startedAt?: string | null }[];
}

export async function fetchTasks(client: ApiClient, jobId: string): Promise<TaskRow[]> {
  const data = await client.gql<{ job: { tasks: TaskRow[] } | null }>(TASKS, { id: jobId });
  if (!data.job) throw new CliError(`No job ${jobId} (or it is not yours).`);
  return data.job.tasks;
}

export function formatLogLine(l: LogLine, prefix = ''): string {
  const text = l.text.replace(/\r?\n$/, '');
  if (l.stream === 'stderr') return `${prefix}[stderr] ${text}`;
  // A metric line (the charts' source) reads as a compact progress line, not JSON.
  const metric = metricLineText(text);
  if (metric) return `${prefix}${metric}`;
  if (l.stream === 'system') return `${prefix}[system] ${text}`;
  return `${prefix}${text}`;
}

export function attemptHeader(info: AttemptInfo): string {
  const what = info.taskName ? `${info.taskName}${info.kind ? ` (${info.kind})` : ''}` : 'task';
  return `── ${what} · attempt ${info.number ?? '?'}${info.worker ? ` on ${info.worker}` : ''} ──`;
}

// ───────────────────────────── the follower ─────────────────────────────

export interface FollowOptions {
  client: ApiClient;
  jobId: string;
  out: Printer;
  /** Print status, plan, agent steps, tasks, attempts and metrics (submit --wait). */
  events: boolean;
  /** Ask open questions at the prompt and send the answers. */
  prompter?: Prompter | undefined;
  /** Replay stored events after this id first ('0': all of them; null: live only). */
  after: string | null;
  /** Log lines: 'wait' = indented, 'raw' = as `chatgpu logs` prints them. */
  logStyle: 'wait' | 'raw';
  /** Attempts whose lines were already printed (attemptId → last seq). */
  printed?: Map<string, number>;
  /** The attempt whose header was printed last (so it is not repeated). */
  lastAttempt?: string | null;
  /** Shown when a question cannot be answered here. */
  dashboardUrl?: string;
  /** Called with each status the job moves to, in order (followToEnd: downloads start at VALIDATING). */
  onStatus?: (status: string) => void;
}

export interface FollowResult {
  state: JobState;
  interrupted: boolean;
  /** Payloads of `validation` events seen (for job.json). */
  validation: unknown[];
}

export class JobFollower {
  private readonly client: ApiClient;
  private readonly out: HoldablePrinter;
  private lastEventId: string | null;
  /** Event ids already shown: events may be emitted out of id order, so a high-water mark alone could skip some. */
  private readonly seenEvents = new Set<string>();
  /** Where the next stored-events query starts. */
  private queryAfter: string | null;
  private lastStatus: string | null = null;
  private state: JobState | null = null;
  private readonly lastSeq: Map<string, number>;
  private readonly attempts = new Map<string, AttemptInfo>();
  private readonly taskNames = new Map<string, { name: string; kind?: string }>();
  private lastPrintedAttempt: string | null = null;
  private readonly plansShown = new Set<string>();
  private readonly callNames = new Map<string, string>();
  private readonly questionsSeen = new Set<string>();
  private readonly questionsDone = new Set<string>();
  /** Questions this command is answering (so their question.answered event is not "elsewhere"). */
  private readonly questionsMine = new Set<string>();
  private readonly questionQueue: Question[] = [];
  private questionBusy = false;
  private promptAbort: { id: string; ctl: AbortController } | null = null;
  private chain: Promise<void> = Promise.resolve();
  private ws: Client | null = null;
  private unsubs: (() => void)[] = [];
  private finishing = false;
  private settled = false;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private reconnectFailures = 0;
  private pollTimer: NodeJS.Timeout | null = null;
  private readonly logs: LogReader;
  private readonly validation: unknown[] = [];
  private resolve!: (r: FollowResult) => void;
  private reject!: (e: unknown) => void;

  constructor(private readonly opts: FollowOptions) {
    this.client = opts.client;
    this.out = new HoldablePrinter(opts.out);
    this.lastEventId = opts.after;
    this.queryAfter = opts.after;
    this.lastSeq = opts.printed ?? new Map();
    this.lastPrintedAttempt = opts.lastAttempt ?? null;
    this.logs = new LogReader(opts.client, opts.jobId);
  }

  run(): Promise<FollowResult> {
    const done = new Promise<FollowResult>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    const onSigint = () => this.stop(true);
    process.once('SIGINT', onSigint);
    this.connect();
    this.pollTimer = setInterval(() => this.enqueue(() => this.poll()), 15_000);
    return done.finally(() => {
      process.off('SIGINT', onSigint);
      this.cleanup();
      this.out.release();
    });
  }

  private cleanup() {
    if (this.pollTimer) clearInterval(this.pollTimer);
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.promptAbort?.ctl.abort();
    for (const u of this.unsubs) u();
    this.unsubs = [];
    void this.ws?.dispose();
    this.ws = null;
  }

  /** Runs `fn` after everything queued before it; a failure ends the follow. */
  private enqueue(fn: () => Promise<void> | void): void {
    this.chain = this.chain.then(fn).catch((err) => this.fail(err));
  }

  private fail(err: unknown) {
    if (this.settled) return;
    this.settled = true;
    this.reject(err);
  }

  private stop(interrupted: boolean) {
    if (this.settled) return;
    if (interrupted) {
      this.settled = true;
      this.resolve({ state: this.state ?? this.placeholderState(), interrupted: true, validation: this.validation });
    }
  }

  private placeholderState(): JobState {
    return { id: this.opts.jobId, title: '', status: this.lastStatus ?? 'UNKNOWN', statusReason: null, costCad: 0, openQuestions: [] };
  }

  private connect() {
    if (this.settled || this.finishing) return;
    let opened = false;
    const ws = this.client.wsClient();
    ws.on('connected', () => {
      opened = true;
    });
    this.ws = ws;
    const onError = (err: unknown) => {
      if (this.settled || this.finishing || this.ws !== ws) return;
      // A database outage (UNAVAILABLE) passes like a dropped connection: resubscribe after
      // the last event seen. Any other GraphQL error (a revoked token, a job not yours) ends it.
      if (err instanceof ApiError && err.code !== 'UNAVAILABLE') return this.fail(err);
      // An outage answered over an open socket still backs off (and is said once).
      this.scheduleReconnect(opened && !(err instanceof ApiError), err);
    };
    const onComplete = () => {
      if (this.settled || this.finishing || this.ws !== ws) return;
      this.scheduleReconnect(opened, new Error('the subscription ended'));
    };
    this.unsubs.push(
      this.client.subscribe<{ jobEvents: Activity }>(
        ws,
        JOB_EVENTS,
        { jobId: this.opts.jobId, after: this.lastEventId },
        {
          next: (d) => this.enqueue(() => this.onActivity(d.jobEvents)),
          error: onError,
          complete: onComplete,
        },
      ),
      this.client.subscribe<{ jobUpdated: JobState }>(
        ws,
        JOB_UPDATED,
        { id: this.opts.jobId },
        {
          next: (d) => {
            this.reconnectFailures = 0;
            this.enqueue(() => this.onState(d.jobUpdated));
          },
          error: onError,
          complete: onComplete,
        },
      ),
    );
  }

  private scheduleReconnect(wasOpen: boolean, err: unknown) {
    if (this.reconnectTimer) return;
    for (const u of this.unsubs) u();
    this.unsubs = [];
    void this.ws?.dispose();
    this.ws = null;
    this.reconnectFailures = wasOpen ? 1 : this.reconnectFailures + 1;
    if (this.reconnectFailures > 20) {
      return this.fail(unreachable(this.client.server, `live updates failed: ${describe(err)}`));
    }
    const delay = Math.min(10_000, 500 * 2 ** Math.min(this.reconnectFailures, 5));
    if (wasOpen || this.reconnectFailures === 1) this.out.line(`(live connection lost: ${describe(err)}; reconnecting…)`);
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      // Lines written while disconnected come from the logs query; events resume after the last id.
      this.enqueue(async () => {
        if (this.lastEventId === null) this.lastEventId = await this.latestEventId();
        await this.catchUpLogs();
      });
      this.enqueue(() => this.connect());
    }, delay);
  }

  private async latestEventId(): Promise<string | null> {
    let after: string | null = null;
    for (;;) {
      const d: { job: { events: StoredEvent[] } | null } = await this.client.gql(STORED_EVENTS, {
        id: this.opts.jobId,
        after,
        first: 2000,
      });
      const evs = d.job?.events ?? [];
      if (evs.length === 0) return after;
      after = evs.at(-1)!.id;
      if (evs.length < 2000) return after;
    }
  }

  private async poll() {
    if (this.settled || this.finishing) return;
    try {
      const job = await fetchJobState(this.client, this.opts.jobId);
      if (job) await this.onState(job);
    } catch (err) {
      if (networkReason(err) || (err instanceof CliError && /Cannot reach/.test(err.message))) return; // the reconnect logic reports it
      throw err;
    }
  }

  // ───────────── state ─────────────

  private async onState(s: JobState) {
    if (this.settled) return;
    this.state = s;
    // The job changed: pick up stored events the live stream may have skipped. Status
    // lines come from the event log only (in order); this snapshot may already be older.
    if (this.opts.events) await this.syncEvents(this.queryAfter);
    if (this.opts.prompter) for (const q of s.openQuestions) this.offerQuestion(q);
    if (TERMINAL_STATUSES.has(s.status) && !this.finishing) await this.finish();
  }

  private printStatus(status: string, reason: string | null | undefined) {
    if (status === this.lastStatus) return;
    this.lastStatus = status;
    this.opts.onStatus?.(status);
    if (this.opts.events) this.out.line(`● ${status}${reason ? ` — ${reason}` : ''}`);
  }

  private async finish() {
    this.finishing = true;
    for (const u of this.unsubs) u();
    this.unsubs = [];
    this.promptAbort?.ctl.abort();
    // Whatever was stored before the terminal status: every event not shown yet, then log lines.
    if (this.opts.events) await this.syncEvents(this.opts.after);
    await this.catchUpLogs();
    const final = await fetchJobState(this.client, this.opts.jobId);
    if (final) this.state = final;
    if (!this.settled) {
      this.settled = true;
      this.resolve({ state: this.state!, interrupted: false, validation: this.validation });
    }
  }

  // ───────────── activity ─────────────

  private async onActivity(a: Activity) {
    if (this.settled) return;
    this.reconnectFailures = 0;
    if (a.__typename === 'JobEventEnvelope') return this.onEvent(a.event);
    if (a.__typename === 'LogLinesEvent') return this.onLogLines(a.attemptId, a.lines);
    if (a.__typename === 'MetricPointsEvent' && this.opts.events) {
      const line = await this.progressOf(a.attemptId, a.points);
      if (line) this.out.line(`  ${line}`);
    }
  }

  /** The smoke run's last step (the full run's total steps scale from it); undefined until looked up. */
  private smokeStep: number | null | undefined = undefined;

  /**
   * A batch of metric points as one progress line (progress.ts). The full run's line counts
   * steps against the smoke run's (scaled by the plan's units) and says how long is left;
   * the smoke run's last step is remembered as it streams, or read once from its stored
   * points when this command joined later.
   */
  private async progressOf(attemptId: string, points: { name: string; step?: number | null; value: number }[]): Promise<string | null> {
    const info = await this.attemptInfo(attemptId);
    const maxStep = points.reduce<number | null>((m, p) => (p.step != null && (m === null || p.step > m) ? p.step : m), null);
    if (info.role === 'SMOKE') {
      if (maxStep !== null) this.smokeStep = Math.max(this.smokeStep ?? 0, maxStep);
      return progressLine(points, { task: 'smoke run' });
    }
    if (info.kind !== 'RUN') return progressLine(points, info.taskName ? { task: info.taskName } : {});
    const estimate = this.state?.estimate ?? null;
    if (this.smokeStep === undefined && estimate?.boundedUnits) this.smokeStep = await this.lookUpSmokeStep();
    const started = info.startedAt ? Date.parse(info.startedAt) : NaN;
    return progressLine(points, {
      task: info.taskName,
      totalSteps: totalStepsOf(this.smokeStep, estimate),
      totalEpochs: estimate?.unit === 'epoch' ? estimate.fullUnits : null,
      elapsedSec: Number.isFinite(started) ? Math.max(0, (Date.now() - started) / 1000) : null,
      estimateSec: estimate?.durationSec ?? null,
    });
  }

  /** The job's estimate as the server words it (Job.estimateText), or null. */
  private async estimateText(): Promise<string | null> {
    try {
      const d = await this.client.gql<{ job: { estimateText: string | null } | null }>(JOB_ESTIMATE_TEXT, { id: this.opts.jobId });
      return d.job?.estimateText ?? null;
    } catch {
      return null;
    }
  }

  private async lookUpSmokeStep(): Promise<number | null> {
    try {
      const smoke = (await fetchTasks(this.client, this.opts.jobId)).find((t) => t.role === 'SMOKE');
      const attempt = smoke?.attempts.filter((x) => x.status === 'SUCCEEDED').pop();
      if (!attempt) return null;
      const d = await this.client.gql<{ attempt: { metricPoints: { step: number | null }[] } | null }>(SMOKE_POINTS, { id: attempt.id });
      return (d.attempt?.metricPoints ?? []).reduce<number | null>(
        (m, p) => (p.step != null && (m === null || p.step > m) ? p.step : m),
        null,
      );
    } catch {
      return null;
    }
  }

  /** Shows stored events after `after` that were not seen yet, in order. */
  private async syncEvents(after: string | null) {
    let from = after ?? '0';
    for (;;) {
      const d: { job: { events: StoredEvent[] } | null } = await this.client.gql(STORED_EVENTS, {
        id: this.opts.jobId,
        after: from,
        first: 500,
      });
      const evs = d.job?.events ?? [];
      for (const e of evs) await this.onEvent(e);
      if (evs.length) {
        from = evs.at(-1)!.id;
        if (this.queryAfter === null || BigInt(from) > BigInt(this.queryAfter)) this.queryAfter = from;
      }
      if (evs.length < 500) return;
    }
  }

  private async onEvent(e: StoredEvent) {
    if (this.seenEvents.has(e.id)) return;
    this.seenEvents.add(e.id);
    if (this.lastEventId === null || BigInt(e.id) > BigInt(this.lastEventId)) this.lastEventId = e.id;
    const p = (e.payload ?? {}) as Record<string, any>;
    switch (e.kind) {
      case 'job.status':
        if (typeof p.status === 'string') this.printStatus(p.status, p.reason);
        // The job ended: confirm from its state (the jobUpdated message may come later or not at all).
        if (TERMINAL_STATUSES.has(p.status) && !this.finishing) this.enqueue(() => this.poll());
        return;
      case 'job.created':
        if (this.opts.events)
          this.out.line(`  ▸ job created${p.files !== undefined ? ` with ${p.files} file${p.files === 1 ? '' : 's'}` : ''}`);
        if (typeof p.status === 'string') this.printStatus(p.status, null);
        return;
      case 'question.asked':
        if (this.opts.prompter && typeof p.questionId === 'string') {
          this.offerQuestion({
            id: p.questionId,
            text: String(p.text ?? ''),
            choices: Array.isArray(p.choices) ? p.choices.map(String) : [],
          });
        } else if (this.opts.events) {
          this.out.line(`? ${oneLine(p.text ?? 'The planner asks a question.', 300)}`);
        }
        return;
      case 'question.rejected':
        // Refused at this prompt: the prompt said so. Refused elsewhere: one line.
        if (this.opts.events && !(this.opts.prompter && this.questionsSeen.has(p.questionId))) {
          this.out.line(
            `  ✗ answer refused (${p.attempt ?? '?'} of ${p.of ?? '?'}): “${oneLine(p.answer ?? '', 120)}” ${p.reason ?? 'names none of the choices'}`,
          );
        }
        return;
      case 'question.answered':
        if (typeof p.questionId === 'string') {
          const mine = this.questionsMine.has(p.questionId) || this.questionsDone.has(p.questionId);
          this.questionsDone.add(p.questionId);
          if (!mine && this.opts.events) this.out.line(`  ✓ answered elsewhere: ${oneLine(p.answer ?? '', 200)}`);
          if (this.promptAbort?.id === p.questionId) this.promptAbort.ctl.abort();
        }
        return;
      case 'attempt.status':
        if (typeof p.attemptId === 'string') {
          const info = this.attempts.get(p.attemptId) ?? {};
          const task = typeof p.taskId === 'string' ? this.taskNames.get(p.taskId) : undefined;
          this.attempts.set(p.attemptId, {
            ...info,
            taskId: p.taskId ?? info.taskId,
            taskName: task?.name ?? info.taskName,
            kind: task?.kind ?? info.kind,
            number: p.number ?? info.number,
            worker: p.worker ?? info.worker,
          });
          // A finished attempt: make sure every line it wrote was shown.
          if (p.status !== 'LEASED' && p.status !== 'RUNNING') await this.catchUpAttempt(p.attemptId);
        }
        if (this.opts.events) {
          const info = this.attempts.get(p.attemptId) ?? {};
          const extra = [
            p.exitCode !== undefined && p.exitCode !== null ? `exit code ${p.exitCode}` : '',
            p.errorClass ? String(p.errorClass) : '',
          ].filter(Boolean);
          this.out.line(
            `  ▸ ${info.taskName ?? 'task'} attempt ${p.number ?? info.number ?? '?'}${p.worker ? ` on ${p.worker}` : ''}: ${p.status}${extra.length ? ` (${extra.join(', ')})` : ''}`,
          );
        }
        return;
      case 'task.created':
        if (typeof p.taskId === 'string') this.taskNames.set(p.taskId, { name: String(p.name ?? 'task'), kind: p.kind });
        if (this.opts.events) this.out.line(`  ▸ task ${p.name ?? p.taskId}${p.kind ? ` (${p.kind})` : ''} created`);
        return;
      case 'task.status': {
        const known = typeof p.taskId === 'string' ? this.taskNames.get(p.taskId) : undefined;
        if (typeof p.taskId === 'string' && p.name && !known) this.taskNames.set(p.taskId, { name: String(p.name) });
        if (this.opts.events) {
          this.out.line(
            `  ▸ task ${p.name ?? known?.name ?? String(p.taskId ?? '').slice(0, 8)}: ${p.status}${p.reason ? ` — ${oneLine(p.reason, 300)}` : ''}`,
          );
        }
        return;
      }
      case 'preparation.record':
        this.out.line(
          `  ⚙ preparation ${p.step ?? ''}${p.revision ? ` (revision ${p.revision})` : ''} — ${p.transformation ?? ''}: ${p.outcome ?? ''}${p.reason ? ` — ${oneLine(p.reason, 400)}` : ''}`,
        );
        return;
      case 'attempt.resumed': {
        const info = typeof p.attemptId === 'string' ? this.attempts.get(p.attemptId) : undefined;
        const task = typeof p.taskId === 'string' ? this.taskNames.get(p.taskId) : undefined;
        this.out.line(`  ↻ ${task?.name ?? info?.taskName ?? 'task'} attempt ${p.number ?? info?.number ?? '?'}: ${resumedLine(p)}`);
        return;
      }
      case 'smoke.result':
        this.out.line(
          p.estimate && typeof p.estimate === 'object'
            ? `  ⏱ ${p.estimate.source === 'preparation run' ? 'from the preparation run on the target' : 'smoke run passed'}; estimate of the full run: ${(await this.estimateText()) ?? 'none'} — ${oneLine(p.estimate.basis ?? '', 300)}`
            : '  ⏱ smoke run passed (no run length to scale it by: no estimate)',
        );
        return;
      case 'service.ready':
        if (this.opts.events) await this.printServiceReady();
        return;
      case 'service.unready':
        if (this.opts.events)
          this.out.line(
            '  ◌ service not ready (its worker went away, or the readiness check failed): requests get 503 with Retry-After until it is ready again, at the same URL',
          );
        return;
      case 'validation':
        this.validation.push(p);
        if (this.opts.events) this.out.line(`  ✔ validation: ${describeValidation(p)}`);
        return;
      default:
        if (!this.opts.events) return;
        if (e.kind === 'plan.created') return this.showPlan(p);
        if (e.kind === 'agent.item') return void this.printAgentItem(p);
        if (e.kind === 'agent.run') return this.printAgentRun(p);
        this.out.line(supervisionLine(e.kind, p) ?? `  · ${e.kind}: ${compactJson(p, 200)}`);
    }
  }

  /** A hosted service became ready: where it answers and how to get its token (DESIGN §10). */
  private async printServiceReady() {
    const d: { job: { service: { url: string; apiUrl: string; tokenRotatedAt: string | null; stoppedAt: string | null } | null } | null } =
      await this.client.gql(SERVICE_URLS, { id: this.opts.jobId });
    const s = d.job?.service;
    if (!s || s.stoppedAt) return;
    const id = this.opts.jobId;
    this.out.line(`  ◉ service ready: ${s.url}`);
    this.out.line(`    for programs: ${s.apiUrl} (send "Authorization: Bearer TOKEN")`);
    this.out.line(
      s.tokenRotatedAt
        ? `    token: issued already and shown once; \`chatgpu service ${id} --new-token\` issues another (the old one stops working)`
        : `    token: \`chatgpu service ${id}\` issues it and prints it once; in a browser, the job page's "Open in browser"`,
    );
  }

  private printAgentItem(p: Record<string, any>) {
    const it: Record<string, any> = p.item && typeof p.item === 'object' ? { ...p, ...p.item } : p;
    const who = it.agent ? String(it.agent) : 'agent';
    const type = String(it.type ?? it.itemType ?? '');
    const callId = typeof it.callId === 'string' ? it.callId : typeof it.call_id === 'string' ? it.call_id : null;
    if (type === 'function_call') {
      const name = String(it.name ?? 'tool');
      if (callId) this.callNames.set(callId, name);
      this.out.line(`  ◆ ${who} → ${name}(${shortArgs(it.arguments ?? it.args ?? {})})`);
    } else if (type === 'function_call_output') {
      const name = it.name ?? (callId ? this.callNames.get(callId) : undefined);
      const mark = it.status === 'REJECTED' ? 'rejected: ' : it.status === 'UNCERTAIN' ? 'uncertain: ' : '';
      this.out.line(`  ◆ ${who} ← ${name ? `${name}: ` : ''}${mark}${shortResult(it.output ?? it.result ?? '')}`);
    } else if (type === 'message') {
      // The instructions and the job description sent to the agent are not news to the user.
      if (it.role && it.role !== 'assistant') return;
      const text = typeof it.text === 'string' ? it.text : typeof it.content === 'string' ? it.content : compactJson(it.content ?? '');
      if (text.trim()) this.out.line(`  ◆ ${who}: ${oneLine(text, 400)}`);
    } else if (type === 'reasoning') {
      const summary =
        typeof it.text === 'string'
          ? it.text
          : Array.isArray(it.summary)
            ? it.summary.map((s: { text?: string }) => s?.text ?? '').join(' ')
            : '';
      if (summary.trim()) this.out.line(`  ◆ ${who} (thinking): ${oneLine(summary, 240)}`);
    } else if (type === 'note') {
      this.out.line(`  ◆ ${who}: ${oneLine(it.text ?? it.note ?? it.message ?? compactJson(it), 300)}`);
    } else {
      this.out.line(`  ◆ ${who}: ${compactJson(it, 200)}`);
    }
  }

  private printAgentRun(p: Record<string, any>) {
    const who = String(p.agent ?? 'agent');
    const stop = typeof p.stopReason === 'string' && p.stopReason ? p.stopReason : null;
    const reason =
      stop && p.status !== 'WAITING' && !/^(finished|completed|done)$/i.test(stop) ? ` (${oneLine(stop.replace(/_/g, ' '), 200)})` : '';
    // RUNNING with a stop reason: a turn ended at one of its limits and the next one follows.
    const what: Record<string, string> = {
      RUNNING: stop ? 'paused' : 'started',
      WAITING: 'is waiting for your answer',
      COMPLETED: 'finished',
      FAILED: 'failed',
    };
    this.out.line(`  ◆ ${who} ${what[String(p.status)] ?? String(p.status ?? '').toLowerCase()}${reason}`);
  }

  private async showPlan(p: Record<string, any>) {
    const d = await this.client.gql<{ job: { acceptanceCriteria: unknown; plans: PlanShape[] } | null }>(PLAN, { id: this.opts.jobId });
    const plans = d.job?.plans ?? [];
    const plan = (typeof p.planId === 'string' && plans.find((x) => x.id === p.planId)) || plans.at(-1);
    if (!plan || this.plansShown.has(plan.id)) return;
    this.plansShown.add(plan.id);
    for (const l of formatPlan(plan)) this.out.line(l);
  }

  // ───────────── logs ─────────────

  private async attemptInfo(attemptId: string): Promise<AttemptInfo> {
    let info = this.attempts.get(attemptId);
    if (!info?.taskName) {
      for (const t of await fetchTasks(this.client, this.opts.jobId)) {
        this.taskNames.set(t.id, { name: t.name, kind: t.kind });
        for (const a of t.attempts)
          this.attempts.set(a.id, {
            taskId: t.id,
            taskName: t.name,
            kind: t.kind,
            role: t.role,
            number: a.number,
            worker: a.workerName,
            startedAt: a.startedAt ?? null,
          });
      }
      info = this.attempts.get(attemptId) ?? {};
    }
    return info;
  }

  private async printLines(attemptId: string, lines: LogLine[]) {
    let last = this.lastSeq.get(attemptId) ?? -1;
    const fresh = lines.filter((l) => l.seq > last).sort((a, b) => a.seq - b.seq);
    if (fresh.length === 0) return;
    if (this.lastPrintedAttempt !== attemptId) {
      this.lastPrintedAttempt = attemptId;
      const header = attemptHeader(await this.attemptInfo(attemptId));
      this.out.line(this.opts.logStyle === 'wait' ? `  ${header}` : header);
    }
    for (const l of fresh) {
      last = l.seq;
      // In the live view metric lines are shown as metric points (∿) already.
      if (this.opts.logStyle === 'wait' && l.stream !== 'stderr' && l.text.startsWith('CHATGPU_METRIC ')) continue;
      this.out.line(formatLogLine(l, this.opts.logStyle === 'wait' ? '  | ' : ''));
    }
    this.lastSeq.set(attemptId, last);
  }

  private async onLogLines(attemptId: string, lines: LogLine[]) {
    const last = this.lastSeq.get(attemptId) ?? -1;
    const first = Math.min(...lines.map((l) => l.seq));
    if (first > last + 1) await this.catchUpAttempt(attemptId);
    await this.printLines(attemptId, lines);
  }

  private async catchUpAttempt(attemptId: string) {
    const batch: LogLine[] = [];
    for await (const l of this.logs.lines(attemptId, this.lastSeq.get(attemptId) ?? -1)) {
      batch.push(l);
      if (batch.length >= 200) await this.printLines(attemptId, batch.splice(0));
    }
    if (batch.length) await this.printLines(attemptId, batch);
  }

  private async catchUpLogs() {
    for (const t of await fetchTasks(this.client, this.opts.jobId)) {
      this.taskNames.set(t.id, { name: t.name, kind: t.kind });
      for (const a of t.attempts) {
        this.attempts.set(a.id, {
          taskId: t.id,
          taskName: t.name,
          kind: t.kind,
          role: t.role,
          number: a.number,
          worker: a.workerName,
          startedAt: a.startedAt ?? null,
        });
        await this.catchUpAttempt(a.id);
      }
    }
  }

  // ───────────── questions ─────────────

  private offerQuestion(q: Question) {
    if (this.questionsSeen.has(q.id) || this.questionsDone.has(q.id)) return;
    this.questionsSeen.add(q.id);
    this.questionQueue.push(q);
    void this.pumpQuestions();
  }

  private async pumpQuestions() {
    if (this.questionBusy) return;
    this.questionBusy = true;
    try {
      // Let the events that came with the question (status, agent steps) print first.
      await new Promise((r) => setTimeout(r, 150));
      await this.chain;
      while (this.questionQueue.length && !this.settled && !this.finishing) {
        const q = this.questionQueue.shift()!;
        if (this.questionsDone.has(q.id)) continue;
        await this.askOne(q);
      }
    } catch (err) {
      this.fail(err);
    } finally {
      this.questionBusy = false;
    }
  }

  private async askOne(q: Question) {
    // Other output waits while the question is on screen, so the prompt stays readable.
    this.out.hold();
    try {
      await this.askHeld(q);
    } finally {
      this.out.release();
    }
  }

  private async askHeld(q: Question) {
    const prompter = this.opts.prompter!;
    const say = (t: string) => this.out.direct(t);
    for (const l of questionLines(q)) say(l);
    if (q.choices.length) say(`  (type its number, or words of one choice)`);
    for (;;) {
      const ctl = new AbortController();
      this.promptAbort = { id: q.id, ctl };
      const raw = await prompter.ask('> ', { signal: ctl.signal });
      this.promptAbort = null;
      if (this.settled || this.finishing) return;
      if (this.questionsDone.has(q.id)) {
        say('  (answered elsewhere)');
        return;
      }
      if (raw === null) {
        const where = `answer it with: ${answerHint(this.opts.jobId, q)}${this.opts.dashboardUrl ? ` (or in the dashboard at ${this.opts.dashboardUrl})` : ''}`;
        // No terminal and no more input: no answer can come here, so waiting would be silent
        // forever. Say how to answer and end; the job keeps waiting for the answer.
        if (!prompter.interactive)
          throw new CliError(
            `The job waits for an answer to “${oneLine(q.text, 200)}” and stdin has no more lines: ${where}, then follow it again with: chatgpu watch ${this.opts.jobId}`,
            NEEDS_ANSWER_EXIT,
          );
        say(`  (no answer here: ${where}; still waiting)`);
        return;
      }
      if (!raw) continue;
      const n = /^\d+$/.test(raw) ? Number(raw) : NaN;
      const answer = n >= 1 && n <= q.choices.length ? q.choices[n - 1]! : raw;
      this.questionsMine.add(q.id);
      const r = await sendAnswer(this.client, q.id, answer);
      if (r.__typename !== 'Question') this.questionsMine.delete(q.id);
      if (r.__typename === 'Question') {
        this.questionsDone.add(q.id);
        say(`  ✓ answered: ${oneLine(r.answer ?? answer, 200)}`);
        return;
      }
      if (r.__typename === 'ConflictError' || r.__typename === 'NotFoundError') {
        this.questionsDone.add(q.id);
        say(`  (${r.message ?? 'this question is closed'})`);
        return;
      }
      if (r.__typename === 'ValidationError') {
        // Refused (an answer that names none of the choices, or an empty one): ask again —
        // the next line of stdin when there is no terminal. The refusal that stopped the job
        // closed the question: nothing more to ask.
        say(`  ✗ ${r.message}`);
        const still = (await fetchJobState(this.client, this.opts.jobId))?.openQuestions.some((o) => o.id === q.id);
        if (!still) {
          this.questionsDone.add(q.id);
          return;
        }
        continue;
      }
      unwrap(r, 'Question');
    }
  }
}

function describe(err: unknown): string {
  if (err && typeof err === 'object' && 'code' in err && 'reason' in err) {
    const c = err as { code: number; reason: string };
    return c.reason ? `closed ${c.code}: ${c.reason}` : `closed ${c.code}`;
  }
  return networkReason(err) ?? (err instanceof Error ? err.message : 'connection closed');
}

function describeValidation(p: Record<string, any>): string {
  if (typeof p.message === 'string') return oneLine(p.message, 300);
  if (typeof p.summary === 'string') return oneLine(p.summary, 300);
  const ok = p.passed ?? p.ok;
  const verdict = [p.step ? String(p.step) : '', ok === true ? 'passed' : ok === false ? 'failed' : (p.status ?? p.outcome ?? '')]
    .filter(Boolean)
    .join(' ');
  if (ok !== undefined && !Array.isArray(p.checks)) {
    const details = [
      p.reason ? String(p.reason) : '',
      p.metrics && typeof p.metrics === 'object'
        ? Object.entries(p.metrics)
            .map(([k, v]) => `${k}=${typeof v === 'number' ? metricValue(v) : JSON.stringify(v)}`)
            .join(' ')
        : '',
      p.next ? `next: ${p.next}` : '',
    ].filter(Boolean);
    return oneLine(`${verdict}${details.length ? ` — ${details.join('; ')}` : ''}`, 300);
  }
  const checks = Array.isArray(p.checks)
    ? p.checks.map((c: any) => `${c.name ?? c.kind ?? 'check'} ${c.passed === false || c.ok === false ? '✗' : '✓'}`).join(', ')
    : '';
  return oneLine([verdict, checks].filter(Boolean).join(': ') || compactJson(p), 300);
}

export interface PlanShape {
  id: string;
  version: number;
  author: string;
  summary: string;
  steps: unknown;
  command: string;
  environment: unknown;
  requirements: unknown;
  outputs: unknown;
  acceptanceCriteria: unknown;
  asks?: { ask: string; kind: string; status: string; detail: string }[];
  settings?: { file: string; name: string; line: number; from: string; to: string }[] | null;
}

/**
 * An `attempt.resumed` event (domain/leases/checkpoints.ts): "resumed at step s of S from a checkpoint
 * of <time> (work lost: t s)"; the parts the event lacks are left out. The dashboard says the same
 * (web/src/features/jobs/describeEvent.ts resumedWords).
 */
export function resumedLine(p: Record<string, unknown>): string {
  const step = typeof p.step === 'number' ? ` at step ${p.step}${typeof p.of === 'number' ? ` of ${p.of}` : ''}` : '';
  const at =
    typeof p.checkpointAt === 'string' && !Number.isNaN(Date.parse(p.checkpointAt))
      ? ` of ${new Date(p.checkpointAt).toISOString().slice(0, 19).replace('T', ' ')} UTC`
      : '';
  const lost = typeof p.workLostSec === 'number' ? ` (work lost: ${p.workLostSec} s)` : '';
  return `resumed${step} from a checkpoint${at}${lost}`;
}

/**
 * The line `chatgpu watch` prints for what the run supervisor and the trust checks saw and did
 * (null for other events): a stall, a flapping worker, a finding, a revision request, a trust check.
 */
export function supervisionLine(kind: string, p: Record<string, any>): string | null {
  switch (kind) {
    case 'attempt.stalled':
      return `  ⏸ attempt ${p.attempt ?? ''} stalled: no log line or metric for ${p.minutes ?? '?'} min while its worker is alive`;
    case 'worker.flapping':
      return `  ⚠ worker ${p.worker ?? p.workerId ?? ''} is flapping: it lost ${p.lost ?? '?'} attempts in ${p.windowMin ?? '?'} min`;
    case 'finding':
      return `  ✎ finding: ${oneLine(p.text ?? p.summary ?? p.note ?? p, 240)}`;
    case 'revision.requested':
      return `  ✎ supervisor: revise ${p.step ?? 'the step'} (revision ${p.revision ?? '?'}): ${oneLine(p.text ?? '', 240)}`;
    case 'trust.check':
      return `  ⚖ trust check${p.task ? ` of ${p.task}` : ''} (${p.step ?? 'decided'})${p.reason ? `: ${oneLine(p.reason, 240)}` : ''}`;
    default:
      return null;
  }
}

export function formatPlan(plan: PlanShape): string[] {
  const lines = [`◇ Plan v${plan.version} by ${plan.author}: ${oneLine(plan.summary, 400)}`];
  lines.push(`    command:    ${plan.command}`);
  const req = plan.requirements as Record<string, unknown> | null;
  if (req && typeof req === 'object') {
    const hw = Object.entries(req)
      .filter(([k, v]) => k !== 'outputs' && v !== null && v !== undefined && v !== '' && v !== 0 && !(Array.isArray(v) && v.length === 0))
      .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
      .join(', ');
    if (hw) lines.push(`    hardware:   ${oneLine(hw, 300)}`);
  }
  const outs = plan.outputs;
  if (Array.isArray(outs) && outs.length)
    lines.push(`    outputs:    ${oneLine(outs.map((o) => (typeof o === 'string' ? o : (o?.path ?? JSON.stringify(o)))).join(', '), 300)}`);
  else if (outs && typeof outs === 'object' && !Array.isArray(outs) && Object.keys(outs).length)
    lines.push(`    outputs:    ${compactJson(outs, 300)}`);
  const steps = plan.steps;
  if (Array.isArray(steps) && steps.length) {
    lines.push('    steps:');
    steps
      .slice(0, 12)
      .forEach((s, i) =>
        lines.push(`      ${i + 1}. ${oneLine(typeof s === 'string' ? s : (s?.description ?? s?.title ?? s?.name ?? s), 200)}`),
      );
  }
  if (plan.settings?.length) {
    lines.push('    settings set in the code (set-settings):');
    for (const e of plan.settings.slice(0, 20)) lines.push(`      - ${e.file}:${e.line} ${e.name}: ${e.from} → ${e.to}`);
  }
  if (plan.asks?.length) {
    lines.push('    what you asked:');
    for (const a of plan.asks.slice(0, 40))
      lines.push(`      ${a.status === 'honoured' ? '✓' : '✗'} "${oneLine(a.ask, 80)}": ${a.status} — ${oneLine(a.detail, 200)}`);
  }
  const criteria = formatCriteria(plan.acceptanceCriteria);
  if (criteria.length) {
    lines.push('    acceptance criteria:');
    for (const c of criteria.slice(0, 20)) lines.push(`      - ${c}`);
  }
  return lines;
}

/** Acceptance criteria in words: a list of strings or {description}, or an object of checks. */
export function formatCriteria(ac: unknown): string[] {
  if (Array.isArray(ac)) return ac.map((c) => oneLine(typeof c === 'string' ? c : (c?.description ?? c), 200));
  if (!ac || typeof ac !== 'object') return [];
  const out: string[] = [];
  for (const [k, v] of Object.entries(ac as Record<string, unknown>)) {
    if (v === null || v === undefined || (Array.isArray(v) && v.length === 0)) continue;
    if (k === 'exitCode') out.push(`exit code ${v}`);
    else if (k === 'requiredFiles' && Array.isArray(v)) out.push(`files exist: ${v.join(', ')}`);
    else if (k === 'metrics' && Array.isArray(v)) out.push(...metricBounds(v));
    else if (k === 'evaluate' && typeof v === 'object') {
      const e = v as { checkpoint?: string; command?: string; metrics?: unknown[] };
      out.push(oneLine(`reload ${e.checkpoint ?? 'the checkpoint'} and evaluate it${e.command ? ` (${e.command})` : ''}`, 200));
      if (Array.isArray(e.metrics)) out.push(...metricBounds(e.metrics).map((m) => `evaluation: ${m}`));
    } else
      out.push(oneLine(`${k.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase()}: ${typeof v === 'string' ? v : JSON.stringify(v)}`, 200));
  }
  return out;
}

function metricBounds(v: unknown[]): string[] {
  return (v as Record<string, unknown>[]).map((m) => {
    const name = String(m.name ?? m.metric ?? 'metric');
    const bound =
      m.op !== undefined && m.value !== undefined
        ? `${m.op} ${m.value}`
        : [m.min !== undefined && m.min !== null ? `>= ${m.min}` : '', m.max !== undefined && m.max !== null ? `<= ${m.max}` : '']
            .filter(Boolean)
            .join(' and ');
    return oneLine(`${name} ${bound || compactJson(m, 120)}`, 200);
  });
}

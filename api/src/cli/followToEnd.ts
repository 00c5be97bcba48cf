/**
 * What `submit --wait` and `watch` share: follow the job live from its first event (plan,
 * agent steps, logs, metrics, preparation records), ask its open questions at the prompt
 * (or read the answers from stdin, one line each), then print the final status and, with
 * an output folder, download the outputs and job.json — those the job's run made already while its
 * validation runs (prefetch.ts).
 *
 * Exit code: 0 when the job SUCCEEDED, 130 when the user stopped following (the job goes
 * on), 3 when a question cannot be answered here (no terminal and stdin at its end: the
 * message says how to answer; the job waits), else 1.
 */
import type { ApiClient } from './apiClient.js';
import { JobFollower, type Printer } from './follow.js';
import { Prompter } from './prompt.js';
import { OutputPrefetch } from './prefetch.js';
import { downloadResults } from './results.js';

export interface FollowToEndOptions {
  /** Progress lines (stderr with --json, so stdout holds only the summary). */
  info: Printer;
  /** The job's dashboard page. */
  url: string;
  /** Where to download the outputs and job.json; none: only the summary is built. */
  outDir?: string | undefined;
  /** Print the summary as one JSON line on stdout. */
  json: boolean;
}

/** The job's page on the dashboard. */
export function jobUrl(client: ApiClient, jobId: string): string {
  return `${client.server}/jobs/${encodeURIComponent(jobId)}`;
}

export async function followToEnd(client: ApiClient, jobId: string, opts: FollowToEndOptions): Promise<number> {
  const { info, url } = opts;
  const prompter = new Prompter();
  const prefetch = opts.outDir ? new OutputPrefetch(client, jobId, opts.outDir) : undefined;
  try {
    const followed = await new JobFollower({
      client,
      jobId,
      out: info,
      events: true,
      prompter,
      after: '0',
      logStyle: 'wait',
      dashboardUrl: url,
      ...(prefetch ? { onStatus: (status: string) => status === 'VALIDATING' && prefetch.start() } : {}),
    }).run();
    if (followed.interrupted) {
      info.line(
        `Stopped following; the job goes on: ${url} (follow it again with: chatgpu watch ${jobId}; cancel it with: chatgpu cancel ${jobId}).`,
      );
      return 130;
    }
    const s = followed.state;
    info.line(`Job ${s.status}${s.statusReason ? `: ${s.statusReason}` : '.'}`);
    const summary = await downloadResults(client, jobId, {
      outDir: opts.outDir,
      url,
      validation: followed.validation,
      out: info,
      ...(prefetch ? { prefetch } : {}),
    });
    // The server words the estimate (Job.estimateText): the CLI imports nothing of it.
    if (typeof summary.estimateText === 'string') info.line(`Estimate was ${summary.estimateText}.`);
    if (opts.json) process.stdout.write(JSON.stringify(summary) + '\n');
    return s.status === 'SUCCEEDED' ? 0 : 1;
  } finally {
    prompter.close();
    await prefetch?.close();
  }
}

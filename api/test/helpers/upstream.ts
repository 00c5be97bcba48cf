/**
 * Files of public projects at pinned commits, read from the local snapshots the `fetch` corpus lays
 * down (CORPUS_MIRROR_DIR, default /work/.mirror: `<owner>+<name>/repo`, a git directory). Upstream
 * code is never committed here; a test that needs it is skipped, saying so, where it is absent.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { rawId, type TestApi } from './api.js';

export const MIRROR = process.env.CORPUS_MIRROR_DIR ?? '/work/.mirror';

export interface Pinned {
  repo: string;
  commit: string;
}

/** The text of `file` in `p.repo` at `p.commit`, or null where the snapshot (or the file) is not here. */
export function showUpstream(p: Pinned, file: string): string | null {
  const bare = path.join(MIRROR, p.repo.replace('/', '+'), 'repo');
  const gitDir = existsSync(path.join(bare, '.git')) ? path.join(bare, '.git') : bare;
  try {
    return execFileSync('git', ['--git-dir', gitDir, 'show', `${p.commit}:${file}`], {
      encoding: 'utf8',
      maxBuffer: 1 << 26,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
  } catch {
    return null;
  }
}

/** A project's files uploaded and submitted as one job with the request: its GraphQL id and raw id. */
export async function submitProject(api: TestApi, userToken: string, files: Record<string, string>, request: string, title: string) {
  const manifest = [];
  for (const [p, content] of Object.entries(files)) manifest.push({ path: p, sha256: (await api.putBlob(content, userToken)).sha256 });
  const r = await api.gql(
    `mutation($i: CreateJobInput!) { createJob(input: $i) { __typename ... on Job { id } } }`,
    { i: { title, request, files: manifest } },
    userToken,
  );
  const id = r.data.createJob.id as string;
  return { id, jobId: rawId(id) };
}

/**
 * Files of public projects at pinned commits, read from the local snapshots the `fetch` corpus lays
 * down (CORPUS_MIRROR_DIR, default /work/.mirror: `<owner>+<name>/repo`, a git directory). Upstream
 * code is never committed here; a test that needs it is skipped, saying so, where it is absent.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';

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

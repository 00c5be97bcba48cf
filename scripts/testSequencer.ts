/**
 * The order `npm test` runs test files in: longest first, by the durations of a full run kept in
 * scripts/test-durations.json (refresh with `node scripts/test-durations.mjs` after `npm test`).
 *
 * Vitest orders by its own cache of the last run's durations, which a fresh checkout (CI) does not
 * have; it then falls back to file size, so a short file holding one long end-to-end flow can start
 * last and run alone on one of the two workers while the other idles. Longest-first (LPT) keeps both
 * busy to the end. Files missing from the table (new ones) go first, as Vitest does with unknown files.
 * Only the order changes: every file still runs.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const TABLE = path.join(import.meta.dirname, 'test-durations.json');

function durations(): Record<string, number> {
  try {
    return JSON.parse(readFileSync(TABLE, 'utf8')) as Record<string, number>;
  } catch {
    return {};
  }
}

export class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const table = durations();
    const root = path.resolve(import.meta.dirname, '..');
    const known = (f: TestSpecification) => table[path.relative(root, f.moduleId).split(path.sep).join('/')];
    const base = await super.sort(files);
    const unknown = base.filter((f) => known(f) === undefined);
    const timed = base.filter((f) => known(f) !== undefined).sort((a, b) => known(b)! - known(a)!);
    return [...unknown, ...timed];
  }
}

/**
 * The layers' import boundaries (eslint.config.js, import-x/no-restricted-paths) catch what they are for: for each rule, a file
 * placed in the guarded folder that imports a forbidden module is reported, and imports the layer may make are not.
 * The files are linted from text at a path inside the guarded folder (ESLint's lintText), so nothing is written to the tree;
 * the imported modules are real ones, since the rule judges the path an import resolves to.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../src/paths.js';

const eslint = new ESLint({ cwd: repoRoot, overrideConfigFile: path.join(repoRoot, 'eslint.config.js') });

/** The boundary reports for `import … from '<spec>'` in a file at `file` (relative to the repository root). */
async function boundaryMessages(file: string, spec: string): Promise<string[]> {
  // The imported module must exist: an import the rule cannot resolve is never reported, so a case could pass for nothing.
  const target = path.resolve(repoRoot, path.dirname(file), spec).replace(/\.js$/, '.ts');
  expect(existsSync(target), `${spec} from ${file} names ${target}`).toBe(true);
  const code = `import * as m from '${spec}';\n\nexport const probe = m;\n`;
  const [result] = await eslint.lintText(code, { filePath: path.join(repoRoot, file) });
  expect(result!.messages.filter((m) => m.fatal)).toEqual([]);
  return result!.messages.filter((m) => m.ruleId === 'import-x/no-restricted-paths').map((m) => m.message);
}

const forbidden: [string, string, string, RegExp][] = [
  ['domain → graphql', 'api/src/domain/jobs/lintProbe.ts', '../../graphql/builder.js', /The domain is the core/],
  ['domain → agents', 'api/src/domain/jobs/lintProbe.ts', '../../agents/agentTurns.js', /The domain is the core/],
  ['domain → scheduler', 'api/src/domain/workers/lintProbe.ts', '../../scheduler/explainWait.js', /The domain is the core/],
  ['domain → http', 'api/src/domain/lintProbe.ts', '../http/outputsArchive.js', /The domain is the core/],
  ['http → graphql', 'api/src/http/lintProbe.ts', '../graphql/builder.js', /HTTP routes do not import the GraphQL layer/],
  ['config.ts → domain', 'api/src/config.ts', './domain/ids.js', /config\.ts reads the environment/],
  ['cli → domain', 'api/src/cli/lintProbe.ts', '../domain/jobs/estimateText.js', /The CLI talks to the server over GraphQL/],
  ['cli → db', 'api/src/cli/lintProbe.ts', '../db/client.js', /The CLI talks to the server over GraphQL/],
  ['cli → server.ts', 'api/src/cli/lintProbe.ts', '../server.js', /The CLI talks to the server over GraphQL/],
  ['cli → config.ts', 'api/src/cli/lintProbe.ts', '../config.js', /The CLI talks to the server over GraphQL/],
  ['preparation → domain', 'api/src/preparation/lintProbe.ts', '../domain/ids.js', /preparation\/ is a library/],
  ['web/src → api', 'web/src/lib/lintProbe.ts', '../../../api/src/domain/ids.js', /The dashboard talks to the API over GraphQL/],
  ['worker/src → api', 'worker/src/lintProbe.ts', '../../api/src/paths.js', /The worker talks to the API over GraphQL/],
  ['worker/bin → api', 'worker/bin/lintProbe.ts', '../../api/src/paths.js', /The worker talks to the API over GraphQL/],
];

const allowed: [string, string, string][] = [
  ['domain → domain', 'api/src/domain/jobs/lintProbe.ts', '../ids.js'],
  ['domain → db', 'api/src/domain/jobs/lintProbe.ts', '../../db/client.js'],
  ['domain → config.ts', 'api/src/domain/jobs/lintProbe.ts', '../../config.js'],
  ['http → domain', 'api/src/http/lintProbe.ts', '../domain/ids.js'],
  ['graphql → domain', 'api/src/graphql/lintProbe.ts', '../domain/ids.js'],
  ['scheduler → domain', 'api/src/scheduler/lintProbe.ts', '../domain/workers/placement.js'],
  ['cli → cli', 'api/src/cli/lintProbe.ts', './format.js'],
  ['cli → paths.ts (shared on purpose)', 'api/src/cli/lintProbe.ts', '../paths.js'],
  ['cli → main.ts (shared on purpose)', 'api/src/cli/lintProbe.ts', '../main.js'],
  ['cli → preparation (shared on purpose)', 'api/src/cli/lintProbe.ts', '../preparation/diffs.js'],
  ['web/test → api test helpers (tests start a real API)', 'web/test/lintProbe.test.ts', '../../api/test/helpers/waitFor.js'],
];

describe('import boundaries (eslint.config.js)', () => {
  it.each(forbidden)('%s is reported', async (_name, file, spec, message) => {
    const messages = await boundaryMessages(file, spec);
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatch(message);
  });

  it.each(allowed)('%s is not reported', async (_name, file, spec) => {
    expect(await boundaryMessages(file, spec)).toEqual([]);
  });

  it('an import circle is reported (import-x/no-cycle); the same files without the circle are not', async () => {
    const file = path.join(repoRoot, 'api/test/fixtures/lint-cycle/first.ts');
    const circle = "import { second } from './second.js';\n\nexport const first = second;\n";
    const [withCircle] = await eslint.lintText(circle, { filePath: file });
    expect(withCircle!.messages.map((m) => m.ruleId)).toEqual(['import-x/no-cycle']);
    const onDisk = await eslint.lintFiles([file, path.join(repoRoot, 'api/test/fixtures/lint-cycle/second.ts')]);
    expect(onDisk.map((r) => r.messages)).toEqual([[], []]);
  });
});

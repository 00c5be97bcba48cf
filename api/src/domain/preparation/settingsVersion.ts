/**
 * The code a plan's `settings` make (the set-settings step): the ORIGINAL version with exactly the
 * named literals replaced (preparation/setSettings.ts checks that statically), its blobs written,
 * and its evidence (the diff and the edits). The plan's acceptance stores it as an ACCEPTED code
 * version with a PreparationRecord and freezes it (acceptPlan.ts). Blobs are content-addressed,
 * so making the same version twice (a retried tool call) writes nothing new.
 */
import { applySettingEdits, type SettingEdit } from '../../preparation/setSettings.js';
import type { ManifestEntry } from '../blobs/paths.js';
import type { Resources } from '../resources.js';
import { apiPython } from './compareTaskOutputs.js';
import { loadTree, manifestFromTree, putEvidence } from './codeTrees.js';

export interface SettingsVersion {
  manifest: ManifestEntry[];
  changed: string[];
  diff: string;
  edits: SettingEdit[];
  /** The evidence bundle's blob (only once written: `write`). */
  evidenceSha: string | null;
}

/**
 * The settings version of `jobId`'s uploaded code, or why it cannot be made. With `write` the new
 * blobs and the evidence bundle are stored; without, only checked (submit_plan's check).
 */
export async function settingsVersion(
  r: Resources,
  jobId: string,
  edits: SettingEdit[],
  opts: { write: boolean },
): Promise<{ ok: true; version: SettingsVersion } | { ok: false; problem: string }> {
  const original = await r.prisma.codeVersion.findFirstOrThrow({
    where: { jobId, status: 'ORIGINAL' },
    select: { manifest: true, job: { select: { ownerId: true } } },
  });
  const manifest = original.manifest as unknown as ManifestEntry[];
  const { text } = await loadTree(
    r,
    manifest.filter((m) => edits.some((e) => e.file === m.path)),
  );
  const python = await apiPython().catch(() => null);
  const rewrite = await applySettingEdits(text, edits, python);
  if (!rewrite.ok) return rewrite;
  if (!opts.write) return { ok: true, version: { manifest, changed: rewrite.changed, diff: rewrite.diff, edits, evidenceSha: null } };
  const ownerId = original.job.ownerId;
  const next = await manifestFromTree(r, manifest, rewrite.tree, ownerId);
  const evidenceSha = await putEvidence(
    r,
    {
      'README.txt': [
        `Evidence for set-settings of job ${jobId}: the settings the request named, changed by rewriting exactly their literals.`,
        'Checked statically: each file parses, and its syntax tree (Python) or data (YAML/JSON) equals the original one except at these literals.',
        'No reference run: the user asked for the new values, so there is no old behaviour to preserve.',
        '',
        'diff.patch    the change',
        'edits.json    each setting: file, position, old and new literal',
      ].join('\n'),
      'diff.patch': rewrite.diff,
      'edits.json': JSON.stringify(edits, null, 2),
    },
    ownerId,
  );
  return { ok: true, version: { manifest: next, changed: rewrite.changed, diff: rewrite.diff, edits, evidenceSha } };
}

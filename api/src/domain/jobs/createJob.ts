import type { Prisma as P } from '../../generated/prisma/client.js';
import { unpackArchive } from '../blobs/archive.js';
import { registerBlob } from '../blobs/blobAccess.js';
import { checkTree, normalizeMode, normalizeUploadPath, type ManifestEntry } from '../blobs/paths.js';
import { NotFoundError, ValidationError } from '../errors.js';
import type { Resources } from '../resources.js';
import { recordJobEvent } from './jobEvents.js';

export interface CreateJobInput {
  title: string;
  request: string;
  spendingCapCad?: number | null;
  hardwarePreference?: string | null;
  files?: { path: string; sha256: string; mode?: number | null }[] | null;
  archive?: { sha256: string } | null;
}

export const MAX_FILES = 10_000;

/**
 * Creates a Job (DRAFT) and its ORIGINAL CodeVersion from uploaded blobs: either a
 * file manifest or one archive that is unpacked here. Every referenced blob must be
 * one this user uploaded (or can otherwise read) — a sha256 alone grants nothing.
 * Validation happens before any write; the writes are one transaction.
 */
export async function createJob(r: Resources, userId: string, input: CreateJobInput) {
  const hasFiles = !!input.files && input.files.length > 0;
  if (hasFiles === !!input.archive) {
    throw new ValidationError('Give either files or an archive (exactly one).', [{ path: ['input'], message: 'files or archive' }]);
  }
  let manifest: ManifestEntry[];
  if (input.archive) {
    await requireOwnBlobs(r, userId, [input.archive.sha256], ['input', 'archive']);
    manifest = await unpackArchive(r.blobs, input.archive.sha256, r.config.archive);
    for (const e of manifest) await registerBlob(r, e.sha256, e.size, userId);
  } else {
    const files = input.files!;
    if (files.length > MAX_FILES)
      throw new ValidationError(`At most ${MAX_FILES} files per job.`, [{ path: ['input', 'files'], message: 'too many' }]);
    const sizes = await requireOwnBlobs(
      r,
      userId,
      files.map((f) => f.sha256),
      ['input', 'files'],
    );
    manifest = checkTree(
      files.map((f) => ({
        path: normalizeUploadPath(f.path),
        sha256: f.sha256,
        size: sizes.get(f.sha256)!,
        mode: normalizeMode(f.mode),
      })),
    );
  }
  const totalBytes = manifest.reduce((s, e) => s + e.size, 0);
  const { job, eventId } = await r.prisma.$transaction(async (tx) => {
    const job = await tx.job.create({
      data: {
        ownerId: userId,
        title: input.title.trim(),
        request: input.request.trim(),
        spendingCapCad: input.spendingCapCad ?? null,
        hardwarePreference: input.hardwarePreference ?? null,
        codeVersions: {
          create: {
            status: 'ORIGINAL',
            origin: input.archive ? 'archive' : 'upload',
            manifest: manifest as unknown as P.InputJsonValue,
            fileCount: manifest.length,
            totalBytes: BigInt(totalBytes),
          },
        },
      },
    });
    const eventId = await recordJobEvent(tx, job.id, 'job.created', {
      status: job.status,
      files: manifest.length,
      bytes: totalBytes,
    });
    return { job, eventId };
  });
  await r.events.emit({ type: 'job.event', jobId: job.id, eventId });
  await r.events.emit({ type: 'job.updated', jobId: job.id });
  await r.events.emit({ type: 'job.created', jobId: job.id });
  return job;
}

/** Checks the user may use these blobs; returns their sizes. */
async function requireOwnBlobs(r: Resources, userId: string, shas: string[], path: string[]): Promise<Map<string, number>> {
  const unique = [...new Set(shas)];
  for (const s of unique) {
    if (!/^[0-9a-f]{64}$/.test(s))
      throw new ValidationError(`Not a sha256 hex digest: ${s.slice(0, 80)}`, [{ path, message: 'bad sha256' }]);
  }
  const rows = await r.prisma.blob.findMany({
    where: { sha256: { in: unique }, access: { some: { userId } } },
    select: { sha256: true, size: true },
  });
  const found = new Map(rows.map((b) => [b.sha256, Number(b.size)]));
  const missing = unique.filter((s) => !found.has(s));
  if (missing.length > 0) {
    throw new NotFoundError(
      'Blob',
      `${missing.slice(0, 3).join(', ')}${missing.length > 3 ? ` and ${missing.length - 3} more` : ''} (upload with PUT /blobs/<sha256> first)`,
    );
  }
  return found;
}

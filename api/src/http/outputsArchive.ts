/**
 * GET /jobs/:jobId/outputs.tar.gz — all of a job's outputs as one archive, for its owner
 * (a job that is not yours is the same 404 as one that does not exist).
 *
 * Built on demand and streamed: each output is read from the blob store straight into the
 * tar stream (one entry at a time, with backpressure), so any API host can serve it, none
 * keeps a copy, and memory stays bounded whatever the outputs weigh.
 */
import { once } from 'node:events';
import type { ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import { Header, Pack, ReadEntry } from 'tar';
import type { Principal } from '../domain/auth/principal.js';
import type { BlobStore } from '../domain/blobs/blobStore.js';
import type { ManifestEntry } from '../domain/blobs/paths.js';
import { jobOutputs } from '../domain/jobs/jobOutputs.js';
import type { Resources } from '../domain/resources.js';
import { decodeId } from '../domain/ids.js';
import { sendJson } from './blobRoutes.js';

export async function handleOutputsArchive(r: Resources, who: Principal, res: ServerResponse, rawId: string): Promise<void> {
  if (who.kind !== 'user') return sendJson(res, 401, { error: { code: 'UNAUTHENTICATED', message: 'Send a user token.' } });
  let jobId: string;
  try {
    jobId = decodeId(rawId, 'Job');
  } catch {
    return sendJson(res, 404, { error: { code: 'NOT_FOUND', message: 'No such job.' } });
  }
  const job = await r.prisma.job.findFirst({ where: { id: jobId, ownerId: who.userId }, select: { id: true, title: true } });
  if (!job) return sendJson(res, 404, { error: { code: 'NOT_FOUND', message: 'No such job.' } });
  const files = await jobOutputs(r.prisma, job.id);
  if (files.length === 0) return sendJson(res, 404, { error: { code: 'NOT_FOUND', message: 'This job has no outputs yet.' } });
  res.writeHead(200, {
    'content-type': 'application/gzip',
    'content-disposition': `attachment; filename="job-${job.id.slice(0, 8)}-outputs.tar.gz"`,
  });
  const pack = new Pack({ gzip: true, portable: true });
  const gone = new AbortController();
  const sent = pipeline(pack, res).catch(() => gone.abort());
  try {
    await packBlobs(r.blobs, files, pack, gone.signal);
  } catch (err) {
    // Headers are gone: a broken archive (the connection is cut) is the only way to say so.
    pack.destroy(err as Error);
  }
  await sent;
}

/** Writes each file's blob into `pack` as a tar entry, one at a time, then ends it; stops when `signal` aborts. */
export async function packBlobs(blobs: BlobStore, files: ManifestEntry[], pack: Pack, signal: AbortSignal): Promise<void> {
  for (const f of files) {
    signal.throwIfAborted();
    const entry = new ReadEntry(new Header({ path: f.path, mode: f.mode, size: f.size, mtime: new Date(0), type: 'File', uid: 0, gid: 0 }));
    pack.write(entry);
    for await (const chunk of await blobs.read(f.sha256)) {
      // The entry buffers until the pack reaches it; wait rather than hold a whole file.
      if (!entry.write(chunk as Buffer)) await once(entry, 'drain', { signal });
    }
    entry.end();
  }
  pack.end();
}

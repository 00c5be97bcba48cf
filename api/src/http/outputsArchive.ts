/**
 * GET /jobs/:jobId/outputs.tar.gz — all of a job's outputs as one archive, for its owner
 * (a job that is not yours is the same 404 as one that does not exist).
 */
import { link, copyFile, mkdir, mkdtemp, rm } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { create as createTar } from 'tar';
import type { Principal } from '../domain/auth/principal.js';
import { jobOutputs } from '../domain/jobs/jobOutputs.js';
import type { Resources } from '../domain/resources.js';
import { decodeId } from '../graphql/ids.js';
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
  const dir = await mkdtemp(path.join(tmpdir(), 'chatgpu-outputs-'));
  try {
    for (const f of files) {
      const dest = path.join(dir, f.path);
      await mkdir(path.dirname(dest), { recursive: true });
      await link(r.blobs.pathOf(f.sha256), dest).catch(() => copyFile(r.blobs.pathOf(f.sha256), dest));
    }
    res.writeHead(200, {
      'content-type': 'application/gzip',
      'content-disposition': `attachment; filename="job-${job.id.slice(0, 8)}-outputs.tar.gz"`,
    });
    await new Promise<void>((resolve, reject) => {
      const stream = createTar({ gzip: true, cwd: dir, portable: true }, files.map((f) => f.path));
      stream.on('error', reject);
      res.on('close', () => resolve());
      stream.pipe(res);
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Safe unpacking of an uploaded project archive (.zip or .tar.gz / .tgz) into blobs.
 *
 * Every entry path goes through normalizeUploadPath (no absolute paths, no `..`).
 * Limits are enforced while streaming, not from headers: entry count, total unpacked
 * bytes, and the ratio unpacked/archive size (zip bombs stop at the first byte over).
 * Symlinks and hard links inside the tree become copies of their target file; links
 * that point outside the tree, or at nothing, are refused. Device files and FIFOs are
 * refused. On any failure the blobs this call created are removed again. The archive is
 * read from a local file (zip needs random access): the fs backend's own, else a per-call
 * scratch copy (withBlobFile), so no API host keeps unpacking state between requests.
 */
import { open as openFile } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { Parser as TarParser, type ReadEntry } from 'tar';
import yauzl from 'yauzl';
import { PayloadTooLargeError, ValidationError } from '../errors.js';
import { withBlobFile, type BlobStore } from './blobStore.js';
import { checkTree, normalizeMode, normalizeUploadPath, type ManifestEntry } from './paths.js';

export interface ArchiveLimits {
  maxEntries: number;
  maxBytes: number;
  maxRatio: number;
}

type Link = { path: string; target: string; mode: number };

/** A link's target is a path: longer than the longest path allowed is refused unread. */
const MAX_LINK_TARGET = 4096;

/** Two entries naming one path (after normalization) are ambiguous, as in a file manifest. */
const duplicate = (p: string) =>
  new ValidationError(`Duplicate path in the archive: ${p}`, [{ path: ['archive'], message: `duplicate ${p}` }]);

export async function detectArchiveFormat(file: string): Promise<'zip' | 'tgz' | null> {
  const fh = await openFile(file, 'r');
  try {
    const { buffer, bytesRead } = await fh.read(Buffer.alloc(4), 0, 4, 0);
    if (bytesRead >= 4 && buffer.readUInt32LE(0) === 0x04034b50) return 'zip';
    if (bytesRead >= 2 && buffer[0] === 0x1f && buffer[1] === 0x8b) return 'tgz';
    return null;
  } finally {
    await fh.close();
  }
}

export async function unpackArchive(blobs: BlobStore, archiveSha256: string, limits: ArchiveLimits): Promise<ManifestEntry[]> {
  const stored = await blobs.stat(archiveSha256);
  if (!stored) throw new ValidationError('The archive blob is not stored.', [{ path: ['archive'], message: 'missing' }]);
  return withBlobFile(blobs, archiveSha256, (file) => unpackFile(blobs, file, archiveSha256, stored.size, limits));
}

async function unpackFile(
  blobs: BlobStore,
  file: string,
  archiveSha256: string,
  archiveSize: number,
  limits: ArchiveLimits,
): Promise<ManifestEntry[]> {
  const format = await detectArchiveFormat(file);
  if (!format)
    throw new ValidationError('The archive is neither a .zip nor a .tar.gz file.', [{ path: ['archive'], message: 'unknown format' }]);

  const created: string[] = [];
  const files = new Map<string, ManifestEntry>();
  const named = new Set<string>();
  const links: Link[] = [];
  let entries = 0;
  let total = 0;
  const budget = Math.min(limits.maxBytes, Math.max(archiveSize, 1) * limits.maxRatio);

  const countEntry = () => {
    entries++;
    if (entries > limits.maxEntries) {
      throw new ValidationError(`The archive has more than ${limits.maxEntries} entries.`, [
        { path: ['archive'], message: 'too many entries' },
      ]);
    }
  };
  const storeFile = async (rawPath: string, mode: number, stream: Readable) => {
    const p = normalizeUploadPath(rawPath);
    // Named before the store's first await: tar entries store concurrently.
    if (named.has(p)) throw duplicate(p);
    named.add(p);
    const remaining = budget - total;
    let put;
    try {
      put = await blobs.put(stream, { maxBytes: Math.max(remaining, 0) });
    } catch (err) {
      if (err instanceof PayloadTooLargeError) {
        throw new ValidationError(
          total + remaining >= limits.maxBytes
            ? `The archive unpacks to more than ${limits.maxBytes} bytes.`
            : `The archive expands more than ${limits.maxRatio}× its size (a likely archive bomb).`,
          [{ path: ['archive'], message: 'too large when unpacked' }],
        );
      }
      throw err;
    }
    if (put.created) created.push(put.sha256);
    total += put.size;
    files.set(p, { path: p, sha256: put.sha256, size: put.size, mode: normalizeMode(mode) });
  };

  try {
    if (format === 'zip') await readZip(file, countEntry, storeFile, links);
    else await readTgz(file, countEntry, storeFile, links);
    for (const link of links) {
      if (files.has(link.path)) throw duplicate(link.path);
      const target = files.get(link.target);
      if (!target) {
        throw new ValidationError(`Link ${link.path} points at ${link.target}, which is not a file in the archive.`, [
          { path: ['archive'], message: 'dangling link' },
        ]);
      }
      files.set(link.path, { ...target, path: link.path });
    }
    if (files.size === 0) throw new ValidationError('The archive contains no files.', [{ path: ['archive'], message: 'empty' }]);
    return checkTree([...files.values()]);
  } catch (err) {
    // Remove only the blobs this unpacking created.
    for (const sha of created) if (sha !== archiveSha256) await blobs.remove(sha);
    throw err;
  }
}

/** Resolves a link target relative to the link's directory; refuses escapes. */
function resolveLink(linkPath: string, target: string): string {
  const p = normalizeUploadPath(linkPath);
  if (target.startsWith('/'))
    throw new ValidationError(`Link ${p} points outside the project (${target}).`, [{ path: ['archive'], message: 'link out of tree' }]);
  const joined = path.posix.normalize(path.posix.join(path.posix.dirname(p), target));
  if (joined === '..' || joined.startsWith('../') || joined.startsWith('/')) {
    throw new ValidationError(`Link ${p} points outside the project (${target}).`, [{ path: ['archive'], message: 'link out of tree' }]);
  }
  return normalizeUploadPath(joined);
}

function readZip(
  file: string,
  countEntry: () => void,
  storeFile: (p: string, mode: number, s: Readable) => Promise<void>,
  links: Link[],
): Promise<void> {
  return new Promise((resolve, reject) => {
    yauzl.open(file, { lazyEntries: true, autoClose: true, validateEntrySizes: true, strictFileNames: false }, (err, zip) => {
      if (err || !zip) {
        reject(
          new ValidationError(`The zip archive cannot be read: ${err?.message ?? 'unknown error'}`, [
            { path: ['archive'], message: 'corrupt' },
          ]),
        );
        return;
      }
      const fail = (e: unknown) => {
        zip.close();
        reject(
          e instanceof ValidationError
            ? e
            : new ValidationError(`The zip archive cannot be read: ${(e as Error).message}`, [{ path: ['archive'], message: 'corrupt' }]),
        );
      };
      // The entry being stored when the archive fails (an entry lying about its size fails both
      // its stream and the archive): refuse only once its store has cleaned up after itself, or
      // a temporary file of it is still there when the caller looks.
      let inflight: Promise<void> = Promise.resolve();
      zip.on('error', (e) => void inflight.finally(() => fail(e)));
      zip.on('end', () => resolve());
      zip.on('entry', (entry: yauzl.Entry) => {
        inflight = (async () => {
          countEntry();
          const name = entry.fileName;
          const unixMode = (entry.externalFileAttributes >>> 16) & 0xffff;
          const type = unixMode & 0o170000;
          if (name.endsWith('/')) {
            normalizeUploadPath(name);
            zip.readEntry();
            return;
          }
          if (type !== 0o120000 && type !== 0 && type !== 0o100000) {
            throw new ValidationError(`Entry ${name} is not a regular file.`, [{ path: ['archive'], message: 'special file' }]);
          }
          const stream = await new Promise<Readable>((res, rej) =>
            zip.openReadStream(entry, (e, s) => (e || !s ? rej(e ?? new Error('no stream')) : res(s))),
          );
          // yauzl reports an entry that lies about its size on this stream, possibly after its
          // consumer stopped reading (a refused store): the consumer sees the error, the process
          // never an uncaught one.
          stream.on('error', () => {});
          if (type === 0o120000) {
            const chunks: Buffer[] = [];
            let size = 0;
            for await (const c of stream) {
              size += (c as Buffer).length;
              if (size > MAX_LINK_TARGET) {
                stream.destroy();
                throw new ValidationError(`Link ${name} has a target longer than ${MAX_LINK_TARGET} bytes.`, [
                  { path: ['archive'], message: 'link target too long' },
                ]);
              }
              chunks.push(c as Buffer);
            }
            links.push({
              path: normalizeUploadPath(name),
              target: resolveLink(name, Buffer.concat(chunks).toString('utf8')),
              mode: unixMode,
            });
          } else {
            await storeFile(name, unixMode, stream);
          }
          zip.readEntry();
        })().catch(fail);
      });
      zip.readEntry();
    });
  });
}

async function readTgz(
  file: string,
  countEntry: () => void,
  storeFile: (p: string, mode: number, s: Readable) => Promise<void>,
  links: Link[],
): Promise<void> {
  const { createReadStream } = await import('node:fs');
  const { createGunzip } = await import('node:zlib');
  await new Promise<void>((resolve, reject) => {
    const pending: Promise<void>[] = [];
    const streaming = new Set<ReadEntry>();
    let failed = false;
    const parser = new TarParser({ strict: true });
    const input = createReadStream(file);
    const gunzip = createGunzip();
    const fail = (e: unknown) => {
      if (failed) return;
      failed = true;
      input.destroy();
      gunzip.destroy();
      // Stores still in flight would create blobs after the caller removed this call's blobs:
      // end their streams (no more input comes) and reject only once every one has settled,
      // so the caller removes what they created (nothing of a refused archive stays).
      // (After the chunk the parser is consuming now: it may still write to them.)
      setImmediate(() => {
        for (const entry of streaming) entry.end();
      });
      const error =
        e instanceof ValidationError
          ? e
          : new ValidationError(`The tar.gz archive cannot be read: ${(e as Error).message}`, [{ path: ['archive'], message: 'corrupt' }]);
      void Promise.allSettled(pending).then(() => reject(error));
    };
    parser.on('entry', (entry: ReadEntry) => {
      if (failed) return void entry.resume(); // entries the parser had buffered: refused with the archive
      try {
        countEntry();
        switch (entry.type) {
          case 'File':
          case 'OldFile':
          case 'ContiguousFile':
            streaming.add(entry);
            entry.on('error', () => {}); // its consumer (the blob store's pipeline) sees it; never an uncaught one
            pending.push(
              storeFile(entry.path, entry.mode ?? 0o644, entry as unknown as Readable)
                .catch((e) => {
                  entry.resume();
                  fail(e);
                })
                .finally(() => streaming.delete(entry)),
            );
            return;
          case 'Directory':
            normalizeUploadPath(entry.path);
            break;
          case 'SymbolicLink':
            links.push({ path: normalizeUploadPath(entry.path), target: resolveLink(entry.path, entry.linkpath ?? ''), mode: 0o644 });
            break;
          case 'Link': {
            const target = normalizeUploadPath(entry.linkpath ?? '');
            links.push({ path: normalizeUploadPath(entry.path), target, mode: 0o644 });
            break;
          }
          default:
            throw new ValidationError(`Entry ${entry.path} is not a regular file (${entry.type}).`, [
              { path: ['archive'], message: 'special file' },
            ]);
        }
        entry.resume();
      } catch (e) {
        entry.resume();
        fail(e);
      }
    });
    parser.on('warn', (_code: string, message: string) => fail(new Error(message)));
    parser.on('error', fail);
    parser.on('end', () => {
      Promise.all(pending).then(() => (failed ? undefined : resolve()), fail);
    });
    gunzip.on('error', fail);
    input.on('error', fail);
    input.pipe(gunzip).pipe(parser as unknown as NodeJS.WritableStream);
  });
}

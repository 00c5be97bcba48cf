/**
 * Code versions as trees the preparation toolkit can transform: the text files of a
 * manifest (path → content), and back — a transformed tree becomes a new manifest whose
 * changed files are new blobs (content-addressed, so writing one twice is harmless) and
 * whose unchanged and binary files keep their blobs.
 */
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { create as createTar } from 'tar';
import { unifiedDiff } from '../../preparation/diffs.js';
import type { ManifestEntry } from '../blobs/paths.js';
import { registerBlob } from '../blobs/blobAccess.js';
import { putBuffer } from '../blobs/blobStore.js';
import { readText } from '../jobs/projectFiles.js';
import type { Resources } from '../resources.js';

export type Tree = Record<string, string>;

export interface LoadedTree {
  manifest: ManifestEntry[];
  /** Text files the toolkit may read and rewrite. */
  text: Tree;
}

/** Largest file handed to a transformation; larger ones (data, weights) are kept as they are. */
const MAX_TRANSFORM_BYTES = 2 * 1024 * 1024;

export async function loadTree(r: Resources, manifest: ManifestEntry[]): Promise<LoadedTree> {
  const text: Tree = {};
  for (const e of manifest) {
    const t = await readText(r, e, MAX_TRANSFORM_BYTES);
    if (t !== null) text[e.path] = t;
  }
  return { manifest, text };
}

/**
 * The manifest of `base` with the text files of `tree` written over it. Files of `base` that
 * are not in `tree` stay; new paths of `tree` are added. The owner may read the new blobs.
 */
export async function manifestFromTree(r: Resources, base: ManifestEntry[], tree: Tree, ownerId: string): Promise<ManifestEntry[]> {
  const byPath = new Map(base.map((e) => [e.path, e]));
  for (const [p, content] of Object.entries(tree)) {
    const buf = Buffer.from(content, 'utf8');
    const sha256 = createHash('sha256').update(buf).digest('hex');
    const prev = byPath.get(p);
    if (prev?.sha256 === sha256) continue;
    await putBuffer(r.blobs, buf);
    await registerBlob(r, sha256, buf.length, ownerId);
    byPath.set(p, { path: p, sha256, size: buf.length, mode: prev?.mode ?? 0o644 });
  }
  return [...byPath.values()].sort((a, b) => (a.path < b.path ? -1 : 1));
}

/** A stable identity of a manifest: sha256 of its entries in path order. */
export function manifestSha(manifest: readonly ManifestEntry[]): string {
  const canonical = [...manifest].sort((a, b) => (a.path < b.path ? -1 : 1)).map((e) => [e.path, e.sha256, e.mode]);
  return createHash('sha256').update(JSON.stringify(canonical)).digest('hex');
}

/** The files that differ between two manifests (added, removed or changed). */
export function changedPaths(a: readonly ManifestEntry[], b: readonly ManifestEntry[]): string[] {
  const left = new Map(a.map((e) => [e.path, e.sha256]));
  const right = new Map(b.map((e) => [e.path, e.sha256]));
  return [...new Set([...left.keys(), ...right.keys()])].filter((p) => left.get(p) !== right.get(p)).sort();
}

export { unifiedDiff };

/**
 * An evidence bundle: `files` (name → text) as `evidence/<name>` in a .tar.gz blob the owner may
 * read; its sha256. Portable, with a fixed mtime: the same evidence gives the same bytes (and blob).
 */
export async function putEvidence(r: Resources, files: Readonly<Record<string, string>>, ownerId: string): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'chatgpu-evidence-'));
  try {
    const root = path.join(dir, 'evidence');
    await mkdir(root);
    for (const [name, content] of Object.entries(files)) await writeFile(path.join(root, name), content);
    const tarPath = path.join(dir, 'evidence.tar.gz');
    await createTar({ gzip: true, file: tarPath, cwd: dir, portable: true, mtime: new Date(0) }, ['evidence']);
    const buf = await readFile(tarPath);
    const put = await putBuffer(r.blobs, buf);
    await registerBlob(r, put.sha256, put.size, ownerId);
    return put.sha256;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

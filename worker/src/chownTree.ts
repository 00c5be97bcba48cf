import { lchown, readdir } from 'node:fs/promises';
import path from 'node:path';

/** chown -R without following links (a task's or a package's links point wherever they like). */
export async function chownTree(dir: string, uid: number, gid: number): Promise<void> {
  await lchown(dir, uid, gid);
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) await chownTree(p, uid, gid);
    else await lchown(p, uid, gid);
  }
}

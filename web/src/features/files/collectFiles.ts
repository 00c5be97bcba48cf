/**
 * Turns what the user dropped or picked (files, whole folders, or one archive) into a
 * flat list of project files with relative paths, the way the API's manifest wants them.
 */

export interface PickedFile {
  path: string;
  file: File;
}

export interface Selection {
  files: PickedFile[];
  /** Set when the selection is one .zip / .tar.gz / .tgz that the API unpacks itself. */
  archive: File | null;
  /** Files left out on purpose (version-control and cache folders). */
  skipped: number;
  /** The single top-level folder that was dropped, if any (stripped from paths). */
  root: string | null;
}

const SKIP = /(^|\/)(\.git|__pycache__|\.mypy_cache|\.pytest_cache|node_modules|\.venv)(\/|$)|(^|\/)\.DS_Store$/;
export const ARCHIVE_RE = /\.(zip|tar\.gz|tgz)$/i;

/** Reads a drop: DataTransfer entries let us walk dropped folders (webkitGetAsEntry). */
export async function filesFromDataTransfer(dt: DataTransfer): Promise<PickedFile[]> {
  const entries = [...dt.items].map((i) => (i.kind === 'file' ? i.webkitGetAsEntry?.() : null)).filter((e): e is FileSystemEntry => !!e);
  if (entries.length === 0) return [...dt.files].map((file) => ({ path: file.name, file }));
  const out: PickedFile[] = [];
  for (const e of entries) await walk(e, '', out);
  return out;
}

async function walk(entry: FileSystemEntry, prefix: string, out: PickedFile[]): Promise<void> {
  const path = prefix ? `${prefix}/${entry.name}` : entry.name;
  if (entry.isFile) {
    const file = await new Promise<File>((res, rej) => (entry as FileSystemFileEntry).file(res, rej));
    out.push({ path, file });
  } else if (entry.isDirectory) {
    const reader = (entry as FileSystemDirectoryEntry).createReader();
    // readEntries returns at most ~100 entries per call: read until it returns none.
    for (;;) {
      const batch = await new Promise<FileSystemEntry[]>((res, rej) => reader.readEntries(res, rej));
      if (batch.length === 0) break;
      for (const child of batch) await walk(child, path, out);
    }
  }
}

/** Files from <input type=file> (with or without webkitdirectory). */
export function filesFromInput(list: FileList): PickedFile[] {
  return [...list].map((file) => ({ path: file.webkitRelativePath || file.name, file }));
}

export function toSelection(picked: PickedFile[]): Selection {
  if (picked.length === 1 && ARCHIVE_RE.test(picked[0]!.file.name)) {
    return { files: [], archive: picked[0]!.file, skipped: 0, root: null };
  }
  const kept = picked.filter((p) => !SKIP.test(p.path));
  const skipped = picked.length - kept.length;
  // One dropped folder: its contents are the project.
  const firsts = new Set(kept.map((p) => p.path.split('/')[0]));
  const root = firsts.size === 1 && kept.every((p) => p.path.includes('/')) ? [...firsts][0]! : null;
  const files = kept
    .map((p) => ({ ...p, path: root ? p.path.slice(root.length + 1) : p.path }))
    .sort((a, b) => a.path.localeCompare(b.path));
  return { files, archive: null, skipped, root };
}

export interface TreeNode {
  name: string;
  size: number;
  children?: TreeNode[];
}

export function buildTree(files: { path: string; size: number }[]): TreeNode[] {
  const root: TreeNode = { name: '', size: 0, children: [] };
  for (const f of files) {
    let node = root;
    const parts = f.path.split('/');
    parts.forEach((part, i) => {
      node.size += f.size;
      if (i === parts.length - 1) {
        node.children!.push({ name: part, size: f.size });
        return;
      }
      let next = node.children!.find((c) => c.name === part && c.children);
      if (!next) {
        next = { name: part, size: 0, children: [] };
        node.children!.push(next);
      }
      node = next;
    });
  }
  const sort = (n: TreeNode) => {
    n.children?.sort((a, b) => Number(!!b.children) - Number(!!a.children) || a.name.localeCompare(b.name));
    n.children?.forEach(sort);
  };
  sort(root);
  return root.children!;
}

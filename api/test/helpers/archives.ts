/**
 * In-memory writers of .zip and .tar.gz archives for the archive fuzz suite: any entry a
 * hostile client could put in one (files, directories, symbolic and hard links, FIFOs and
 * devices, paths of any bytes), with options to lie (a zip entry's declared size, a
 * truncated or bit-flipped archive). Pure: no tools, no files.
 */
import { crc32, deflateRawSync, gzipSync } from 'node:zlib';

export type ArchiveEntry =
  | { kind: 'file'; path: string; data: Buffer; mode: number }
  | { kind: 'dir'; path: string }
  | { kind: 'symlink'; path: string; target: string }
  | { kind: 'hardlink'; path: string; target: string }
  | { kind: 'special'; path: string; type: 'fifo' | 'chardev' | 'blockdev' };

// ---------------------------------------------------------------- tar (ustar + pax paths)

function octal(n: number, width: number): string {
  return n.toString(8).padStart(width - 1, '0') + '\0';
}

function tarHeader(name: Buffer, o: { mode: number; size: number; type: string; linkname?: Buffer }): Buffer {
  const h = Buffer.alloc(512);
  name.copy(h, 0, 0, Math.min(name.length, 100));
  h.write(octal(o.mode & 0o7777, 8), 100, 'ascii');
  h.write(octal(0, 8), 108, 'ascii');
  h.write(octal(0, 8), 116, 'ascii');
  h.write(octal(o.size, 12), 124, 'ascii');
  h.write(octal(1_700_000_000, 12), 136, 'ascii');
  h.write('        ', 148, 'ascii');
  h.write(o.type, 156, 'ascii');
  o.linkname?.copy(h, 157, 0, Math.min(o.linkname.length, 100));
  h.write('ustar\0', 257, 'ascii');
  h.write('00', 263, 'ascii');
  let sum = 0;
  for (const b of h) sum += b;
  h.write(octal(sum, 7) + ' ', 148, 'ascii');
  return h;
}

function pad512(b: Buffer): Buffer {
  const rest = b.length % 512;
  return rest ? Buffer.concat([b, Buffer.alloc(512 - rest)]) : b;
}

/** A pax extended header carrying a long or non-ASCII path/linkpath. */
function paxRecords(fields: Record<string, string>): Buffer {
  let out = '';
  for (const [k, v] of Object.entries(fields)) {
    const body = ` ${k}=${v}\n`;
    let len = Buffer.byteLength(body) + 1;
    while (String(len).length + Buffer.byteLength(body) !== len) len = String(len).length + Buffer.byteLength(body);
    out += `${len}${body}`;
  }
  return Buffer.from(out, 'utf8');
}

export function tarGz(entries: ArchiveEntry[]): Buffer {
  const parts: Buffer[] = [];
  for (const e of entries) {
    const name = Buffer.from(e.path, 'utf8');
    const link = 'target' in e ? Buffer.from(e.target, 'utf8') : undefined;
    const needsPax =
      name.length > 99 || (link && link.length > 99) || /[^\x20-\x7e]/.test(e.path) || ('target' in e && /[^\x20-\x7e]/.test(e.target));
    if (needsPax) {
      const rec = paxRecords({ path: e.path, ...('target' in e ? { linkpath: e.target } : {}) });
      parts.push(tarHeader(Buffer.from('PaxHeader'), { mode: 0o644, size: rec.length, type: 'x' }), pad512(rec));
    }
    switch (e.kind) {
      case 'file':
        parts.push(tarHeader(name, { mode: e.mode, size: e.data.length, type: '0' }), pad512(e.data));
        break;
      case 'dir':
        parts.push(tarHeader(name, { mode: 0o755, size: 0, type: '5' }));
        break;
      case 'symlink':
        parts.push(tarHeader(name, { mode: 0o777, size: 0, type: '2', linkname: link }));
        break;
      case 'hardlink':
        parts.push(tarHeader(name, { mode: 0o644, size: 0, type: '1', linkname: link }));
        break;
      case 'special':
        parts.push(tarHeader(name, { mode: 0o644, size: 0, type: { fifo: '6', chardev: '3', blockdev: '4' }[e.type] }));
        break;
    }
  }
  parts.push(Buffer.alloc(1024));
  return gzipSync(Buffer.concat(parts));
}

// ---------------------------------------------------------------- zip

const S_IFREG = 0o100000;
const S_IFDIR = 0o040000;
const S_IFLNK = 0o120000;
const S_IFIFO = 0o010000;
const S_IFCHR = 0o020000;
const S_IFBLK = 0o060000;

/**
 * A zip with each entry deflated (or stored when `store`), UTF-8 names, Unix modes in the
 * external attributes (how zip -y records symlinks). `lieAboutSize` declares a smaller
 * uncompressed size than the data has (a bomb that hides its size).
 */
export function zip(entries: ArchiveEntry[], opts: { store?: boolean; lieAboutSize?: boolean } = {}): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    let data: Buffer;
    let mode: number;
    let name = e.path;
    switch (e.kind) {
      case 'file':
        data = e.data;
        mode = S_IFREG | (e.mode & 0o777);
        break;
      case 'dir':
        data = Buffer.alloc(0);
        mode = S_IFDIR | 0o755;
        if (!name.endsWith('/')) name += '/';
        break;
      case 'symlink':
        data = Buffer.from(e.target, 'utf8');
        mode = S_IFLNK | 0o777;
        break;
      case 'hardlink': // zip has no hard links: a symlink-typed entry is what a client would send
        data = Buffer.from(e.target, 'utf8');
        mode = S_IFLNK | 0o777;
        break;
      case 'special':
        data = Buffer.alloc(0);
        mode = { fifo: S_IFIFO, chardev: S_IFCHR, blockdev: S_IFBLK }[e.type] | 0o644;
        break;
    }
    const nameBuf = Buffer.from(name, 'utf8');
    const method = opts.store ? 0 : 8;
    const body = method === 8 ? deflateRawSync(data) : data;
    const crc = crc32(data);
    const usize = opts.lieAboutSize && data.length > 0 ? Math.floor(data.length / 2) : data.length;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(0x0800, 6);
    local.writeUInt16LE(method, 8);
    local.writeUInt16LE(0, 10);
    local.writeUInt16LE(0x21, 12);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(body.length, 18);
    local.writeUInt32LE(usize, 22);
    local.writeUInt16LE(nameBuf.length, 26);
    local.writeUInt16LE(0, 28);
    locals.push(local, nameBuf, body);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE((3 << 8) | 20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0x0800, 8);
    central.writeUInt16LE(method, 10);
    central.writeUInt16LE(0, 12);
    central.writeUInt16LE(0x21, 14);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(body.length, 20);
    central.writeUInt32LE(usize, 24);
    central.writeUInt16LE(nameBuf.length, 28);
    central.writeUInt32LE(((mode & 0xffff) << 16) >>> 0, 38);
    central.writeUInt32LE(offset, 42);
    centrals.push(central, nameBuf);
    offset += 30 + nameBuf.length + body.length;
  }
  const cd = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cd, end]);
}

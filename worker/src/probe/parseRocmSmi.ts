import { cleanAmdName, guessAmdArch, normalizeGfx } from './amdArch.js';
import { isMissing, stripAnsi, toMiB, type AmdGpu, type AmdProbeResult } from './gpuTypes.js';

/**
 * Parses `rocm-smi` in any of the forms it prints, choosing by shape:
 * - `--json` (recommended: `rocm-smi --showproductname --showmeminfo vram --showdriverversion --json`),
 * - `--csv`,
 * - the key/value text of `--showproductname`, `-a` etc. (`GPU[0]\t\t: Card series: \t\t…`),
 * - the default "Concise Info" table (names only in the new layout).
 */
export function parseRocmSmi(raw: string): AmdProbeResult {
  const text = stripAnsi(raw);
  const trimmed = text.trim();
  if (trimmed === '') return { gpus: [], driver: null, error: 'rocm-smi printed nothing' };
  if (trimmed.startsWith('{')) return parseRocmSmiJson(trimmed);
  if (/^device\s*,/i.test(trimmed)) return parseRocmSmiCsv(trimmed);
  if (/^GPU\[\d+\]/m.test(text)) return parseRocmSmiText(text);
  if (/Concise Info/i.test(text)) return parseRocmSmiConcise(text);
  const failure = /ERROR[^\n]*|No AMD GPUs? (specified|found)[^\n]*|not loaded[^\n]*/i.exec(text)?.[0];
  return { gpus: [], driver: null, error: failure ? failure.trim() : 'unrecognised rocm-smi output' };
}

type Fields = Map<string, string>;

/** Per-card key/value maps (keys lower-cased) → AmdGpu. */
function toGpus(cards: Map<number, Fields>, driver: string | null): AmdGpu[] {
  return [...cards.entries()]
    .sort(([a], [b]) => a - b)
    .map(([index, f]) => {
      const get = (...keys: string[]) => {
        for (const k of keys) {
          const v = f.get(k);
          if (!isMissing(v)) return (v as string).trim();
        }
        return null;
      };
      // Only "Device ID" is the PCI id; "Card model" is the subsystem id on some versions.
      const deviceId = get('device id');
      const name = cleanAmdName(get('card series', 'marketing name', 'card sku'), get('device id'));
      const arch = normalizeGfx(get('gfx version')) ?? guessAmdArch(name);
      const vramBytes = get('vram total memory (b)');
      return {
        index,
        name,
        memoryMiB: vramBytes ? toMiB(vramBytes, 'B') : null,
        arch,
        driver: get('driver version') ?? driver,
        deviceId: deviceId && /^0x/i.test(deviceId) ? deviceId.toLowerCase() : null,
      };
    });
}

export function parseRocmSmiJson(text: string): AmdProbeResult {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    return { gpus: [], driver: null, error: `unreadable rocm-smi JSON: ${(err as Error).message}` };
  }
  if (!data || typeof data !== 'object') return { gpus: [], driver: null, error: 'rocm-smi JSON is not an object' };
  const cards = new Map<number, Fields>();
  let driver: string | null = null;
  for (const [key, value] of Object.entries(data as Record<string, unknown>)) {
    if (!value || typeof value !== 'object') continue;
    const fields: Fields = new Map(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k.toLowerCase(), String(v)]));
    const card = /^card(\d+)$/i.exec(key);
    if (card) cards.set(Number(card[1]), fields);
    else if (key === 'system') driver = fields.get('driver version') ?? null;
  }
  const gpus = toGpus(cards, driver);
  return { gpus, driver, error: gpus.length === 0 ? 'rocm-smi JSON listed no cards' : null };
}

export function parseRocmSmiCsv(text: string): AmdProbeResult {
  const lines = text.split(/\r?\n/).filter((l) => l.trim() !== '');
  const header = (lines[0] ?? '').split(',').map((h) => h.trim().toLowerCase());
  const cards = new Map<number, Fields>();
  for (const line of lines.slice(1)) {
    const cells = splitCsv(line);
    const card = /^card(\d+)$/i.exec(cells[0]?.trim() ?? '');
    if (!card) continue;
    cards.set(Number(card[1]), new Map(header.map((h, i) => [h, cells[i] ?? ''])));
  }
  const gpus = toGpus(cards, null);
  return { gpus, driver: null, error: gpus.length === 0 ? 'rocm-smi CSV listed no cards' : null };
}

export function parseRocmSmiText(text: string): AmdProbeResult {
  const cards = new Map<number, Fields>();
  let driver: string | null = null;
  for (const line of text.split(/\r?\n/)) {
    const m = /^GPU\[(\d+)\]\s*:\s*([^:]+?)\s*:\s*(.*)$/.exec(line);
    if (m) {
      const idx = Number(m[1]);
      const fields = cards.get(idx) ?? new Map<string, string>();
      const key = m[2]!.trim().toLowerCase();
      if (!fields.has(key)) fields.set(key, m[3]!.trim());
      cards.set(idx, fields);
      continue;
    }
    const d = /^Driver version:\s*(\S+)/i.exec(line.trim());
    if (d) driver = d[1]!;
  }
  const gpus = toGpus(cards, driver);
  return { gpus, driver, error: gpus.length === 0 ? 'rocm-smi listed no GPUs' : null };
}

/**
 * The default table. New layout (ROCm 6): a device row "0   [0x74a1 : 0x00]   35.0°C …" followed by
 * a row holding the name (20 chars). Old layout: device rows only, no names.
 */
export function parseRocmSmiConcise(text: string): AmdProbeResult {
  const lines = text.split(/\r?\n/);
  const gpus: AmdGpu[] = [];
  for (let i = 0; i < lines.length; i++) {
    const m = /^(\d+)\s+(?:\d+\s+)?(?:\[(0x[0-9a-f]+)\s*:\s*0x[0-9a-f]+\]\s+)?\S/i.exec(lines[i]!);
    if (!m) continue;
    const nextLine = lines[i + 1] ?? '';
    const nameRow = /^\s{4,}(\S.*?)\s*$/.exec(nextLine);
    const deviceId = m[2]?.toLowerCase() ?? null;
    const name = cleanAmdName(nameRow?.[1] ?? null, deviceId);
    gpus.push({ index: Number(m[1]), name, memoryMiB: null, arch: guessAmdArch(name), driver: null, deviceId });
  }
  return { gpus, driver: null, error: gpus.length === 0 ? 'rocm-smi table listed no GPUs' : null };
}

/** Splits a CSV line, honouring double quotes (rocm-smi quotes fields that contain commas). */
function splitCsv(line: string): string[] {
  const out: string[] = [];
  let cur = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i]!;
    if (quoted) {
      if (ch === '"' && line[i + 1] === '"') {
        cur += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else cur += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') {
      out.push(cur);
      cur = '';
    } else cur += ch;
  }
  out.push(cur);
  return out.map((c) => c.trim());
}

import { cleanAmdName, guessAmdArch, normalizeGfx } from './amdArch.js';
import { isMissing, stripAnsi, toMiB, type AmdGpu, type AmdProbeResult } from './gpuTypes.js';

/**
 * Parses the text (YAML-like, indented) output of `amd-smi static` (and `static --asic`, `list`):
 *
 *   GPU: 0
 *       ASIC:
 *           MARKET_NAME: MI300A
 *           TARGET_GRAPHICS_VERSION: gfx942
 *       VRAM:
 *           SIZE: 64289 MB
 *
 * `CPU: n` sections of APUs are skipped. `amd-smi list` yields GPUs without names (still a count).
 * JSON output (`--json`) is accepted too.
 */
export function parseAmdSmi(raw: string): AmdProbeResult {
  const text = stripAnsi(raw).replace(/\r\n/g, '\n');
  const trimmed = text.trim();
  if (trimmed.startsWith('[') || trimmed.startsWith('{')) return parseAmdSmiJson(trimmed);

  const sections = new Map<number, Map<string, string>>();
  let current: Map<string, string> | null = null;
  const path: { indent: number; key: string }[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const top = /^(GPU|CPU):\s*(\d+)\s*$/.exec(line);
    if (top) {
      current = top[1] === 'GPU' ? new Map() : null;
      if (current) sections.set(Number(top[2]), current);
      path.length = 0;
      continue;
    }
    if (!current) continue;
    const m = /^(\s+)([^:]+?):\s*(.*)$/.exec(line);
    if (!m) continue;
    const indent = m[1]!.length;
    while (path.length > 0 && path[path.length - 1]!.indent >= indent) path.pop();
    const key = m[2]!.trim().toUpperCase();
    const value = m[3]!.trim();
    const full = [...path.map((p) => p.key), key].join('.');
    if (value === '') path.push({ indent, key });
    else if (!current.has(full)) current.set(full, value);
  }
  if (sections.size === 0) {
    return { gpus: [], driver: null, error: firstLine(text) || 'amd-smi printed nothing' };
  }
  const gpus = [...sections.entries()].sort(([a], [b]) => a - b).map(([index, f]) => fromFields(index, (k) => f.get(k) ?? null));
  return { gpus, driver: gpus.find((g) => g.driver)?.driver ?? null, error: null };
}

function fromFields(index: number, get: (key: string) => string | null): AmdGpu {
  const val = (k: string) => {
    const v = get(k);
    return isMissing(v) || /<redacted>/i.test(v ?? '') ? null : (v as string);
  };
  const deviceId = val('ASIC.DEVICE_ID')?.toLowerCase() ?? null;
  const market = val('ASIC.MARKET_NAME');
  const product = cleanAmdName(val('BOARD.PRODUCT_NAME'));
  let name = market ? cleanAmdName(market, deviceId) : (product ?? cleanAmdName(null, deviceId));
  // MARKET_NAME is often just "MI300A": say whose it is.
  if (name && /^MI\d/i.test(name)) name = `AMD Instinct ${name}`;
  const arch = normalizeGfx(val('ASIC.TARGET_GRAPHICS_VERSION')) ?? guessAmdArch(name) ?? guessAmdArch(product);
  return {
    index,
    name,
    memoryMiB: toMiB(val('VRAM.SIZE')),
    arch,
    driver: val('DRIVER.VERSION'),
    deviceId,
  };
}

function parseAmdSmiJson(text: string): AmdProbeResult {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    return { gpus: [], driver: null, error: `unreadable amd-smi JSON: ${(err as Error).message}` };
  }
  const list = Array.isArray(data) ? data : [data];
  const gpus: AmdGpu[] = [];
  for (const [i, entry] of list.entries()) {
    if (!entry || typeof entry !== 'object' || !('gpu' in entry)) continue;
    const flat = new Map<string, string>();
    flatten(entry as Record<string, unknown>, '', flat);
    const idx = Number((entry as { gpu: unknown }).gpu);
    gpus.push(fromFields(Number.isInteger(idx) ? idx : i, (k) => flat.get(k) ?? null));
  }
  return { gpus, driver: gpus.find((g) => g.driver)?.driver ?? null, error: gpus.length === 0 ? 'amd-smi JSON listed no GPUs' : null };
}

function flatten(obj: Record<string, unknown>, prefix: string, out: Map<string, string>): void {
  for (const [k, v] of Object.entries(obj)) {
    const key = prefix + k.toUpperCase();
    if (v && typeof v === 'object' && !Array.isArray(v)) {
      const o = v as Record<string, unknown>;
      // amd-smi JSON writes sizes as {"value": 64289, "unit": "MB"}
      if ('value' in o && 'unit' in o) out.set(key, `${String(o.value)} ${String(o.unit)}`);
      else flatten(o, `${key}.`, out);
    } else if (v !== null && v !== undefined) out.set(key, String(v));
  }
}

function firstLine(s: string): string {
  return (
    s
      .split('\n')
      .map((l) => l.trim())
      .find((l) => l) ?? ''
  );
}

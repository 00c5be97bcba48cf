import { normalizeGfx } from './amdArch.js';
import { stripAnsi, toMiB, type AmdGpu, type AmdProbeResult } from './gpuTypes.js';

/**
 * Parses `rocminfo`: one block per HSA agent, separated by "*******" / "Agent N" banners. GPU agents
 * (Device Type: GPU) give the exact target ("Name: gfx942"), the marketing name and, as VRAM, the size
 * of the first GLOBAL pool that is COARSE GRAINED (device-local memory; fine-grained pools of an APU
 * may be system memory). Without a GPU the tool exits 1 with "ROCk module is NOT loaded".
 */
export function parseRocminfo(raw: string): AmdProbeResult {
  const text = stripAnsi(raw);
  if (/ROCk module is NOT loaded|HSA_STATUS_ERROR|Unable to open \/dev\/kfd/i.test(text) && !/Agent \d+/.test(text)) {
    const msg = /[^\n]*(ROCk module is NOT loaded|HSA_STATUS_ERROR|Unable to open \/dev\/kfd)[^\n]*/i.exec(text)?.[0];
    return { gpus: [], driver: null, error: (msg ?? 'rocminfo failed').trim() };
  }
  const blocks = text.split(/^\s*\*{3,}\s*\n\s*Agent \d+\s*\n\s*\*{3,}\s*$/m).slice(1);
  if (blocks.length === 0) return { gpus: [], driver: null, error: 'unrecognised rocminfo output' };

  const gpus: AmdGpu[] = [];
  for (const block of blocks) {
    const top = (key: string) => new RegExp(`^  ${key}:\\s*(.*?)\\s*$`, 'm').exec(block)?.[1] ?? null;
    if (!/^gpu$/i.test(top('Device Type') ?? '')) continue;
    const name = top('Name');
    const isa = /^\s*Name:\s*(amdgcn-[^\s]+)/m.exec(block)?.[1] ?? null;
    const marketing = top('Marketing Name');
    gpus.push({
      index: gpus.length,
      name: marketing && marketing.length > 0 ? marketing : null,
      memoryMiB: vramOf(block),
      arch: normalizeGfx(name) ?? normalizeGfx(isa),
      driver: null,
      deviceId: null,
    });
  }
  return { gpus, driver: null, error: gpus.length === 0 ? 'rocminfo listed no GPU agents' : null };
}

function vramOf(block: string): number | null {
  const pools = block.split(/^\s*Pool \d+\s*$/m).slice(1);
  let fallback: number | null = null;
  for (const pool of pools) {
    const segment = /Segment:\s*(.*)$/m.exec(pool)?.[1] ?? '';
    const size = /Size:\s*(\d+)\([^)]*\)\s*(KB|MB|GB|B)?/m.exec(pool);
    if (!size || !/GLOBAL/i.test(segment)) continue;
    const mib = toMiB(`${size[1]} ${size[2] ?? 'KB'}`);
    if (/COARSE GRAINED/i.test(segment)) return mib;
    fallback ??= mib;
  }
  return fallback;
}

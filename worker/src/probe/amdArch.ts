/**
 * AMD GPU names and architectures. The tools disagree: rocminfo prints the exact target ("gfx942"),
 * rocm-smi prints a marketing "Card series" (or, on old versions, only the PCI device id), and
 * amd-smi's `static` may or may not include TARGET_GRAPHICS_VERSION. These tables fill the gaps.
 */

/**
 * "gfx942:sramecc+:xnack-" → "gfx942"; "amdgcn-amd-amdhsa--gfx90a:xnack-" → "gfx90a".
 * rocm-smi's "GFX Version" prints gfx9 steppings in decimal ("gfx9010" for gfx90a, major 9 minor 0
 * stepping 10); those are converted back to the target name. gfx10+/11+ ("gfx1030") are left alone.
 */
export function normalizeGfx(raw: string | null | undefined): string | null {
  if (!raw) return null;
  const m = /gfx([0-9a-f]+)/i.exec(raw);
  if (!m) return null;
  const v = m[1]!.toLowerCase();
  const decimalStepping = /^9(\d)(\d{2})$/.exec(v);
  if (decimalStepping) {
    const stepping = Number(decimalStepping[2]);
    if (stepping < 16) return `gfx9${decimalStepping[1]}${stepping.toString(16)}`;
  }
  return `gfx${v}`;
}

// PCI device ids → product, for rocm-smi versions that print only the id.
const BY_DEVICE_ID: Record<string, string> = {
  '0x6860': 'AMD Instinct MI25',
  '0x66a0': 'AMD Instinct MI50',
  '0x66a1': 'AMD Instinct MI50/MI60',
  '0x738c': 'AMD Instinct MI100',
  '0x738e': 'AMD Instinct MI100',
  '0x7408': 'AMD Instinct MI250X',
  '0x740c': 'AMD Instinct MI250X/MI250',
  '0x740f': 'AMD Instinct MI210',
  '0x74a0': 'AMD Instinct MI300A',
  '0x74a1': 'AMD Instinct MI300X',
  '0x74a2': 'AMD Instinct MI308X',
  '0x74a5': 'AMD Instinct MI325X',
  '0x731f': 'AMD Radeon RX 5700 XT',
  '0x73bf': 'AMD Radeon RX 6800/6900 XT',
  '0x73df': 'AMD Radeon RX 6700 XT',
  '0x73ff': 'AMD Radeon RX 6600 XT',
  '0x744c': 'AMD Radeon RX 7900 XTX',
};

export function amdNameFromDeviceId(id: string | null | undefined): string | null {
  if (!id) return null;
  const m = /^0x0*([0-9a-f]+)$/i.exec(id.trim());
  if (!m) return null;
  return BY_DEVICE_ID[`0x${m[1]!.toLowerCase().padStart(4, '0')}`] ?? null;
}

// First match wins: specific models before families.
const ARCH_BY_NAME: [RegExp, string][] = [
  [/MI3(00|08|25)[XA]?\b|MI300/i, 'gfx942'],
  [/MI355|MI350/i, 'gfx950'],
  [/MI2(10|50)X?\b|MI200\b/i, 'gfx90a'],
  [/MI100\b|Arcturus/i, 'gfx908'],
  [/MI(50|60)\b|Radeon VII|Vega 20/i, 'gfx906'],
  [/MI25\b|Vega 10|Vega (56|64)/i, 'gfx900'],
  [/RX\s*90[67]0/i, 'gfx1201'],
  [/RX\s*79\d\d|W7900|W7800/i, 'gfx1100'],
  [/RX\s*7[78]\d\d/i, 'gfx1101'],
  [/RX\s*76\d\d/i, 'gfx1102'],
  [/RX\s*6[89]\d\d|W6800|V620/i, 'gfx1030'],
  [/RX\s*67\d\d/i, 'gfx1031'],
  [/RX\s*66\d\d/i, 'gfx1032'],
  [/RX\s*5[67]\d\d/i, 'gfx1010'],
  [/RX\s*55\d\d/i, 'gfx1012'],
];

export function guessAmdArch(name: string | null | undefined): string | null {
  if (!name) return null;
  for (const [re, arch] of ARCH_BY_NAME) if (re.test(name)) return arch;
  return null;
}

/** "Arcturus GL-XL [AMD Instinct MI100]" → "AMD Instinct MI100"; hex ids → the product they name. */
export function cleanAmdName(series: string | null | undefined, deviceId?: string | null): string | null {
  const s = series?.trim() ?? '';
  if (/^0x[0-9a-f]+$/i.test(s)) return amdNameFromDeviceId(s) ?? amdNameFromDeviceId(deviceId) ?? null;
  const bracket = /\[((?:AMD )?(?:Instinct|Radeon)[^\]]*)\]/i.exec(s);
  if (bracket) return bracket[1]!.startsWith('AMD') ? bracket[1]! : `AMD ${bracket[1]}`;
  if (s) return s;
  return amdNameFromDeviceId(deviceId);
}

/**
 * CUDA architecture names. `compute_cap` ("8.9") is exact; the name tables are a fallback for the
 * outputs that lack it (old drivers, the default table, `-q -x` XML).
 */

/** "8.9" → "sm_89", "12.0" → "sm_120". */
export function archFromComputeCap(cap: string | null | undefined): string | null {
  if (!cap) return null;
  const m = /^\s*(\d+)\.(\d+)\s*$/.exec(cap);
  return m ? `sm_${m[1]}${m[2]}` : null;
}

// Order matters: the first match wins, so specific names come before families.
const BY_NAME: [RegExp, string][] = [
  [/\b(GB|B)(100|200|300)\b/i, 'sm_100'],
  [/\bRTX\s*50\d\d\b|RTX PRO \d000 Blackwell/i, 'sm_120'],
  [/\b(GH|H)(100|200|800|20)\b/i, 'sm_90'],
  [/\bA100\b|\bA800\b|\bA30\b/i, 'sm_80'],
  [/\bL4\b|\bL40S?\b|\bL20\b|RTX\s*40\d\d|RTX \d000 Ada|\bAda\b/i, 'sm_89'],
  [/RTX\s*30\d\d|\bRTX A\d{4}\b|\bA(2|10|10G|16|40)\b|\bA\d{3,4}M?\b Laptop/i, 'sm_86'],
  [/RTX\s*20\d\d|GTX\s*16\d\d|\bT4\b|Quadro RTX|TITAN RTX|\bT(400|600|1000|1200)\b/i, 'sm_75'],
  [/\bV100|TITAN V\b/i, 'sm_70'],
  [/\bP100\b/i, 'sm_60'],
  [/GTX\s*10\d\d|\bP(4|40|6|6000|5000|4000|2000)\b|TITAN Xp?\b/i, 'sm_61'],
  [/GTX\s*9\d\d|\bM(40|60|6000)\b|TITAN X\b/i, 'sm_52'],
];

// `product_architecture` in `-q -x` XML. Ampere and Blackwell span several compute capabilities; the
// name table above already caught the data-center parts, so the consumer value is the better guess.
const BY_FAMILY: Record<string, string> = {
  blackwell: 'sm_120',
  hopper: 'sm_90',
  'ada lovelace': 'sm_89',
  ampere: 'sm_86',
  turing: 'sm_75',
  volta: 'sm_70',
  pascal: 'sm_61',
  maxwell: 'sm_52',
};

export function guessNvidiaArch(name: string | null | undefined, family?: string | null): string | null {
  if (name) {
    for (const [re, arch] of BY_NAME) if (re.test(name)) return arch;
  }
  if (family) return BY_FAMILY[family.trim().toLowerCase()] ?? null;
  return null;
}

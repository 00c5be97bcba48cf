/**
 * Conformance: every parser over every real tool output in ../shared/fixtures/gpu-probes/ (outputs
 * recorded on real machines by other public projects; see its INDEX.md). They are read in place and
 * never copied into the project. Each file must (1) not make any parser throw, and (2) give the
 * expected result through the parser for its tool. CI has the folder; elsewhere the suite is skipped
 * under a name that says so.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAmdSmi } from './parseAmdSmi.js';
import { parseCollectEnv } from './parseCollectEnv.js';
import { parseNvidiaSmiCsv } from './parseNvidiaSmiCsv.js';
import { parseNvidiaSmiTable } from './parseNvidiaSmiTable.js';
import { parseNvidiaSmiXml } from './parseNvidiaSmiXml.js';
import { parseRocminfo } from './parseRocminfo.js';
import { parseRocmSmi } from './parseRocmSmi.js';
import { parseSysctl, sysctlInfo } from './parseSysctl.js';

const repoRoot = resolve(fileURLToPath(new URL('.', import.meta.url)), '../../..');
const dir = resolve(repoRoot, '../shared/fixtures/gpu-probes');
const present = existsSync(dir);

/** Everything after the "#@ ---" header line is the tool's output. */
function body(file: string): string {
  const text = readFileSync(join(dir, file), 'utf8');
  const at = text.indexOf('#@ ---\n');
  return at >= 0 ? text.slice(at + '#@ ---\n'.length) : text;
}

const PARSERS: Record<string, (t: string) => unknown> = {
  parseNvidiaSmiCsv: (t) => parseNvidiaSmiCsv(t),
  parseNvidiaSmiTable,
  parseNvidiaSmiXml,
  parseRocmSmi,
  parseRocminfo,
  parseAmdSmi,
  parseSysctl,
  sysctlInfo,
  parseCollectEnv,
};

/** Which parser reads a file, from its name (tool_flags_machine.ext). */
function parserFor(file: string): string {
  if (file.startsWith('nvidia-smi_-q-x')) return 'parseNvidiaSmiXml';
  if (file.startsWith('nvidia-smi_query-gpu')) return 'parseNvidiaSmiCsv';
  if (file.startsWith('nvidia-smi_default')) return 'parseNvidiaSmiTable';
  if (file.startsWith('rocm-smi')) return 'parseRocmSmi';
  if (file.startsWith('rocminfo')) return 'parseRocminfo';
  if (file.startsWith('amd-smi')) return 'parseAmdSmi';
  if (file.startsWith('sysctl')) return 'sysctlInfo';
  if (file.startsWith('torch_collect_env')) return 'parseCollectEnv';
  return 'unknown';
}

const H100 = { name: 'NVIDIA H100 80GB HBM3', memoryMiB: 81559, arch: 'sm_90' };
const MI300X = { name: 'AMD Instinct MI300X', arch: 'gfx942' };
const times = <T>(n: number, x: T): T[] => Array.from({ length: n }, () => x);

/** What each known file must give; `gpus` is matched element-wise with toMatchObject. */
const EXPECTED: Record<string, Record<string, unknown>> = {
  'nvidia-smi_-q-x_a100-sxm4-40gb-mig_drv510.xml': {
    driver: '510.47.03',
    cuda: '11.6',
    error: null,
    gpus: [
      {
        index: 0,
        name: 'NVIDIA A100-SXM4-40GB',
        memoryMiB: 40960,
        arch: 'sm_80',
        migEnabled: true,
        migDevices: [
          { index: 0, memoryMiB: 19968 },
          { index: 1, memoryMiB: 19968 },
        ],
      },
    ],
  },
  'nvidia-smi_-q-x_rtx3060-laptop_drv515.xml': {
    driver: '515.65.01',
    cuda: '11.7',
    error: null,
    gpus: [{ index: 0, name: 'NVIDIA GeForce RTX 3060 Laptop GPU', memoryMiB: 6144, arch: 'sm_86', migEnabled: false }],
  },
  'nvidia-smi_-q-x_rtx4090_drv535.xml': {
    driver: '535.86.05',
    cuda: '12.2',
    error: null,
    gpus: [{ index: 0, name: 'NVIDIA GeForce RTX 4090', memoryMiB: 24564, arch: 'sm_89' }],
  },
  'nvidia-smi_default_8x-h100-sxm_drv565.txt': {
    driver: '565.57.01',
    cuda: '12.7',
    error: null,
    gpus: times(8, H100).map((g, index) => ({ ...g, index })),
  },
  'nvidia-smi_default_driver-broken.txt': {
    gpus: [],
    error: expect.stringMatching(/NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver/),
  },
  'nvidia-smi_default_h100-80gb-hbm3_drv590.txt': { driver: '590.48.01', cuda: '13.1', error: null, gpus: [{ index: 0, ...H100 }] },
  'nvidia-smi_default_rtx4080super_drv595.txt': {
    driver: '595.71.05',
    cuda: '13.2',
    error: null,
    gpus: [{ index: 0, name: 'NVIDIA GeForce RTX 4080 ...', memoryMiB: 16376, arch: 'sm_89' }],
  },
  'nvidia-smi_query-gpu_allfields_csv_h100.txt': {
    driver: '590.48.01',
    error: null,
    gpus: [{ index: 0, ...H100, computeCap: '9.0' }],
  },
  'nvidia-smi_query-gpu_allfields_csv_rtx4080super.txt': {
    driver: '595.71.05',
    error: null,
    gpus: [{ index: 0, name: 'NVIDIA GeForce RTX 4080 SUPER', memoryMiB: 16376, computeCap: '8.9', arch: 'sm_89' }],
  },
  'nvidia-smi_query-gpu_csv_2gpu-gtx1080ti-gtx1060.csv': {
    error: null,
    gpus: [
      { index: 0, name: 'GeForce GTX 1080 Ti', memoryMiB: 11175, arch: 'sm_61' },
      { index: 1, name: 'GeForce GTX 1060 6GB', memoryMiB: 6078, arch: 'sm_61' },
    ],
  },
  'nvidia-smi_query-gpu_csv_nounits_tesla-p100.csv': {
    error: null,
    // no memory.total in this query: reserved 103 + used 0 + free 16280
    gpus: [{ index: 0, name: 'Tesla P100-PCIE-16GB', memoryMiB: 16383, arch: 'sm_60' }],
  },
  'rocm-smi_--showproductname_--csv_2x-mi100.csv': {
    error: null,
    gpus: times(2, { name: 'AMD Instinct MI100', arch: 'gfx908' }).map((g, index) => ({ ...g, index })),
  },
  'rocm-smi_--showproductname_--json_mi250x.json': {
    error: null,
    gpus: [{ index: 0, name: 'AMD INSTINCT MI200 (MCM) OAM LC MBA HPE C2', arch: 'gfx90a' }],
  },
  'rocm-smi_--showproductname_mi100_rocm4.txt': {
    error: null,
    gpus: [{ index: 0, name: 'AMD Instinct MI100', arch: 'gfx908' }],
  },
  'rocm-smi_-a_showallinfo_4x-mi300x.txt': {
    error: null,
    driver: '6.7.0',
    gpus: [0, 1, 2, 3].map((index) => ({ index, name: 'AMD Instinct MI300X OAM', arch: 'gfx942', deviceId: '0x74a1', driver: '6.7.0' })),
  },
  'rocm-smi_default_4x-mi300x.txt': {
    error: null,
    gpus: [0, 1, 2, 3].map((index) => ({ index, ...MI300X, deviceId: '0x74a1' })),
  },
  'rocminfo_4x-mi300x_gfx942.txt': {
    error: null,
    gpus: [0, 1, 2, 3].map((index) => ({ index, ...MI300X, memoryMiB: 196592 })),
  },
  'amd-smi_list_2gpu.txt': {
    error: null,
    gpus: [
      { index: 0, name: null },
      { index: 1, name: null },
    ],
  },
  'amd-smi_static_--asic_mi308x_gfx942.txt': {
    error: null,
    gpus: [{ index: 0, name: 'AMD Instinct MI308X', arch: 'gfx942', deviceId: '0x74a2' }],
  },
  'amd-smi_static_4x-mi300a.txt': {
    error: null,
    driver: '6.9.0-rc5+',
    gpus: [0, 1, 2, 3].map((index) => ({ index, name: 'AMD Instinct MI300A', memoryMiB: 64289, arch: 'gfx942', deviceId: '0x74a0' })),
  },
  'sysctl_machdep.cpu_apple-m1.txt': { cpuBrand: 'Apple M1', cores: 8, appleArch: 'apple-m1', memoryMiB: null },
  'torch_collect_env_cuda_rtx4090.txt': {
    torchVersion: '2.0.0',
    cudaBuild: '11.7',
    rocmBuild: null,
    cudaAvailable: true,
    cudaRuntime: '11.7.64',
    nvidiaDriver: '530.30.02',
    pythonVersion: '3.10.9',
    gpus: [{ index: 0, name: 'NVIDIA GeForce RTX 4090', arch: null }],
  },
  'torch_collect_env_macos-arm64_m2max.txt': {
    torchVersion: '2.10.0.dev20251008',
    cudaBuild: null,
    cudaAvailable: false,
    gpus: [],
    cpu: 'Apple M2 Max',
    os: 'macOS 13.7.4 (arm64)',
    packages: { numpy: '2.3.3', torch: '2.10.0.dev20251008', torchaudio: '2.8.0.dev20251008', torchvision: '0.25.0.dev20251008' },
  },
  'torch_collect_env_rocm_rx5700xt_gfx1010.txt': {
    torchVersion: '2.7.0.dev20250123+rocm6.3',
    cudaBuild: null,
    rocmBuild: '6.3.42131-fa1d09cbd',
    cudaAvailable: true,
    hipRuntime: '6.3.42131',
    gpus: [{ index: 0, name: 'AMD Radeon RX 5700 XT', arch: 'gfx1010' }],
  },
};

if (!present) console.warn(`gpu-probe conformance SKIPPED: ${dir} not found (CI has it)`);

describe.skipIf(!present)('gpu-probe conformance over ../shared/fixtures/gpu-probes', () => {
  const files = present
    ? readdirSync(dir)
        .filter((f) => f !== 'INDEX.md' && !f.startsWith('.'))
        .sort()
    : [];

  it('finds the recorded outputs and a parser for each', () => {
    expect(files.length).toBeGreaterThanOrEqual(20);
    for (const f of files) expect(parserFor(f), f).not.toBe('unknown');
  });

  it.each(files)('no parser throws on %s', (file) => {
    const text = body(file);
    for (const [name, parse] of Object.entries(PARSERS)) {
      expect(() => parse(text), `${name} on ${file}`).not.toThrow();
    }
  });

  it.each(files)('%s parses to the expected result', (file) => {
    const result = PARSERS[parserFor(file)]!(body(file)) as Record<string, unknown>;
    const expected = EXPECTED[file];
    if (!expected) {
      // A file added after this test was written: it must at least be read without failure.
      expect(result).toBeTruthy();
      if ('gpus' in result) expect((result.gpus as unknown[]).length > 0 || result.error !== null).toBe(true);
      return;
    }
    const { gpus, ...rest } = expected;
    expect(result).toMatchObject(rest);
    if (gpus) {
      const got = result.gpus as Record<string, unknown>[];
      expect(got).toHaveLength((gpus as unknown[]).length);
      (gpus as Record<string, unknown>[]).forEach((g, i) => expect(got[i], `${file} gpu ${i}`).toMatchObject(g));
    }
  });
});

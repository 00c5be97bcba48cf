import type { ExecFn } from './types.js';

/** "Cuda compilation tools, release 12.2, V12.2.140" → "12.2.140" (or "12.2" without the V part). */
export function parseNvccVersion(text: string): string | null {
  const v = /Cuda compilation tools,\s*release\s*([\d.]+),\s*V([\d.]+)/i.exec(text);
  if (v) return v[2]!;
  return /release\s+(\d+\.\d+)/i.exec(text)?.[1] ?? null;
}

/** "HIP version: 5.2.21153-0" → "5.2.21153". (hipcc may also print nvcc's banner: ignored.) */
export function parseHipccVersion(text: string): string | null {
  return /HIP version:\s*(\d+(?:\.\d+)*)/i.exec(text)?.[1] ?? null;
}

export interface ToolchainProbe {
  nvcc: string | null;
  hipcc: string | null;
  errors: string[];
}

const NVCC = ['nvcc', '/usr/local/cuda/bin/nvcc', '/opt/cuda/bin/nvcc'];
const HIPCC = ['hipcc', '/opt/rocm/bin/hipcc'];

/** Finds nvcc and hipcc on PATH or in their usual homes; a missing compiler is not an error. */
export async function probeToolchains(exec: ExecFn, timeoutMs: number, env?: NodeJS.ProcessEnv): Promise<ToolchainProbe> {
  const errors: string[] = [];
  const find = async (names: string[], parse: (t: string) => string | null): Promise<string | null> => {
    for (const name of names) {
      const r = await exec(name, ['--version'], { timeoutMs, env });
      if (r.error === 'not found') continue;
      const v = parse(`${r.stdout}\n${r.stderr}`);
      if (v) return v;
      errors.push(`${name} --version: ${r.error ?? `exit ${r.code}`}, no version found`);
      return null;
    }
    return null;
  };
  const [nvcc, hipcc] = await Promise.all([find(NVCC, parseNvccVersion), find(HIPCC, parseHipccVersion)]);
  return { nvcc, hipcc, errors };
}

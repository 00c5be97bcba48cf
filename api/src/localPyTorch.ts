/**
 * `npm start` on a fresh machine: the README's first example trains a PyTorch model on the
 * local worker, so that worker needs a Python with PyTorch. When none of the machine's Pythons
 * has it and we run as root with apt (a fresh Debian/Ubuntu box, a container), Debian's
 * python3-torch is installed once, saying so, with a progress line per package; otherwise one
 * sentence says what to install. Either way the worker starts: without PyTorch it still runs
 * plain Python jobs, and the planner explains a PyTorch job before it runs.
 */
import { existsSync } from 'node:fs';
import { aptInstall } from './aptGet.js';
import { DEFAULT_PYTHON_CANDIDATES, findPython } from './preparation/findPython.js';

export const TORCH_PACKAGES = ['python3-torch', 'python3-numpy'];

export interface PyTorchCheck {
  /** present: a Python already had it; installed: now it does; explained / failed: it does not. */
  outcome: 'present' | 'installed' | 'explained' | 'failed';
  python: string | null;
  torch: string | null;
  /** The sentence shown to the person starting it (null when there is nothing to say). */
  message: string | null;
}

export async function ensureLocalPyTorch(opts: {
  install: 'auto' | 'never';
  isRoot: boolean;
  /** apt-get's path (tests pass a stand-in). */
  aptGet?: string;
  candidates?: readonly string[];
  log: (line: string) => void;
}): Promise<PyTorchCheck> {
  const candidates = opts.candidates ?? DEFAULT_PYTHON_CANDIDATES;
  const find = () => findPython({ candidates, modules: ['torch'] });
  const found = await find();
  if (found) return { outcome: 'present', python: found.path, torch: found.modules.torch ?? null, message: null };
  const aptGet = opts.aptGet ?? '/usr/bin/apt-get';
  const manual = `install it (Debian/Ubuntu: \`sudo apt-get install ${TORCH_PACKAGES.join(' ')}\`) and start again, or run a worker with \`--python PATH\` to an interpreter that has it`;
  if (opts.install === 'never' || !opts.isRoot || !existsSync(aptGet)) {
    const message = `The local worker has no Python with PyTorch, so PyTorch jobs will be explained rather than run: ${manual}.`;
    opts.log(message);
    return { outcome: 'explained', python: null, torch: null, message };
  }
  opts.log(
    `The local worker has no Python with PyTorch: installing Debian's ${TORCH_PACKAGES.join(' and ')} (once, about 800 MB; CHATGPU_INSTALL_TORCH=never skips this)…`,
  );
  const install = await aptInstall(aptGet, TORCH_PACKAGES, opts.log);
  const after = await find();
  if (install === 0 && after) {
    const message = `Installed PyTorch ${after.modules.torch ?? ''} for ${after.path}.`;
    opts.log(message);
    return { outcome: 'installed', python: after.path, torch: after.modules.torch ?? null, message };
  }
  const message = `Installing PyTorch failed (apt-get exited ${install}), so PyTorch jobs will be explained rather than run: ${manual}.`;
  opts.log(message);
  return { outcome: 'failed', python: null, torch: null, message };
}

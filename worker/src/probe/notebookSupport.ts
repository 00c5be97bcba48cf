import type { Capabilities } from './types.js';

/** What the notebook runner (python/chatgpu/notebook.py) imports on the chosen interpreter. */
export const NOTEBOOK_MODULES = ['nbclient', 'ipykernel'] as const;
const DEBIAN = 'python3-nbclient python3-ipykernel';

/**
 * Whether this worker runs notebooks (`python -m chatgpu.notebook`) as it is: null when it does,
 * else one sentence for its owner. The planner reads the same modules from the capabilities
 * (`pythons[].modules`) and installs the missing ones in a setup phase where the worker allows it.
 */
export function notebookSupport(caps: Pick<Capabilities, 'python' | 'pythons' | 'install'>): string | null {
  if (!caps.python) return null; // no Python at all is said elsewhere
  const runtime = caps.pythons.find((p) => p.path === caps.python);
  if (!runtime) return null;
  const missing = NOTEBOOK_MODULES.filter((m) => !runtime.modules.includes(m));
  if (missing.length === 0) return null;
  return `notebooks: ${caps.python} lacks ${missing.join(' and ')} (Debian/Ubuntu: apt-get install ${DEBIAN}); ${
    caps.install.enabled
      ? 'a notebook job installs them in its setup phase on this worker'
      : 'notebook jobs go to workers that have them (the setup phase is off here)'
  }`;
}

import type { ExecFn, PythonRuntime } from './types.js';
import { describeFailure } from './execCommand.js';

/**
 * Python (a fragment of both the probe and the setup's base inspection) that fills `out["install"]`:
 * a trial virtualenv, pip's version, ensurepip, and pip's configured index (PIP_INDEX_URL, else
 * `global.index-url`, else `install.index-url` from pip's own configuration files).
 */
export const PIP_INSTALL_SNIPPET = String.raw`
try:
    import venv, tempfile, shutil
    d = tempfile.mkdtemp(prefix="chatgpu-venv-trial-")
    try:
        venv.EnvBuilder(system_site_packages=True, with_pip=False, symlinks=(os.name != "nt")).create(os.path.join(d, "v"))
        out["install"]["venv"] = os.path.isfile(os.path.join(d, "v", "pyvenv.cfg"))
    finally:
        shutil.rmtree(d, ignore_errors=True)
except Exception as e:
    out["install"]["reason"] = "venv: %s" % e
try:
    import ensurepip
    out["install"]["ensurepip"] = bool(ensurepip.version())
except Exception:
    pass
try:
    import pip
    out["install"]["pip"] = str(pip.__version__)
    idx = os.environ.get("PIP_INDEX_URL") or None
    if not idx:
        from pip._internal.configuration import Configuration
        c = Configuration(isolated=False)
        c.load()
        for key in ("global.index-url", "install.index-url"):
            try:
                idx = c.get_value(key)
                break
            except Exception:
                pass
    out["install"]["index"] = idx or None
except Exception:
    pass
`;

/**
 * Run as `python -c PYTHON_PROBE_SCRIPT` for each candidate interpreter. Every import is guarded, so
 * a broken torch still reports the Python version. It prints one line, prefixed so that anything a
 * sitecustomize or a noisy import prints on stdout cannot be mistaken for it. The current directory
 * is dropped from sys.path first, so a stray `torch.py` where the worker runs cannot shadow torch.
 * Works on Python 2.7+ syntax-wise up to the version check, so an ancient `python` reports itself.
 *
 * Besides torch it reports what the setup phase (setupEnv.ts) needs to know, in the same process:
 * - `modules`: the top-level modules installed distributions provide (the planner's "the worker has
 *   it"), from `packages_distributions()` on Python ≥ 3.10, else distribution names, plus the
 *   top-level modules found in the site directories (packages installed without metadata);
 * - `install`: whether a virtualenv can be made (a real one, with the system site packages, in a
 *   temporary directory: ~50 ms, no subprocess) and which pip it would use (this Python's own, ≥ 20.3
 *   for the resolver that honours constraints, or ensurepip's), and pip's configured index.
 */
export const PYTHON_PROBE_SCRIPT = String.raw`
import sys, os, json
sys.path[:] = [p for p in sys.path if p not in ('', '.', os.getcwd())]
out = {"executable": sys.executable, "realpath": os.path.realpath(sys.executable), "prefix": sys.prefix,
       "version": "%d.%d.%d" % tuple(sys.version_info[:3]), "torch": None, "numpy": None,
       "devices": [], "errors": [], "modules": [],
       "install": {"venv": False, "pip": None, "ensurepip": False, "index": None, "reason": None}}
try:
    mods = set()
    try:
        from importlib import metadata as md
    except ImportError:
        md = None
    if md is not None and hasattr(md, "packages_distributions"):
        mods.update(md.packages_distributions())
    elif md is not None:
        for d in md.distributions():
            n = d.metadata["Name"]
            if n: mods.add(n.lower().replace("-", "_"))
    # Plus what is importable from the site directories without distribution metadata (Debian
    # ships some packages that way, e.g. sympy): a module the planner thinks missing would make
    # it refuse a job that runs. The standard library's own directory is not walked.
    import pkgutil, sysconfig
    stdlib_dirs = {os.path.realpath(sysconfig.get_paths().get(k, "")) for k in ("stdlib", "platstdlib")}
    site_dirs = [p for p in sys.path if p and os.path.isdir(p) and os.path.realpath(p) not in stdlib_dirs and "lib-dynload" not in p]
    mods.update(mi.name for mi in pkgutil.iter_modules(site_dirs) if not mi.name.startswith("_"))
    std = set(getattr(sys, "stdlib_module_names", ()))
    out["modules"] = sorted(m for m in mods if m.isidentifier() and m not in std)[:2000]
except Exception as e:
    out["errors"].append("modules: %s" % e)
${PIP_INSTALL_SNIPPET}
try:
    import numpy
    out["numpy"] = str(numpy.__version__)
except Exception as e:
    if not isinstance(e, ImportError): out["errors"].append("numpy: %s" % e)
try:
    import torch
    t = {"version": str(torch.__version__).split("+")[0],
         "cuda": getattr(torch.version, "cuda", None), "hip": getattr(torch.version, "hip", None),
         "cudaAvailable": False, "mpsAvailable": False, "deviceCount": 0}
    try:
        t["cudaAvailable"] = bool(torch.cuda.is_available())
        if t["cudaAvailable"]:
            t["deviceCount"] = int(torch.cuda.device_count())
            for i in range(t["deviceCount"]):
                p = torch.cuda.get_device_properties(i)
                out["devices"].append({"index": i, "name": p.name,
                    "capability": "%d.%d" % (p.major, p.minor),
                    "gcnArch": getattr(p, "gcnArchName", None),
                    "memoryMiB": int(p.total_memory // (1024 * 1024))})
    except Exception as e:
        out["errors"].append("torch.cuda: %s" % e)
    try:
        mps = getattr(torch.backends, "mps", None)
        t["mpsAvailable"] = bool(mps is not None and mps.is_available())
        if t["mpsAvailable"] and t["deviceCount"] == 0:
            t["deviceCount"] = 1
    except Exception as e:
        out["errors"].append("torch.mps: %s" % e)
    out["torch"] = t
except Exception as e:
    if not isinstance(e, ImportError): out["errors"].append("torch: %s" % e)
sys.stdout.write("CHATGPU_PROBE " + json.dumps(out) + "\n")
sys.stdout.flush()
`;

export interface TorchDevice {
  index: number;
  name: string;
  /** "8.9" on CUDA; on ROCm torch reports its own "9.4"-style numbers, so use gcnArch there. */
  capability: string | null;
  /** "gfx942:sramecc+:xnack-" on ROCm builds */
  gcnArch: string | null;
  memoryMiB: number | null;
}

export interface PythonProbe {
  runtime: PythonRuntime;
  /** sys.executable; `identity` (sys.prefix + its realpath) tells interpreters apart: bin/python and
   * bin/python3 of one install are one, a venv (same binary, own prefix) is another. */
  executable: string;
  identity: string;
  devices: TorchDevice[];
  /** Non-fatal problems the script saw (a torch that fails to import for a reason other than absence). */
  errors: string[];
  install: PythonInstallProbe;
}

/** What the setup phase could do with this interpreter (see PIP_INSTALL_SNIPPET). */
export interface PythonInstallProbe {
  /** a virtualenv with the system site packages could be made */
  venv: boolean;
  /** this interpreter's own pip version (visible inside such a virtualenv), or null */
  pip: string | null;
  /** ensurepip can put a pip into a new virtualenv */
  ensurepip: boolean;
  /** pip's configured index, as configured (may hold credentials: never reported as is) */
  index: string | null;
  /** why no virtualenv could be made */
  reason: string | null;
}

/** pip ≥ 20.3 has the resolver that fails on a conflict with a constraint instead of breaking it. */
export function pipHasResolver(version: string | null): boolean {
  const m = /^(\d+)\.(\d+)/.exec(version ?? '');
  return !!m && (Number(m[1]) > 20 || (Number(m[1]) === 20 && Number(m[2]) >= 3));
}

/** Can the setup phase use this interpreter: a virtualenv, and a pip for it? */
export function canInstall(i: PythonInstallProbe): boolean {
  return i.venv && (pipHasResolver(i.pip) || i.ensurepip);
}

/** Reads the probe's line; null when there is none or it is not the expected JSON. */
export function parsePythonProbe(stdout: string, path: string): PythonProbe | null {
  const line = stdout
    .split(/\r?\n/)
    .reverse()
    .find((l) => l.startsWith('CHATGPU_PROBE '));
  if (!line) return null;
  let d: Record<string, unknown>;
  try {
    d = JSON.parse(line.slice('CHATGPU_PROBE '.length)) as Record<string, unknown>;
  } catch {
    return null;
  }
  if (!d || typeof d !== 'object' || typeof d.version !== 'string') return null;
  const str = (v: unknown) => (typeof v === 'string' && v.length > 0 ? v : null);
  const t = d.torch as Record<string, unknown> | null | undefined;
  const torch =
    t && typeof t === 'object' && typeof t.version === 'string'
      ? {
          version: t.version,
          cuda: str(t.cuda),
          hip: str(t.hip),
          cudaAvailable: t.cudaAvailable === true,
          mpsAvailable: t.mpsAvailable === true,
          deviceCount: typeof t.deviceCount === 'number' && Number.isInteger(t.deviceCount) ? t.deviceCount : 0,
        }
      : null;
  const devices: TorchDevice[] = Array.isArray(d.devices)
    ? (d.devices as Record<string, unknown>[])
        .filter((x) => x && typeof x === 'object' && typeof x.name === 'string')
        .map((x, i) => ({
          index: typeof x.index === 'number' ? x.index : i,
          name: x.name as string,
          capability: str(x.capability),
          gcnArch: str(x.gcnArch),
          memoryMiB: typeof x.memoryMiB === 'number' ? x.memoryMiB : null,
        }))
    : [];
  const executable = str(d.executable) ?? path;
  const modules = Array.isArray(d.modules)
    ? d.modules.filter((m): m is string => typeof m === 'string' && /^[A-Za-z_]\w*$/.test(m)).slice(0, 2000)
    : [];
  const i = (d.install && typeof d.install === 'object' ? d.install : {}) as Record<string, unknown>;
  return {
    runtime: { path: executable, version: d.version, torch, numpy: str(d.numpy), modules },
    executable,
    identity: `${str(d.prefix) ?? ''}\0${str(d.realpath) ?? executable}`,
    devices,
    errors: Array.isArray(d.errors) ? d.errors.filter((e): e is string => typeof e === 'string') : [],
    install: { venv: i.venv === true, pip: str(i.pip), ensurepip: i.ensurepip === true, index: str(i.index), reason: str(i.reason) },
  };
}

/** Runs the probe with one interpreter; never throws. */
export async function probePython(
  path: string,
  exec: ExecFn,
  timeoutMs: number,
): Promise<{ probe: PythonProbe | null; error: string | null }> {
  const r = await exec(path, ['-c', PYTHON_PROBE_SCRIPT], { timeoutMs });
  const probe = parsePythonProbe(r.stdout, path);
  if (probe) return { probe, error: probe.errors.length ? `${path}: ${probe.errors.join('; ')}` : null };
  return { probe: null, error: describeFailure(path, r) };
}

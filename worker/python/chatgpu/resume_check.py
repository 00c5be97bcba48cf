"""The kill-and-resume check of a program made resumable (chatgpu.resume): does resuming change nothing?

    python -m chatgpu.resume_check [--halt-at K] [--report PATH] -- COMMAND...

1. A: COMMAND runs uninterrupted here (its outputs are this task's outputs), saving a checkpoint after
   every iteration of its loop, and writes a digest of its final state (every tensor's sha256).
2. B: the same command in a copy of this folder (taken before A ran), stopped after iteration k
   (default: half of A's iterations) right after that checkpoint, and SIGKILLed with its process group;
   then started again in a fresh process, which resumes from the checkpoint and runs to the end.
   A and B's first process start with the RNGs seeded alike (CHATGPU_RESUME_SEED=1), the resumed process
   with another seed (2): a program that never seeds draws the same data and weights in A and B, and
   whatever the resume fails to restore differs (chatgpu.resume seeds at its import, the program's first
   statement; a program's own seeds win).
3. Equal when the two final digests (parameters, optimizer/scheduler/scaler state, loop-carried values,
   RNG states) are identical, the files under outputs/ are byte-identical, and the lines mentioning a
   loss that B logged (before its checkpoint, then after resuming) are those A logged, durations, rates
   and clock times in them aside (they differ between any two runs).

Two modes (``--mode``, default ``auto``, or CHATGPU_RESUME_CHECK_MODE):

- bitwise (as above): where the runs are deterministic, i.e. the state lives on the CPU, or the program
  turned on torch.use_deterministic_algorithms;
- tolerance: where exact equality is impossible, i.e. the run used CUDA, ROCm or MPS without deterministic
  algorithms (their kernels, atomics in reductions, make two uninterrupted runs differ too), or when asked
  (``--mode tolerance``). Floating-point state (parameters, optimizer moments, carried floats) is then equal
  when |a - b| <= atol + rtol * |a| elementwise (a: the uninterrupted run), with ``--rtol``/``--atol`` (the
  job's numeric tolerance) or torch.testing's defaults per dtype; everything else (shapes, dtypes,
  integers, step counts, RNG states) must still be bitwise equal. Output files that differ are compared
  by their numbers (.pt/.pth/.npy/.npz/.json/text), and the loss lines by theirs (the text around the
  numbers equal; each number within the tolerance plus one unit of its last printed digit, since a
  printed figure is rounded). The report says the mode, why, the tolerance and the largest differences.

Prints what it compared and writes the report as JSON (default .chatgpu/resume-check.json); exit 0 when
equal, 1 when not, 2 when the check could not be made (the command failed, too few iterations).
"""

import argparse
import hashlib
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

SKIP = {"checkpoint", ".chatgpu", "outputs", "__pycache__"}
LOSS = re.compile(r"loss", re.I)


def _copy(src, dst):
    """Large files (data) are linked, not copied: the runs read them; small ones (code, configs) are copied."""
    if os.path.getsize(src) > (1 << 20):
        try:
            os.link(src, dst)
            return dst
        except OSError:
            pass
    return shutil.copy2(src, dst)


def _tree(root):
    out = {}
    if not os.path.isdir(root):
        return out
    for d, _, files in os.walk(root):
        for f in files:
            p = os.path.join(d, f)
            with open(p, "rb") as fh:
                out[os.path.relpath(p, root)] = hashlib.sha256(fh.read()).hexdigest()
    return out


# Figures that differ from run to run whatever the numerics: durations, rates, clock times, MFU.
TIMING = [
    re.compile(r"\b(time|elapsed|dt|eta|mfu|speed|throughput|took)\b(\s*[:=]?\s*)[-+]?\d[\d.,e+-]*\s*(ms|s|sec|secs|seconds|min|%)?", re.I),
    re.compile(r"[-+]?\d[\d.,]*\s*(ms|s|sec|secs|seconds|it/s|s/it|samples/s|tokens/s|img/s)\b"),
    re.compile(r"\b\d\d:\d\d(:\d\d)?(\.\d+)?\b"),
    # A rate written unit first, as PyTorch's examples log it: "| ms/batch 45.67 |", "s/epoch: 3.2".
    re.compile(r"\b(ms|s|sec|secs|seconds)\s*/\s*(batch|step|it|iter|iteration|epoch|sample|token)s?\b(\s*[:=]?\s*)[-+]?\d[\d.,e+-]*", re.I),
]


def _mask(line):
    for t in TIMING:
        line = t.sub("<t>", line)
    return line


def _losses(text):
    return [_mask(l.rstrip()) for l in text.splitlines() if LOSS.search(l) and not l.startswith("chatgpu.resume:")]


# ─────────────── tolerance mode ───────────────

# torch.testing.assert_close's defaults, used when the job gives no tolerance.
DEFAULT_TOL = {"float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5), "float32": (1.3e-6, 1e-5), "float64": (1e-7, 1e-7)}
NON_DETERMINISTIC = {"cuda": "cuda", "mps": "mps", "xpu": "xpu", "xla": "xla"}
NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|[-+]?(?:nan|inf)\b", re.I)


def decide_mode(requested, run, rtol=None, atol=None):
    """(mode, reason): bitwise where the runs are deterministic, tolerance where they cannot be (or when asked).
    ``run`` is what chatgpu.resume wrote beside the uninterrupted run's digest: its devices, ROCm, deterministic algorithms."""
    run = run or {}
    if requested == "bitwise":
        return "bitwise", "bitwise asked for (--mode bitwise)"
    if requested == "tolerance":
        return "tolerance", "tolerance asked for (--mode tolerance)"
    accel = [d for d in run.get("devices", []) if d != "cpu" and d != "meta"]
    if not accel:
        return "bitwise", "device cpu: deterministic"
    names = ", ".join(("rocm" if d == "cuda" and run.get("hip") else d) for d in accel)
    if run.get("deterministic"):
        return "bitwise", f"device {names} with torch.use_deterministic_algorithms(True)"
    return "tolerance", f"device {names}: non-deterministic kernels"


class Tolerance:
    """rtol/atol given (the job's), else torch.testing's per dtype; records the largest differences seen."""

    def __init__(self, rtol=None, atol=None):
        self.rtol, self.atol = rtol, atol
        self.largest = {}
        self.last = (0.0, 0.0)

    def describe(self):
        if self.rtol is None and self.atol is None:
            return {"source": "default", "rtol": DEFAULT_TOL["float32"][0], "atol": DEFAULT_TOL["float32"][1], "note": "torch.testing's defaults per dtype (float16 rtol=1e-3, bfloat16 1.6e-2, float32 1.3e-6, float64 1e-7)"}
        r, a = self.of("float32")
        return {"source": "job", "rtol": r, "atol": a}

    def of(self, dtype):
        d = DEFAULT_TOL.get(str(dtype).replace("torch.", ""), DEFAULT_TOL["float64"])
        return (self.rtol if self.rtol is not None else d[0]), (self.atol if self.atol is not None else d[1])

    def _note(self, kind, where, abs_d, rel_d):
        cur = self.largest.get(kind)
        if abs_d > 0 and (cur is None or abs_d > cur["absolute"]):
            self.largest[kind] = {"at": where, "absolute": abs_d, "relative": rel_d}

    def close(self, kind, where, a, b, dtype="float64", slack=0.0):
        """Elementwise |a - b| <= atol + rtol * |a| (+ slack); a and b: torch tensors, numpy arrays or floats."""
        import numpy as np

        rtol, atol = self.of(dtype)
        x = _as_array(a)
        y = _as_array(b)
        if x.shape != y.shape:
            return False
        if x.size == 0:
            return True
        nan_x, nan_y = np.isnan(x), np.isnan(y)
        if (nan_x != nan_y).any():
            return False
        x, y = np.where(nan_x, 0, x), np.where(nan_y, 0, y)
        with np.errstate(invalid="ignore", over="ignore"):
            inf = np.isinf(x) | np.isinf(y)
            if inf.any() and (x[inf] != y[inf]).any():
                return False
            x, y = np.where(inf, 0, x), np.where(inf, 0, y)
            diff = np.abs(x - y)
            allowed = atol + rtol * np.abs(x) + slack
            rel = diff / np.maximum(np.abs(x), np.finfo(np.float64).tiny)
        self.last = (float(diff.max()), float(rel.max()))
        self._note(kind, where, *self.last)
        return bool((diff <= allowed).all())


def _as_array(v):
    import numpy as np

    torch = sys.modules.get("torch")
    if torch is not None and isinstance(v, torch.Tensor):
        t = v.detach().cpu()
        if t.is_complex():
            t = torch.view_as_real(t)
        return t.to(torch.float64).numpy()
    a = np.asarray(v)
    if np.iscomplexobj(a):
        a = np.stack([a.real, a.imag], axis=-1)
    return a.astype(np.float64)


def _dtype(v):
    return str(getattr(v, "dtype", "float64")).replace("torch.", "")


def _load_values(path):
    import torch

    kw = {"weights_only": False} if "weights_only" in torch.load.__code__.co_varnames else {}
    try:
        return torch.load(path, map_location="cpu", **kw)
    except (OSError, RuntimeError, ValueError, EOFError):
        return None


def _numbers_of_file(path):
    """(exact, floats) of an output file: exact leaves (compared equal) and floating-point ones, or None (bytes only)."""
    from chatgpu.resume import _flatten

    ext = os.path.splitext(path)[1].lower()
    exact, floats = {}, {}
    try:
        if ext in (".pt", ".pth", ".ckpt", ".bin"):
            import torch

            kw = {"weights_only": False} if "weights_only" in torch.load.__code__.co_varnames else {}
            _flatten("", torch.load(path, map_location="cpu", **kw), exact, floats)
        elif ext in (".npy", ".npz"):
            import numpy as np

            data = np.load(path, allow_pickle=False)
            _flatten("", dict(data) if ext == ".npz" else data, exact, floats)
        elif ext == ".json":
            with open(path) as f:
                _flatten("", json.load(f), exact, floats)
        else:
            return None
    except Exception:  # noqa: BLE001 - any file the loaders cannot read is compared by its bytes
        return None
    for k in floats:
        exact.pop(k, None)  # a float's digest (its sha256 or repr) is what differs; its value is compared instead
    return exact, floats


TEXT = {".txt", ".csv", ".tsv", ".log", ".md", ".out", ".yaml", ".yml", ""}


def _outputs_close(tol, name, pa, pb):
    """Two output files that differ in bytes, compared by their numbers within the tolerance (None: not comparable so)."""
    if os.path.splitext(pa)[1].lower() in TEXT:
        try:
            with open(pa, encoding="utf8") as f:
                la = f.read().splitlines()
            with open(pb, encoding="utf8") as f:
                lb = f.read().splitlines()
        except (OSError, UnicodeDecodeError):
            return None
        return len(la) == len(lb) and all([_lines_close(tol, f"outputs/{name}:{i + 1}", x, y, "outputs") for i, (x, y) in enumerate(zip(la, lb))])
    na, nb = _numbers_of_file(pa), _numbers_of_file(pb)
    if na is None or nb is None:
        return None
    (ea, fa), (eb, fb) = na, nb
    if ea != eb or set(fa) != set(fb):
        return False
    return all([_dtype(fa[k]) == _dtype(fb[k]) and tol.close("outputs", f"outputs/{name}{k}", fa[k], fb[k], _dtype(fa[k])) for k in sorted(fa)])


def _last_digit(token):
    """One unit of a printed number's last digit (0.1234 -> 1e-4, 12 -> 1, 1.5e-3 -> 1e-4)."""
    m = re.match(r"[-+]?(\d*)(?:\.(\d*))?(?:[eE]([-+]?\d+))?$", token)
    if not m:
        return 0.0
    return 10.0 ** (-(len(m.group(2) or "")) + int(m.group(3) or 0))


def _lines_close(tol, where, a, b, kind="losses"):
    if a == b:
        return True
    if NUMBER.sub("#", a) != NUMBER.sub("#", b):
        return False
    ok = True
    for i, (x, y) in enumerate(zip(NUMBER.findall(a), NUMBER.findall(b))):
        if x == y:
            continue
        slack = max(_last_digit(x), _last_digit(y)) if not re.search(r"nan|inf", x + y, re.I) else 0.0
        ok = tol.close(kind, f"{where}, number {i + 1}", float(x), float(y), "float64", slack) and ok
    return ok


def _run(cmd, cwd, env, halt_file=None, timeout=None):
    """Runs cmd in its own process group; with halt_file, SIGKILLs the group once the file appears."""
    with tempfile.TemporaryFile() as out:
        p = subprocess.Popen(cmd, shell=True, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        halted = False
        start = time.monotonic()
        while p.poll() is None:
            if halt_file and os.path.exists(halt_file):
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
                halted = True
                break
            if timeout and time.monotonic() - start > timeout:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
                break
            time.sleep(0.02)
        out.seek(0)
        text = out.read().decode("utf8", "replace")
    return {"code": p.returncode, "halted": halted, "output": text}


def _meta(ckdir):
    try:
        with open(os.path.join(ckdir, "chatgpu-checkpoint.json")) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def check(command, halt_at=None, timeout=None, cwd=".", mode="auto", rtol=None, atol=None):
    cwd = os.path.abspath(cwd)
    # Scratch inside the task's own folder (.chatgpu/, which the copy leaves out) where it can be: a
    # worker's private /tmp may be small, and the task's disk is what the run is given.
    own = os.path.join(cwd, ".chatgpu")
    try:
        os.makedirs(own, exist_ok=True)
        scratch = tempfile.mkdtemp(prefix="resume-check-", dir=own)
    except OSError:
        scratch = tempfile.mkdtemp(prefix="chatgpu-resume-check-")
    try:
        b_dir = os.path.join(scratch, "b")
        shutil.copytree(cwd, b_dir, ignore=lambda d, names: [n for n in names if d == cwd and n in SKIP], copy_function=_copy)
        base = dict(os.environ)
        for k in ("CHATGPU_RESUME", "CHATGPU_RESUME_STEP", "CHATGPU_RESUME_HALT_AT", "CHATGPU_RESUME_HALT_FILE", "CHATGPU_RESUME_DIGEST"):
            base.pop(k, None)
        base["CHATGPU_RESUME_EVERY_STEPS"] = "1"
        base["PYTHONUNBUFFERED"] = "1"  # what a killed process logged is kept (the worker sets it too)
        a_ck, b_ck = os.path.join(scratch, "a-checkpoint"), os.path.join(scratch, "b-checkpoint")
        a_digest, b_digest = os.path.join(scratch, "a-digest.json"), os.path.join(scratch, "b-digest.json")
        halt_file = os.path.join(scratch, "halted")

        # The same seed for the run compared and the run killed, another for the resumed process (resume.py _seed_for_check).
        base["CHATGPU_RESUME_SEED"] = "1"
        a = _run(command, cwd, {**base, "CHATGPU_CHECKPOINT_DIR": a_ck, "CHATGPU_RESUME_DIGEST": a_digest}, timeout=timeout)
        sys.stdout.write(a["output"])
        report = {"command": command, "uninterrupted": {"exitCode": a["code"]}}
        if a["code"] != 0:
            return 2, {**report, "equal": False, "problem": f"the uninterrupted run failed (exit {a['code']})"}
        total = _meta(a_ck).get("step")
        if not os.path.exists(a_digest) or total is None:
            return 2, {**report, "equal": False, "problem": "the uninterrupted run never reached the resumable loop (no checkpoint, no digest)"}
        report["uninterrupted"]["steps"] = total
        k = halt_at if halt_at is not None else total // 2
        if not 1 <= k < total:
            return 2, {**report, "equal": False, "problem": f"cannot stop after step {k} of a run of {total} step(s): the bounded workload needs at least 2 iterations of the loop"}
        b_env = {**base, "CHATGPU_CHECKPOINT_DIR": b_ck, "CHATGPU_OUTPUT_DIR": os.path.join(b_dir, "outputs")}
        b1 = _run(command, b_dir, {**b_env, "CHATGPU_RESUME_HALT_AT": str(k), "CHATGPU_RESUME_HALT_FILE": halt_file, "CHATGPU_RESUME_DIGEST": b_digest}, halt_file=halt_file, timeout=timeout)
        report["killed"] = {"afterStep": k, "signal": "SIGKILL" if b1["halted"] else None, "exitCode": b1["code"]}
        if not b1["halted"]:
            return 2, {**report, "equal": False, "problem": f"the run to interrupt never reached step {k} (exit {b1['code']})"}
        b2 = _run(command, b_dir, {**b_env, "CHATGPU_RESUME": "1", "CHATGPU_RESUME_DIGEST": b_digest, "CHATGPU_RESUME_SEED": "2"}, timeout=timeout)
        resumed = re.search(r"chatgpu\.resume: resumed at step (\d+)", b2["output"])
        report["resumed"] = {"exitCode": b2["code"], "atStep": int(resumed.group(1)) if resumed else None}
        if b2["code"] != 0:
            return 1, {**report, "equal": False, "problem": f"the resumed run failed (exit {b2['code']}): {b2['output'][-1500:]}"}
        if not resumed:
            return 1, {**report, "equal": False, "problem": "the resumed run started from scratch: it found no checkpoint"}

        differences = []
        with open(a_digest) as f:
            da = json.load(f)
        with open(b_digest) as f:
            db = json.load(f)
        # An RNG the program does not seed starts differently in every process: not compared (said in the report).
        unseeded = []
        try:
            with open(f"{a_digest}.start") as f:
                sa = json.load(f)
            with open(f"{b_digest}.start") as f:
                sb = json.load(f)
            unseeded = sorted(k for k in sa if sa.get(k) != sb.get(k))
        except (OSError, ValueError):
            pass
        for k in unseeded:
            da.pop(k, None)
            db.pop(k, None)
        report["notCompared"] = [f"{k}: not seeded by the program (differs between two fresh starts)" for k in unseeded]
        # Bitwise, or within a tolerance where the device makes exact equality impossible (decide_mode).
        try:
            with open(f"{a_digest}.device") as f:
                run_info = json.load(f)
        except (OSError, ValueError):
            run_info = {}
        mode, reason = decide_mode(mode, run_info)
        report["mode"], report["modeReason"] = mode, reason
        tol = Tolerance(rtol, atol) if mode == "tolerance" else None
        va = vb = None
        if tol:
            report["tolerance"] = tol.describe()
            va, vb = _load_values(f"{a_digest}.values") or {}, _load_values(f"{b_digest}.values") or {}
        for key in sorted(set(da) | set(db)):
            if da.get(key) != db.get(key):
                if tol and key in va and key in vb and _dtype(va[key]) == _dtype(vb[key]):
                    if tol.close("state", key, va[key], vb[key], _dtype(va[key])):
                        continue
                    r_, a_ = tol.of(_dtype(va[key]))
                    differences.append(f"state {key}: beyond rtol={r_:g}, atol={a_:g} (largest difference {tol.last[0]:.3g}, relative {tol.last[1]:.3g})")
                else:
                    differences.append(f"state {key}: uninterrupted {da.get(key)!r}, resumed {db.get(key)!r}")
        oa, ob = _tree(os.path.join(cwd, "outputs")), _tree(os.path.join(b_dir, "outputs"))
        for p in sorted(set(oa) | set(ob)):
            if oa.get(p) != ob.get(p):
                if tol and p in oa and p in ob:
                    close = _outputs_close(tol, p, os.path.join(cwd, "outputs", p), os.path.join(b_dir, "outputs", p))
                    if close:
                        continue
                    differences.append(f"outputs/{p}: {'differs beyond the tolerance' if close is False else 'differs (not comparable by its numbers)'}")
                else:
                    differences.append(f"outputs/{p}: {'differs' if p in oa and p in ob else 'only in one run'}")
        la, l1, l2 = _losses(a["output"]), _losses(b1["output"]), _losses(b2["output"])
        m = len(la) - len(l2)
        got = l1[:m] + l2 if m >= 0 else l2

        def same(i, x, y):
            return x == y if not tol else _lines_close(tol, f"loss line {i + 1}", x, y)

        if m < 0 or m > len(l1) or len(got) != len(la) or not all([same(i, x, y) for i, (x, y) in enumerate(zip(la, got))]):
            first = next((i for i, (x, y) in enumerate(zip(la, got)) if x != y and not (tol and _lines_close(Tolerance(rtol, atol), "", x, y))), min(len(la), len(got)))
            differences.append(f"logged losses differ{' beyond the tolerance' if tol else ''} from line {first + 1} (uninterrupted {len(la)} line(s); killed {len(l1)}, resumed {len(l2)})")
        if tol:
            report["largestDifferences"] = tol.largest
        report.update(
            {
                "equal": not differences,
                "compared": {"stateEntries": len(da), "outputFiles": len(oa), "lossLines": len(la)},
                "differences": differences[:50],
            }
        )
        return (0 if not differences else 1), report
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m chatgpu.resume_check")
    ap.add_argument("--halt-at", type=int, default=None)
    ap.add_argument("--timeout", type=float, default=None, help="seconds per run")
    ap.add_argument("--report", default=os.path.join(".chatgpu", "resume-check.json"))
    ap.add_argument("--mode", choices=("auto", "bitwise", "tolerance"), default=os.environ.get("CHATGPU_RESUME_CHECK_MODE") or "auto", help="auto: bitwise on a deterministic device, tolerance on CUDA/ROCm/MPS")
    ap.add_argument("--rtol", type=float, default=None, help="the job's relative tolerance (tolerance mode)")
    ap.add_argument("--atol", type=float, default=None, help="the job's absolute tolerance (tolerance mode)")
    ap.add_argument("command", nargs=argparse.REMAINDER)
    args = ap.parse_args(argv)
    cmd = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not cmd:
        ap.error("the command to check follows --")
    if args.mode not in ("auto", "bitwise", "tolerance"):
        ap.error(f"--mode (or CHATGPU_RESUME_CHECK_MODE) must be auto, bitwise or tolerance, not {args.mode!r}")
    for name in ("rtol", "atol"):
        v = getattr(args, name)
        if v is not None and not (math.isfinite(v) and v >= 0):
            ap.error(f"--{name} must be a finite number >= 0, not {v}")
    code, report = check(" ".join(cmd), halt_at=args.halt_at, timeout=args.timeout, mode=args.mode, rtol=args.rtol, atol=args.atol)
    os.makedirs(os.path.dirname(os.path.abspath(args.report)), exist_ok=True)
    with open(args.report, "w") as f:
        json.dump(report, f, indent=2)
    if report.get("equal"):
        c = report["compared"]
        if report.get("mode") == "tolerance":
            t = report["tolerance"]
            how = f"equal within rtol={t['rtol']:g}, atol={t['atol']:g} ({report['modeReason']})"
        else:
            how = "bitwise equal"
        print(f"chatgpu.resume_check: equal: killed after step {report['killed']['afterStep']} of {report['uninterrupted']['steps']}, resumed at step {report['resumed']['atStep']}; final state ({c['stateEntries']} entries), {c['outputFiles']} output file(s) and {c['lossLines']} logged loss line(s) {how} to the uninterrupted run")
    else:
        # On stderr: the worker keeps its tail as the failure's reason.
        print(f"chatgpu.resume_check: NOT equal: {report.get('problem') or '; '.join(report.get('differences', [])[:5])}", file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())

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

Prints what it compared and writes the report as JSON (default .chatgpu/resume-check.json); exit 0 when
equal, 1 when not, 2 when the check could not be made (the command failed, too few iterations).
"""

import argparse
import hashlib
import json
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


def check(command, halt_at=None, timeout=None, cwd="."):
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
        for key in sorted(set(da) | set(db)):
            if da.get(key) != db.get(key):
                differences.append(f"state {key}: uninterrupted {da.get(key)!r}, resumed {db.get(key)!r}")
        oa, ob = _tree(os.path.join(cwd, "outputs")), _tree(os.path.join(b_dir, "outputs"))
        for p in sorted(set(oa) | set(ob)):
            if oa.get(p) != ob.get(p):
                differences.append(f"outputs/{p}: {'differs' if p in oa and p in ob else 'only in one run'}")
        la, l1, l2 = _losses(a["output"]), _losses(b1["output"]), _losses(b2["output"])
        m = len(la) - len(l2)
        if m < 0 or m > len(l1) or l1[:m] != la[:m] or l2 != la[m:]:
            first = next((i for i, (x, y) in enumerate(zip(la, l1[:m] + l2)) if x != y), min(len(la), len(l1[:m] + l2)))
            differences.append(f"logged losses differ from line {first + 1} (uninterrupted {len(la)} line(s); killed {len(l1)}, resumed {len(l2)})")
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
    ap.add_argument("command", nargs=argparse.REMAINDER)
    args = ap.parse_args(argv)
    cmd = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not cmd:
        ap.error("the command to check follows --")
    code, report = check(" ".join(cmd), halt_at=args.halt_at, timeout=args.timeout)
    os.makedirs(os.path.dirname(os.path.abspath(args.report)), exist_ok=True)
    with open(args.report, "w") as f:
        json.dump(report, f, indent=2)
    if report.get("equal"):
        c = report["compared"]
        print(f"chatgpu.resume_check: equal: killed after step {report['killed']['afterStep']} of {report['uninterrupted']['steps']}, resumed at step {report['resumed']['atStep']}; final state ({c['stateEntries']} entries), {c['outputFiles']} output file(s) and {c['lossLines']} logged loss line(s) bitwise equal to the uninterrupted run")
    else:
        # On stderr: the worker keeps its tail as the failure's reason.
        print(f"chatgpu.resume_check: NOT equal: {report.get('problem') or '; '.join(report.get('differences', [])[:5])}", file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())

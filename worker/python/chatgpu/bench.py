"""Time two versions of a program alternately on this machine (ChatGPU preparation: BENCHMARK).

    python -m chatgpu.bench --a accepted --b candidate --repeats 9 [--timeout-sec 600] -- CMD...

Runs CMD (through `sh -c`) in directory A, then in B, then A, ... `repeats` times each, and
writes the wall-clock seconds of every run to $CHATGPU_OUTPUT_DIR/bench.json:

    {"a": [s, ...], "b": [s, ...], "order": "abab...", "repeats": N, "command": CMD}

Alternating on the same machine, in one process, keeps drift (thermal, other load, caches)
from favouring one side; the API drops the warm-up runs and decides with a rank test and a
bootstrap interval (compareTimings). A run that exits non-zero stops the benchmark with exit
status 1 and its stderr tail, since timings of a failing program mean nothing.
"""
import argparse
import json
import os
import subprocess
import sys
import time


def main(argv=None):
    p = argparse.ArgumentParser(prog="chatgpu.bench")
    p.add_argument("--a", required=True)
    p.add_argument("--b", required=True)
    p.add_argument("--repeats", type=int, default=9)
    p.add_argument("--timeout-sec", type=float, default=600.0)
    p.add_argument("command", nargs=argparse.REMAINDER)
    args = p.parse_args(argv)
    cmd = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not cmd or args.repeats < 1:
        p.error("a command after -- and --repeats >= 1 are required")
    command = " ".join(cmd)
    out_dir = os.environ.get("CHATGPU_OUTPUT_DIR", "outputs")
    os.makedirs(out_dir, exist_ok=True)
    times = {"a": [], "b": []}
    order = ""
    for _ in range(args.repeats):
        for side in ("a", "b"):
            cwd = getattr(args, side)
            start = time.perf_counter()
            r = subprocess.run(["sh", "-c", command], cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=args.timeout_sec)
            elapsed = time.perf_counter() - start
            if r.returncode != 0:
                sys.stderr.write(f"chatgpu.bench: `{command}` exited {r.returncode} in {cwd}:\n{r.stderr.decode(errors='replace')[-2000:]}\n")
                return 1
            times[side].append(elapsed)
            order += side
            print(f"bench {side} run {len(times[side])}: {elapsed:.3f} s", flush=True)
    with open(os.path.join(out_dir, "bench.json"), "w") as f:
        json.dump({"a": times["a"], "b": times["b"], "order": order, "repeats": args.repeats, "command": command}, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())

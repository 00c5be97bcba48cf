"""One run of a parameter sweep, and the table of a sweep's runs.

    python -m chatgpu.sweep run --name NAME --value VALUE [--set SPEC] -- CMD [ARGS...]
        runs CMD once for NAME=VALUE and keeps what it made apart from the other values:
        - with --set FILE:LINE:COL:ENDLINE:ENDCOL:FROM (1-based lines, 0-based columns in UTF-8
          bytes as Python's ast gives them, end exclusive; FROM the literal's current text,
          base64url without padding), the literal at that span of FILE becomes VALUE for this run
          and FILE's exact bytes are restored afterwards (also when CMD fails or the helper is
          stopped); the text there must be FROM, else nothing runs
        - CMD's stdout and stderr pass through line by line; stdout is also written to
          outputs/sweep/NAME=VALUE/stdout.txt
        - files CMD writes or changes under outputs/ (outside outputs/sweep/) move to
          outputs/sweep/NAME=VALUE/ at the same relative path
        - outputs/sweep/NAME=VALUE/metrics.json: {"name", "value", "exitCode", "metrics"}, the
          last value of each metric CMD printed: worker metric lines (CHATGPU_METRIC {...}) and
          `name=number` / `name: number` pairs in plain lines
        - exits with CMD's exit code
    python -m chatgpu.sweep table ROOT OUT.csv
        one CSV row per value from ROOT/outputs/sweep/*/metrics.json and
        ROOT/*/outputs/sweep/*/metrics.json (a merge sees each shard's outputs under ROOT/shard-i/):
        the setting's name, each metric in name order, the exit code; rows by numeric value when
        all values are numbers; no timings, so equal runs give byte-equal tables

A folder name is NAME=VALUE with characters outside [A-Za-z0-9._=+-] replaced by `_`.
Bad input is refused with exit 2 and one line on stderr, before anything changes.
"""
import ast
import base64
import csv
import glob
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import threading

METRIC_PREFIX = "CHATGPU_METRIC "
PAIR = re.compile(r"(?<![\w.])([A-Za-z_][A-Za-z0-9_]{0,40})\s*[=:]\s*(-?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)(?![\w.])")


def fail(message):
    print(f"chatgpu.sweep: {message}", file=sys.stderr)
    sys.exit(2)


def folder_name(name, value):
    return re.sub(r"[^A-Za-z0-9._=+-]", "_", f"{name}={value}")


def byte_offset(lines, line, col):
    if line < 1 or line > len(lines):
        return None
    prefix = sum(len(l) for l in lines[: line - 1])
    if col < 0 or col > len(lines[line - 1]):
        return None
    return prefix + col


def parse_set(spec):
    parts = spec.split(":")
    if len(parts) < 6:
        fail(f"--set wants FILE:LINE:COL:ENDLINE:ENDCOL:FROM, not {spec!r}")
    file = ":".join(parts[:-5])
    try:
        line, col, end_line, end_col = (int(p) for p in parts[-5:-1])
        source = base64.urlsafe_b64decode(parts[-1] + "=" * (-len(parts[-1]) % 4)).decode("utf-8")
    except (ValueError, UnicodeDecodeError) as e:
        fail(f"--set {spec!r}: {e}")
    return file, line, col, end_line, end_col, source


def apply_set(spec, value):
    """FILE's original bytes, after writing VALUE over the literal; refuses before any change."""
    file, line, col, end_line, end_col, source = parse_set(spec)
    if not os.path.isfile(file):
        fail(f"{file} is not a file")
    with open(file, "rb") as f:
        original = f.read()
    lines = original.splitlines(keepends=True)
    start, end = byte_offset(lines, line, col), byte_offset(lines, end_line, end_col)
    if start is None or end is None or end <= start:
        fail(f"{file}: the span {line}:{col}-{end_line}:{end_col} is not in the file")
    found = original[start:end].decode("utf-8", errors="replace")
    if found != source:
        fail(f"{file} line {line}: expected {source!r}, found {found!r}; nothing changed")
    changed = original[:start] + value.encode("utf-8") + original[end:]
    if file.endswith(".py"):
        # Only a literal may take the literal's place, and the file must still parse.
        try:
            ast.literal_eval(value)
            ast.parse(changed)
        except (ValueError, SyntaxError) as e:
            fail(f"{file}: {value!r} cannot replace {source!r} ({type(e).__name__}: {e}); nothing changed")
    with open(file, "wb") as f:
        f.write(changed)
    return file, original


def snapshot():
    seen = {}
    for root, dirs, names in os.walk("outputs"):
        if os.path.normpath(root) == os.path.join("outputs", "sweep"):
            dirs[:] = []
            continue
        dirs[:] = [d for d in dirs if os.path.normpath(os.path.join(root, d)) != os.path.join("outputs", "sweep")]
        for n in names:
            p = os.path.join(root, n)
            st = os.stat(p)
            seen[p] = (st.st_size, st.st_mtime_ns)
    return seen


def number(v):
    if isinstance(v, bool):
        return 1 if v else 0
    if isinstance(v, (int, float)) and math.isfinite(v):
        return v
    return None


def metrics_of(line, into):
    if line.startswith(METRIC_PREFIX):
        try:
            values = json.loads(line[len(METRIC_PREFIX):]).get("values", {})
        except (ValueError, AttributeError):
            return
        for k, v in values.items() if isinstance(values, dict) else []:
            n = number(v)
            if n is not None:
                into[str(k)] = n
        return
    for k, v in PAIR.findall(line):
        f = float(v)
        if math.isfinite(f):
            into[k] = int(f) if re.fullmatch(r"-?\d+", v) else f


def pump(stream, sink, keep, metrics):
    for raw in iter(stream.readline, b""):
        sink.buffer.write(raw)
        sink.flush()
        if keep is not None:
            keep.write(raw)
            metrics_of(raw.decode("utf-8", errors="replace").rstrip("\r\n"), metrics)
    stream.close()


def run(argv):
    name = value = None
    sets = []
    i = 0
    while i < len(argv) and argv[i] != "--":
        opt = argv[i]
        if opt not in ("--name", "--value", "--set") or i + 1 >= len(argv):
            fail(f"unknown or incomplete option {opt!r} (usage: run --name NAME --value VALUE [--set SPEC] -- CMD ...)")
        if opt == "--name":
            name = argv[i + 1]
        elif opt == "--value":
            value = argv[i + 1]
        else:
            sets.append(argv[i + 1])
        i += 2
    cmd = argv[i + 1:]
    if i >= len(argv) or not cmd:
        fail("no command after --")
    if not name or value is None:
        fail("--name and --value are required")
    if "\n" in value or "\r" in value or "\n" in name:
        fail("a name or value holds a line break")
    if len(cmd) == 1 and re.search(r"[\s;&|<>$`'\"()]", cmd[0]):
        cmd = ["sh", "-c", cmd[0]]
    here = os.path.join("outputs", "sweep", folder_name(name, value))
    if os.path.exists(here):
        fail(f"{here} exists already: the value ran before in this folder")
    restore = [apply_set(spec, value) for spec in sets]

    def put_back():
        while restore:
            file, original = restore.pop()
            with open(file, "wb") as f:
                f.write(original)

    before = snapshot()
    os.makedirs(here)
    metrics = {}
    env = dict(os.environ, CHATGPU_SWEEP_NAME=name, CHATGPU_SWEEP_VALUE=value)
    code = 1
    with open(os.path.join(here, "stdout.txt"), "wb") as keep:
        try:
            child = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        except OSError as e:
            put_back()
            fail(f"cannot run {cmd[0]}: {e}")

        def forward(signum, _frame):
            child.send_signal(signum)

        for s in (signal.SIGTERM, signal.SIGINT):
            signal.signal(s, forward)
        try:
            threads = [threading.Thread(target=pump, args=(child.stdout, sys.stdout, keep, metrics)), threading.Thread(target=pump, args=(child.stderr, sys.stderr, None, None))]
            for t in threads:
                t.start()
            code = child.wait()
            for t in threads:
                t.join()
        finally:
            put_back()
    for path, stat in snapshot().items():
        if before.get(path) == stat:
            continue
        target = os.path.join(here, os.path.relpath(path, "outputs"))
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.move(path, target)
    with open(os.path.join(here, "metrics.json"), "w") as f:
        json.dump({"name": name, "value": value, "exitCode": code if code >= 0 else 128 - code, "metrics": metrics}, f, sort_keys=True)
    print(f"chatgpu.sweep: {name}={value} exited {code}; its outputs are in {here}/", flush=True)
    sys.exit(code if code >= 0 else 128 - code)


def as_number(v):
    try:
        f = float(v)
    except ValueError:
        return None
    return f if math.isfinite(f) else None


def table(argv):
    if len(argv) != 2:
        fail("usage: table ROOT OUT.csv")
    root, out = argv
    found = sorted(glob.glob(os.path.join(root, "outputs", "sweep", "*", "metrics.json")) + glob.glob(os.path.join(root, "*", "outputs", "sweep", "*", "metrics.json")))
    rows, names, seen = [], set(), {}
    for p in found:
        with open(p) as f:
            m = json.load(f)
        if m["value"] in seen:
            fail(f"two runs of {m['name']}={m['value']}: {seen[m['value']]} and {p}")
        seen[m["value"]] = p
        rows.append(m)
        names.update(m.get("metrics", {}).keys())
    if not rows:
        fail(f"no sweep runs under {root} (no outputs/sweep/*/metrics.json)")
    if all(as_number(r["value"]) is not None for r in rows):
        rows.sort(key=lambda r: as_number(r["value"]))
    columns = sorted(names)
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    with open(out, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow([rows[0]["name"], *columns, "exit_code"])
        for r in rows:
            w.writerow([r["value"], *(r.get("metrics", {}).get(c, "") for c in columns), r.get("exitCode", "")])
    print(f"chatgpu.sweep: {len(rows)} runs of {rows[0]['name']} in {out}")


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in ("run", "table"):
        fail("usage: python -m chatgpu.sweep run|table …")
    (run if sys.argv[1] == "run" else table)(sys.argv[2:])


if __name__ == "__main__":
    main()

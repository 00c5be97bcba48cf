"""Slicing a shard's share of the work in its own copy of the project (issue 14).

Each task runs in a directory of its own, built from copies of the project's files, so a shard
may drop what is not its share before the user's unchanged command runs:

    python -m chatgpu.shard files DIR START END
        keep only the files of DIR whose index, in the sorted order of their paths relative to
        DIR, is in [START, END); the others are deleted (the shard's copy only)
    python -m chatgpu.shard rows CSV START END
        keep the header and the data records [START, END) of CSV, each record's text unchanged
        (a quoted field may span lines)
    python -m chatgpu.shard loop FILE LINE START END [ARGS...]
        run FILE as __main__ (argv FILE ARGS), except that the top-level `for` loop on line
        LINE iterates only over items [START, END) of what it loops over; FILE is read, never
        changed, and its functions run as written

A range past the end is refused (exit 2) rather than quietly giving a shard less work.
"""
import ast
import csv
import os
import sys


def fail(message):
    print(f"chatgpu.shard: {message}", file=sys.stderr)
    sys.exit(2)


def bounds(start, end, count, what):
    try:
        a, b = int(start), int(end)
    except ValueError:
        fail(f"START and END must be integers, not {start!r} and {end!r}")
    if a < 0 or b <= a:
        fail(f"the range [{a}, {b}) is empty or negative")
    if b > count:
        fail(f"the range [{a}, {b}) goes past the {count} {what}")
    return a, b


def files(folder, start, end):
    if not os.path.isdir(folder):
        fail(f"{folder} is not a folder")
    found = []
    for root, dirs, names in os.walk(folder):
        dirs.sort()
        for name in names:
            found.append(os.path.relpath(os.path.join(root, name), folder))
    found.sort()
    a, b = bounds(start, end, len(found), f"files of {folder}")
    for i, rel in enumerate(found):
        if not a <= i < b:
            os.remove(os.path.join(folder, rel))
    print(f"chatgpu.shard: kept files {a}..{b - 1} of {len(found)} in {folder}: {', '.join(found[a:b][:5])}{' …' if b - a > 5 else ''}")


def records(text):
    """The CSV's records as their raw text (header first)."""
    lines = text.splitlines(keepends=True)
    pos = 0
    consumed = []

    def feed():
        nonlocal pos
        while pos < len(lines):
            consumed.append(lines[pos])
            pos += 1
            yield consumed[-1]

    reader = csv.reader(feed())
    out = []
    for _ in reader:
        out.append("".join(consumed))
        consumed.clear()
    return out


def rows(path, start, end):
    if not os.path.isfile(path):
        fail(f"{path} is not a file")
    with open(path, newline="", encoding="utf-8") as f:
        recs = records(f.read())
    if not recs:
        fail(f"{path} is empty: no header")
    a, b = bounds(start, end, len(recs) - 1, f"rows of {path}")
    kept = [recs[0]] + recs[1 + a : 1 + b]
    if not kept[-1].endswith(("\n", "\r")):
        kept[-1] += "\n"
    tmp = f"{path}.chatgpu-shard"
    with open(tmp, "w", newline="", encoding="utf-8") as f:
        f.write("".join(kept))
    os.replace(tmp, path)
    print(f"chatgpu.shard: kept rows {a}..{b - 1} of {len(recs) - 1} in {path}")


class Slice(ast.NodeTransformer):
    def __init__(self, line, start, end):
        self.line, self.start, self.end, self.found = line, start, end, False

    def visit_For(self, node):
        if node.lineno == self.line:
            self.found = True
            islice = ast.Attribute(value=ast.Call(func=ast.Name(id="__import__", ctx=ast.Load()), args=[ast.Constant("itertools")], keywords=[]), attr="islice", ctx=ast.Load())
            node.iter = ast.Call(func=islice, args=[node.iter, ast.Constant(self.start), ast.Constant(self.end)], keywords=[])
        return node

    # Only a loop of the module itself (or of its `if __name__ == "__main__":` block).
    def visit_FunctionDef(self, node):
        return node

    visit_AsyncFunctionDef = visit_FunctionDef
    visit_ClassDef = visit_FunctionDef


def loop(path, line, start, end, argv):
    if not os.path.isfile(path):
        fail(f"{path} is not a file")
    with open(path, encoding="utf-8") as f:
        source = f.read()
    try:
        ln = int(line)
    except ValueError:
        fail(f"LINE must be an integer, not {line!r}")
    a, b = bounds(start, end, sys.maxsize, "items")
    tree = ast.parse(source, filename=path)
    sliced = Slice(ln, a, b)
    tree = ast.fix_missing_locations(sliced.visit(tree))
    if not sliced.found:
        fail(f"{path} has no top-level for loop on line {ln}")
    sys.argv = [path, *argv]
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    print(f"chatgpu.shard: running {path} with the loop of line {ln} over items {a}..{b - 1}", flush=True)
    code = compile(tree, path, "exec")
    exec(code, {"__name__": "__main__", "__file__": path, "__builtins__": __builtins__})


def main(args):
    usage = "usage: python -m chatgpu.shard files DIR START END | rows CSV START END | loop FILE LINE START END [ARGS...]"
    if not args or args[0] not in ("files", "rows", "loop"):
        fail(usage)
    if args[0] == "loop":
        if len(args) < 5:
            fail(usage)
        return loop(args[1], args[2], args[3], args[4], args[5:])
    if len(args) != 4:
        fail(usage)
    return (files if args[0] == "files" else rows)(*args[1:])


if __name__ == "__main__":
    main(sys.argv[1:])

"""Run a Jupyter notebook as a task: top to bottom, on a kernel of this interpreter.

    python -m chatgpu.notebook NOTEBOOK.ipynb [--timeout-per-cell S] [--set NAME=VALUE ...]
                                              [--output PATH]

- The code cells run in order with nbclient on an IPython kernel started from ``sys.executable``
  (a kernel spec written to a temporary folder: the notebook's own ``kernelspec``, a Jupyter server
  and the network play no part), in the notebook's folder, as Jupyter runs them.
- ``--set NAME=VALUE`` (repeatable) changes a setting. When a cell is tagged ``parameters``
  (papermill's convention) the values go into a new cell right after it, tagged
  ``injected-parameters`` (one left by an earlier papermill run is replaced). Otherwise the value
  of NAME's assignment in the first code cell that assigns it at its top level (``lr = 0.1``,
  ``lr: float = 0.1``, ``lr, wd = 0.1, 0.0``) is rewritten, and nothing else of the cell changes.
  VALUE is a Python literal (``0.01``, ``[64, 64]``, ``'adam'``, ``True``); anything else is a
  string; ``true``/``false`` are booleans where the old value is one, and a number stays a string
  where the old value is one. A name no code cell assigns, one assigned together with another
  name (``a = b = 1``), or one the top level of a second cell assigns again (which would undo the
  change), is refused (exit 2) before anything runs.
- What the cells print passes through as it comes (their stdout on stdout, so CHATGPU_METRIC lines
  are metrics as for a script; their stderr on stderr). This runner's own lines go to stderr.
- The executed notebook, with its outputs and figures embedded, is written to --output (default
  ``$CHATGPU_OUTPUT_DIR/NAME.ipynb``, else ``outputs/NAME.ipynb``), also when a cell fails.
- Each image/png a cell displays (a matplotlib figure under the inline backend) is saved as the next
  ``figure-N.png`` in ``$CHATGPU_FIGURES`` (chatgpu/figures.py's numbering), else in
  ``outputs/figures`` beside the executed notebook. The kernel itself gets neither the figures hook
  nor MPLBACKEND=Agg: figures are embedded by the inline backend and saved from the outputs.
- A cell that raises: exit 1, naming the cell (its number among all cells and its In [n]), the line
  of the cell it failed on and the traceback. A cell over --timeout-per-cell (default: none; the
  task has its own limit) or a kernel that dies: exit 1 naming the cell too.
- Without nbclient/ipykernel on this interpreter: exit 3 with the Debian packages to install.
"""
import argparse
import ast
import base64
import json
import math
import os
import re
import shutil
import sys
import tempfile

KERNEL_NAME = "chatgpu-python"
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
# IPython's frame of the cell: "Cell In[3], line 5" (IPython 8.x) or "Input In [3], in <cell line: 5>()" (7.x).
CELL_FRAME = re.compile(r"(?:Cell In ?\[[^\]]*\], line (\d+)|Input In ?\[[^\]]*\], in <cell line: (\d+)>)")
PACKAGES = "python3-nbclient python3-nbformat python3-ipykernel"


def note(message):
    sys.stderr.write("chatgpu.notebook: %s\n" % message)
    sys.stderr.flush()


def refuse(message):
    note(message)
    sys.exit(2)


# --- settings --------------------------------------------------------------------------------------

MAGIC_LINE = re.compile(r"^\s*(%|!|\?)")
PYTHON_CELL_MAGICS = {"time", "timeit", "capture", "prun"}


def python_source(source):
    """The cell's text with IPython magics and shell lines blanked (line numbers kept), or None for a
    cell magic whose body is not Python (%%bash, %%writefile …)."""
    lines = source.split("\n")
    first = lines[0].strip() if lines else ""
    if first.startswith("%%"):
        name = first[2:].split()[0] if first[2:].split() else ""
        if name not in PYTHON_CELL_MAGICS:
            return None
        lines[0] = ""
    return "\n".join("" if MAGIC_LINE.match(l) else l for l in lines)


def code_cells(nb):
    return [(i, c) for i, c in enumerate(nb.cells) if c.cell_type == "code"]


def parse_cell(source):
    text = python_source(source)
    if text is None:
        return None
    try:
        return ast.parse(text)
    except SyntaxError:
        return None


def assignments(tree):
    """{name: (value node | None when assigned together with another name)} of a cell's top level, first wins."""
    out = {}
    for stmt in tree.body:
        pairs = []
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
            pairs = [(stmt.target.id, stmt.value)]
        elif isinstance(stmt, ast.Assign):
            if len(stmt.targets) == 1:
                t = stmt.targets[0]
                if isinstance(t, ast.Name):
                    pairs = [(t.id, stmt.value)]
                elif isinstance(t, (ast.Tuple, ast.List)) and isinstance(stmt.value, (ast.Tuple, ast.List)) and len(t.elts) == len(stmt.value.elts):
                    pairs = [(e.id, v) for e, v in zip(t.elts, stmt.value.elts) if isinstance(e, ast.Name)]
            else:
                pairs = [(t.id, None) for t in stmt.targets if isinstance(t, ast.Name)]
        for name, value in pairs:
            out.setdefault(name, value)
    return out


def assigned_names(tree):
    """Every name a cell's top level assigns, in any way (`x = f()`, `x += 1`, `a = b = 1`)."""
    out = set()
    for stmt in tree.body:
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] if isinstance(stmt, (ast.AnnAssign, ast.AugAssign)) else []
        for t in targets:
            out.update(n.id for n in ast.walk(t) if isinstance(n, ast.Name))
    return out


def python_value(text, old=None):
    """VALUE as Python source: a literal as written, else a quoted string; typed after `old` (the value node it replaces)."""
    old_value = None
    if old is not None:
        try:
            old_value = ast.literal_eval(old)
        except Exception:
            old_value = None
    if isinstance(old_value, bool) and text.strip().lower() in ("true", "false", "1", "0", "yes", "no"):
        return "True" if text.strip().lower() in ("true", "1", "yes") else "False"
    if isinstance(old_value, str):
        try:
            if isinstance(ast.literal_eval(text), str):
                return text.strip()
        except Exception:
            pass
        return repr(text)
    try:
        ast.literal_eval(text)
        return text.strip()
    except Exception:
        return repr(text)


def offset(lines, line, col):
    """A string offset from ast's 1-based line and UTF-8 byte column."""
    start = sum(len(l) for l in lines[: line - 1])
    return start + len(lines[line - 1].encode("utf-8")[:col].decode("utf-8", "replace"))


def parse_sets(items):
    values = {}
    for item in items or []:
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep or not name.isidentifier():
            refuse("--set %r: expected NAME=VALUE with NAME a Python identifier" % item)
        values[name] = value
    return values


def apply_settings(nb, values):
    """Changes the notebook in place; returns one line per setting saying how it was honoured."""
    if not values:
        return []
    import nbformat

    cells = code_cells(nb)
    tagged = [i for i, c in cells if "parameters" in c.metadata.get("tags", [])]
    if tagged:
        at = tagged[0]
        tree = parse_cell(nb.cells[at].source)
        known = assignments(tree) if tree else {}
        lines = ["# Parameters"]
        for name, value in values.items():
            lines.append("%s = %s" % (name, python_value(value, known.get(name))))
        cell = nbformat.v4.new_code_cell("\n".join(lines) + "\n")
        cell.metadata["tags"] = ["injected-parameters"]
        if (nb.nbformat, nb.nbformat_minor) < (4, 5):
            cell.pop("id", None)  # cell ids exist from nbformat 4.5 on
        nxt = at + 1
        if nxt < len(nb.cells) and "injected-parameters" in nb.cells[nxt].metadata.get("tags", []):
            nb.cells[nxt] = cell
        else:
            nb.cells.insert(nxt, cell)
        told = []
        for name in values:
            where = "" if name in known else " (the parameters cell does not assign it)"
            told.append("%s set in the injected parameters cell %d, after the parameters cell %d%s" % (name, nxt + 1, at + 1, where))
        return told
    parsed = [(i, c, parse_cell(c.source)) for i, c in cells]
    edits = {}  # cell index -> [(start, end, text, name, was)]
    told = []
    for name, value in values.items():
        found = None
        for i, c, tree in parsed:
            if tree is None:
                continue
            a = assignments(tree)
            if name in a:
                found = (i, c, a[name])
                break
        if found is None:
            firsts = sorted(n for n, v in assignments(parsed[0][2]).items() if v is not None) if parsed and parsed[0][2] else []
            refuse("--set %s: no code cell of the notebook assigns %s at its top level%s" % (name, name, "; the first code cell sets %s" % ", ".join(firsts) if firsts else ""))
        i, c, node = found
        again = [j for j, _, tree in parsed if j != i and tree is not None and name in assigned_names(tree)]
        if again:
            refuse("--set %s: cells %d and %d both assign %s at their top level; the second would undo the first, change it there" % (name, i + 1, again[0] + 1, name))
        if node is None:
            refuse("--set %s: cell %d assigns %s together with another name; change it there" % (name, i + 1, name))
        lines = c.source.splitlines(keepends=True)
        start = offset(lines, node.lineno, node.col_offset)
        end = offset(lines, node.end_lineno, node.end_col_offset)
        new = python_value(value, node)
        edits.setdefault(i, []).append((start, end, new, name, c.source[start:end], node.lineno))
    for i, changes in edits.items():
        source = nb.cells[i].source
        for start, end, new, name, was, line in sorted(changes, reverse=True):
            source = source[:start] + new + source[end:]
            told.append((list(values).index(name), "%s = %s in cell %d line %d (was %s)" % (name, new, i + 1, line, was)))
        nb.cells[i].source = source
    return [t for _, t in sorted(told)]


# --- running ---------------------------------------------------------------------------------------

def kernel_environment():
    """The kernel's environment: the task's, without the figures hook (the inline backend embeds figures)."""
    env = dict(os.environ)
    env.pop("CHATGPU_FIGURES", None)
    startup = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_startup")
    parts = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and os.path.abspath(p) != startup and not p.rstrip("/").endswith("chatgpu/_startup")]
    helpers = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if helpers not in parts:
        parts.append(helpers)  # `from chatgpu.metrics import log` works in a cell as in a script
    env["PYTHONPATH"] = os.pathsep.join(parts)
    env["MPLBACKEND"] = "module://matplotlib_inline.backend_inline"
    env["PYDEVD_DISABLE_FILE_VALIDATION"] = "1"  # ipykernel's debugger warns about frozen modules on stderr otherwise
    return env


def write_kernel_spec(folder):
    spec_dir = os.path.join(folder, "kernels", KERNEL_NAME)
    os.makedirs(spec_dir)
    with open(os.path.join(spec_dir, "kernel.json"), "w") as f:
        json.dump({
            "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}", "--HistoryManager.enabled=False"],
            "display_name": "Python (%s)" % sys.executable,
            "language": "python",
        }, f)
    return os.path.join(folder, "kernels")


def figures_folder(output):
    return os.environ.get("CHATGPU_FIGURES") or os.path.join(os.path.dirname(os.path.abspath(output)), "figures")


def cell_line(traceback_lines):
    for raw in traceback_lines:
        m = CELL_FRAME.search(ANSI.sub("", raw))
        if m:
            return int(m.group(1) or m.group(2))
    return None


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m chatgpu.notebook", description="Run a Jupyter notebook top to bottom.")
    p.add_argument("notebook")
    p.add_argument("--timeout-per-cell", type=float, default=None, metavar="S", help="seconds a cell may run (default: no limit)")
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="a setting of the notebook (repeatable)")
    p.add_argument("--output", default=None, help="where the executed notebook is written")
    args = p.parse_args(argv)
    if args.timeout_per_cell is not None and not args.timeout_per_cell > 0:
        refuse("--timeout-per-cell must be a positive number of seconds")
    values = parse_sets(args.set)
    try:
        import nbformat
        from jupyter_client.kernelspec import KernelSpecManager
        from jupyter_client.manager import AsyncKernelManager
        from nbclient import NotebookClient
        from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError
        import ipykernel  # noqa: F401  (the kernel runs on this interpreter)
    except ImportError as e:
        note("this interpreter (%s) cannot run notebooks: %s. Install them: apt-get install %s (or pip install nbclient ipykernel)" % (sys.executable, e, PACKAGES))
        sys.exit(3)
    if not os.path.isfile(args.notebook):
        refuse("no notebook at %s" % args.notebook)
    try:
        nb = nbformat.read(args.notebook, as_version=4)
    except Exception as e:
        refuse("%s is not a notebook nbformat can read: %s" % (args.notebook, e))
    for line in apply_settings(nb, values):
        note(line)
    stem = os.path.splitext(os.path.basename(args.notebook))[0]
    output = args.output or os.path.join(os.environ.get("CHATGPU_OUTPUT_DIR") or "outputs", stem + ".ipynb")
    figures = figures_folder(output)
    state = {"cell": None, "error": None}
    saved = []

    def save_figures(cell):
        from chatgpu import figures as fighelper

        for out in cell.get("outputs", []):
            data = out.get("data", {}) if out.get("output_type") in ("display_data", "execute_result") else {}
            png = data.get("image/png")
            if png:
                path = fighelper.save_png(base64.b64decode(png if isinstance(png, str) else "".join(png)), figures)
                if path:
                    saved.append(path)

    class Client(NotebookClient):
        # The client owns (and so shuts down) a kernel manager that knows only this interpreter's spec.
        def create_kernel_manager(self):
            self.km = AsyncKernelManager(kernel_name=KERNEL_NAME, kernel_spec_manager=KernelSpecManager(kernel_dirs=[specs]))
            self.km.connection_file = os.path.join(tmp, "connection.json")
            return self.km

        def output(self, outs, msg, display_id, cell_index):
            if msg["msg_type"] == "stream":
                stream = sys.stdout if msg["content"].get("name") == "stdout" else sys.stderr
                stream.write(msg["content"].get("text", ""))
                stream.flush()
            return super().output(outs, msg, display_id, cell_index)

    def on_start(cell, cell_index):
        state["cell"] = cell_index

    def on_executed(cell, cell_index, execute_reply):
        save_figures(cell)

    def on_error(cell, cell_index, execute_reply):
        state["error"] = (cell_index, execute_reply["content"])

    tmp = tempfile.mkdtemp(prefix="chatgpu-notebook-")
    specs = write_kernel_spec(tmp)
    client = Client(
        nb,
        kernel_name=KERNEL_NAME,
        timeout=math.ceil(args.timeout_per_cell) if args.timeout_per_cell else None,  # nbclient counts whole seconds
        allow_errors=False,
        record_timing=False,
        resources={"metadata": {"path": os.path.dirname(os.path.abspath(args.notebook))}},
        on_cell_start=on_start,
        on_cell_executed=on_executed,
        on_cell_error=on_error,
    )
    failure = None  # the one line said last (the worker's failure reason quotes the end of stderr)
    try:
        client.execute(env=kernel_environment())
    except CellTimeoutError:
        i = state["cell"]
        failure = "cell %d (In [%s]) did not finish within %gs (--timeout-per-cell); stopped" % (i + 1, nb.cells[i].get("execution_count") or " ", args.timeout_per_cell)
    except DeadKernelError:
        i = state["cell"]
        failure = "the kernel died while cell %d ran (out of memory, or the process was killed)" % (i + 1) if i is not None else "the kernel died before any cell ran"
    except CellExecutionError as e:
        i, content = state["error"] if state["error"] else (state["cell"], {})
        cell = nb.cells[i]
        tb = [ANSI.sub("", t) for t in content.get("traceback", [])]
        line = cell_line(content.get("traceback", []))
        src = cell.source.split("\n")
        code_line = src[line - 1].strip() if line and 0 < line <= len(src) else None
        at = " at line %d: %s" % (line, code_line) if code_line is not None else ""
        text = "\n".join(tb).rstrip() or str(e)
        last = "%s: %s" % (e.ename, e.evalue)
        note("cell %d (In [%s]) failed%s\n%s" % (i + 1, cell.get("execution_count") or " ", at, text))
        failure = "cell %d (In [%s]) failed%s: %s" % (i + 1, cell.get("execution_count") or " ", " at line %d (%s)" % (line, code_line) if code_line is not None else "", last)
    except Exception as e:  # the kernel did not start, or nbclient itself failed
        failure = "the notebook could not run: %s: %s" % (type(e).__name__, e)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(os.path.dirname(os.path.abspath(output)), exist_ok=True)
    # Stream outputs are already in the log; the executed notebook keeps them as Jupyter does.
    nbformat.write(nb, output)
    note("executed notebook written to %s%s" % (output, "; %d figure(s) in %s" % (len(saved), figures) if saved else ""))
    if failure:
        note(failure)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

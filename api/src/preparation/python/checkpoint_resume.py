"""The checkpoint-resume rewrite: a PyTorch training loop with no resume path made resumable (chatgpu.resume).

Input (stdin): {"files": {"path": "source", ...}}  (the project's Python files)
Output (stdout): {"status": "changed" | "unchanged" | "refused", "files": {path: new source} (changed ones),
                  "edits": [{file, line, before, after, rule}], "loop": {file, line, kind, objects, values} | null,
                  "refusals": [{file, line, reason}], "notes": [str]}

What it looks for, on the AST of each file:
- training loops: a `for` or `while` whose body (or a function of the same file it calls, transitively)
  calls `.backward(...)` or the `.step(...)` of an optimizer or GradScaler; of nested ones the outermost,
  and a loop inside a function that another training loop calls is that loop's inner part, not a loop
  of its own. Exactly one must remain in the project.
- the state: names bound before the loop in its scope (or module names, or the function's parameters)
  and used in it — the objects whose state_dict/generator state is saved (the runtime keeps those
  that have one) — and the loop-carried values: names bound before the loop and rebound or mutated in it
  (counters, best scores, histories).

What it writes (edits spliced into the untouched source; everything else byte-identical):
- `import chatgpu.resume as _chatgpu_resume` before the first statement after the docstring and
  `from __future__` imports;
- before the loop, at its indentation: `_chatgpu_run = _chatgpu_resume.Run(objects=dict(...), values=lambda: dict(...))`
  and `[a, b] = _chatgpu_run.restore(a=a, b=b)`;
- a `for` loop's iterable E becomes `_chatgpu_run.loop(E)`; a `while` loop gets `_chatgpu_run.tick()` as
  the first statement of its body.

Refused, with the reason: no training loop; several; the loop's state in attributes of `self`; a
function the loop calls rebinding a global (or a nonlocal) that the loop's scope cannot name;
`next(it)` on an iterator made before the loop, or a loop over such an iterator (the data position
cannot be restored); a while loop's body written on the loop's own line.
Unchanged: the file already uses chatgpu.resume, or it has its own resume path (it loads an optimizer's state).
"""
import ast
import json
import sys

RUN = "_chatgpu_run"
MODULE = "_chatgpu_resume"
MUTATORS = {"append", "extend", "insert", "update", "add", "pop", "popleft", "remove", "clear", "setdefault", "appendleft", "discard", "sort", "reverse"}


def _is_opt_name(expr):
    name = expr.id if isinstance(expr, ast.Name) else expr.attr if isinstance(expr, ast.Attribute) else ""
    n = name.lower()
    return "opt" in n or "scaler" in n


def _walk_scope(nodes):
    """Every node under nodes, not descending into nested function/class/lambda scopes."""
    stack = list(reversed(nodes))
    while stack:
        n = stack.pop()
        yield n
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        stack.extend(reversed(list(ast.iter_child_nodes(n))))


def _called_names(nodes):
    out = set()
    for n in _walk_scope(nodes):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name):
            out.add(n.func.id)
    return out


class File:
    def __init__(self, path, src):
        self.path = path
        self.src = src
        self.tree = ast.parse(src)
        self.lines = src.splitlines(keepends=True)
        self.functions = {}
        for n in ast.walk(self.tree):
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.functions.setdefault(n.name, n)
        self._trains = {}

    def reach(self, nodes):
        """Functions of this file called from nodes, transitively."""
        seen, todo = set(), list(_called_names(nodes))
        while todo:
            f = todo.pop()
            if f in seen or f not in self.functions:
                continue
            seen.add(f)
            todo.extend(_called_names(self.functions[f].body))
        return seen

    def trains_directly(self, nodes):
        for n in _walk_scope(nodes):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute):
                if n.func.attr == "backward":
                    return True
                if n.func.attr == "step" and _is_opt_name(n.func.value):
                    return True
        return False

    def trains(self, nodes):
        if self.trains_directly(nodes):
            return True
        return any(self.trains_directly(self.functions[f].body) for f in self.reach(nodes))

    def scopes(self):
        """(scope node or None for the module, its statements)."""
        yield None, self.tree.body
        for f in self.functions.values():
            yield f, f.body


def training_loops(f):
    found = []
    for scope, body in f.scopes():
        for n in _walk_scope(body):
            if isinstance(n, (ast.For, ast.While)) and f.trains([n]):
                found.append((scope, n))
    # The outermost of nested ones in the same scope.
    outer = [(s, l) for s, l in found if not any(l is not m and m.lineno <= l.lineno and l in list(_walk_scope([m])) for s2, m in found if s2 is s)]
    return outer


def bound_names(target):
    out = []
    for n in ast.walk(target):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            out.append(n.id)
    return out


def scope_bindings_before(scope, body, loop):
    """name → kind ('call', 'param', 'other') for names bound in the scope before the loop starts."""
    out = {}
    if scope is not None:
        a = scope.args
        for arg in a.posonlyargs + a.args + a.kwonlyargs + ([a.vararg] if a.vararg else []) + ([a.kwarg] if a.kwarg else []):
            out[arg.arg] = "param"
    for n in _walk_scope(body):
        if getattr(n, "lineno", 10**9) >= loop.lineno:
            continue
        if isinstance(n, ast.Assign):
            # model, opt = accelerator.prepare(model, opt): names a call made are objects too (the
            # runtime keeps those with a state); a subscript or attribute target binds no name.
            kind = "call" if isinstance(n.value, ast.Call) else "other"
            for t in n.targets:
                if isinstance(t, (ast.Tuple, ast.List)) and isinstance(n.value, (ast.Tuple, ast.List)) and len(t.elts) == len(n.value.elts):
                    for te, ve in zip(t.elts, n.value.elts):  # opt, sched = SGD(...), None
                        for name in bound_names(te):
                            out[name] = "call" if isinstance(te, ast.Name) and isinstance(ve, ast.Call) else "other"
                    continue
                for name in bound_names(t):
                    out[name] = kind if isinstance(t, (ast.Name, ast.Tuple, ast.List)) else "other"
        elif isinstance(n, (ast.AnnAssign, ast.AugAssign)) and isinstance(n.target, ast.Name):
            out[n.target.id] = "call" if isinstance(getattr(n, "value", None), ast.Call) else out.get(n.target.id, "other")
        elif isinstance(n, (ast.For, ast.With)):
            targets = [n.target] if isinstance(n, ast.For) else [i.optional_vars for i in n.items if i.optional_vars is not None]
            for t in targets:
                for name in bound_names(t):
                    out.setdefault(name, "other")
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            for al in n.names:
                out[(al.asname or al.name).split(".")[0]] = "import"
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out[n.name] = "def"
    return out


def module_bindings(f):
    out = {}
    for n in f.tree.body:
        for m in _walk_scope([n]):
            if isinstance(m, ast.Assign):
                for t in m.targets:
                    for name in bound_names(t):
                        out[name] = "call" if isinstance(t, ast.Name) and isinstance(m.value, ast.Call) else "other"
            elif isinstance(m, (ast.Import, ast.ImportFrom)):
                for al in m.names:
                    out[(al.asname or al.name).split(".")[0]] = "import"
            elif isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                out[m.name] = "def"
    return out


def analyse(f, scope, loop):
    """(objects, values, refusal reason or None)."""
    body = f.tree.body if scope is None else scope.body
    before = scope_bindings_before(scope, body, loop)
    module = module_bindings(f)
    reached = [f.functions[n] for n in sorted(f.reach([loop]))]
    line = loop.lineno

    # Attributes of self: state the rewrite cannot name from the loop's scope.
    if scope is not None and scope.args.args and scope.args.args[0].arg == "self":
        attrs = sorted({f"self.{n.attr}" for n in _walk_scope([loop]) if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "self"})
        if attrs:
            return None, None, f"the loop's state is held in attributes of self ({', '.join(attrs[:5])}), which the rewrite cannot name from the loop"

    used, rebound, mutated = set(), set(), set()
    for n in _walk_scope([loop]):
        if isinstance(n, ast.Name):
            (used if isinstance(n.ctx, ast.Load) else rebound).add(n.id)
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in MUTATORS:
            base = n.func.value
            while isinstance(base, (ast.Subscript, ast.Attribute)):
                base = base.value
            if isinstance(base, ast.Name):
                mutated.add(base.id)
        elif isinstance(n, (ast.Assign, ast.AugAssign)):
            for t in n.targets if isinstance(n, ast.Assign) else [n.target]:
                if isinstance(t, (ast.Subscript, ast.Attribute)):
                    base = t
                    while isinstance(base, (ast.Subscript, ast.Attribute)):
                        base = base.value
                    if isinstance(base, ast.Name):
                        mutated.add(base.id)
    loop_target = set(bound_names(loop.target)) if isinstance(loop, ast.For) else set()

    # Functions the loop calls: the module names they read, rebind (global) or mutate.
    global_rebound = {}
    for fn in reached:
        local = {a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs}
        declared = set()
        for n in _walk_scope(fn.body):
            if isinstance(n, ast.Nonlocal):
                return None, None, f"{fn.name}() (called from the loop) rebinds nonlocal {', '.join(n.names)}: state the rewrite cannot name"
            if isinstance(n, ast.Global):
                declared.update(n.names)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                local.add(n.id)
        for n in _walk_scope(fn.body):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id not in local:
                used.add(n.id)
        for name in declared:
            global_rebound.setdefault(name, fn.name)
        for n in _walk_scope(fn.body):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in MUTATORS and isinstance(n.func.value, ast.Name) and n.func.value.id not in local:
                if module.get(n.func.value.id) not in (None, "import", "def"):
                    global_rebound.setdefault(n.func.value.id, fn.name)
    if global_rebound:
        if scope is not None:
            items = ", ".join(f"{n} (by {fn}())" for n, fn in sorted(global_rebound.items()))
            return None, None, f"state held in module globals that functions the loop calls change ({items}); the loop runs inside {scope.name}(), which cannot rebind them"
        mutated.update(global_rebound)

    # Data position: an iterator made before the loop, drawn from with next() or iterated by the loop.
    iter_made = {name for name, kind in before.items() if kind in ("call", "other")}
    for n in _walk_scope([loop] + [s for fn in reached for s in fn.body]):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "next" and n.args:
            a = n.args[0]
            if isinstance(a, ast.Name) and a.id not in rebound and (a.id in iter_made or a.id in module):
                return None, None, f"the data position cannot be restored: next({a.id}) draws from an iterator made before the loop (line {n.lineno}); make the iterator inside the loop or loop over the DataLoader"
    if isinstance(loop, ast.For) and isinstance(loop.iter, ast.Name):
        for n in _walk_scope(body):
            if isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == loop.iter.id for t in n.targets) and isinstance(n.value, ast.Call) and isinstance(n.value.func, ast.Name) and n.value.func.id == "iter":
                return None, None, f"the data position cannot be restored: the loop iterates {loop.iter.id}, a one-shot iterator made by iter() before it (line {n.lineno})"

    # A module-level loop sees what the module bound before it; a loop in a function, its own names and the module's.
    visible = dict(before) if scope is None else {**module, **before}
    objects = sorted(n for n in used if visible.get(n) in ("call", "param") and n not in rebound and n not in loop_target)
    # A name mutated through its methods is a carried value when it holds a plain container
    # (history = [] or defaultdict(list)); made by another call (a GradScaler's update()), it is an object.
    containers = container_names(body)
    mutated = {n for n in mutated if visible.get(n) != "call" or n in containers}
    values = sorted(n for n in (rebound | mutated) if n in visible and visible[n] not in ("import", "def") and n not in loop_target)
    values = [v for v in values if v in before]
    # Clock readings and what is computed from them (t0, dt, running_mfu) are not the run's state: a
    # resumed process takes its own, and the check would see them differ between any two runs.
    timed = timing_names(body)
    values = [v for v in values if v not in timed]
    return objects, values, None


CONTAINERS = {"list", "dict", "set", "defaultdict", "Counter", "deque", "OrderedDict"}


def container_names(body):
    out = set()
    for n in _walk_scope(body):
        if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call):
            fn = n.value.func
            if (fn.attr if isinstance(fn, ast.Attribute) else fn.id if isinstance(fn, ast.Name) else "") in CONTAINERS:
                out.update(t.id for t in n.targets if isinstance(t, ast.Name))
    return out


CLOCKS = {"time", "perf_counter", "monotonic", "process_time", "perf_counter_ns", "time_ns", "monotonic_ns", "now", "utcnow", "default_timer"}


def _reads_clock(expr, timed):
    for n in ast.walk(expr):
        if isinstance(n, ast.Call):
            fn = n.func
            name = fn.attr if isinstance(fn, ast.Attribute) else fn.id if isinstance(fn, ast.Name) else ""
            if name in CLOCKS:
                return True
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in timed:
            return True
    return False


def timing_names(body):
    """Names assigned (anywhere in the scope) from a clock reading or from such names, to a fixed point."""
    assigns = [n for n in _walk_scope(body) if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and getattr(n, "value", None) is not None]
    timed = set()
    while True:
        grown = False
        for n in assigns:
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            if _reads_clock(n.value, timed):
                for t in targets:
                    for name in bound_names(t):
                        if name not in timed:
                            timed.add(name)
                            grown = True
        if not grown:
            return timed


def indentation(f, node):
    text = f.lines[node.lineno - 1]
    prefix = text.encode("utf-8")[: node.col_offset].decode("utf-8", "replace")
    return prefix if prefix.strip() == "" else None


def byte_slice(line_text, start, end=None):
    b = line_text.encode("utf-8")
    return b[:start].decode("utf-8"), (b[start:end] if end is not None else b[start:]).decode("utf-8"), (b[end:].decode("utf-8") if end is not None else "")


def import_line(f):
    """Index (0-based line) where the import goes: the first statement after the docstring and __future__ imports."""
    body = f.tree.body
    i = 0
    if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant) and isinstance(body[0].value.value, str):
        i = 1
    while i < len(body) and isinstance(body[i], ast.ImportFrom) and body[i].module == "__future__":
        i += 1
    if i < len(body):
        return body[i].lineno - 1
    return (body[-1].end_lineno if body else 0)


def has_own_resume(f):
    for n in ast.walk(f.tree):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "load_state_dict" and _is_opt_name(n.func.value):
            return n.lineno
    return None


def uses_resume(f):
    for n in ast.walk(f.tree):
        if isinstance(n, ast.Import) and any(a.name == "chatgpu.resume" for a in n.names):
            return True
        if isinstance(n, ast.ImportFrom) and (n.module == "chatgpu.resume" or (n.module == "chatgpu" and any(a.name == "resume" for a in n.names))):
            return True
    return False


def rewrite(files):
    parsed, notes, refusals = {}, [], []
    for path in sorted(files):
        if not path.endswith(".py"):
            continue
        try:
            parsed[path] = File(path, files[path])
        except SyntaxError as e:
            notes.append(f"{path}: not parsed ({e.msg} at line {e.lineno}); left out")
    for f in parsed.values():
        if uses_resume(f):
            return {"status": "unchanged", "files": {}, "edits": [], "loop": None, "refusals": [], "notes": [f"{f.path} already checkpoints and resumes with chatgpu.resume"]}
    loops = []
    for f in parsed.values():
        found = training_loops(f)
        # A loop inside a function another training loop of the file calls is that loop's inner part.
        reach = {id(l): f.reach([l]) for _, l in found}
        for s, l in found:
            if s is not None and any(s.name in reach[id(m)] for _, m in found if m is not l):
                continue
            loops.append((f, s, l))
    if not loops:
        return {"status": "refused", "files": {}, "edits": [], "loop": None, "refusals": [{"file": "", "line": 0, "reason": "no recognisable training loop: no for/while loop calls .backward() or an optimizer's .step() (directly or through a function of its file)"}], "notes": notes}
    if len(loops) > 1:
        where = ", ".join(f"{f.path}:{l.lineno}" for f, _, l in loops)
        return {"status": "refused", "files": {}, "edits": [], "loop": None, "refusals": [{"file": loops[0][0].path, "line": loops[0][2].lineno, "reason": f"{len(loops)} training loops ({where}); the rewrite makes one loop resumable"}], "notes": notes}
    f, scope, loop = loops[0]
    own = has_own_resume(f)
    if own:
        return {"status": "unchanged", "files": {}, "edits": [], "loop": None, "refusals": [], "notes": [f"{f.path}:{own} loads an optimizer's saved state: the program has its own resume path, kept as it is"]}

    def refuse(reason, line=loop.lineno):
        return {"status": "refused", "files": {}, "edits": [], "loop": None, "refusals": [{"file": f.path, "line": line, "reason": reason}], "notes": notes}

    if isinstance(loop, ast.AsyncFor):
        return refuse("an async for loop")
    objects, values, reason = analyse(f, scope, loop)
    if reason:
        return refuse(reason)
    indent = indentation(f, loop)
    if indent is None:
        return refuse("the loop does not start its line")
    if not objects:
        return refuse("no model, optimizer or other state object found before the loop")

    edits = []
    lines = list(f.lines)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    # Header edit first (later lines), then insertions from the bottom up so line numbers hold.
    kind = "for" if isinstance(loop, ast.For) else "while"
    if kind == "for":
        it = loop.iter
        # The iterable, on one line or several (tqdm(loader,\n total=…)): wrapped where it stands.
        first_line, last_line = lines[it.lineno - 1], lines[it.end_lineno - 1]
        head = first_line.encode("utf-8")[: it.col_offset].decode("utf-8")
        tail = last_line.encode("utf-8")[it.end_col_offset :].decode("utf-8")
        before_text = "".join(lines[it.lineno - 1 : it.end_lineno])
        mid = before_text[len(head) : len(before_text) - len(tail)]
        new = f"{head}{RUN}.loop({mid}){tail}"
        edits.append({"file": f.path, "line": it.lineno, "before": before_text.rstrip("\n"), "after": new.rstrip("\n"), "rule": "checkpoint-resume loop"})
        lines[it.lineno - 1 : it.end_lineno] = [new]
    else:
        first = loop.body[0]
        if first.lineno == loop.lineno:
            return refuse("the loop's body is written on the loop's own line")
        body_indent = indentation(f, first)
        if body_indent is None:
            return refuse("the loop's first statement does not start its line")
        tick = f"{body_indent}{RUN}.tick()\n"
        lines.insert(first.lineno - 1, tick)
        edits.append({"file": f.path, "line": first.lineno, "before": "", "after": tick.rstrip("\n"), "rule": "checkpoint-resume tick"})
    objs = ", ".join(f"{n}={n}" for n in objects)
    vals = ", ".join(f"{n}={n}" for n in values)
    setup = [f"{indent}{RUN} = {MODULE}.Run(objects=dict({objs}){f', values=lambda: dict({vals})' if values else ''})\n"]
    setup.append(f"{indent}[{', '.join(values)}] = {RUN}.restore({vals})\n" if values else f"{indent}{RUN}.restore()\n")
    lines[loop.lineno - 1 : loop.lineno - 1] = setup
    edits.append({"file": f.path, "line": loop.lineno, "before": "", "after": "".join(setup).rstrip("\n"), "rule": "checkpoint-resume restore"})
    at = import_line(f)
    imp = f"import chatgpu.resume as {MODULE}\n"
    lines.insert(at, imp)
    edits.append({"file": f.path, "line": at + 1, "before": "", "after": imp.rstrip("\n"), "rule": "checkpoint-resume import"})
    new_src = "".join(lines)
    ast.parse(new_src)  # the rewrite must parse
    edits.sort(key=lambda e: e["line"])
    return {
        "status": "changed",
        "files": {f.path: new_src},
        "edits": edits,
        "loop": {"file": f.path, "line": loop.lineno, "kind": kind, "objects": objects, "values": values},
        "refusals": [],
        "notes": notes,
    }


if __name__ == "__main__":
    data = json.load(sys.stdin)
    print(json.dumps(rewrite(data["files"])))

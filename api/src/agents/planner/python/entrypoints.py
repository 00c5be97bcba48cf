"""Entry points and command-line flags of a Python project, read with the interpreter's own `ast`.

Input (stdin): {"files": {"path": "source", ...}}
Output (stdout): {"path": FILE, ...} where FILE is
    {"ok": true, "mainGuard": bool, "topLevelRuns": bool, "parsesArgs": bool,
     "cli": "argparse"|"click"|"typer"|"configurator"|null, "configurator": "configurator.py"|null,
     "imports": ["module", ...], "stdlib": [those of imports in the standard library], "flags": [FLAG, ...],
     "cudaLines": [N, ...], "downloads": {"calls": [...], "urls": [...]}|null (downloads.py)}
  or {"ok": false, "error": "SyntaxError: … (line N)"}
and FLAG is {"flag": "--epochs", "aliases": ["-e"], "type": "int"|"float"|"str"|"bool"|null,
             "default": "10"|null, "action": "store_true"|"store_false"|"count"|"store"|…|null,
             "choices": ["a", ...]|null, "help": "…"|null, "required": bool}

Why `ast` and not regular expressions: help texts hold parentheses and quotes, defaults are
expressions (`os.environ.get("X", "cpu")`), flags come from argparse, click decorators and typer
signatures — only a parser reads all of that right. Nothing is imported or run.
"""
import ast
import json
import sys

from downloads import downloads

RUNS_AT_TOP = (ast.Expr, ast.For, ast.While, ast.With, ast.AsyncFor, ast.AsyncWith, ast.Try)


def src(node):
    try:
        return ast.unparse(node)
    except Exception:  # noqa: BLE001
        return None


def const(node):
    """A literal's text (strings unquoted), else the expression's source."""
    if node is None:
        return None
    if isinstance(node, ast.Constant):
        return None if node.value is None else str(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
        return "-" + str(node.operand.value)
    return src(node)


def type_name(node):
    if node is None:
        return None
    if isinstance(node, ast.Name):
        return node.id if node.id in ("int", "float", "str", "bool") else node.id
    if isinstance(node, ast.Attribute):
        return node.attr  # click.INT, pathlib.Path
    if isinstance(node, ast.Call):  # click.Path(), click.IntRange(0, 9)
        return type_name(node.func)
    if isinstance(node, ast.Subscript):  # Optional[int], Annotated[int, …]
        return type_name(node.slice if not isinstance(node.slice, ast.Tuple) else node.slice.elts[0])
    return src(node)


def kw(call, name):
    return next((k.value for k in call.keywords if k.arg == name), None)


def strings(args):
    return [a.value for a in args if isinstance(a, ast.Constant) and isinstance(a.value, str)]


def argparse_positional(call):
    """A positional argparse argument ({name, type, required}), or None for a flag."""
    names = strings(call.args)
    if len(names) != 1 or names[0].startswith("-"):
        return None
    nargs = const(kw(call, "nargs"))
    return {"name": names[0], "type": type_name(kw(call, "type")), "required": nargs not in ("?", "*") and kw(call, "default") is None,
            "help": const(kw(call, "help"))}


def argparse_flag(call):
    names = strings(call.args)
    longs = [n for n in names if n.startswith("--")]
    if not names or not all(n.startswith("-") for n in names):
        return None  # a positional argument
    flag = longs[0] if longs else names[0]
    action = const(kw(call, "action"))
    typ = type_name(kw(call, "type"))
    if action in ("store_true", "store_false", "BooleanOptionalAction", "argparse.BooleanOptionalAction"):
        typ = "bool"
    elif action == "count":
        typ = "int"
    default = kw(call, "default")
    if default is None and action == "store_true":
        default_text = "False"
    elif default is None and action == "store_false":
        default_text = "True"
    else:
        default_text = const(default)
    if typ is None and isinstance(default, ast.Constant) and default.value is not None:
        typ = type(default.value).__name__
    choices = kw(call, "choices")
    choice_list = [const(e) for e in choices.elts] if isinstance(choices, (ast.List, ast.Tuple, ast.Set)) else None
    req = kw(call, "required")
    return {
        "flag": flag,
        "aliases": [n for n in names if n != flag],
        "type": typ,
        "default": default_text,
        "action": action,
        "choices": choice_list,
        "help": const(kw(call, "help")),
        "required": bool(isinstance(req, ast.Constant) and req.value),
    }


def click_flag(call):
    names = [n for n in strings(call.args) if n.startswith("-")]
    if not names:
        return None
    longs = [n.split("/")[0] for n in names if n.startswith("--")]
    flag = longs[0] if longs else names[0]
    is_flag = kw(call, "is_flag")
    typ = "bool" if (isinstance(is_flag, ast.Constant) and is_flag.value) or any("/" in n for n in names) else type_name(kw(call, "type"))
    default = kw(call, "default")
    if typ is None and isinstance(default, ast.Constant) and default.value is not None:
        typ = type(default.value).__name__
    choices = kw(call, "type")
    choice_list = None
    if isinstance(choices, ast.Call) and isinstance(choices.func, ast.Attribute) and choices.func.attr == "Choice" and choices.args:
        first = choices.args[0]
        if isinstance(first, (ast.List, ast.Tuple)):
            choice_list = [const(e) for e in first.elts]
            typ = "str"
    return {
        "flag": flag,
        "aliases": [n for n in names if n != flag and "/" not in n],
        "type": typ,
        "default": const(default) if default is not None else ("False" if typ == "bool" else None),
        "action": "store_true" if typ == "bool" else None,
        "choices": choice_list,
        "help": const(kw(call, "help")),
        "required": bool(isinstance(kw(call, "required"), ast.Constant) and kw(call, "required").value),
    }


def typer_flags(fn):
    """Options of a typer command: each parameter with a default becomes --name-with-dashes."""
    flags = []
    args = fn.args.args
    defaults = [None] * (len(args) - len(fn.args.defaults)) + list(fn.args.defaults)
    for a, d in zip(args, defaults):
        flag = "--" + a.arg.replace("_", "-")
        default = d
        help_text = None
        if isinstance(d, ast.Call) and isinstance(d.func, ast.Attribute) and d.func.attr in ("Option", "Argument"):
            if d.func.attr == "Argument":
                continue
            default = d.args[0] if d.args else kw(d, "default")
            named = [n for n in strings(d.args[1:]) if n.startswith("--")]
            if named:
                flag = named[0].split("/")[0]
            help_text = const(kw(d, "help"))
        elif d is None:
            continue  # a required positional argument
        typ = type_name(a.annotation)
        if typ is None and isinstance(default, ast.Constant) and default.value is not None:
            typ = type(default.value).__name__
        flags.append({
            "flag": flag,
            "aliases": [],
            "type": typ,
            "default": const(default),
            "action": "store_true" if typ == "bool" else None,
            "choices": None,
            "help": help_text,
            "required": False,
        })
    return flags


def is_cuda_string(node):
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.split(":")[0] == "cuda"


def hard_wired_cuda(tree):
    """Lines that put work on CUDA unconditionally: `.cuda()`, `torch.device("cuda")`, `.to("cuda")`,
    `device="cuda"` — unless under an `if`/conditional expression that tests for CUDA or a device
    flag (`if args.cuda:`, `"cuda" if use_cuda else "cpu"`), which already runs elsewhere."""
    lines = []

    def guarded_test(test):
        text = (src(test) or "").lower()
        return any(w in text for w in ("cuda", "gpu", "is_available", "device", "accel"))

    def visit(node, guarded):
        if isinstance(node, (ast.If, ast.IfExp, ast.While)) and guarded_test(node.test):
            # The test itself is not a use; both branches are guarded.
            for child in ast.iter_child_nodes(node):
                if child is not node.test:
                    visit(child, True)
            return
        if not guarded:
            hit = False
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                if node.func.attr == "cuda" and not (isinstance(node.func.value, ast.Name) and node.func.value.id == "torch"):
                    hit = True  # x.cuda(), model.cuda()
                elif node.func.attr in ("device", "to") and node.args and is_cuda_string(node.args[0]):
                    hit = True
            if isinstance(node, ast.keyword) and node.arg == "device" and is_cuda_string(node.value):
                hit = True
            if isinstance(node, ast.Assign) and is_cuda_string(node.value) and any(isinstance(t, ast.Name) and "device" in t.id.lower() for t in node.targets):
                hit = True
            if hit and getattr(node, "lineno", None):
                lines.append(node.lineno)
            elif hit and isinstance(node, ast.keyword):
                lines.append(node.value.lineno)
        for child in ast.iter_child_nodes(node):
            visit(child, guarded)

    visit(tree, False)
    return sorted(set(lines))


def is_main_guard(stmt):
    t = getattr(stmt, "test", None)
    return isinstance(stmt, ast.If) and isinstance(t, ast.Compare) and isinstance(t.left, ast.Name) and t.left.id == "__name__"


def configurator_flags(tree):
    """nanoGPT-style configuration: globals assigned literal values at the top of the script, then
    `exec(open('configurator.py').read())`, which takes config files (positional) and `--key=value`
    overrides of those globals. Returns (configurator file, flags) or (None, [])."""
    flags = []
    for stmt in tree.body:
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and getattr(stmt.value.func, "id", "") == "exec":
            inner = stmt.value.args[0] if stmt.value.args else None
            # exec(open('configurator.py').read())
            opened = inner.func.value if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute) else None
            if isinstance(opened, ast.Call) and getattr(opened.func, "id", "") == "open" and opened.args and isinstance(opened.args[0], ast.Constant):
                return str(opened.args[0].value), flags
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            name, value = stmt.targets[0].id, stmt.value
            if name.startswith("_"):
                continue
            if isinstance(value, ast.Constant) and isinstance(value.value, (int, float, bool, str)) and value.value is not None:
                typ = type(value.value).__name__
                flags.append({"flag": "--" + name, "aliases": [], "type": typ, "default": str(value.value), "action": None,
                              "choices": None, "help": None, "required": False, "_line": stmt.lineno})
            elif isinstance(value, ast.IfExp):
                # dtype = 'bfloat16' if … else 'float16': a string setting whose default depends on the machine
                b, o = value.body, value.orelse
                if isinstance(b, ast.Constant) and isinstance(o, ast.Constant) and type(b.value) is type(o.value) and b.value is not None:
                    flags.append({"flag": "--" + name, "aliases": [], "type": type(b.value).__name__, "default": src(value), "action": None,
                                  "choices": None, "help": None, "required": False, "_line": stmt.lineno})
    return None, []


def analyze(text):
    tree = ast.parse(text)
    configurator, config_flags = configurator_flags(tree)
    main_guard = any(is_main_guard(s) for s in tree.body)
    top_runs = any(
        isinstance(s, RUNS_AT_TOP) and not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
        or (isinstance(s, ast.If) and not is_main_guard(s))
        for s in tree.body
    )
    imports = set()
    flags, cli, parses = [], None, False
    positionals = []
    typer_commands = set()
    uses_typer = False
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imports.update(a.name.split(".")[0] for a in node.names)
            uses_typer = uses_typer or any(a.name == "typer" for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            imports.add(node.module.split(".")[0])
            uses_typer = uses_typer or node.module == "typer"
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            name = node.func.attr
            if name == "add_argument":
                f = argparse_flag(node)
                if f:
                    flags.append(f)
                    cli = cli or "argparse"
                elif argparse_positional(node):
                    positionals.append(argparse_positional(node))
            elif name in ("parse_args", "parse_known_args"):
                parses = True
            elif name == "run" and isinstance(node.func.value, ast.Name) and node.func.value.id == "typer" and node.args and isinstance(node.args[0], ast.Name):
                typer_commands.add(node.args[0].id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for d in node.decorator_list:
                call = d if isinstance(d, ast.Call) else None
                fn = call.func if call else d
                attr = fn.attr if isinstance(fn, ast.Attribute) else getattr(fn, "id", "")
                if call and attr == "option":
                    f = click_flag(call)
                    if f:
                        flags.append(f)
                        cli = "click"
                        parses = True
                elif attr in ("command", "callback") and uses_typer:
                    typer_commands.add(node.name)
    if uses_typer:
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and node.name in typer_commands:
                flags.extend(typer_flags(node))
                cli = "typer"
                parses = True
    settings_lines = set()
    if configurator and not flags:
        flags, cli, parses = config_flags, "configurator", True
        # `device = 'cuda'` there is a setting the command line overrides, not hard-wired CUDA.
        settings_lines = {f.pop("_line") for f in flags}
    seen, unique = set(), []
    for f in flags:
        if f["flag"] not in seen:
            seen.add(f["flag"])
            unique.append(f)
    stdlib = getattr(sys, "stdlib_module_names", frozenset())
    eager, lazy, modules = import_places(tree)
    return {"ok": True, "mainGuard": main_guard, "topLevelRuns": top_runs, "parsesArgs": parses, "cli": cli, "configurator": configurator, "imports": sorted(imports),
            "stdlib": sorted(i for i in imports if i in stdlib), "flags": unique, "positionals": positionals,
            "lazyImports": sorted(lazy - eager), "modules": sorted(modules),
            "cudaLines": [n for n in hard_wired_cuda(tree) if n not in settings_lines], "downloads": downloads(tree)}


def import_places(tree):
    """Top-level names imported when the module loads (`eager`) and only inside a function, under an
    `if` (not the main guard) or in a `try` that catches ImportError (`lazy`: an optional feature,
    needed only if that code runs),
    and the full dotted names of absolute imports (`from pkg.sub import x` → pkg.sub, pkg.sub.x)."""
    eager, lazy, modules = set(), set(), set()

    def catches_import_error(node):
        for h in node.handlers:
            names = [h.type] if not isinstance(h.type, ast.Tuple) else list(h.type.elts)
            if h.type is None or any(isinstance(n, ast.Name) and n.id in ("ImportError", "ModuleNotFoundError", "Exception") for n in names):
                return True
        return False

    def visit(node, deferred):
        if isinstance(node, ast.Import):
            for a in node.names:
                (lazy if deferred else eager).add(a.name.split(".")[0])
                modules.add(a.name)
            return
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            (lazy if deferred else eager).add(node.module.split(".")[0])
            modules.add(node.module)
            modules.update(f"{node.module}.{a.name}" for a in node.names if a.name != "*")
            return
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            deferred = True
        # Under a condition (`if wandb_log: import wandb`), except the main guard: needed only when it holds.
        if isinstance(node, ast.If) and not is_main_guard(node):
            deferred = True
        if isinstance(node, ast.Try) and catches_import_error(node):
            for child in node.body:
                visit(child, True)
            for child in node.handlers + node.orelse + node.finalbody:
                visit(child, deferred)
            return
        for child in ast.iter_child_nodes(node):
            visit(child, deferred)

    visit(tree, False)
    return eager, lazy, modules


def main():
    files = json.load(sys.stdin)["files"]
    out = {}
    for path, text in files.items():
        try:
            out[path] = analyze(text)
        except SyntaxError as e:
            out[path] = {"ok": False, "error": f"SyntaxError: {e.msg} (line {e.lineno})"}
        except Exception as e:  # noqa: BLE001 - one unreadable file must not hide the others
            out[path] = {"ok": False, "error": f"{type(e).__name__}: {e}"}
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()

"""Reload a saved checkpoint, rebuild the model from the project's code, and run it once.

    python -m chatgpu.reload_check outputs/model.pt [--input-shape 2,16] [--project DIR]

The generic evaluation step for runs whose project has no evaluation script of its own.
It runs in the project directory (the worker's EVALUATE task) and:

1. loads the file with ``torch.load`` on the CPU: a whole model, a state_dict, or a dict
   holding one under a usual key (``state_dict``, ``model_state_dict``, ``model``, ``net``);
2. checks that every floating-point value is finite;
3. rebuilds the model when the checkpoint is a state_dict: it looks for ``nn.Module``
   classes (and ``build_model()``-style factories) defined in the project whose constructor
   needs no arguments, imports only the files that are safe to import (top level made of
   imports, definitions, simple assignments and a ``__main__`` guard, so importing never
   starts a training run), and keeps the first one whose ``load_state_dict(strict=True)``
   takes the checkpoint;
4. runs one forward pass when a sample input is known: ``--input-shape`` (the planner's),
   else inferred from a first ``nn.Linear`` (float features) or ``nn.Embedding`` (token ids)
   layer; every output value must be finite.

It reports ``reload_ok``, ``tensors``, ``parameters``, ``l2_norm``, ``rebuilt`` (1/0) and,
when a forward pass ran, ``forward_ok`` as metrics, and exits non-zero when the file cannot
be loaded, holds non-finite values or no tensors, or a forward pass on a given input fails.
A model that cannot be rebuilt (built inside a function, or needing constructor arguments)
is said in words and reported as ``rebuilt=0``: that is not a failure of the checkpoint.
"""

import argparse
import ast
import importlib.util
import math
import os
import sys

from chatgpu.metrics import log

STATE_KEYS = ("state_dict", "model_state_dict", "model", "net", "module")
FACTORY_NAMES = ("build_model", "make_model", "create_model", "get_model", "model_fn")
# Calls allowed at a module's top level without making its import unsafe.
SAFE_CALLS = {"device", "getenv", "os.environ.get", "join", "dirname", "abspath", "basename", "getLogger", "Path", "TypeVar", "namedtuple", "dataclass", "field"}


def _tensors(obj, prefix=""):
    import torch

    if isinstance(obj, torch.Tensor):
        yield prefix or "tensor", obj
    elif isinstance(obj, torch.nn.Module):
        yield from _tensors(obj.state_dict(), prefix)
    elif isinstance(obj, dict):
        for k, v in obj.items():
            yield from _tensors(v, f"{prefix}.{k}" if prefix else str(k))
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            yield from _tensors(v, f"{prefix}[{i}]")


def _is_state_dict(obj):
    import torch

    return isinstance(obj, dict) and len(obj) > 0 and all(isinstance(k, str) and isinstance(v, torch.Tensor) for k, v in obj.items())


def find_model(obj):
    """(module, state_dict) found in a loaded checkpoint; either may be None."""
    import torch

    if isinstance(obj, torch.nn.Module):
        return obj, None
    if _is_state_dict(obj):
        return None, obj
    if isinstance(obj, dict):
        for key in STATE_KEYS:
            v = obj.get(key)
            if isinstance(v, torch.nn.Module):
                return v, None
            if _is_state_dict(v):
                return None, v
    return None, None


def _call_name(node):
    """`os.environ.get(…)` → "os.environ.get" when that is in SAFE_CALLS, else its last name ("join")."""
    parts, f = [], node.func
    while isinstance(f, ast.Attribute):
        parts.insert(0, f.attr)
        f = f.value
    if isinstance(f, ast.Name):
        parts.insert(0, f.id)
    dotted = ".".join(parts)
    return dotted if dotted in SAFE_CALLS else (parts[-1] if parts and parts[-1] != "get" else "")


def safe_to_import(tree):
    """Does importing this module only define things (no training run, no I/O at import)?"""
    for stmt in tree.body:
        if isinstance(stmt, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Pass)):
            continue
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            continue  # docstring
        if isinstance(stmt, ast.If):
            t = stmt.test
            if isinstance(t, ast.Compare) and isinstance(t.left, ast.Name) and t.left.id == "__name__":
                continue  # the __main__ guard
            return False
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            value = stmt.value
            if value is None:
                continue
            if all(_call_name(c) in SAFE_CALLS for c in ast.walk(value) if isinstance(c, ast.Call)):
                continue
            return False
        if isinstance(stmt, ast.Try):  # optional imports
            if all(isinstance(s, (ast.Import, ast.ImportFrom, ast.Pass, ast.Assign)) for s in stmt.body + [s for h in stmt.handlers for s in h.body]):
                continue
            return False
        return False
    return True


def _no_required_args(fn):
    a = fn.args
    positional = a.posonlyargs + a.args
    if positional and positional[0].arg in ("self", "cls"):
        positional = positional[1:]
    required = len(positional) - len(a.defaults)
    kw_required = sum(1 for d in a.kw_defaults if d is None)
    return required <= 0 and kw_required == 0


def candidates(project):
    """[(file, name, kind)] of model classes and factories a project defines, safe to import."""
    found = []
    for root, dirs, files in os.walk(project):
        rel = os.path.relpath(root, project)
        depth = 0 if rel == "." else rel.count(os.sep) + 1
        dirs[:] = sorted(d for d in dirs if not d.startswith((".", "__")) and d not in ("outputs", "venv", ".venv", "node_modules") and depth < 3)
        for f in sorted(files):
            if not f.endswith(".py"):
                continue
            path = os.path.join(root, f)
            try:
                with open(path, encoding="utf-8") as fh:
                    tree = ast.parse(fh.read(), path)
            except (OSError, SyntaxError, ValueError):
                continue
            if not safe_to_import(tree):
                continue
            for stmt in tree.body:
                if isinstance(stmt, ast.ClassDef) and any((b.attr if isinstance(b, ast.Attribute) else getattr(b, "id", "")) == "Module" for b in stmt.bases):
                    init = next((s for s in stmt.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"), None)
                    if init is None or _no_required_args(init):
                        found.append((path, stmt.name, "class"))
                elif isinstance(stmt, ast.FunctionDef) and stmt.name in FACTORY_NAMES and _no_required_args(stmt):
                    found.append((path, stmt.name, "factory"))
    return found


def _import(path, project):
    rel = os.path.relpath(path, project)[: -len(".py")]
    name = "chatgpu_project." + rel.replace(os.sep, ".")
    if project not in sys.path:
        sys.path.insert(0, project)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def rebuild(state_dict, project):
    """(model, 'file:Name') of the first project model that takes the state_dict strictly, or (None, why)."""
    import torch

    tried = []
    for path, name, kind in candidates(project):
        label = f"{os.path.relpath(path, project)}:{name}"
        try:
            module = _import(path, project)
            model = getattr(module, name)()
            if not isinstance(model, torch.nn.Module):
                continue
            model.load_state_dict(state_dict, strict=True)
            return model, label
        except Exception as e:  # noqa: BLE001 - a candidate that does not fit is skipped
            tried.append(f"{label} ({type(e).__name__})")
    why = f"no model class of the project takes this state_dict (tried {', '.join(tried)})" if tried else "the project defines no model class constructible without arguments"
    return None, why


def sample_input(model, shape):
    """A sample input for one forward pass: the given shape, else inferred from the first layer."""
    import torch

    if shape:
        return torch.randn(*shape), "given"
    first = next((m for m in model.modules() if not list(m.children())), None)
    if isinstance(first, torch.nn.Linear):
        return torch.randn(2, first.in_features), "inferred"
    if isinstance(first, torch.nn.Embedding):
        return torch.zeros(2, 8, dtype=torch.long), "inferred"
    return None, None


def forward_check(model, x):
    """Problems with one forward pass (empty when every output value is finite)."""
    import torch

    model.eval()
    with torch.no_grad():
        out = model(x)
    bad = [n for n, t in _tensors(out, "output") if t.is_floating_point() and not bool(torch.isfinite(t).all())]
    return [f"non-finite values in the forward pass's {', '.join(bad[:5])}"] if bad else []


def main(argv):
    p = argparse.ArgumentParser(prog="python -m chatgpu.reload_check", description="Reload a checkpoint and check it.")
    p.add_argument("checkpoint")
    p.add_argument("--input-shape", help="shape of a sample input for one forward pass, e.g. 2,16")
    p.add_argument("--project", default=".", help="the project's directory (default: the current one)")
    args = p.parse_args(argv)
    try:
        shape = [int(s) for s in args.input_shape.split(",")] if args.input_shape else None
    except ValueError:
        print(f"--input-shape must be integers separated by commas, got {args.input_shape!r}", file=sys.stderr)
        return 2
    import torch

    path = args.checkpoint
    project = os.path.abspath(args.project)
    sys.path.insert(0, project)  # a whole pickled model needs the project's classes
    try:
        obj = torch.load(path, map_location="cpu")
    except Exception as e:  # noqa: BLE001 - any failure to load is the answer
        print(f"cannot load {path}: {e}", file=sys.stderr)
        return 1
    tensors = list(_tensors(obj))
    params = sum(t.numel() for _, t in tensors)
    bad = [name for name, t in tensors if t.is_floating_point() and not bool(torch.isfinite(t).all())]
    norm = math.sqrt(sum(float((t.double() ** 2).sum()) for _, t in tensors if t.is_floating_point()))
    print(f"reloaded {path}: {len(tensors)} tensors, {params} values, L2 norm {norm:.6g}")
    metrics = {"reload_ok": 1 if tensors and not bad else 0, "tensors": len(tensors), "parameters": params, "l2_norm": norm}
    if bad:
        log(**metrics, rebuilt=0)
        print(f"non-finite values in: {', '.join(bad[:10])}", file=sys.stderr)
        return 1
    if not tensors:
        log(**metrics, rebuilt=0)
        print("the checkpoint holds no tensors", file=sys.stderr)
        return 1

    model, state_dict = find_model(obj)
    how = "the checkpoint holds the whole model"
    if model is None and state_dict is not None:
        model, how = rebuild(state_dict, project)
        if model is not None:
            how = f"rebuilt as {how} with load_state_dict(strict=True)"
    elif model is None:
        how = "no model or state_dict found in the checkpoint"
    print(how if model is not None else f"not rebuilt: {how}")
    metrics["rebuilt"] = 1 if model is not None else 0
    if model is None:
        log(**metrics)
        if shape:
            print("--input-shape was given, but there is no model to run it through", file=sys.stderr)
            return 1
        return 0

    x, source = sample_input(model, shape)
    if x is None:
        print("no sample input known (pass --input-shape): no forward pass")
        log(**metrics)
        return 0
    try:
        problems = forward_check(model, x)
    except Exception as e:  # noqa: BLE001
        if source == "given":
            log(**metrics, forward_ok=0)
            print(f"the forward pass on an input of shape {tuple(x.shape)} failed: {type(e).__name__}: {e}", file=sys.stderr)
            return 1
        print(f"no forward pass: the inferred input of shape {tuple(x.shape)} does not fit ({type(e).__name__}: {e}); pass --input-shape")
        log(**metrics)
        return 0
    metrics["forward_ok"] = 0 if problems else 1
    log(**metrics)
    if problems:
        print("; ".join(problems), file=sys.stderr)
        return 1
    print(f"forward pass on an input of shape {tuple(x.shape)} ({source}): outputs finite")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

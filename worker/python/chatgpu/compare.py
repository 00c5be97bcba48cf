"""Compare two runs' outputs and print a JSON report (ChatGPU preparation: numerical check).

    python3 -m chatgpu.compare --reference REF --candidate CAND [--criteria FILE | --criteria-json JSON]
                               [--allow-pickle]

REF and CAND are files or directories (compared file by file, by relative path). What is compared:

- tensors: .pt / .pth (torch.load, weights_only unless --allow-pickle; state_dicts and nested
  dicts/lists are flattened to dotted names), .safetensors (parsed here: 8-byte little-endian header
  length, JSON header, raw little-endian buffer — no safetensors package needed), .npy / .npz
  (allow_pickle=False). Per tensor: shape and dtype match, max absolute and relative error, and the
  share of elements outside tolerance. Tolerances per dtype default to torch.testing.assert_close's
  (fp32 rtol 1.3e-6 atol 1e-5, fp16 1e-3/1e-5, bf16 1.6e-2/1e-5, fp64 1e-7/1e-7, integers and bool
  exact); the criteria may override them per dtype or per tensor name.
- metrics: .json files; every numeric leaf (dotted path) is compared with the tolerance the criteria
  state for it (or "default"), strings and booleans exactly.
- text: every other text file, exactly; binary files by bytes.

Anti-cheating: a candidate tensor that is (nearly) constant while the reference's varies is flagged
as suspicious — outputs collapsed to a constant can pass a loose check on a sum or a mean.

Exit status: 0 all within tolerance, 1 differences found, 2 the comparison could not run.
Only numpy is required; torch is imported only for .pt/.pth files.
"""
import argparse
import hashlib
import json
import math
import os
import struct
import sys

import numpy as np

DEFAULT_TOLERANCES = {
    "float16": (1e-3, 1e-5),
    "bfloat16": (1.6e-2, 1e-5),
    "float32": (1.3e-6, 1e-5),
    "float64": (1e-7, 1e-7),
    "complex64": (1.3e-6, 1e-5),
    "complex128": (1e-7, 1e-7),
}
DEFAULT_METRIC_TOLERANCE = (1.3e-6, 1e-5)
TENSOR_EXT = (".pt", ".pth", ".safetensors", ".npy", ".npz")
NEAR_CONSTANT_MIN_ELEMENTS = 16

SAFETENSORS_DTYPES = {
    "F64": ("<f8", "float64"),
    "F32": ("<f4", "float32"),
    "F16": ("<f2", "float16"),
    "BF16": ("<u2", "bfloat16"),
    "I64": ("<i8", "int64"),
    "I32": ("<i4", "int32"),
    "I16": ("<i2", "int16"),
    "I8": ("i1", "int8"),
    "U8": ("u1", "uint8"),
    "U16": ("<u2", "uint16"),
    "U32": ("<u4", "uint32"),
    "U64": ("<u8", "uint64"),
    "BOOL": ("?", "bool"),
}


class Tensor:
    """A value to compare: numbers as float64/int64 numpy arrays plus the original dtype name."""

    def __init__(self, array, dtype):
        self.array = array
        self.dtype = dtype


class LoadError(Exception):
    pass


# ---------------------------------------------------------------- loading


def load_safetensors(path):
    with open(path, "rb") as f:
        raw = f.read()
    if len(raw) < 8:
        raise LoadError("safetensors: file shorter than its header length")
    (n,) = struct.unpack("<Q", raw[:8])
    if n > len(raw) - 8:
        raise LoadError("safetensors: header length beyond end of file")
    header = json.loads(raw[8 : 8 + n].decode("utf-8"))
    data = raw[8 + n :]
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        dt = info["dtype"]
        if dt not in SAFETENSORS_DTYPES:
            raise LoadError("safetensors: unsupported dtype %s for %s" % (dt, name))
        np_dt, name_dt = SAFETENSORS_DTYPES[dt]
        start, end = info["data_offsets"]
        if not (0 <= start <= end <= len(data)):
            raise LoadError("safetensors: offsets of %s outside the buffer" % name)
        shape = tuple(info["shape"])
        arr = np.frombuffer(data[start:end], dtype=np.dtype(np_dt))
        if int(np.prod(shape, dtype=np.int64)) != arr.size:
            raise LoadError("safetensors: %s has %d elements for shape %s" % (name, arr.size, list(shape)))
        arr = arr.reshape(shape)
        if dt == "BF16":
            arr = (arr.astype(np.uint32) << 16).view(np.float32)
        out[name] = Tensor(arr, name_dt)
    return out


def torch_to_tensor(t):
    import torch

    dtype = str(t.dtype).replace("torch.", "")
    t = t.detach().cpu()
    if t.is_complex():
        arr = t.to(torch.complex128).numpy()
    elif t.is_floating_point():
        arr = t.to(torch.float64).numpy()
    elif t.dtype == torch.bool:
        arr = t.numpy()
    else:
        arr = t.to(torch.int64).numpy()
    return Tensor(arr, dtype)


def flatten(obj, prefix, out):
    """Flattens nested containers from torch.load into name → Tensor or plain value."""
    try:
        import torch

        is_tensor = isinstance(obj, torch.Tensor)
    except ImportError:  # pragma: no cover - .pt needs torch anyway
        is_tensor = False
    if is_tensor:
        out[prefix or "<root>"] = torch_to_tensor(obj)
    elif isinstance(obj, np.ndarray):
        out[prefix or "<root>"] = Tensor(obj, str(obj.dtype))
    elif isinstance(obj, dict):
        for k in obj:
            flatten(obj[k], "%s.%s" % (prefix, k) if prefix else str(k), out)
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            flatten(v, "%s.%d" % (prefix, i) if prefix else str(i), out)
    elif isinstance(obj, bool) or obj is None or isinstance(obj, str):
        out[prefix or "<root>"] = obj
    elif isinstance(obj, int):
        out[prefix or "<root>"] = Tensor(np.array(obj, dtype=np.int64), "int64")
    elif isinstance(obj, float):
        out[prefix or "<root>"] = Tensor(np.array(obj, dtype=np.float64), "float64")
    else:
        out[prefix or "<root>"] = repr(obj)
    return out


def _safe_pickle_module():
    import pickle
    import types

    import torch

    allowed = {
        ("collections", "OrderedDict"),
        ("torch._utils", "_rebuild_tensor_v2"),
        ("torch._utils", "_rebuild_tensor"),
        ("torch._utils", "_rebuild_parameter"),
        ("torch._utils", "_rebuild_parameter_with_state"),
        ("torch", "Size"),
        ("torch", "device"),
        ("builtins", "set"),
        ("builtins", "frozenset"),
        ("builtins", "slice"),
        ("builtins", "complex"),
    }

    class SafeUnpickler(pickle.Unpickler):
        def find_class(self, module, name):
            if (module, name) in allowed or (
                module == "torch" and (name.endswith("Storage") or isinstance(getattr(torch, name, None), torch.dtype))
            ) or (module == "torch.storage" and name == "UntypedStorage"):
                return super().find_class(module, name)
            raise pickle.UnpicklingError("refusing to load %s.%s" % (module, name))

    def load(f, **kwargs):
        return SafeUnpickler(f, **kwargs).load()

    return types.SimpleNamespace(__name__="chatgpu_safe_pickle", Unpickler=SafeUnpickler, load=load)


def load_tensors(path, allow_pickle):
    ext = os.path.splitext(path)[1].lower()
    if ext == ".safetensors":
        return load_safetensors(path)
    if ext == ".npy":
        arr = np.load(path, allow_pickle=False)
        return {"<root>": Tensor(arr, str(arr.dtype))}
    if ext == ".npz":
        with np.load(path, allow_pickle=False) as z:
            return {k: Tensor(z[k], str(z[k].dtype)) for k in sorted(z.files)}
    import torch

    try:
        obj = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as first:
        # PyTorch 1.13's weights_only unpickler rejects plain floats; a restricted unpickler that
        # allows only tensor-rebuilding functions, containers and dtypes is as safe and reads them.
        try:
            obj = torch.load(path, map_location="cpu", pickle_module=_safe_pickle_module())
        except Exception as second:
            if not allow_pickle:
                raise LoadError("refused to unpickle (%s; %s); pass --allow-pickle for trusted outputs" % (first, second))
            obj = torch.load(path, map_location="cpu")
    return flatten(obj, "", {})


# ---------------------------------------------------------------- comparing


def tolerance_for(name, dtype, criteria):
    per_name = criteria.get("tensors", {}).get(name)
    if per_name:
        return float(per_name.get("rtol", 0.0)), float(per_name.get("atol", 0.0))
    over = criteria.get("tolerances", {}).get(dtype)
    if over:
        return float(over.get("rtol", 0.0)), float(over.get("atol", 0.0))
    return DEFAULT_TOLERANCES.get(dtype, (0.0, 0.0))


def near_constant(arr):
    if arr.size < NEAR_CONSTANT_MIN_ELEMENTS or arr.dtype == np.bool_:
        return False
    finite = arr[np.isfinite(arr)] if np.issubdtype(arr.dtype, np.inexact) else arr
    if finite.size < NEAR_CONSTANT_MIN_ELEMENTS:
        return True
    a = finite.astype(np.float64) if not np.iscomplexobj(finite) else np.abs(finite)
    spread = float(np.max(a) - np.min(a))
    return spread <= 1e-6 * max(1.0, float(np.mean(np.abs(a))))


def compare_tensor(name, ref, cand, criteria):
    rep = {
        "name": name,
        "ok": False,
        "dtype_reference": ref.dtype,
        "dtype_candidate": cand.dtype,
        "dtype_match": ref.dtype == cand.dtype,
        "shape_reference": list(ref.array.shape),
        "shape_candidate": list(cand.array.shape),
        "shape_match": tuple(ref.array.shape) == tuple(cand.array.shape),
        "numel": int(ref.array.size),
        "max_abs_error": None,
        "max_rel_error": None,
        "mismatched_fraction": None,
        "rtol": None,
        "atol": None,
        "suspicious": [],
        "problem": None,
    }
    rtol, atol = tolerance_for(name, ref.dtype, criteria)
    rep["rtol"], rep["atol"] = rtol, atol
    if not rep["shape_match"]:
        rep["problem"] = "shape differs"
        return rep
    a = cand.array
    b = ref.array
    if a.size == 0:
        rep.update(max_abs_error=0.0, max_rel_error=0.0, mismatched_fraction=0.0)
    else:
        if np.iscomplexobj(a) or np.iscomplexobj(b):
            a = a.astype(np.complex128)
            b = b.astype(np.complex128)
        elif a.dtype == np.bool_ and b.dtype == np.bool_:
            a = a.astype(np.int64)
            b = b.astype(np.int64)
        else:
            a = a.astype(np.float64)
            b = b.astype(np.float64)
        equal_nan = bool(criteria.get("equal_nan", False))
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            diff = np.abs(a - b)
            both_inf_same = np.isinf(a) & np.isinf(b) & (a == b)
            diff = np.where(both_inf_same, 0.0, diff)
            close = diff <= atol + rtol * np.abs(b)
            close |= both_inf_same
            nan_a, nan_b = np.isnan(a), np.isnan(b)
            if equal_nan:
                close |= nan_a & nan_b
            close &= ~((nan_a | nan_b) & ~(nan_a & nan_b & equal_nan))
            finite_diff = np.where(np.isfinite(diff), diff, np.inf)
            rel = np.where(np.abs(b) > 0, finite_diff / np.abs(b), np.where(finite_diff > 0, np.inf, 0.0))
        rep["max_abs_error"] = json_float(np.max(finite_diff))
        rep["max_rel_error"] = json_float(np.max(rel))
        rep["mismatched_fraction"] = float(np.count_nonzero(~close)) / float(a.size)
    if not rep["dtype_match"]:
        rep["problem"] = "dtype differs"
    elif rep["mismatched_fraction"]:
        rep["problem"] = "%d of %d elements outside tolerance" % (round(rep["mismatched_fraction"] * a.size), a.size)
    if near_constant(cand.array) and not near_constant(ref.array):
        rep["suspicious"].append("candidate is (nearly) constant while the reference varies")
    rep["ok"] = rep["problem"] is None and not rep["suspicious"]
    return rep


def json_float(x):
    x = float(x)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf"
    return x


def compare_plain(name, ref, cand):
    ok = type(ref) is type(cand) and ref == cand
    return {
        "name": name,
        "ok": ok,
        "reference": ref if not isinstance(ref, Tensor) else None,
        "candidate": cand if not isinstance(cand, Tensor) else None,
        "problem": None if ok else "value differs",
    }


def compare_tensor_files(ref_path, cand_path, criteria, allow_pickle):
    ref = load_tensors(ref_path, allow_pickle)
    cand = load_tensors(cand_path, allow_pickle)
    tensors = []
    for name in sorted(set(ref) | set(cand)):
        if name not in cand:
            tensors.append({"name": name, "ok": False, "problem": "missing in candidate"})
        elif name not in ref:
            tensors.append({"name": name, "ok": False, "problem": "not in reference"})
        elif isinstance(ref[name], Tensor) and isinstance(cand[name], Tensor):
            tensors.append(compare_tensor(name, ref[name], cand[name], criteria))
        else:
            tensors.append(compare_plain(name, ref[name], cand[name]))
    return {"kind": "tensors", "ok": all(t["ok"] for t in tensors), "tensors": tensors}


def flatten_json(obj, prefix, out):
    if isinstance(obj, dict):
        for k in sorted(obj):
            flatten_json(obj[k], "%s.%s" % (prefix, k) if prefix else str(k), out)
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            flatten_json(v, "%s.%d" % (prefix, i) if prefix else str(i), out)
    else:
        out[prefix or "<root>"] = obj
    return out


def metric_tolerance(name, criteria):
    metrics = criteria.get("metrics", {})
    spec = metrics.get(name)
    if spec is None:
        # a rule for a list of values ("loss_history") covers its elements ("loss_history.3")
        parts = name.split(".")
        for i in range(len(parts) - 1, 0, -1):
            spec = metrics.get(".".join(parts[:i]))
            if spec is not None:
                break
    if spec is None:
        spec = metrics.get("default")
    if spec is None:
        return DEFAULT_METRIC_TOLERANCE
    return float(spec.get("rtol", 0.0)), float(spec.get("atol", 0.0))


def compare_metric_files(ref_path, cand_path, criteria):
    with open(ref_path, encoding="utf-8") as f:
        ref = flatten_json(json.load(f), "", {})
    with open(cand_path, encoding="utf-8") as f:
        cand = flatten_json(json.load(f), "", {})
    metrics = []
    for name in sorted(set(ref) | set(cand)):
        if name not in cand:
            metrics.append({"name": name, "ok": False, "problem": "missing in candidate"})
            continue
        if name not in ref:
            metrics.append({"name": name, "ok": False, "problem": "not in reference"})
            continue
        r, c = ref[name], cand[name]
        numeric = lambda v: isinstance(v, (int, float)) and not isinstance(v, bool)
        if numeric(r) and numeric(c):
            rtol, atol = metric_tolerance(name, criteria)
            err = abs(float(c) - float(r))
            ok = err <= atol + rtol * abs(float(r)) or (math.isnan(r) and math.isnan(c) and criteria.get("equal_nan", False))
            metrics.append({
                "name": name, "ok": bool(ok), "reference": r, "candidate": c, "abs_error": json_float(err),
                "rtol": rtol, "atol": atol, "problem": None if ok else "outside tolerance",
            })
        else:
            ok = r == c and type(r) is type(c)
            metrics.append({"name": name, "ok": ok, "reference": r, "candidate": c, "problem": None if ok else "value differs"})
    return {"kind": "metrics", "ok": all(m["ok"] for m in metrics), "metrics": metrics}


def compare_text_files(ref_path, cand_path):
    with open(ref_path, "rb") as f:
        rb = f.read()
    with open(cand_path, "rb") as f:
        cb = f.read()
    if rb == cb:
        return {"kind": "text", "ok": True}
    try:
        rl, cl = rb.decode("utf-8").split("\n"), cb.decode("utf-8").split("\n")
    except UnicodeDecodeError:
        return {
            "kind": "binary", "ok": False, "problem": "bytes differ",
            "sha256_reference": hashlib.sha256(rb).hexdigest(), "sha256_candidate": hashlib.sha256(cb).hexdigest(),
        }
    for i in range(max(len(rl), len(cl))):
        a = rl[i] if i < len(rl) else None
        b = cl[i] if i < len(cl) else None
        if a != b:
            return {"kind": "text", "ok": False, "problem": "first difference at line %d" % (i + 1),
                    "line": i + 1, "reference": a, "candidate": b}
    return {"kind": "text", "ok": False, "problem": "bytes differ"}


def compare_file(rel, ref_path, cand_path, criteria, allow_pickle):
    ext = os.path.splitext(rel)[1].lower()
    mode = criteria.get("files", {}).get(rel)
    if mode == "ignore":
        return {"path": rel, "kind": "ignored", "ok": True}
    try:
        if mode == "text":
            rep = compare_text_files(ref_path, cand_path)
        elif ext in TENSOR_EXT:
            rep = compare_tensor_files(ref_path, cand_path, criteria, allow_pickle)
        elif ext == ".json":
            rep = compare_metric_files(ref_path, cand_path, criteria)
        else:
            rep = compare_text_files(ref_path, cand_path)
    except (LoadError, ValueError, OSError, KeyError, json.JSONDecodeError) as e:
        rep = {"kind": "error", "ok": False, "problem": "%s: %s" % (type(e).__name__, e)}
    except Exception as e:  # torch's unpickler raises its own types
        rep = {"kind": "error", "ok": False, "problem": "%s: %s" % (type(e).__name__, e)}
    rep["path"] = rel
    return rep


def list_files(root):
    if os.path.isfile(root):
        return {os.path.basename(root): root}
    out = {}
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if x != "__pycache__")
        for f in sorted(files):
            full = os.path.join(d, f)
            out[os.path.relpath(full, root).replace(os.sep, "/")] = full
    return out


def compare(reference, candidate, criteria=None, allow_pickle=False):
    criteria = criteria or {}
    if os.path.isfile(reference) and os.path.isfile(candidate):
        ref_files = {os.path.basename(reference): reference}
        cand_files = {os.path.basename(reference): candidate}
    else:
        ref_files, cand_files = list_files(reference), list_files(candidate)
    files = []
    for rel in sorted(set(ref_files) | set(cand_files)):
        if criteria.get("files", {}).get(rel) == "ignore":
            files.append({"path": rel, "kind": "ignored", "ok": True})
        elif rel not in cand_files:
            files.append({"path": rel, "kind": "missing", "ok": False, "problem": "missing in candidate"})
        elif rel not in ref_files:
            extra_ok = bool(criteria.get("allow_extra_files", True))
            files.append({"path": rel, "kind": "extra", "ok": extra_ok, "problem": None if extra_ok else "not in reference"})
        else:
            files.append(compare_file(rel, ref_files[rel], cand_files[rel], criteria, allow_pickle))
    suspicious = []
    for f in files:
        for t in f.get("tensors", []):
            for s in t.get("suspicious", []):
                suspicious.append("%s: %s: %s" % (f["path"], t["name"], s))
    return {
        "ok": bool(files) and all(f["ok"] for f in files),
        "files": files,
        "suspicious": suspicious,
        "summary": {
            "files": len(files),
            "failed": sum(1 for f in files if not f["ok"]),
            "tensors": sum(len(f.get("tensors", [])) for f in files),
            "tensors_failed": sum(1 for f in files for t in f.get("tensors", []) if not t["ok"]),
        },
    }


def main(argv=None):
    p = argparse.ArgumentParser(description="Compare two runs' outputs (JSON report on stdout).")
    p.add_argument("--reference", required=True)
    p.add_argument("--candidate", required=True)
    p.add_argument("--criteria", help="JSON file with tolerances")
    p.add_argument("--criteria-json", help="the same, inline")
    p.add_argument("--allow-pickle", action="store_true", help="unpickle .pt files that weights_only refuses (trusted outputs only)")
    args = p.parse_args(argv)
    try:
        criteria = {}
        if args.criteria:
            with open(args.criteria, encoding="utf-8") as f:
                criteria = json.load(f)
        elif args.criteria_json:
            criteria = json.loads(args.criteria_json)
        for path in (args.reference, args.candidate):
            if not os.path.exists(path):
                raise FileNotFoundError(path)
        report = compare(args.reference, args.candidate, criteria, args.allow_pickle)
    except Exception as e:
        json.dump({"ok": False, "error": "%s: %s" % (type(e).__name__, e)}, sys.stdout)
        sys.stdout.write("\n")
        return 2
    json.dump(report, sys.stdout, indent=1, sort_keys=True, allow_nan=False)
    sys.stdout.write("\n")
    return 0 if report["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())

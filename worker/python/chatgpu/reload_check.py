"""Reload a saved checkpoint and report what is in it, as metrics.

    python -m chatgpu.reload_check outputs/model.pt

The generic evaluation step for runs whose project has no evaluation script of its own:
it loads the file with ``torch.load`` on the CPU (a state_dict, a whole model, or a dict
holding one), counts tensors and parameters, and checks that every value is finite. It
exits non-zero when the file cannot be loaded or holds non-finite values, so a broken
checkpoint fails validation instead of passing it.
"""

import math
import sys

from chatgpu.metrics import log


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


def main(argv):
    if len(argv) != 1:
        print("usage: python -m chatgpu.reload_check CHECKPOINT", file=sys.stderr)
        return 2
    import torch

    path = argv[0]
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
    log(reload_ok=1 if not bad else 0, tensors=len(tensors), parameters=params, l2_norm=norm)
    if bad:
        print(f"non-finite values in: {', '.join(bad[:10])}", file=sys.stderr)
        return 1
    if not tensors:
        print("the checkpoint holds no tensors", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

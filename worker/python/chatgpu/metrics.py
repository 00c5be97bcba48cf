"""Report metrics from a ChatGPU task.

The worker reads metrics from the task's stdout, one line each::

    CHATGPU_METRIC {"step": 10, "values": {"loss": 0.5, "accuracy": 0.9}, "ts": 1733140000.123}

``values`` maps names to numbers, ``step`` (optional, a non-negative integer) orders the points of a
run, ``ts`` is Unix time in seconds. Any other stdout line is plain log output. The worker puts this
package on PYTHONPATH, so a task only needs::

    from chatgpu.metrics import log
    log(step=10, loss=0.5, accuracy=0.9)

Values that are not finite numbers (NaN, inf, None, strings, tensors that are not scalars) are
dropped rather than breaking the line; bools count as 1/0; anything with ``.item()`` (a PyTorch or
NumPy scalar) is converted. The line is flushed at once so the worker sees it while the task runs.
The parser on the worker side is ``worker/src/metricLine.ts``.

Under a distributed launcher (torchrun, ``python -m chatgpu.torchrun``, ``accelerate launch``) every
process runs the same training loop; only rank 0 reports (``RANK`` unset, empty or ``0``), so a run's
metrics are rank 0's, once each, and the other ranks' ``log`` calls print nothing and return None.
"""

import json
import math
import os
import sys
import time

__all__ = ["log", "format_line", "PREFIX", "reports"]

PREFIX = "CHATGPU_METRIC "


def _number(value):
    """A finite float/int from value, or None."""
    if isinstance(value, bool):
        return 1 if value else 0
    if hasattr(value, "item") and callable(value.item):
        try:
            value = value.item()  # torch.Tensor / numpy scalar with one element
        except Exception:
            return None
    if isinstance(value, bool):
        return 1 if value else 0
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    try:
        f = float(value)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def format_line(step=None, ts=None, **values):
    """The metric line (without newline) for these values, or None when none is a usable number."""
    clean = {}
    for name, value in values.items():
        n = _number(value)
        if n is not None:
            clean[str(name)] = n
    if not clean:
        return None
    record = {}
    if step is not None:
        s = _number(step)
        if s is not None and float(s).is_integer() and s >= 0:
            record["step"] = int(s)
    record["values"] = clean
    record["ts"] = round(time.time() if ts is None else float(ts), 6)
    return PREFIX + json.dumps(record, separators=(",", ":"), allow_nan=False)


def reports():
    """Does this process report metrics? Not a distributed rank other than 0 (RANK, as torchrun sets it)."""
    return os.environ.get("RANK", "").strip() in ("", "0")


def log(step=None, **values):
    """Print one metric line to stdout and flush it. Returns the line (None if nothing to report).

    ``log(step=10, loss=0.5, accuracy=0.9)``; ``step`` is optional. A metric literally named ``ts``
    or ``step`` cannot be passed this way; use other names.
    """
    if not reports():
        return None
    line = format_line(step=step, **values)
    if line is None:
        return None
    out = sys.stdout
    out.write(line + "\n")
    out.flush()
    return line

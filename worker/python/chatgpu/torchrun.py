"""``python -m chatgpu.torchrun [torchrun flags] SCRIPT [ARGS]``: PyTorch's own launcher
(``python -m torch.distributed.run``, what ``torchrun`` runs), with the same flags, made to work
the same on every worker. The planner runs a distributed (DDP) project with it on ONE worker::

    python -m chatgpu.torchrun --standalone --nproc_per_node 2 --tee 3 train.py --epochs 3

What it changes, and only when needed:

- PyTorch before 2.0 on Python 3.11 or later (Debian 12's torch 1.13) cannot read its own
  ``--redirects``/``--tee`` values: ``Std.from_str`` looks the number up by iterating an IntFlag,
  and Python 3.11 no longer yields the 0 and 3 members, so every launch fails with
  ``'NoneType' object has no attribute 'get'``. The values are read with ``Std(int(v))`` instead.
- ``--standalone`` in PyTorch before 2.0 puts its rendezvous on the fixed port 29400, so two runs
  on one machine (a worker with two slots and no network namespace) would meet each other. It is
  replaced by what newer PyTorch does: a c10d rendezvous on a free port of localhost (``localhost:0``),
  one node.

Everything else is torch.distributed.run itself: ``--tee 3`` prefixes every line a rank prints with
``[default<rank>]:`` (stdout and stderr), which the worker reads to keep the ranks' logs apart and to
take metrics from rank 0 only (worker/src/metricLine.ts).
"""

import re
import sys
import uuid


def _fix_std():
    """Std.from_str reading 0 and 3 again on Python 3.11+ (a no-op where it already does)."""
    from torch.distributed.elastic.multiprocessing import api

    if api.Std.from_str("3") == api.Std.ALL and api.Std.from_str("0") == api.Std.NONE:
        return

    def from_str(cls, vm):
        if re.match(api._VALUE_REGEX, vm):
            return cls(int(vm))
        if re.match(api._MAPPING_REGEX, vm):
            return {int(i): cls(int(v)) for i, v in (m.split(":") for m in vm.split(","))}
        raise ValueError(f"{vm} does not match: <{api._VALUE_REGEX}> or <{api._MAPPING_REGEX}>")

    api.Std.from_str = classmethod(from_str)


def launcher_args(argv):
    """The arguments for torch.distributed.run: ``--standalone`` (before the script) becomes a
    one-node c10d rendezvous on a free port; the script and its arguments are left as they are."""
    out = []
    i = 0
    while i < len(argv):
        a = argv[i]
        if not a.startswith("-"):
            return out + argv[i:]
        if a == "--standalone":
            out += ["--nnodes", "1", "--rdzv_backend", "c10d", "--rdzv_endpoint", "localhost:0", "--rdzv_id", str(uuid.uuid4())]
        else:
            out.append(a)
            # a flag with its value as the next word (--nproc_per_node 2); --flag=value is one word
            takes_value = "=" not in a and a not in ("--no_python", "--no-python", "--run_path", "--run-path", "-m", "--module")
            if takes_value and i + 1 < len(argv):
                out.append(argv[i + 1])
                i += 1
        i += 1
    return out


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    _fix_std()
    from torch.distributed import run

    run.main(launcher_args(argv))


if __name__ == "__main__":
    main()

"""``python -m chatgpu.torchrun [torchrun flags] SCRIPT [ARGS]``: PyTorch's own launcher
(``python -m torch.distributed.run``, what ``torchrun`` runs), with the same flags, made to work
the same on every worker. The planner runs a distributed (DDP) project with it on ONE worker::

    python -m chatgpu.torchrun --standalone --nproc_per_node 2 --tee 3 train.py --epochs 3

What it changes, and only when needed:

- PyTorch before 2.0 on Python 3.11 or later (Debian 12's torch 1.13) cannot read its own
  ``--redirects``/``--tee`` values: ``Std.from_str`` looks the number up by iterating an IntFlag,
  and Python 3.11 no longer yields the 0 and 3 members, so every launch fails with
  ``'NoneType' object has no attribute 'get'``. The values are read with ``Std(int(v))`` instead.
- ``--standalone`` (one node) becomes a static rendezvous on 127.0.0.1 at a free port. PyTorch's own
  ``--standalone`` does not run in a task's sandbox: before 2.0 it takes the fixed port 29400 (two
  runs on one machine without a network namespace would meet each other), and every version hands
  the ranks the machine's host name as MASTER_ADDR, which a sandbox without network cannot resolve
  (no /etc/hosts, no DNS). Where the host name does not resolve, gloo is told to use the loopback
  interface (GLOO_SOCKET_IFNAME=lo) instead of guessing.

Everything else is torch.distributed.run itself: ``--tee 3`` prefixes every line a rank prints with
``[default<rank>]:`` (stdout and stderr), which the worker reads to keep the ranks' logs apart and to
take metrics from rank 0 only (worker/src/metricLine.ts).
"""

import os
import re
import socket
import sys


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
            out += ["--nnodes", "1", "--node_rank", "0", "--rdzv_backend", "static", "--master_addr", "127.0.0.1", "--master_port", str(free_port())]
        else:
            out.append(a)
            # a flag with its value as the next word (--nproc_per_node 2); --flag=value is one word
            takes_value = "=" not in a and a not in ("--no_python", "--no-python", "--run_path", "--run-path", "-m", "--module")
            if takes_value and i + 1 < len(argv):
                out.append(argv[i + 1])
                i += 1
        i += 1
    return out


def free_port():
    """A port of 127.0.0.1 nothing listens on now (the launcher's store binds it a moment later)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _loopback_gloo():
    """GLOO_SOCKET_IFNAME=lo where the host name does not resolve (a sandbox without network)."""
    try:
        socket.gethostbyname(socket.gethostname())
    except OSError:
        if sys.platform.startswith("linux"):
            os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    _fix_std()
    _loopback_gloo()
    from torch.distributed import run

    run.main(launcher_args(argv))


if __name__ == "__main__":
    main()

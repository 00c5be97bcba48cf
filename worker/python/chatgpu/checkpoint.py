"""Checkpoints that survive a drain or a lost worker.

The worker gives every task a checkpoint folder, ``CHATGPU_CHECKPOINT_DIR``. What the program writes
there is uploaded while it runs (each time it changes) and restored into the folder of the next
attempt of the task, which then starts with ``CHATGPU_RESUME=1``. When the machine's owner drains
the worker, the program gets SIGTERM and the file ``CHATGPU_DRAIN_FILE`` appears; it should save a
checkpoint and exit within the worker's grace period (30 s by default), after which it is killed.
A plain PyTorch loop needs a few lines::

    from chatgpu import checkpoint
    state = checkpoint.load()                       # None on a fresh start
    start = state["epoch"] + 1 if state else 1
    if state: model.load_state_dict(state["model"]); opt.load_state_dict(state["opt"])
    for epoch in range(start, epochs + 1):
        train_one_epoch()
        checkpoint.save({"epoch": epoch, "model": model.state_dict(), "opt": opt.state_dict()}, step=epoch)
        if checkpoint.should_stop():               # drained: the checkpoint above is the hand-off
            break

``save`` writes atomically (a temporary file, then a rename), so the worker never uploads half a
file, and records ``step`` in ``chatgpu-checkpoint.json`` beside it so the job shows where a resumed
run picks up. Outside a worker the folder is ``./checkpoint``.
"""

import json
import os
import signal

__all__ = ["directory", "save", "load", "latest", "should_stop", "resuming"]

META = "chatgpu-checkpoint.json"
_stop = {"flag": False, "installed": False}


def directory():
    """The checkpoint folder (created when missing)."""
    d = os.environ.get("CHATGPU_CHECKPOINT_DIR") or os.path.join(os.getcwd(), "checkpoint")
    os.makedirs(d, exist_ok=True)
    return d


def resuming():
    """True when the folder holds an earlier attempt's checkpoint to resume from."""
    return os.environ.get("CHATGPU_RESUME") == "1"


def _on_term(signum, frame):
    _stop["flag"] = True


def _install():
    if not _stop["installed"]:
        try:
            signal.signal(signal.SIGTERM, _on_term)
        except ValueError:  # not the main thread
            pass
        _stop["installed"] = True


def should_stop():
    """True once the worker asked the program to checkpoint and exit (SIGTERM or the drain file)."""
    _install()
    drain = os.environ.get("CHATGPU_DRAIN_FILE")
    return _stop["flag"] or bool(drain and os.path.exists(drain))


def _atomic_write(path, write):
    tmp = f"{path}.tmp-{os.getpid()}"
    write(tmp)
    os.replace(tmp, path)


def save(obj, name="checkpoint.pt", step=None):
    """Saves obj (torch.save when PyTorch is importable, else JSON) atomically; returns its path."""
    _install()
    path = os.path.join(directory(), name)
    try:
        import torch

        _atomic_write(path, lambda p: torch.save(obj, p))
    except ImportError:
        _atomic_write(path, lambda p: open(p, "w").write(json.dumps(obj)))
    if step is not None:
        _atomic_write(os.path.join(directory(), META), lambda p: open(p, "w").write(json.dumps({"step": int(step)})))
    return path


def latest(name="checkpoint.pt"):
    """The path of the saved checkpoint, or None."""
    path = os.path.join(directory(), name)
    return path if os.path.exists(path) else None


def load(name="checkpoint.pt", map_location="cpu"):
    """The saved checkpoint, or None on a fresh start."""
    _install()
    path = latest(name)
    if path is None:
        return None
    try:
        import torch

        return torch.load(path, map_location=map_location, weights_only=False)
    except ImportError:
        return json.load(open(path))

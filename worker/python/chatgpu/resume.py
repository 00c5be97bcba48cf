"""Checkpoint and resume for a training loop that had none (the ``checkpoint-resume`` preparation step).

The rewriter (api/src/preparation/python/checkpoint_resume.py) adds three things to a program and
nothing else: this import, two lines before its training loop, and a wrapper around the loop's
iterable (``for``) or a ``tick()`` as the first statement of its body (``while``)::

    import chatgpu.resume as _chatgpu_resume
    ...
    _chatgpu_run = _chatgpu_resume.Run(objects=dict(model=model, opt=opt), values=lambda: dict(best=best))
    [best] = _chatgpu_run.restore(best=best)
    for epoch in _chatgpu_run.loop(range(epochs)):
        ...

What a checkpoint holds, taken between two iterations of the loop (never inside one):
- the ``state_dict()`` of every object given that has one (models, optimizers, LR schedulers, GradScaler),
  the state of ``torch.Generator`` objects and of the generators of DataLoaders and their samplers,
  and the train/eval mode of every submodule; the values of the tensors given (data made before the loop,
  weights trained by hand), restored in place;
- the loop-carried values (counters, best scores, loss histories), as the ``values`` callable returns them;
- the RNG states (Python ``random``, NumPy, torch CPU, CUDA when initialised) at that point, and the
  RNG states at the moment the loop's iterator was made;
- how many iterations are done, of how many.

Resuming (``restore`` then ``loop``): the objects get their state back; the loop makes its iterator
again under the RNG state the first run made it with (so a shuffling DataLoader draws the same order),
skips the iterations already done without running their bodies, and sets the RNG states saved with
the checkpoint, so what follows is what the uninterrupted run would have done.

Files (in ``CHATGPU_CHECKPOINT_DIR``, the folder the worker uploads and restores): ``resume-<step>.pt``,
written to a temporary file, fsynced and renamed, the last two kept; ``chatgpu-checkpoint.json`` says the
step (the worker shows it). A checkpoint that does not load is skipped for the one before it.

When: every ``CHATGPU_RESUME_EVERY_STEPS`` iterations and/or every ``CHATGPU_RESUME_EVERY_SEC`` seconds
(default 300), after the last iteration, and at once when the worker drains (SIGTERM or the drain file:
the program then exits with status 143 after saving). ``CHATGPU_RESUME_HALT_AT=k`` (the kill-and-resume
check, resume_check.py) saves after iteration k, touches ``CHATGPU_RESUME_HALT_FILE`` and waits to be killed;
``CHATGPU_RESUME_DIGEST=path`` writes, at exit, a digest of the final state (sha256 of every tensor), and beside
it its floating-point values (``path.values``) and the devices the run used (``path.device``), for the check's
tolerance mode.
"""

import atexit
import datetime
import glob
import hashlib
import json
import os
import pickle
import random
import re
import sys
import time

from chatgpu import checkpoint as _checkpoint

__all__ = ["Run"]

FORMAT = 1
KEEP = 2
_NAME = re.compile(r"^resume-(\d+)\.pt$")
_END = object()


def _seed_for_check():
    """The kill-and-resume check (resume_check.py) starts its uninterrupted run and the run it kills with
    CHATGPU_RESUME_SEED=1 and the resumed process with 2, seeding Python, NumPy and torch here, at the
    program's first statement: a program that never seeds then draws the same data and weights in the first
    two, and a resumed run that does not restore them goes on with others (the check sees it). A program's
    own seeds come after this and win."""
    seed = os.environ.get("CHATGPU_RESUME_SEED")
    if not seed:
        return
    random.seed(int(seed))
    for name, call in (("numpy", lambda m: m.random.seed(int(seed))), ("torch", lambda m: m.manual_seed(int(seed)))):
        try:
            call(__import__(name))
        except ImportError:
            pass


_seed_for_check()


def _torch():
    import torch

    return torch


def _rng_state():
    s = {"python": random.getstate()}
    np = sys.modules.get("numpy")
    if np is not None:
        s["numpy"] = np.random.get_state()
    torch = sys.modules.get("torch")
    if torch is not None:
        s["torch"] = torch.get_rng_state()
        try:
            if torch.cuda.is_available() and torch.cuda.is_initialized():
                s["cuda"] = torch.cuda.get_rng_state_all()
        except Exception:  # a build without CUDA
            pass
    return s


def _set_rng(s):
    if not s:
        return
    random.setstate(s["python"])
    if "numpy" in s:
        import numpy as np

        np.random.set_state(s["numpy"])
    if "torch" in s:
        torch = _torch()
        torch.set_rng_state(s["torch"])
        if "cuda" in s and torch.cuda.is_available():
            torch.cuda.set_rng_state_all(s["cuda"])


def _generators(obj):
    """The torch.Generator objects whose state a run depends on: obj itself, or a DataLoader's and its sampler's."""
    torch = sys.modules.get("torch")
    if torch is None:
        return {}
    if isinstance(obj, torch.Generator):
        return {"": obj}
    out = {}
    for path in ("generator", "sampler.generator", "batch_sampler.sampler.generator"):
        o = obj
        for part in path.split("."):
            o = getattr(o, part, None)
        if isinstance(o, torch.Generator):
            out[path] = o
    return out


def _is_tensor(obj):
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(obj, torch.Tensor)


def _stateful(obj):
    # A tensor the loop uses (data made before it, weights trained by hand) is state too: a program that never
    # seeds its RNGs makes different ones in every process, and a resumed run must go on with the first run's.
    return (callable(getattr(obj, "state_dict", None)) and callable(getattr(obj, "load_state_dict", None))) or bool(_generators(obj)) or _is_tensor(obj)


def _flatten(prefix, obj, out, values=None, devices=None):
    """sha256 of every tensor/array leaf, repr of every other leaf: the digest compared bitwise. With ``values``,
    the floating-point leaves themselves too (CPU tensors, floats), for the check's tolerance mode; with
    ``devices``, the device types the tensors live on."""
    torch = sys.modules.get("torch")
    if isinstance(obj, dict):
        for k in sorted(obj, key=repr):
            _flatten(f"{prefix}.{k}", obj[k], out, values, devices)
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            _flatten(f"{prefix}[{i}]", v, out, values, devices)
    elif torch is not None and isinstance(obj, torch.Tensor):
        if devices is not None:
            devices.add(obj.device.type)
        t = obj.detach().cpu().contiguous()
        data = t.view(torch.uint8) if t.dtype == torch.bfloat16 else t
        out[prefix] = f"{t.dtype} {tuple(t.shape)} " + hashlib.sha256(data.numpy().tobytes()).hexdigest()
        if values is not None and (t.is_floating_point() or t.is_complex()):
            values[prefix] = t.clone()
    elif type(obj).__module__ == "numpy" and hasattr(obj, "tobytes"):
        out[prefix] = f"{obj.dtype} {getattr(obj, 'shape', ())} " + hashlib.sha256(obj.tobytes()).hexdigest()
        if values is not None and getattr(obj.dtype, "kind", "") in "fc":
            values[prefix] = obj.copy()
    else:
        out[prefix] = repr(obj)
        if values is not None and isinstance(obj, float):
            values[prefix] = obj


def _rng_digest(rng):
    out = {}
    _flatten("rng", {k: v for k, v in rng.items() if k != "python"}, out)
    out["rng.python"] = hashlib.sha256(pickle.dumps(rng["python"])).hexdigest()
    return out


class Run:
    """One training loop's checkpoints: see the module's docstring."""

    def __init__(self, objects=None, values=None, every_steps=None, every_seconds=None):
        self.objects = {k: v for k, v in (objects or {}).items() if _stateful(v)}
        self.values = values
        self.every_steps = int(os.environ.get("CHATGPU_RESUME_EVERY_STEPS") or every_steps or 0)
        self.every_seconds = float(os.environ.get("CHATGPU_RESUME_EVERY_SEC") or every_seconds or 300)
        halt = os.environ.get("CHATGPU_RESUME_HALT_AT")
        self.halt_at = int(halt) if halt else None
        self.dir = _checkpoint.directory()
        _checkpoint.should_stop()  # installs the SIGTERM handler now: a drain from here on is saved at the next boundary
        self.done = 0
        self.total = None
        self.resumed = None
        self._loop_rng = None
        self._ticked = False
        self._last_step = 0
        self._last_time = time.monotonic()
        digest = os.environ.get("CHATGPU_RESUME_DIGEST")
        if digest:
            # The RNG states as the program left them before its loop: the check compares a final RNG state
            # only where two fresh processes agree here (a generator the program never seeds differs anyway).
            with open(f"{digest}.start", "w") as f:
                json.dump(_rng_digest(_rng_state()), f)
            atexit.register(self._write_digest, digest)

    # ─────────────── resume ───────────────

    def _checkpoints(self):
        found = []
        for path in glob.glob(os.path.join(self.dir, "resume-*.pt")):
            m = _NAME.match(os.path.basename(path))
            if m:
                found.append((int(m.group(1)), path))
        return [p for _, p in sorted(found, reverse=True)]

    def _load(self, path):
        torch = _torch()
        kw = {"weights_only": False} if "weights_only" in torch.load.__code__.co_varnames else {}
        try:
            ck = torch.load(path, **kw)
        except RuntimeError:  # saved on a GPU this machine lacks
            ck = torch.load(path, map_location="cpu", **kw)
        if not isinstance(ck, dict) or ck.get("format") != FORMAT or "done" not in ck:
            raise ValueError("not a complete checkpoint of this format")
        return ck

    def restore(self, **defaults):
        """Loads the newest complete checkpoint into the objects; returns the carried values (or the defaults) in order."""
        for path in self._checkpoints():
            try:
                ck = self._load(path)
            except Exception as e:  # a partial or foreign file: the one before it
                print(f"chatgpu.resume: skipped {os.path.basename(path)} ({e})", file=sys.stderr, flush=True)
                continue
            for name, obj in self.objects.items():
                saved = ck["objects"].get(name)
                if saved is None:
                    continue
                if "state_dict" in saved:
                    obj.load_state_dict(saved["state_dict"])
                if "tensor" in saved:
                    if tuple(saved["tensor"].shape) != tuple(obj.shape):  # other arguments made another tensor
                        print(f"chatgpu.resume: {name} not restored (shape {tuple(obj.shape)}, saved {tuple(saved['tensor'].shape)})", file=sys.stderr, flush=True)
                    else:
                        with _torch().no_grad():  # in place: every name bound to it sees the restored values
                            obj.copy_(saved["tensor"].to(obj.device))
                for key, state in saved.get("generators", {}).items():
                    _generators(obj)[key].set_state(state)
                modes = saved.get("modes")
                if modes is not None:
                    for m, training in zip(obj.modules(), modes):
                        m.training = training
            self.done = self._last_step = ck["done"]
            self.total = ck.get("total")
            self.resumed = ck
            when = datetime.datetime.fromtimestamp(ck["saved_at"], datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
            age = max(0.0, time.time() - ck["saved_at"])
            total = ck.get("total") if ck.get("total") is not None else "?"
            print(f"chatgpu.resume: resumed at step {ck['done']} of {total} from a checkpoint of {when} (saved {age:.0f} s ago)", flush=True)
            values = ck.get("values", {})
            return [values.get(k, v) for k, v in defaults.items()]
        return list(defaults.values())

    # ─────────────── the loop ───────────────

    def loop(self, iterable):
        """The loop's iterable, skipping the iterations a restored checkpoint holds; saves between iterations."""
        try:
            self.total = len(iterable)
        except TypeError:
            pass
        # The iterator is made (and, on resuming, made again) under the RNG states of the first run's start
        # of the loop, its tracked generators (a DataLoader's own) included: the same shuffle.
        if self.resumed is not None:
            self._loop_rng = self.resumed.get("loop_rng")
            self._set_generators(self._loop_rng.get("generators", {}))
            _set_rng(self._loop_rng["global"])
        else:
            self._loop_rng = {"global": _rng_state(), "generators": self._generator_states()}
        it = iter(iterable)
        if self.resumed is not None:
            for _ in range(self.done):
                if next(it, _END) is _END:  # fewer iterations than the checkpoint holds (other arguments): none left
                    break
            self._set_generators({n: o.get("generators", {}) for n, o in self.resumed["objects"].items()})
            _set_rng(self.resumed["rng"])
        return self._iterate(it)

    def _generator_states(self):
        return {name: {k: g.get_state() for k, g in _generators(obj).items()} for name, obj in self.objects.items() if _generators(obj)}

    def _set_generators(self, states):
        for name, gens in states.items():
            obj = self.objects.get(name)
            if obj is not None:
                for key, state in gens.items():
                    _generators(obj)[key].set_state(state)

    def _iterate(self, it):
        first = True
        while True:
            if not first:
                self.done += 1
                self._between()
            first = False
            try:
                item = next(it)
            except StopIteration:
                break
            yield item
        if self.done != self._last_step:
            self.save()

    def tick(self):
        """For a while loop: called first in its body, it saves between iterations."""
        if self._ticked:
            self.done += 1
            self._between()
        else:
            self._ticked = True
            if self.resumed is not None:
                _set_rng(self.resumed["rng"])

    def _between(self):
        stop = _checkpoint.should_stop()
        due = (self.every_steps and self.done - self._last_step >= self.every_steps) or time.monotonic() - self._last_time >= self.every_seconds
        if due or stop or self.done == self.halt_at:
            self.save()
        if self.done == self.halt_at:
            halt_file = os.environ.get("CHATGPU_RESUME_HALT_FILE")
            if halt_file:
                open(halt_file, "w").close()
            while True:  # the check kills this process now
                time.sleep(3600)
        if stop:
            print(f"chatgpu.resume: drained: saved step {self.done}, exiting", flush=True)
            raise SystemExit(143)

    # ─────────────── saving ───────────────

    def _state(self):
        torch = sys.modules.get("torch")
        objects = {}
        for name, obj in self.objects.items():
            saved = {}
            if callable(getattr(obj, "state_dict", None)):
                saved["state_dict"] = obj.state_dict()
            elif _is_tensor(obj):
                saved["tensor"] = obj.detach().clone()
            gens = _generators(obj)
            if gens:
                saved["generators"] = {k: g.get_state() for k, g in gens.items()}
            if torch is not None and isinstance(obj, torch.nn.Module):
                saved["modes"] = [m.training for m in obj.modules()]
            objects[name] = saved
        tracked = {id(o) for o in self.objects.values()}
        values = {k: v for k, v in (self.values() if self.values else {}).items() if id(v) not in tracked}
        return {"format": FORMAT, "done": self.done, "total": self.total, "objects": objects, "values": values, "rng": _rng_state(), "loop_rng": self._loop_rng, "saved_at": time.time()}

    def save(self):
        torch = _torch()
        path = os.path.join(self.dir, f"resume-{self.done:09d}.pt")
        tmp = f"{path}.tmp-{os.getpid()}"
        with open(tmp, "wb") as f:
            torch.save(self._state(), f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
        meta = os.path.join(self.dir, _checkpoint.META)
        with open(f"{meta}.tmp-{os.getpid()}", "w") as f:
            json.dump({"step": self.done, **({"of": self.total} if self.total is not None else {})}, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(f"{meta}.tmp-{os.getpid()}", meta)
        try:
            fd = os.open(self.dir, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        except OSError:
            pass
        for old in self._checkpoints()[KEEP:]:
            try:
                os.remove(old)
            except OSError:
                pass
        self._last_step = self.done
        self._last_time = time.monotonic()

    def _write_digest(self, path):
        out, values, devices = {}, {}, set()
        state = self._state()
        _flatten("objects", state["objects"], out, values, devices)
        _flatten("values", state["values"], out, values, devices)
        out.update(_rng_digest(state["rng"]))
        out["done"] = str(self.done)
        with open(path, "w") as f:
            json.dump(out, f, indent=0, sort_keys=True)
        # For the check's tolerance mode (resume_check.py): the floating-point values, and where the run computed.
        torch = sys.modules.get("torch")
        if torch is not None:
            torch.save(values, f"{path}.values")
            cuda = bool(torch.cuda.is_available() and torch.cuda.is_initialized())
            if cuda:
                devices.add("cuda")
            run = {
                "devices": sorted(devices),
                "hip": bool(getattr(torch.version, "hip", None)),
                "deterministic": bool(torch.are_deterministic_algorithms_enabled()) if hasattr(torch, "are_deterministic_algorithms_enabled") else False,
            }
        else:
            run = {"devices": [], "hip": False, "deterministic": False}
        with open(f"{path}.device", "w") as f:
            json.dump(run, f)

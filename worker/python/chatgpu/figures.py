"""Save the figures of a matplotlib program that only shows them.

Many programs end with ``plt.show()`` and never call ``savefig``: on a worker nothing can be
shown, so their figures would be lost. When the task's environment has ``CHATGPU_FIGURES=<folder>``
the worker puts ``chatgpu/_startup`` first on PYTHONPATH; its ``sitecustomize`` calls ``install()``
before the program starts, and then:

- ``plt.show()`` (also ``pylab.show``, ``from matplotlib.pyplot import show``) saves every open
  figure, in the order of their numbers, as ``figure-1.png``, ``figure-2.png`` … in that folder and
  closes them, as a blocking show does once its windows are closed. A non-blocking show
  (``block=False``, interactive mode, ``plt.pause``) saves nothing: an animation would otherwise
  write one file per frame; its figures are saved when the program exits.
- ``fig.show()`` saves that figure (it stays open, as the method leaves it), unless it looks the
  same as when it was last saved.
- when the program exits (also after an uncaught exception or ``sys.exit``), each figure still open
  is saved unless ``fig.show()`` saved it and it has not changed since.
- ``matplotlib.use`` or ``plt.switch_backend`` asked for an interactive backend (TkAgg, QtAgg …)
  gets Agg: there is no display, and the program would otherwise stop with an ImportError.

Numbers continue after the highest ``figure-N.png`` already in the folder, and each file is
created exclusively, so two programs of one run (``python a.py && python b.py``) never overwrite
each other's figures. The folder is created with the first figure. A relative folder is taken
from the working directory at start-up (the worker passes an absolute one).

Nothing is imported until the program imports matplotlib (an import hook patches the modules as
they load, whatever the order of imports), so a program that does not plot pays nothing and one
without matplotlib runs as before. A figure that cannot be saved is reported on stderr and the
program goes on.
"""

import atexit
import hashlib
import io
import os
import re
import sys
import threading
import weakref

__all__ = ["ENV", "install", "save_figure", "save_png"]

ENV = "CHATGPU_FIGURES"

_state = {"dir": None, "next": None, "installed": False}
_lock = threading.Lock()
# What each figure looked like when last saved (sha256 of its PNG): fig.show() and the exit skip a
# figure that has not changed since (matplotlib's `stale` flag is set again by savefig itself).
_saved = weakref.WeakKeyDictionary()
_NAME = re.compile(r"^figure-(\d+)\.png$")


def _note(message):
    try:
        sys.stderr.write("chatgpu.figures: %s\n" % message)
        sys.stderr.flush()
    except Exception:
        pass


def _next_path():
    """An exclusively created file for the next figure: (path, open file)."""
    folder = _state["dir"]
    os.makedirs(folder, exist_ok=True)
    if _state["next"] is None:
        highest = 0
        for name in os.listdir(folder):
            m = _NAME.match(name)
            if m:
                highest = max(highest, int(m.group(1)))
        _state["next"] = highest + 1
    while True:
        n = _state["next"]
        _state["next"] = n + 1
        path = os.path.join(folder, "figure-%d.png" % n)
        try:
            return path, open(path, "xb")
        except FileExistsError:
            continue


def _render(fig):
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return buf.getvalue()


def save_figure(fig):
    """Saves one figure as the next figure-N.png; returns its path, or None when it could not be saved."""
    try:
        data = _render(fig)
    except Exception as e:
        _note("could not save a figure: %s: %s" % (type(e).__name__, e))
        return None
    path = _write_next(data)
    if path:
        _saved[fig] = hashlib.sha256(data).digest()
    return path


def _write_next(data, folder=None):
    """Writes bytes as the next figure-N.png (in `folder` when given, which becomes the folder); the path, or None."""
    with _lock:
        if folder and _state["dir"] != os.path.abspath(folder):
            _state["dir"] = os.path.abspath(folder)
            _state["next"] = None
        try:
            path, f = _next_path()
            with f:
                f.write(data)
        except OSError as e:
            _note("cannot write into %s: %s" % (_state["dir"], e))
            return None
    return path


def save_png(data, folder=None):
    """Writes PNG bytes (a figure rendered elsewhere: a notebook's embedded output) as the next
    figure-N.png in `folder` (default $CHATGPU_FIGURES); returns its path, or None."""
    folder = folder or _state["dir"] or os.environ.get(ENV)
    return _write_next(data, folder) if folder else None


def _changed(fig):
    """Whether the figure looks different from when fig.show() saved it (never saved: True)."""
    before = _saved.get(fig)
    if before is None:
        return True
    try:
        return hashlib.sha256(_render(fig)).digest() != before
    except Exception:
        return True


def _open_figures():
    """Figures pyplot holds, by number; none when pyplot was never imported."""
    helpers = sys.modules.get("matplotlib._pylab_helpers")
    if helpers is None:
        return []
    managers = sorted(helpers.Gcf.get_all_fig_managers(), key=lambda m: m.num)
    return [m.canvas.figure for m in managers]


def _blocking(block):
    if block is not None:
        return bool(block)
    mpl = sys.modules.get("matplotlib")
    return not (mpl is not None and mpl.is_interactive())


def _patch_pyplot(plt):
    if getattr(plt.show, "_chatgpu_figures", False):
        return

    def show(*args, **kwargs):
        block = kwargs.get("block", args[0] if args else None)
        if not _blocking(block):
            return None
        for fig in _open_figures():
            save_figure(fig)
        plt.close("all")
        return None

    show.__doc__ = plt.show.__doc__
    show._chatgpu_figures = True
    plt.show = show
    _patch_switch(plt, "switch_backend")
    atexit.register(_at_exit)


def _at_exit():
    for fig in _open_figures():
        if _changed(fig):
            save_figure(fig)


def _patch_figure(figure_module):
    cls = figure_module.Figure
    if getattr(cls.show, "_chatgpu_figures", False):
        return

    def show(self, warn=True):
        if _changed(self):
            save_figure(self)

    show.__doc__ = cls.show.__doc__
    show._chatgpu_figures = True
    cls.show = show


def _patch_switch(module, name):
    """Wraps module.<name>(backend, …) so that an interactive backend becomes Agg."""
    original = getattr(module, name, None)
    if original is None or getattr(original, "_chatgpu_figures", False):
        return

    def switch(backend, *args, **kwargs):
        try:
            from matplotlib import rcsetup

            interactive = {b.lower() for b in rcsetup.interactive_bk}
        except Exception:
            interactive = set()
        if isinstance(backend, str) and backend.lower() in interactive:
            _note("backend %s replaced by Agg (no display here; figures are saved to %s)" % (backend, _state["dir"]))
            backend = "agg"
        return original(backend, *args, **kwargs)

    switch.__doc__ = original.__doc__
    switch.__wrapped__ = original
    switch._chatgpu_figures = True
    setattr(module, name, switch)


_PATCHES = {
    "matplotlib": lambda m: _patch_switch(m, "use"),
    "matplotlib.figure": _patch_figure,
    "matplotlib.pyplot": _patch_pyplot,
}


def _apply(name, module):
    try:
        _PATCHES[name](module)
    except Exception as e:  # a matplotlib we do not know: run the program as it is
        _note("cannot watch %s: %s: %s" % (name, type(e).__name__, e))


class _Finder:
    """A meta path finder that lets the real finders find the three modules, then patches each
    one right after it has run (before any importer sees it)."""

    def __init__(self):
        self._busy = threading.local()

    def find_spec(self, name, path=None, target=None):
        if name not in _PATCHES or getattr(self._busy, "on", False):
            return None
        self._busy.on = True
        try:
            spec = None
            for finder in sys.meta_path:
                if finder is self or not hasattr(finder, "find_spec"):
                    continue
                spec = finder.find_spec(name, path, target)
                if spec is not None:
                    break
        finally:
            self._busy.on = False
        loader = spec.loader if spec is not None else None
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        original = loader.exec_module

        def exec_module(module):
            original(module)
            _apply(name, module)

        try:
            loader.exec_module = exec_module  # this module's own loader instance
        except (AttributeError, TypeError):
            return spec
        return spec


def install(folder=None):
    """Starts watching matplotlib; `folder` defaults to $CHATGPU_FIGURES. Returns False when there is none."""
    folder = folder or os.environ.get(ENV)
    if not folder:
        return False
    _state["dir"] = os.path.abspath(folder)
    if _state["installed"]:
        return True
    _state["installed"] = True
    sys.meta_path.insert(0, _Finder())
    # Imported before install (only when called by hand): patched now.
    for name in ("matplotlib", "matplotlib.figure", "matplotlib.pyplot"):
        if name in sys.modules:
            _apply(name, sys.modules[name])
    return True

"""Start-up hook for tasks whose environment has CHATGPU_FIGURES (chatgpu/figures.py).

This folder is a PYTHONPATH entry, not a package: the worker puts it first on PYTHONPATH only for
such tasks, so Python imports this file at start-up instead of the interpreter's own
``sitecustomize``. That one (Debian's, a virtualenv's) is then run as it would have been, so the
only change is the figures hook; with the variable unset the folder is not on the path at all.
"""


def _run_hidden_sitecustomize():
    import importlib.machinery
    import importlib.util
    import os
    import sys

    here = os.path.dirname(os.path.abspath(__file__))
    rest = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except ImportError:
        pass
    except Exception as err:  # what site.py does with a failing sitecustomize
        sys.stderr.write("Error in sitecustomize; set PYTHONVERBOSE for traceback:\n%s: %s\n" % (type(err).__name__, err))


def _figures_module():
    try:
        from chatgpu import figures

        return figures
    except ImportError:  # the task's own PYTHONPATH left out the helpers: load the file beside this folder
        import importlib.util
        import os

        here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        spec = importlib.util.spec_from_file_location("chatgpu_figures", os.path.join(here, "figures.py"))
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module


def _start():
    import os

    if not os.environ.get("CHATGPU_FIGURES"):
        return
    try:
        _figures_module().install()
    except Exception as err:  # never stop the program for the figures
        import sys

        sys.stderr.write("chatgpu.figures: not watching figures: %s: %s\n" % (type(err).__name__, err))


_start()
_run_hidden_sitecustomize()

"""Helpers for tasks run by a ChatGPU worker (the worker puts this package on PYTHONPATH)."""

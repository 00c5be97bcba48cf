"""Fused bias + GELU for PyTorch: the custom kernel in csrc/ through ctypes, with a pure-PyTorch fallback.

Backends, chosen per call from the tensors' device:
  gpu        build/libfusedgelu.so (`make`): the CUDA kernel, for tensors on the GPU
  cpu-build  build/libfusedgelu_cpu.so (`make cpu`): the same kernel source compiled for the CPU
  torch      the same formula in plain PyTorch, when no library could be built or loaded
FUSED_GELU_BACKEND=torch forces the fallback.
"""
import ctypes
import os
import subprocess

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
K0 = 0.7978845608028654  # sqrt(2 / pi)
K1 = 0.044715

_libs = {"gpu": None, "cpu-build": None}
used = set()


def _make(*targets):
    r = subprocess.run(["make", "-s", "-C", HERE, *targets], capture_output=True, text=True)
    return r.returncode, (r.stdout + r.stderr).strip()


def _load(path):
    lib = ctypes.CDLL(path)
    p, i = ctypes.c_void_p, ctypes.c_int
    lib.bias_gelu_forward.argtypes = [p, p, p, i, i]
    lib.bias_gelu_backward.argtypes = [p, p, p, p, i, i]
    lib.fused_gelu_error_string.restype = ctypes.c_char_p
    return lib


def build():
    """Builds and loads what this machine can: returns what happened, one line each.

    Where the GPU compiler is installed its build must succeed (a kernel that does not compile
    is an error, not a reason to fall back); the CPU build is optional.
    """
    notes = []
    if os.environ.get("FUSED_GELU_BACKEND") == "torch":
        return ["FUSED_GELU_BACKEND=torch: pure-PyTorch fallback"]
    code, out = _make("gpu-compiler")
    compiler = out.splitlines()[-1] if code == 0 and out else ""
    if compiler:
        code, out = _make("all")
        if code != 0:
            raise RuntimeError(f"the GPU library failed to build with {compiler}:\n{out}")
        notes.append(f"GPU library compiled with {compiler}: build/libfusedgelu.so")
        try:
            _libs["gpu"] = _load(os.path.join(HERE, "build", "libfusedgelu.so"))
        except OSError as e:
            notes.append(f"GPU library not loadable here ({e})")
    else:
        notes.append("no GPU compiler installed: GPU library not built")
    code, out = _make("cpu")
    if code == 0:
        _libs["cpu-build"] = _load(os.path.join(HERE, "build", "libfusedgelu_cpu.so"))
        notes.append("CPU build of the kernel: build/libfusedgelu_cpu.so")
    else:
        notes.append(f"CPU build of the kernel failed, CPU tensors use the PyTorch fallback: {out[-300:]}")
    return notes


def _check(lib, code):
    if code != 0:
        raise RuntimeError(f"fused bias+gelu kernel: {lib.fused_gelu_error_string(code).decode()}")


class _BiasGelu(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, bias, lib):
        x = x.contiguous()
        bias = bias.contiguous()
        y = torch.empty_like(x)
        _check(lib, lib.bias_gelu_forward(x.data_ptr(), bias.data_ptr(), y.data_ptr(), x.numel(), x.shape[-1]))
        ctx.save_for_backward(x, bias)
        ctx.lib = lib
        return y

    @staticmethod
    def backward(ctx, dy):
        x, bias = ctx.saved_tensors
        dy = dy.contiguous()
        dx = torch.empty_like(x)
        _check(ctx.lib, ctx.lib.bias_gelu_backward(x.data_ptr(), bias.data_ptr(), dy.data_ptr(), dx.data_ptr(), x.numel(), x.shape[-1]))
        return dx, dx.reshape(-1, x.shape[-1]).sum(0), None


def bias_gelu_reference(x, bias):
    """The pure-PyTorch fallback (and the formula the kernel implements)."""
    v = x + bias
    return 0.5 * v * (1.0 + torch.tanh(K0 * (v + K1 * v * v * v)))


def bias_gelu(x, bias):
    backend = "gpu" if x.is_cuda else "cpu-build"
    lib = _libs[backend]
    if lib is None or x.dtype != torch.float32 or os.environ.get("FUSED_GELU_BACKEND") == "torch":
        used.add("torch")
        return bias_gelu_reference(x, bias)
    used.add(backend)
    return _BiasGelu.apply(x, bias, lib)


class FusedBiasGELU(torch.nn.Module):
    """GELU(x + bias) in one kernel: put after a Linear(..., bias=False)."""

    def __init__(self, features):
        super().__init__()
        self.bias = torch.nn.Parameter(torch.zeros(features))

    def forward(self, x):
        return bias_gelu(x, self.bias)

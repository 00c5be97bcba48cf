#!/usr/bin/env bash
# The GPU check of issue 13 (see scripts/gpu-check.ts and the README's "GPU check" section):
# on a machine with a real NVIDIA GPU, a real worker probes CUDA and takes a REFERENCE and a RUN
# task of examples/fused-gelu-mlp through a real API; the figures are printed. Not part of CI.
#
#   scripts/gpu-check.sh                 # from the repository root, dependencies installed (npm ci)
#   GPU_CHECK_PYTHON=/path/python3 …     # the Python whose torch reaches CUDA, if not found by itself
#   DATABASE_URL=postgres://… …          # a real PostgreSQL instead of the embedded PGlite
#   GPU_CHECK_TIMEOUT=1500 …             # seconds for the whole check (default 1500)
set -euo pipefail
cd "$(dirname "$0")/.."

fail() { echo "[gpu-check] $*" >&2; exit 2; }
command -v node >/dev/null || fail "node (20.x) is not installed"
[ -d node_modules ] || fail "node_modules missing: run npm ci first (the check itself needs no network)"
command -v nvidia-smi >/dev/null || fail "nvidia-smi not found: this check needs an NVIDIA GPU"
echo "[gpu-check] $(nvidia-smi --query-gpu=name,memory.total,driver_version,compute_cap --format=csv,noheader | head -1)"
if command -v nvcc >/dev/null; then echo "[gpu-check] $(nvcc --version | tail -1)"; else echo "[gpu-check] nvcc not found: the example's CUDA library cannot be built and the kernel would not run on the GPU" >&2; fi
PY="${GPU_CHECK_PYTHON:-python3}"
"$PY" -c 'import torch; assert torch.cuda.is_available(), "torch.cuda.is_available() is False"; print("[gpu-check] torch", torch.__version__, "CUDA", torch.version.cuda, torch.cuda.get_device_name(0))' \
  || fail "$PY has no PyTorch that reaches the GPU (set GPU_CHECK_PYTHON)"

exec timeout "${GPU_CHECK_TIMEOUT:-1500}" npx tsx scripts/gpu-check.ts

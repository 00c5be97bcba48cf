# ChatGPU worker, NVIDIA CUDA: NVIDIA's CUDA runtime image, PyTorch built for CUDA 12.4 from
# PyTorch's own wheel index, Node 20 copied from the official Node image.
#   docker build -f docker/worker-cuda.Dockerfile -t chatgpu-worker-cuda .
#   docker run --gpus all -e CHATGPU_WORKER_TOKEN=cgw_… chatgpu-worker-cuda --server https://…
# Needs the NVIDIA Container Toolkit on the host (--gpus); the worker's probe finds the GPUs
# with nvidia-smi, which the toolkit mounts into the container.

FROM node:20.20.2-bookworm-slim AS node

FROM nvidia/cuda:12.4.1-cudnn-runtime-ubuntu22.04
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 python3-pip python3-venv ca-certificates \
  && rm -rf /var/lib/apt/lists/*
RUN python3 -m pip install --no-cache-dir numpy==1.26.4 torch==2.4.1 --extra-index-url https://download.pytorch.org/whl/cu124
COPY --from=node /usr/local/bin/node /usr/local/bin/node
COPY --from=node /usr/local/lib/node_modules /usr/local/lib/node_modules
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm
WORKDIR /app
COPY package.json package-lock.json ./
COPY api/package.json api/
COPY web/package.json web/
COPY worker/package.json worker/
RUN npm ci --omit=dev --no-audit --no-fund --workspace worker --include-workspace-root=false \
  && npm cache clean --force
COPY tsconfig.json ./
COPY worker worker
RUN useradd --create-home --uid 10001 chatgpu && mkdir -p /work && chown chatgpu:chatgpu /work
VOLUME /work
USER chatgpu
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "worker/bin/chatgpu-worker.mjs", "status", "--data-dir", "/work"]
ENTRYPOINT ["node", "worker/bin/chatgpu-worker.mjs", "--data-dir", "/work", "--sandbox", "none"]

# ChatGPU worker, AMD ROCm: AMD's PyTorch-on-ROCm image (PyTorch, ROCm 6.2 runtime, rocm-smi),
# Node 20 copied from the official Node image.
#   docker build -f docker/worker-rocm.Dockerfile -t chatgpu-worker-rocm .
#   docker run --device /dev/kfd --device /dev/dri --group-add video \
#     -e CHATGPU_WORKER_TOKEN=cgw_… chatgpu-worker-rocm --server https://…

FROM node:20.20.2-bookworm-slim AS node

FROM rocm/pytorch:rocm6.2.3_ubuntu22.04_py3.10_pytorch_release_2.3.0
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
# The GPU device files belong to the video and render groups of the host.
RUN useradd --create-home --uid 10001 --groups video chatgpu && mkdir -p /work && chown chatgpu:chatgpu /work
VOLUME /work
USER chatgpu
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "worker/bin/chatgpu-worker.mjs", "status", "--data-dir", "/work"]
ENTRYPOINT ["node", "worker/bin/chatgpu-worker.mjs", "--data-dir", "/work", "--sandbox", "none"]

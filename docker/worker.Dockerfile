# ChatGPU worker, CPU: Debian's Python with NumPy and PyTorch (CPU), bubblewrap for the sandbox.
#   docker build -f docker/worker.Dockerfile -t chatgpu-worker .
#   docker run -e CHATGPU_WORKER_TOKEN=cgw_… chatgpu-worker --server https://chatgpu.example.org
# The token is read from the environment (or --token-file, e.g. a compose secret) and removed
# from the process environment once read. Inside a container the sandbox is off by default
# (bubblewrap needs user namespaces that most container runtimes do not give): the container
# is the boundary, so run one worker per container and mount nothing else into it.

FROM node:20.20.2-bookworm-slim
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 python3-numpy python3-torch python3-venv python3-pip bubblewrap ca-certificates \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
COPY api/package.json api/
COPY web/package.json web/
COPY worker/package.json worker/
RUN npm ci --omit=dev --no-audit --no-fund --workspace worker --include-workspace-root=false \
  && npm cache clean --force
COPY tsconfig.json ./
COPY worker worker
RUN mkdir -p /work && chown node:node /work
VOLUME /work
USER node
# Healthy while the worker answers on its control socket (chatgpu-worker status).
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "worker/bin/chatgpu-worker.mjs", "status", "--data-dir", "/work"]
ENTRYPOINT ["node", "worker/bin/chatgpu-worker.mjs", "--data-dir", "/work", "--sandbox", "none"]

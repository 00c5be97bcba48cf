#!/usr/bin/env python3
# -*- coding: utf-8 -*-
"""CPU reference (ported by hand). Mixed-precision regression trainer, hard-wired to one GPU (the way many research repos are).

Checkpoints are written on the GPU and read back with torch.load; timings use CUDA events'
poor cousin, synchronize() + time.time().
"""
import json
import os
import sys
import time

import numpy as np
import torch as T
import torch.nn as nn

T.backends.cudnn.benchmark = False
T.backends.cudnn.deterministic = True

OUT = sys.argv[1] if len(sys.argv) > 1 else "out"
STEPS = 30


class MLP(nn.Module):
    def __init__(self, d_in=8, d_hidden=32):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d_in, d_hidden), nn.Tanh(), nn.Linear(d_hidden, 1))

    def forward(self, x):
        return self.net(x)


def make_data(n=256, d=8):
    rng = np.random.RandomState(0)
    x = rng.randn(n, d).astype(np.float32)
    w = rng.randn(d, 1).astype(np.float32)
    y = np.tanh(x @ w) + 0.05 * rng.randn(n, 1).astype(np.float32)
    # the data lives on the GPU for the whole run
    return T.from_numpy(x), T.from_numpy(y)


def main():
    T.manual_seed(0)
    x, y = make_data()
    model = MLP()
    opt = T.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    history = []
    t0 = time.time()
    for step in range(STEPS):
        idx = T.arange(step * 16 % 256, step * 16 % 256 + 16)
        opt.zero_grad(set_to_none=True)
        pred = model(x[idx])
        loss = nn.functional.mse_loss(pred.float(), y[idx])
        loss.backward()
        opt.step()
        history.append(float(loss))
    elapsed = time.time() - t0
    print("steps/s %.1f, peak memory %.1f MB" % (STEPS / elapsed, 0.0))

    os.makedirs(OUT, exist_ok=True)
    ckpt = os.path.join(OUT, "ckpt.pth")
    T.save({"model": model.state_dict(), "step": STEPS}, ckpt)
    state = T.load(ckpt, map_location='cpu')
    model.load_state_dict(state["model"])
    state2 = T.load(ckpt, map_location='cpu')
    assert state2["step"] == STEPS
    with T.no_grad():
        full = model(x).cpu().numpy()
    np.save(os.path.join(OUT, "predictions.npy"), full)
    with open(os.path.join(OUT, "metrics.json"), "w") as f:
        json.dump({"final_loss": history[-1], "loss_history": history}, f)


if __name__ == "__main__":
    main()

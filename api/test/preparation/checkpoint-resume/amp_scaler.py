"""AMP-shaped training: autocast and a GradScaler (disabled on CPU), a while loop over a step counter, NumPy-drawn batches (written for the checkpoint-resume tests)."""
import os
import random

import numpy as np
import torch
from torch import nn

random.seed(3)
np.random.seed(3)
torch.manual_seed(3)
use_amp = torch.cuda.is_available()
X = np.random.randn(200, 6).astype(np.float32)
Y = (X @ np.arange(6, dtype=np.float32))[:, None]
model = nn.Sequential(nn.Linear(6, 12), nn.Tanh(), nn.Linear(12, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
scaler = torch.cuda.amp.GradScaler(enabled=use_amp)
scheduler = torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.97)
step = 0
max_steps = 30
running = 0.0
while step < max_steps:
    idx = np.random.randint(0, len(X), size=16)
    noise = random.random() * 0.01
    xb = torch.from_numpy(X[idx]) + noise
    yb = torch.from_numpy(Y[idx])
    with torch.autocast(device_type="cuda" if use_amp else "cpu", enabled=use_amp):
        loss = nn.functional.mse_loss(model(xb), yb)
    optimizer.zero_grad()
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    scheduler.step()
    running = 0.9 * running + 0.1 * loss.item()
    step += 1
    print(f"step {step} loss {loss.item():.10f} running {running:.10f}")
os.makedirs("outputs", exist_ok=True)
torch.save(model.state_dict(), "outputs/model.pt")

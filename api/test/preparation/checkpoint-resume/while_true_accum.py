"""A `while True` loop that breaks at max_iters, with gradient accumulation, a batch prefetched before the loop and at the top of each micro-step, a learning-rate warmup and timing logs (written for the checkpoint-resume tests)."""
import math
import os
import time
from contextlib import nullcontext

import torch
from torch import nn

max_iters = 24
grad_accum = 3
warmup = 5
torch.manual_seed(5)
tokens = torch.randint(0, 50, (3000,))


def get_batch():
    ix = torch.randint(len(tokens) - 9, (4,))
    return torch.stack([tokens[i : i + 8] for i in ix]), torch.stack([tokens[i + 1 : i + 9] for i in ix])


class Bigram(nn.Module):
    def __init__(self):
        super().__init__()
        self.table = nn.Embedding(50, 50)
        self.drop = nn.Dropout(0.05)

    def forward(self, idx, targets):
        logits = self.drop(self.table(idx))
        return nn.functional.cross_entropy(logits.view(-1, 50), targets.view(-1))


def get_lr(it):
    if it < warmup:
        return 3e-3 * (it + 1) / warmup
    return 3e-3 * 0.5 * (1 + math.cos(math.pi * (it - warmup) / (max_iters - warmup)))


model = Bigram()
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
scaler = torch.cuda.amp.GradScaler(enabled=False)
ctx = nullcontext()
X, Y = get_batch()
iter_num = 0
t0 = time.time()
running_mfu = -1.0
while True:
    lr = get_lr(iter_num)
    for param_group in optimizer.param_groups:
        param_group["lr"] = lr
    for micro_step in range(grad_accum):
        with ctx:
            loss = model(X, Y) / grad_accum
        X, Y = get_batch()
        scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad(set_to_none=True)
    t1 = time.time()
    dt = t1 - t0
    t0 = t1
    running_mfu = dt if running_mfu == -1.0 else 0.9 * running_mfu + 0.1 * dt
    print(f"iter {iter_num}: loss {loss.item() * grad_accum:.8f}, time {dt * 1000:.2f}ms, mfu {running_mfu * 100:.2f}%")
    iter_num += 1
    if iter_num > max_iters:
        break
os.makedirs("outputs", exist_ok=True)
torch.save(model.state_dict(), "outputs/model.pt")

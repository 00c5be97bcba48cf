"""A max_iters loop with get_batch from a token tensor, a cosine learning rate set by hand, gradient clipping and periodic eval (written for the checkpoint-resume tests)."""
import math
import os
import time

import torch
from torch import nn

max_iters = 40
eval_interval = 10
block, batch = 8, 4
torch.manual_seed(1337)
data = torch.randint(0, 32, (2000,))
train_data, val_data = data[:1800], data[1800:]


def get_batch(split):
    d = train_data if split == "train" else val_data
    ix = torch.randint(len(d) - block, (batch,))
    return torch.stack([d[i : i + block] for i in ix]), torch.stack([d[i + 1 : i + 1 + block] for i in ix])


class Tiny(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(32, 16)
        self.drop = nn.Dropout(0.1)
        self.head = nn.Linear(16, 32)

    def forward(self, idx, targets):
        logits = self.head(self.drop(self.emb(idx)))
        return nn.functional.cross_entropy(logits.view(-1, 32), targets.view(-1))


@torch.no_grad()
def estimate_loss():
    out = {}
    model.eval()
    for split in ("train", "val"):
        out[split] = torch.stack([model(*get_batch(split)) for _ in range(3)]).mean().item()
    model.train()
    return out


def get_lr(it):
    return 1e-3 * 0.5 * (1 + math.cos(math.pi * it / max_iters))


model = Tiny()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.1)
best_val = 1e9
t0 = time.time()
for it in range(max_iters):
    for param_group in optimizer.param_groups:
        param_group["lr"] = get_lr(it)
    if it % eval_interval == 0:
        losses = estimate_loss()
        print(f"step {it}: train loss {losses['train']:.10f}, val loss {losses['val']:.10f}")
        best_val = min(best_val, losses["val"])
    X, Y = get_batch("train")
    loss = model(X, Y)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    t1 = time.time()
    dt, t0 = t1 - t0, t1
    print(f"iter {it}: loss {loss.item():.10f}, time {dt * 1000:.2f}ms, {4 / dt:.1f} samples/s")
os.makedirs("outputs", exist_ok=True)
torch.save({"model": model.state_dict(), "best_val": best_val}, "outputs/ckpt.pt")

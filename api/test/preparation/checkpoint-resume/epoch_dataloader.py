"""An epoch loop over a shuffling DataLoader with dropout, momentum SGD and a StepLR scheduler (written for the checkpoint-resume tests)."""
import argparse
import json
import os

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def train_one_epoch(model, loader, opt, loss_fn):
    model.train()
    total, n = 0.0, 0
    for x, y in loader:
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        total += loss.item() * len(x)
        n += len(x)
    return total / n


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=6)
    args = p.parse_args()
    torch.manual_seed(0)
    x = torch.randn(96, 8)
    y = (x.sum(dim=1, keepdim=True) > 0).float()
    loader = DataLoader(TensorDataset(x, y), batch_size=16, shuffle=True)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Dropout(0.2), nn.Linear(16, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    loss_fn = nn.BCEWithLogitsLoss()
    history = []
    best = float("inf")
    for epoch in range(args.epochs):
        avg = train_one_epoch(model, loader, opt, loss_fn)
        sched.step()
        history.append(avg)
        best = min(best, avg)
        print(f"epoch {epoch} loss {avg:.10f} lr {sched.get_last_lr()[0]:.6f}")
    os.makedirs("outputs", exist_ok=True)
    torch.save(model.state_dict(), "outputs/model.pt")
    with open("outputs/metrics.json", "w") as f:
        json.dump({"history": history, "best": best}, f)


if __name__ == "__main__":
    main()

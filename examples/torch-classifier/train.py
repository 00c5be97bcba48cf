"""Train a small classifier on synthetic data (two interleaved spirals).

    python train.py --epochs 2 --save model.pt

Runs on a CPU in seconds. Uses the device in CHATGPU_DEVICE (or --device), reports loss
and accuracy per epoch through ChatGPU's metrics helper (outside a worker:
`PYTHONPATH=../../worker/python python train.py`), and saves a checkpoint that evaluate.py reloads.
"""
import argparse
import os

import torch
from torch import nn

# The worker puts ChatGPU's helpers on PYTHONPATH; outside a worker: PYTHONPATH=worker/python.
from chatgpu.metrics import log
from data import make_spirals


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--epochs", type=int, default=5, help="passes over the training set")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default=os.environ.get("CHATGPU_DEVICE", "cpu"))
    p.add_argument("--save", default="model.pt", help="where to write the checkpoint")
    args = p.parse_args()

    torch.manual_seed(args.seed)
    device = torch.device(args.device)
    x, y = make_spirals(2000, seed=args.seed)
    model = nn.Sequential(nn.Linear(2, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 2)).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    loss_fn = nn.CrossEntropyLoss()
    step = 0
    for epoch in range(args.epochs):
        perm = torch.randperm(len(x))
        for i in range(0, len(x), args.batch_size):
            idx = perm[i : i + args.batch_size]
            xb, yb = x[idx].to(device), y[idx].to(device)
            opt.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()
            opt.step()
            step += 1
        with torch.no_grad():
            logits = model(x.to(device))
            acc = (logits.argmax(1).cpu() == y).float().mean().item()
            full_loss = loss_fn(logits, y.to(device)).item()
        print(f"epoch {epoch + 1}/{args.epochs}: loss {full_loss:.4f} accuracy {acc:.3f}")
        log(step=step, loss=full_loss, accuracy=acc, epoch=epoch + 1)

    os.makedirs(os.path.dirname(args.save) or ".", exist_ok=True)
    torch.save({"state_dict": model.state_dict(), "epochs": args.epochs}, args.save)
    print(f"saved {args.save}")


if __name__ == "__main__":
    main()

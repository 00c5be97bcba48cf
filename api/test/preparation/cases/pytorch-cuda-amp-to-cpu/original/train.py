"""Train a small classifier on synthetic data — written for an NVIDIA GPU only.

    python train.py --epochs 2 --save model.pt

Hard-wired to CUDA the way much research code is (`.cuda()`, `device="cuda"`, mixed precision
through `torch.cuda.amp`): it cannot run on a machine without an NVIDIA GPU as it is. Submitted
to ChatGPU with only CPU (or AMD, or Apple) workers online, the preparation stage migrates it to
device-agnostic code, checks the rewrite against a reference run, and trains the frozen result.
"""
import argparse
import json
import os

import torch
from torch import nn

from data import make_spirals


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--epochs", type=int, default=5, help="passes over the training set")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--save", default="model.pt", help="where to write the checkpoint")
    args = p.parse_args()

    torch.manual_seed(args.seed)
    torch.cuda.manual_seed_all(args.seed)
    x, y = make_spirals(2000, seed=args.seed)
    model = nn.Sequential(nn.Linear(2, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 2)).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    scaler = torch.cuda.amp.GradScaler()
    loss_fn = nn.CrossEntropyLoss()
    from chatgpu.metrics import log

    step = 0
    for epoch in range(args.epochs):
        perm = torch.randperm(len(x))
        for i in range(0, len(x), args.batch_size):
            idx = perm[i : i + args.batch_size]
            xb, yb = x[idx].to(device="cuda"), y[idx].cuda()
            opt.zero_grad()
            with torch.cuda.amp.autocast():
                loss = loss_fn(model(xb), yb)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            step += 1
        with torch.no_grad():
            logits = model(x.cuda())
            acc = (logits.argmax(1).cpu() == y).float().mean().item()
            full_loss = loss_fn(logits, y.cuda()).item()
        print(f"epoch {epoch + 1}/{args.epochs}: loss {full_loss:.4f} accuracy {acc:.3f}")
        log(step=step, loss=full_loss, accuracy=acc, epoch=epoch + 1)

    os.makedirs(os.path.dirname(args.save) or ".", exist_ok=True)
    torch.save({"state_dict": model.state_dict(), "epochs": args.epochs}, args.save)
    print(f"saved {args.save}")


if __name__ == "__main__":
    main()

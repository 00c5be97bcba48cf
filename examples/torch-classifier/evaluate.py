"""Reload a checkpoint written by train.py and evaluate it on fresh synthetic data.

    python evaluate.py --checkpoint model.pt
"""
import argparse

import torch
from torch import nn

from chatgpu.metrics import log
from data import make_spirals


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--checkpoint", default="model.pt")
    args = p.parse_args()
    ckpt = torch.load(args.checkpoint, map_location="cpu")
    model = nn.Sequential(nn.Linear(2, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 2))
    model.load_state_dict(ckpt["state_dict"])
    model.eval()
    x, y = make_spirals(1000, seed=1234)  # inputs the training run never saw
    with torch.no_grad():
        acc = (model(x).argmax(1) == y).float().mean().item()
    print(f"evaluation accuracy on fresh data: {acc:.3f}")
    log(eval_accuracy=acc)


if __name__ == "__main__":
    main()

"""Reload a checkpoint written by train.py and evaluate it on fresh synthetic data.

    python evaluate.py --checkpoint model.pt
"""
import argparse

import torch

import fused_gelu
from data import make_spirals
from model import make_model

try:
    from chatgpu.metrics import log
except ImportError:  # outside ChatGPU: print only
    def log(**_metrics):
        pass


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--checkpoint", default="model.pt")
    args = p.parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    fused_gelu.build()
    ckpt = torch.load(args.checkpoint, map_location="cpu")
    model = make_model()
    model.load_state_dict(ckpt["state_dict"])
    model.to(device).eval()
    x, y = make_spirals(1000, seed=1234)  # inputs the training run never saw
    with torch.no_grad():
        acc = (model(x.to(device)).argmax(1).cpu() == y).float().mean().item()
    print(f"evaluation accuracy on fresh data: {acc:.3f} (fused bias+gelu on {', '.join(sorted(fused_gelu.used))})")
    log(eval_accuracy=acc)


if __name__ == "__main__":
    main()

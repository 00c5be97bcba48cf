"""Train a small classifier whose hidden layers use a custom CUDA kernel (fused bias + GELU).

    make                        # builds the CUDA library (nvcc); train.py also runs it
    python train.py --epochs 5 --save model.pt

On a machine with a GPU the hidden activations run in the kernel of csrc/fused_bias_gelu.cu,
loaded through ctypes (fused_gelu.py); without one, the same kernel source compiled for the CPU
(`make cpu`), or the pure-PyTorch fallback when that cannot be built either.
"""
import argparse
import os

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

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
    p.add_argument("--epochs", type=int, default=5, help="passes over the training set")
    p.add_argument("--samples", type=int, default=4000, help="training points")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--save", default="model.pt", help="where to write the checkpoint")
    args = p.parse_args()

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    for note in fused_gelu.build():
        print(f"kernel: {note}")
    torch.manual_seed(args.seed)
    x, y = make_spirals(args.samples, seed=args.seed)
    loader = DataLoader(TensorDataset(x, y), batch_size=args.batch_size, shuffle=True, generator=torch.Generator().manual_seed(args.seed))
    model = make_model().to(device)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    loss_fn = nn.CrossEntropyLoss()

    step = 0
    history = []
    for epoch in range(args.epochs):
        model.train()
        for xb, yb in loader:
            xb, yb = xb.to(device), yb.to(device)
            opt.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()
            opt.step()
            step += 1
        model.eval()
        with torch.no_grad():
            logits = model(x.to(device))
            acc = (logits.argmax(1).cpu() == y).float().mean().item()
            full_loss = loss_fn(logits, y.to(device)).item()
        history.append(full_loss)
        print(f"epoch {epoch + 1}/{args.epochs}: loss {full_loss:.4f} accuracy {acc:.3f}")
        log(step=step, loss=full_loss, accuracy=acc, epoch=epoch + 1)

    print(f"fused bias+gelu ran on: {', '.join(sorted(fused_gelu.used))} (device {device})")
    os.makedirs(os.path.dirname(args.save) or ".", exist_ok=True)
    torch.save({"state_dict": model.state_dict(), "epochs": args.epochs, "loss_history": torch.tensor(history)}, args.save)
    print(f"saved {args.save}")


if __name__ == "__main__":
    main()

"""Synthetic two-class spiral data: no download, deterministic for a seed."""
import math

import torch


def make_spirals(n, seed=0, noise=0.15):
    g = torch.Generator().manual_seed(seed)
    t = torch.rand(n, generator=g) * 3 * math.pi + 0.5
    label = torch.randint(0, 2, (n,), generator=g)
    sign = label.float() * 2 - 1
    x = torch.stack([sign * t * torch.cos(t), sign * t * torch.sin(t)], dim=1) / 10
    x = x + noise * torch.randn(n, 2, generator=g) / 3
    return x, label

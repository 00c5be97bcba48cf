import math

import torch


def make_spirals(n, seed=0):
    """Two interleaved spirals: n points in 2-D with labels 0/1 (deterministic for a seed)."""
    g = torch.Generator().manual_seed(seed)
    t = torch.rand(n, generator=g) * 3 * math.pi + 0.5
    label = torch.randint(0, 2, (n,), generator=g)
    r = t / (3 * math.pi)
    angle = t + label.float() * math.pi
    x = torch.stack([r * torch.cos(angle), r * torch.sin(angle)], dim=1)
    x = x + 0.02 * torch.randn(n, 2, generator=g)
    return x, label

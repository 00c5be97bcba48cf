"""Two networks with two optimizers (a small GAN), one pass over a shuffling DataLoader with a seeded generator as the only loop (written for the checkpoint-resume tests)."""
import os

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(7)
real_data = torch.randn(160, 2) * 0.5 + 2.0
g = torch.Generator().manual_seed(11)
loader = DataLoader(TensorDataset(real_data), batch_size=8, shuffle=True, generator=g)
G = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
D = nn.Sequential(nn.Linear(2, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
opt_g = torch.optim.Adam(G.parameters(), lr=2e-3, betas=(0.5, 0.999))
opt_d = torch.optim.Adam(D.parameters(), lr=2e-3, betas=(0.5, 0.999))
bce = nn.BCEWithLogitsLoss()
d_losses = []
for i, (real,) in enumerate(loader):
    z = torch.randn(len(real), 4)
    fake = G(z)
    d_loss = bce(D(real), torch.ones(len(real), 1)) + bce(D(fake.detach()), torch.zeros(len(real), 1))
    opt_d.zero_grad()
    d_loss.backward()
    opt_d.step()
    g_loss = bce(D(fake), torch.ones(len(real), 1))
    opt_g.zero_grad()
    g_loss.backward()
    opt_g.step()
    d_losses.append(d_loss.item())
    print(f"batch {i} d_loss {d_loss.item():.10f} g_loss {g_loss.item():.10f}")
os.makedirs("outputs", exist_ok=True)
torch.save({"G": G.state_dict(), "D": D.state_dict(), "d_losses": d_losses}, "outputs/gan.pt")

"""A trainer class whose loop keeps model and optimizer in attributes of self (written for the checkpoint-resume tests)."""
import torch
from torch import nn


class Trainer:
    def __init__(self):
        self.model = nn.Linear(3, 1)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.05)

    def fit(self, epochs):
        for epoch in range(epochs):
            loss = nn.functional.mse_loss(self.model(torch.randn(8, 3)), torch.randn(8, 1))
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()


torch.manual_seed(0)
Trainer().fit(4)

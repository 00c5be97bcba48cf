"""A loop inside main() whose step function keeps its counter in a module global (written for the checkpoint-resume tests)."""
import torch
from torch import nn

global_step = 0


def train_step(model, opt, x, y):
    global global_step
    loss = nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    global_step += 1
    return loss.item()


def main():
    torch.manual_seed(0)
    model = nn.Linear(3, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    for epoch in range(5):
        print(train_step(model, opt, torch.randn(8, 3), torch.randn(8, 1)), global_step)


main()

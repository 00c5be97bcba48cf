"""Small image classifier trained the plain way (fp32, loader in the main process, eager mode):
the kind of script the optimization candidates are proposed for. Synthetic data, no download."""
import argparse
import json
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class ConvNet(nn.Module):
    def __init__(self, classes=4):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.fc = nn.Linear(16 * 2 * 2, classes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc(torch.flatten(x, 1))


def synthetic(n, seed):
    g = torch.Generator().manual_seed(seed)
    images = torch.randn(n, 3, 8, 8, generator=g)
    labels = (images[:, 0].mean(dim=(1, 2)) > 0).long() + 2 * (images[:, 1].mean(dim=(1, 2)) > 0).long()
    return TensorDataset(images, labels)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--out", default="out")
    args = parser.parse_args()
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    train_loader = DataLoader(synthetic(96, 0), batch_size=16, shuffle=True,
                              generator=torch.Generator().manual_seed(1))
    test_loader = DataLoader(synthetic(32, 1), batch_size=32)

    model = ConvNet().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    losses = []
    for epoch in range(args.epochs):
        model.train()
        for images, labels in train_loader:
            images, labels = images.to(device), labels.to(device)
            optimizer.zero_grad()
            logits = model(images)
            loss = F.cross_entropy(logits, labels)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        print("epoch %d loss %.4f" % (epoch, losses[-1]))

    model.eval()
    with torch.no_grad():
        images, labels = next(iter(test_loader))
        test_logits = model(images.to(device)).float().cpu()
    accuracy = (test_logits.argmax(dim=1) == labels).float().mean().item()
    os.makedirs(args.out, exist_ok=True)
    torch.save(model.state_dict(), os.path.join(args.out, "model.pt"))
    with open(os.path.join(args.out, "metrics.json"), "w") as f:
        json.dump({"train_losses": losses, "test_loss": F.cross_entropy(test_logits, labels).item(), "accuracy": accuracy}, f)


if __name__ == "__main__":
    main()

"""A plain CPU script: nothing here is tied to CUDA, so migration must leave it byte-identical.

It mentions 'cuda' only in comments and strings: torch.cuda.is_available() is not called.
"""
import torch

# device = torch.device('cuda')  -- we never do this
MESSAGE = "runs anywhere, even without .cuda()"


def fit(steps=5):
    torch.manual_seed(0)
    w = torch.zeros(3, requires_grad=True)
    x = torch.randn(16, 3)
    y = x @ torch.tensor([1.0, -2.0, 0.5])
    opt = torch.optim.SGD([w], lr=0.1)
    for _ in range(steps):
        opt.zero_grad()
        loss = ((x @ w - y) ** 2).mean()
        loss.backward()
        opt.step()
    return w.detach()


if __name__ == "__main__":
    print(MESSAGE, fit())

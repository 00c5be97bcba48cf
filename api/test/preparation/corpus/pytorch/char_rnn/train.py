import argparse
import os

import torch
from torch import cuda
from torch.utils.data import DataLoader, TensorDataset

from model import CharRNN

TEXT = "the quick brown fox jumps over the lazy dog. " * 8


def batches(seq_len=12):
    vocab = sorted(set(TEXT))
    ids = torch.tensor([vocab.index(c) for c in TEXT])
    n = (len(ids) - 1) // seq_len
    x = ids[: n * seq_len].view(n, seq_len)
    y = ids[1 : n * seq_len + 1].view(n, seq_len)
    return vocab, TensorDataset(x, y)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--cuda", action="store_true", help="use CUDA")
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--out", default="out")
    args = p.parse_args()
    if not cuda.is_available() and args.cuda:
        print("WARNING: --cuda given but no GPU")

    torch.manual_seed(7)
    torch.cuda.manual_seed_all(7)
    vocab, data = batches()
    loader = DataLoader(data, batch_size=8, shuffle=True, pin_memory=args.cuda,
                        generator=torch.Generator().manual_seed(7))
    model = CharRNN(len(vocab))
    if args.cuda:
        model.cuda()
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    loss_fn = torch.nn.CrossEntropyLoss()
    for epoch in range(args.epochs):
        for x, y in loader:
            x = x.pin_memory().cuda(non_blocking=True)
            y = y.cuda(non_blocking=True)
            h = model.init_hidden(x.size(0))
            logits, _ = model(x, h)
            loss = loss_fn(logits.reshape(-1, len(vocab)), y.reshape(-1))
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch %d loss %.4f mem %d" % (epoch, loss.item(), torch.cuda.memory_allocated()))
        torch.cuda.empty_cache()
    os.makedirs(args.out, exist_ok=True)
    torch.save({"state_dict": model.state_dict(), "final_loss": loss.item()}, os.path.join(args.out, "char_rnn.pt"))


if __name__ == "__main__":
    main()

import torch
import torch.nn as nn


class CharRNN(nn.Module):
    """Character-level LSTM; hidden state is allocated on the GPU."""

    def __init__(self, vocab, hidden=24, layers=1):
        super().__init__()
        self.hidden, self.layers = hidden, layers
        self.embed = nn.Embedding(vocab, 16)
        self.lstm = nn.LSTM(16, hidden, layers, batch_first=True)
        self.head = nn.Linear(hidden, vocab)

    def init_hidden(self, batch):
        return (torch.zeros(self.layers, batch, self.hidden, device='cuda'),
                torch.zeros(self.layers, batch, self.hidden).cuda())

    def forward(self, x, h):
        out, h = self.lstm(self.embed(x), h)
        return self.head(out), h

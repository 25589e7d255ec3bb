"""A tiny BERT-like encoder returning named outputs, for the --task presets of the export tests."""
import torch
import torch.nn as nn


class TinyEncoder(nn.Module):
    def __init__(self, vocab=50, hidden=16):
        super().__init__()
        self.words = nn.Embedding(vocab, hidden)
        self.types = nn.Embedding(2, hidden)
        self.mix = nn.Linear(hidden, hidden)
        self.norm = nn.LayerNorm(hidden)
        self.span = nn.Linear(hidden, 2)
        self.classes = nn.Linear(hidden, 3)

    def forward(self, input_ids, attention_mask, token_type_ids):
        x = self.words(input_ids) + self.types(token_type_ids)
        x = self.norm(x + torch.tanh(self.mix(x))) * attention_mask.unsqueeze(-1).to(x.dtype)
        start, end = self.span(x).unbind(-1)
        return {"last_hidden_state": x, "start_logits": start, "end_logits": end,
                "logits": self.classes(x[:, 0])}


def model():
    return TinyEncoder()

"""Writes the two exports of one 2-layer GPT (vocab 512, width 16, random weights) in this folder, by torch's
TorchScript exporter (opset 14) and its dynamo exporter, whose weights are then kept inside the file. Needs torch
and onnxscript (`make bench` installs torch); run by hand: `python tests/data/torch_exports/make_tinygpt.py`."""

from __future__ import annotations

import math
from pathlib import Path

import onnx
import torch
from torch import nn

HERE = Path(__file__).parent


class Block(nn.Module):
    def __init__(self, width: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(width), nn.LayerNorm(width)
        self.qkv, self.proj = nn.Linear(width, 3 * width), nn.Linear(width, width)
        self.fc1, self.fc2 = nn.Linear(width, 4 * width), nn.Linear(4 * width, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = (part.view(b, t, self.heads, d // self.heads).transpose(1, 2)
                   for part in self.qkv(self.ln1(x)).split(d, dim=2))  # fmt: skip
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(d // self.heads)
        mask = torch.tril(torch.ones(t, t, dtype=torch.bool))
        attention = scores.masked_fill(~mask, float("-inf")).softmax(-1)
        x = x + self.proj((attention @ v).transpose(1, 2).reshape(b, t, d))
        return x + self.fc2(nn.functional.gelu(self.fc1(self.ln2(x))))


class TinyGPT(nn.Module):
    def __init__(self, layers: int = 2, width: int = 16, vocab: int = 512, context: int = 64) -> None:
        super().__init__()
        self.tok, self.pos = nn.Embedding(vocab, width), nn.Embedding(context, width)
        self.layers = nn.ModuleList([Block(width, 4) for _ in range(layers)])
        self.ln, self.head = nn.LayerNorm(width), nn.Linear(width, vocab)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        x = self.tok(tokens) + self.pos(torch.arange(tokens.shape[1]))
        for layer in self.layers:
            x = layer(x)
        return self.head(self.ln(x))


def main() -> None:
    torch.manual_seed(0)
    model = TinyGPT().eval()
    tokens = torch.randint(0, 512, (1, 16))
    names = {"input_names": ["tokens"], "output_names": ["logits"]}
    torch.onnx.export(model, (tokens,), HERE / "tinygpt2_torchscript_opset14.onnx", opset_version=14, dynamo=False,
                      **names)  # fmt: skip
    dynamo = HERE / "tinygpt2_dynamo.onnx"
    torch.onnx.export(model, (tokens,), dynamo, dynamo=True, **names)
    onnx.save(onnx.load(dynamo), dynamo, save_as_external_data=False)
    dynamo.with_name(dynamo.name + ".data").unlink(missing_ok=True)


if __name__ == "__main__":
    main()

"""Writes a 4-layer Hugging Face GPT-2 (width 32, vocab 100, random weights, nothing downloaded) as torch's dynamo
exporter writes it, weights inside the file: `hf_gpt2_dynamo.onnx`. Its qkv `Split` sits in the block's scope
between two parts of `attn`, and its last three blocks are alike (the first holds what they share). Needs torch,
onnxscript and transformers (not in the test set-up); run by hand: `python tests/data/torch_exports/make_hf_gpt2.py`.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import onnx
import torch
from transformers import GPT2Config, GPT2LMHeadModel

HERE = Path(__file__).parent


class Logits(torch.nn.Module):
    """The language model's logits alone (its output object is not a tensor the exporter takes)."""

    def __init__(self, model: torch.nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        return self.model(input_ids=input_ids, attention_mask=attention_mask, use_cache=False).logits


def main() -> None:
    warnings.filterwarnings("ignore")
    torch.manual_seed(0)
    config = GPT2Config(n_layer=4, n_embd=32, n_head=2, vocab_size=100, n_positions=32)
    model = Logits(GPT2LMHeadModel(config).eval()).eval()
    ids = torch.randint(0, 100, (1, 8))
    path = HERE / "hf_gpt2_dynamo.onnx"
    torch.onnx.export(model, (ids, torch.ones(1, 8, dtype=torch.long)), path, dynamo=True,
                      input_names=["input_ids", "attention_mask"], output_names=["logits"])  # fmt: skip
    onnx.save(onnx.load(path), path, save_as_external_data=False)
    path.with_name(path.name + ".data").unlink(missing_ok=True)


if __name__ == "__main__":
    main()

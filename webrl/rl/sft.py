"""Supervised fine-tuning of the actor on oracle demonstrations (`webrl sft`).

    webrl sft --preset cpu --out runs/sft       # 2 epochs; rerun the same command to resume

Stages (each resumable from the run folder):
  1. demonstrations: the oracle solves the train split's tasks through WebEnv
     -> `demos.jsonl` (steps annotated with `# Element: ...`, see agent/prompt.py),
     with `trained_tasks.json` / `heldout_tasks.json` (48 trained-on tasks, site-
     stratified, and a task of the same family not trained on, to evaluate)
  2. examples: every step as (prompt, completion) token ids, loss on the completion
     (the action and its end-of-turn token) only
  3. training: `fit` (models/training.py: length-bucketed batches, AdamW, warmup + cosine
     decay, `accelerate`, checkpoints `ckpt-<step>/` with sft_config.json, `final/` at the end;
     its metrics as `losses/sft`, `losses/sft_focal`, `charts/lr`, `charts/tokens_s`,
     `charts/padding` in `metrics.jsonl`).
"""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch

from webrl.agent.prompt import PromptConfig
from webrl.files import load_jsonl, write_jsonl_atomic
from webrl.models.build import build
from webrl.models.config import ModelConfig
from webrl.models.training import TrainConfig, claim_run_config, fit
from webrl.rl.demos import make_examples


@dataclass(frozen=True)
class SFTConfig(TrainConfig):
    """Supervised fine-tuning settings (saved as `sft_config.json` in the run and every checkpoint)."""

    split: str = field(default="train", metadata={"help": "task split (or JSON file) whose oracle demos are the data"})
    sites: str | None = field(default=None, metadata={"help": "comma-separated site filter"})
    limit: int | None = field(default=None, metadata={"help": "use only the first N tasks"})
    per_family: int = field(
        default=0, metadata={"help": "use only the first N tasks of each task family (0 = all): more epochs per family"}
    )
    prompt: PromptConfig = field(default_factory=PromptConfig, metadata={"help": "prompt layout (agent/prompt.py)"})


SFT_PRESETS: dict[str, SFTConfig] = {
    "cpu-tiny": SFTConfig(lr=3e-3, max_steps=4, max_batch_tokens=4096, max_seq_tokens=4096,
                          log_every=1, warmup_steps=1, prompt=PromptConfig(max_prompt_tokens=3000)),
    # one task per family, ~2.2 epochs in 30 CPU-min: 18.8 % on held-out train tasks (runs/sft5) where all
    # 1,000 tasks for 0.23 epoch gave 4 % on tasks it had trained on (runs/sft4); docs/results.md. A fixed
    # 2 epochs (524 steps, ~30 min on 2 idle cores), not a CPU-time budget: with other work on the cores the
    # 30 CPU-min budget ended at 1.30 epochs (threads spin while they wait), so the start depended on the load
    "cpu": SFTConfig(lr=1e-3, epochs=2.0, per_family=1,
                     prompt=PromptConfig(max_prompt_tokens=1024, max_rounds=6, system=None,
                                         use_chat_template=False)),
    "gpu": SFTConfig(lr=2e-5, epochs=2.0, max_batch_tokens=32768, max_seq_tokens=4096,
                     prompt=PromptConfig(max_prompt_tokens=3500)),
}  # fmt: skip


def demonstrations(cfg: SFTConfig, out: Path, progress: bool) -> list[dict]:
    """Stage 1: oracle demonstrations, cached in `demos.jsonl`."""
    path = out / "demos.jsonl"
    if path.exists():
        return load_jsonl(path)
    from webrl.env.web_env import WebEnv
    from webrl.tasks.schema import load_tasks
    from webrl.tasks.splits import load_split

    pool = load_tasks(cfg.split) if cfg.split.endswith((".json", ".jsonl")) else load_split(cfg.split)
    tasks = select_tasks(pool, cfg)
    write_eval_samples(tasks, pool, out, cfg.seed)
    from webrl.rl.demos import collect_demonstrations

    env = WebEnv()
    demos = collect_demonstrations(tasks, env, cfg.prompt, progress)
    env.close()
    write_jsonl_atomic(path, demos)
    return demos


def write_eval_samples(trained: list, pool: list, out: Path, seed: int, n: int = 48) -> None:
    """`trained_tasks.json`: a site-stratified sample of `n` tasks SFT trains on; and
    `heldout_tasks.json`: for the same families, the first task of the split it does not train on
    (when the run uses a subset). `webrl eval --split <file>` measures memorisation vs transfer."""
    from webrl.tasks.schema import save_tasks
    from webrl.tasks.splits import family_siblings, stratified

    sample = stratified(trained, n, seed)
    save_tasks(sample, out / "trained_tasks.json")
    heldout = family_siblings(sample, pool, {t.task_id for t in trained})
    if heldout:
        save_tasks(heldout, out / "heldout_tasks.json")


def select_tasks(tasks: list, cfg: SFTConfig) -> list:
    """The tasks SFT trains on: the site filter, then the first `per_family` of each family, then `limit`."""
    if cfg.sites:
        tasks = [t for t in tasks if t.site in set(cfg.sites.split(","))]
    if cfg.per_family:
        seen: dict[str, int] = {}
        kept = []
        for t in tasks:
            seen[t.family] = seen.get(t.family, 0) + 1
            if seen[t.family] <= cfg.per_family:
                kept.append(t)
        tasks = kept
    return tasks[: cfg.limit] if cfg.limit else tasks


def train_sft(cfg: SFTConfig, model_cfg: ModelConfig, out: str | Path, progress: bool = True) -> dict:
    """Run (or resume) SFT into `out`; returns the final metrics line."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    claim_run_config(out / "sft_config.json", cfg, "--out")
    model_cfg.save(out)
    random.seed(cfg.seed)
    torch.manual_seed(cfg.seed)

    # 1-2. data
    demos = demonstrations(cfg, out, progress)
    model, tok = build(model_cfg)
    examples = make_examples(demos, tok, cfg.prompt, cfg.max_seq_tokens)
    if not examples:
        raise ValueError("no training examples: every demonstration is longer than max_seq_tokens")
    print(f"sft: {len(demos)} demonstrations, {len(examples)} examples")
    extra = {"sft_config.json": cfg.to_json(), "prompt_config.json": asdict(cfg.prompt)}
    return fit(examples, cfg, model, tok, model_cfg, out, "sft", extra, progress)

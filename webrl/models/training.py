"""The training loop shared by SFT, the ORM and the critic (`fit`), and its pieces: the settings
(`TrainConfig`), examples and length-bucketed batches, the lr schedule, time budgets turned into
step counts, run-config claims and checkpoints.

`fit` trains any causal LM (LoRA or full) on `Example`s (prompt + completion token ids, loss on the
completion only) with `accelerate` (devices, mixed precision, multi-process: `accelerate launch -m
webrl.cli.main sft ...` with the configs in `configs/accelerate/`): length-bucketed batches,
AdamW, warmup + cosine decay over the planned steps or the time budget (whichever comes first),
checkpoints `ckpt-<step>/` (save_pretrained + tokenizer + webrl_model.json + the caller's JSON
files + trainer_state.pt) every `save_minutes`, the two newest kept, and `final/` at the end;
resumable from the newest checkpoint, batch for batch.

Metrics (`metrics.jsonl`, one line per `log_every` steps; NAME is the caller's, e.g. `sft`):
  losses/NAME       mean cross-entropy per completion token over the logged steps
  losses/NAME_focal the focal loss trained on, when `focal_gamma` > 0
  charts/lr         learning rate
  charts/tokens_s   training tokens (prompt + completion, padding excluded) per second
  charts/padding    real tokens / padded tokens of the logged batches
"""

from __future__ import annotations

import contextlib
import json
import math
import random
import shutil
import time
from dataclasses import MISSING, asdict, dataclass, field, fields, replace
from pathlib import Path

import torch
from tqdm import tqdm

from webrl.agent.local_policy import pack_right
from webrl.files import checkpoints, copytree_atomic, prune_checkpoints, write_json_atomic
from webrl.models.build import save_checkpoint
from webrl.models.config import ModelConfig
from webrl.models.scoring import FrozenPrefix, selected_logprobs
from webrl.provenance import record_invocation
from webrl.tensorboard import ScalarLog


@dataclass(frozen=True)
class TrainConfig:
    """The training loop's settings (`fit`), shared by SFT, the ORM and the critic."""

    lr: float = field(default=5e-4, metadata={"help": "peak learning rate (LoRA; use ~1e-5 for full fine-tunes)"})
    min_lr_ratio: float = field(default=0.1, metadata={"help": "final lr as a fraction of the peak"})
    warmup_steps: int = field(default=10, metadata={"help": "linear warmup steps"})
    weight_decay: float = field(default=0.0, metadata={"help": "AdamW weight decay"})
    grad_clip: float = field(default=1.0, metadata={"help": "max global grad norm (0 = off)"})
    epochs: float = field(default=1.0, metadata={"help": "passes over the examples (fractions allowed)"})
    max_steps: int = field(default=0, metadata={"help": "optimizer steps (0 = from epochs)"})
    minutes: float = field(
        default=0.0,
        metadata={"help": "training time budget in minutes (0 = none), turned into a step count at the end of warmup "
                  "(plan.json): --max-steps N without a budget reproduces the run"},
    )
    max_batch_tokens: int = field(default=2400, metadata={"help": "padded tokens per batch (length bucketing)"})
    max_seq_tokens: int = field(default=1600, metadata={"help": "examples longer than this are dropped"})
    clock: str = field(
        default="wall",
        metadata={"help": 'what `minutes` counts: "wall" seconds, or "cpu" = process CPU seconds / torch threads '
                  "(an uncontended-machine equivalent when the CPU is shared)"},
    )
    save_minutes: float = field(default=5.0, metadata={"help": "checkpoint at least this often"})
    log_every: int = field(default=5, metadata={"help": "optimizer steps per metrics line"})
    seed: int = field(default=0, metadata={"help": "data order and init seed"})
    frozen_cache_gb: float = field(
        default=4.0,
        metadata={"help": "keep each example's output of the frozen bottom layers (LoRA on the top layers "
                  "only) in memory up to this many GB, so epochs after the first skip them (0 = off)"},
    )
    detach_context: bool = field(
        default=False,
        metadata={"help": "LoRA on the top layers: run each example's context through them without autograd and "
                  "backpropagate through the scored tokens only (same loss, about half the training time measured "
                  "on SmolLM2; the gradient through the context's keys/values is dropped: models/scoring.py "
                  "context_detached). SFT only: not used by the RL actor update"},
    )

    focal_gamma: float = field(
        default=0.0,
        metadata={"help": "focal weighting of the completion tokens' NLL, (1 - p)^gamma (0 = plain mean NLL): "
                  "moves the gradient from the copied tokens the model already predicts to the few that "
                  "decide the action (token_loss below)"},
    )

    def __post_init__(self):
        if self.focal_gamma < 0:
            raise ValueError(f"{type(self).__name__}.focal_gamma must be >= 0 (0 = off), got {self.focal_gamma}")
        if self.lr <= 0:
            raise ValueError(f"{type(self).__name__}.lr must be > 0, got {self.lr}")
        if self.epochs <= 0 and self.max_steps <= 0:
            raise ValueError(f"{type(self).__name__} needs epochs > 0 or max_steps > 0")
        if self.frozen_cache_gb < 0:
            raise ValueError(f"{type(self).__name__}.frozen_cache_gb must be >= 0 (0 = off), got {self.frozen_cache_gb}")
        if self.clock not in ("wall", "cpu"):
            raise ValueError(f'{type(self).__name__}.clock must be "wall" or "cpu", got {self.clock!r}')
        if self.max_batch_tokens < self.max_seq_tokens:
            raise ValueError(
                f"max_batch_tokens ({self.max_batch_tokens}) < max_seq_tokens ({self.max_seq_tokens}): "
                "the longest example would not fit a batch; raise max_batch_tokens"
            )

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict):
        """Rebuild from `to_json` output, nested dataclass fields (e.g. `prompt`) included."""
        d = dict(d)
        for f in fields(cls):
            if isinstance(d.get(f.name), dict) and f.default_factory is not MISSING:
                d[f.name] = type(f.default_factory())(**d[f.name])
        return cls(**d)


@dataclass(frozen=True)
class Example:
    """One training example: prompt + completion token ids; loss on the completion only."""

    ids: tuple[int, ...]
    prompt_len: int
    task_id: int | str

    @property
    def n_tokens(self) -> int:
        return len(self.ids)



def length_batches(lengths: list[int], max_batch_tokens: int, seed: int, pool: int = 64) -> list[list[int]]:
    """Length-bucketed batches: shuffle, sort within pools of `pool` examples, cut each sorted run
    into batches whose padded size (longest x count) fits `max_batch_tokens`, shuffle the batches."""
    rng = random.Random(seed)
    order = list(range(len(lengths)))
    rng.shuffle(order)
    batches: list[list[int]] = []
    for k in range(0, len(order), pool):
        chunk = sorted(order[k : k + pool], key=lambda i: lengths[i])
        cur: list[int] = []
        for i in chunk:
            if cur and lengths[i] * (len(cur) + 1) > max_batch_tokens:
                batches.append(cur)
                cur = []
            cur.append(i)
        if cur:
            batches.append(cur)
    rng.shuffle(batches)
    return batches


class EpochBatches:
    """Global step -> the batch (example indices) it trains on. Each epoch is a fresh length-bucketed
    shuffle (seed + epoch), so the same step always gets the same batch (exact resume); epochs may
    hold different numbers of batches, since bucketing depends on the order."""

    def __init__(self, lengths: list[int], max_batch_tokens: int, seed: int):
        self.lengths, self.max_batch_tokens, self.seed = lengths, max_batch_tokens, seed
        self.epoch, self.start, self.batches = -1, 0, []

    def at(self, step: int) -> list[int]:
        if step < self.start:  # going back: replay the epochs from the first
            self.epoch, self.start, self.batches = -1, 0, []
        while step >= self.start + len(self.batches):
            self.start += len(self.batches)
            self.epoch += 1
            self.batches = length_batches(self.lengths, self.max_batch_tokens, self.seed + self.epoch)
        return self.batches[step - self.start]


def lr_at(cfg: TrainConfig, step: int, total_steps: int, elapsed_s: float) -> float:
    """Linear warmup, then cosine decay to min_lr_ratio over steps or the time budget."""
    if step < cfg.warmup_steps:
        return cfg.lr * (step + 1) / cfg.warmup_steps
    progress = (step - cfg.warmup_steps) / max(1, total_steps - cfg.warmup_steps)
    if cfg.minutes > 0:
        progress = max(progress, elapsed_s / (cfg.minutes * 60))
    progress = min(1.0, progress)
    return cfg.lr * (cfg.min_lr_ratio + (1 - cfg.min_lr_ratio) * 0.5 * (1 + math.cos(math.pi * progress)))


def planned_steps(step: int, budget_s: float, elapsed_s: float, cap: int) -> int:
    """A time budget turned into a step count once `step` steps have taken `elapsed_s` of it: the
    steps so far plus as many more as the rest of the budget holds at their mean pace, within
    [step, cap]. Training to a fixed count from then on (the lr schedule over those steps) makes
    the run a function of the data, the seed and that count: `--max-steps N` reproduces it."""
    if step <= 0 or elapsed_s <= 0:
        return cap
    more = int((budget_s - elapsed_s) / (elapsed_s / step))
    return max(step, min(cap, step + more))


def clock_advance(cfg: TrainConfig, t0: float, c0: float) -> tuple[float, float]:
    """(wall seconds, budget seconds) since t0 = perf_counter(), c0 = process_time(): the budget
    (`cfg.minutes`) counts wall time, or process CPU time / torch threads under clock="cpu"."""
    dt = time.perf_counter() - t0
    return dt, dt if cfg.clock == "wall" else (time.process_time() - c0) / torch.get_num_threads()


def latest_checkpoint(out: Path) -> Path | None:
    ckpts = checkpoints(out)
    return ckpts[-1] if ckpts else None


def batch_tensors(examples: list[Example], pad_id: int):
    return pack_right([list(e.ids) for e in examples], [e.prompt_len for e in examples], pad_id)


def sft_loss(model, input_ids, attention_mask, labels, full_forward: bool = False) -> tuple[torch.Tensor, int]:
    """Mean negative log-likelihood of the completion tokens, and their count."""
    logp = selected_logprobs(model, input_ids, attention_mask, labels, full_forward)  # (N,)
    return -logp.mean(), logp.numel()


def step_weight(batch_rows: int, n_examples: int, n_batches: int) -> float:
    """Scale of a batch-mean loss so that every example of an epoch weighs the same: batch rows /
    mean rows per batch. Length bucketing puts 1 long or 8 short examples in a batch; a plain
    batch mean would give the long one 8× the weight. Hand-checked: 4 examples in batches of 1 and 3
    -> 0.5 and 1.5, i.e. 0.5 per example in both."""
    return batch_rows * n_batches / n_examples


def token_loss(logp: torch.Tensor, gamma: float = 0.0) -> torch.Tensor:
    """The training loss over the completion tokens' log-probs `logp` (N,): the mean NLL, or with
    gamma > 0 the focal loss mean_t[-(1 - p_t)^gamma * log p_t] (Lin et al. 2017), the weight
    detached so it only rescales each token's gradient. A response is ~23 tokens, nearly all
    copied (the element's label and id, the action's syntax), and the mean NLL sits on the one or
    two that decide the action (docs/results.md, "Why SFT plateaus"); the weight moves the
    gradient there as the copies are learned."""
    if gamma == 0:
        return -logp.mean()
    weight = (1 - logp.detach().exp()).clamp_min(0) ** gamma
    return -(weight * logp).mean()


def saved_config(cls, saved: dict) -> dict:
    """A saved config (JSON) as the code would write it now: read back through `cls.from_json`, so
    settings added since (at their defaults) compare equal; as written when a setting the code no
    longer has makes that fail."""
    with contextlib.suppress(TypeError, ValueError):
        return json.loads(json.dumps(cls.from_json(saved).to_json()))
    return saved


def changed_settings(path: Path, cfg) -> list[str]:
    """The settings in which the config saved at `path` (read back through `saved_config`) differs
    from `cfg`, sorted; [] when they agree or nothing is saved there."""
    if not path.exists():
        return []
    saved = saved_config(type(cfg), json.loads(path.read_text()))
    want = json.loads(json.dumps(cfg.to_json()))
    return sorted(k for k in set(saved) | set(want) if saved.get(k) != want.get(k))


def claim_run_config(path: Path, cfg, flag: str) -> None:
    """Write `cfg` (a dataclass with to_json/from_json) to `path`, or check it against the one a
    run there already wrote: resuming with other settings is an error. The saved file is read back
    through `from_json` first, so settings added to the code since (at their defaults) still match.
    Each call also appends the running code's commit to the folder's `invocations.jsonl`."""
    changed = changed_settings(path, cfg)
    if changed:
        raise ValueError(f"{path.parent} holds a run with a different {path.name} ({', '.join(changed)}); "
                         f"use a new {flag} or the same settings")  # fmt: skip
    write_json_atomic(path, json.loads(json.dumps(cfg.to_json())))
    record_invocation(path.parent)  # which code ran (and resumed) it: invocations.jsonl


def fit(examples: list[Example], cfg, model, tok, model_cfg: ModelConfig, out: Path, name: str,
        extra_files: dict[str, dict], progress: bool = True, loss_fn=None, on_checkpoint=None) -> dict:
    """The training loop shared by SFT, the ORM and the critic: loss = mean NLL of the tokens
    after each example's prompt (focal-weighted with `cfg.focal_gamma`: `token_loss`),
    length-bucketed batches, AdamW, warmup + cosine (over steps or `cfg.minutes`), `accelerate`,
    checkpoints every `cfg.save_minutes` with the optimizer state (resumed from the latest
    `ckpt-*`), `final/` at the end, `metrics.jsonl` with `losses/<name>`.

    `cfg` is a TrainConfig (or a subclass: SFTConfig, ORMConfig) (lr ... seed); `extra_files` are JSON
    files written into every checkpoint (the settings a checkpoint needs to be used alone).
    `loss_fn(model, batch_examples, input_ids, mask, labels, full_forward) -> (loss, info)`
    replaces the NLL (the RL actor update): it returns a mean over its batch's rows, which `fit`
    scales by `step_weight`, so every step of the epoch weighs the same (eq. 6's expectation over
    steps, whatever the bucketing); `info` values are averaged into the metrics lines.
    `on_checkpoint(step)` is called after each periodic checkpoint is on disk.
    """
    from accelerate import Accelerator

    if not examples:
        raise ValueError(f"{name}: no training examples (all longer than max_seq_tokens, or no data)")
    out.mkdir(parents=True, exist_ok=True)
    pad_id = tok.pad_token_id
    accelerator = Accelerator(cpu=not torch.cuda.is_available(), mixed_precision="bf16" if model_cfg.autocast_bf16 else "no")
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=cfg.lr, weight_decay=cfg.weight_decay)
    step, elapsed, wall = 0, 0.0, 0.0
    planned: int | None = None  # a time budget's step count, fixed at the end of warmup (`planned_steps`)
    ckpt = latest_checkpoint(out)
    if ckpt is not None:
        _load_weights(model, ckpt)
        state = torch.load(ckpt / "trainer_state.pt", weights_only=True)
        opt.load_state_dict(state["optimizer"])
        step, elapsed, wall = state["step"], state["elapsed_s"], state.get("wall_s", 0.0)
        torch.set_rng_state(state["torch_rng"])
        planned = state.get("planned_steps")
    model, opt = accelerator.prepare(model, opt)
    model.train()
    full = accelerator.num_processes > 1
    prefix = None
    detach = cfg.detach_context
    if loss_fn is None and not full and (cfg.frozen_cache_gb > 0 or detach) and FrozenPrefix.usable(model):
        prefix = FrozenPrefix(model, cfg.frozen_cache_gb * 2**30, detach_context=detach)
        cache = f"caching the output of frozen layers 0-{prefix.split - 1} per example (<= {cfg.frozen_cache_gb:g} GB)"
        print(f"{name}: " + "; ".join(([cache] if cfg.frozen_cache_gb > 0 else []) + (["context run without autograd"] if detach else [])))
    elif detach:
        print(f"{name}: detach_context needs LoRA on the top layers only and a single process; training without it")
    per_epoch = len(length_batches([e.n_tokens for e in examples], cfg.max_batch_tokens, cfg.seed))
    total = planned or cfg.max_steps or max(1, math.ceil(cfg.epochs * per_epoch))
    print(f"{name}: {len(examples)} examples, {per_epoch} batches/epoch, {total} steps planned"
          + (f", {cfg.minutes:g} min budget (a step count after the {max(1, cfg.warmup_steps)} warmup steps)"
             if cfg.minutes and planned is None else "")
          + (f"; resuming at step {step}" if step else ""))  # fmt: skip

    def save(path: Path) -> None:
        _checkpoint(accelerator, model, tok, model_cfg, extra_files, opt, path, step, elapsed, wall, name, planned)
        if accelerator.is_main_process:
            prune_checkpoints(out)

    metrics_path = out / "metrics.jsonl"
    tb = ScalarLog(out / "tb", enabled=accelerator.is_main_process)
    bar = tqdm(total=total, initial=step, desc=name, unit="step", disable=not progress)
    window = {"loss": 0.0, "n": 0, "tokens": 0, "padded": 0, "seconds": 0.0}
    last_save = time.perf_counter()
    line: dict = {}
    schedule = EpochBatches([e.n_tokens for e in examples], cfg.max_batch_tokens, cfg.seed)
    by_steps = replace(cfg, minutes=0.0)  # the lr schedule once a budget is a step count
    while step < total:  # a budget sets `total` at the end of warmup (at least the warmup runs)
        whole = schedule.at(step)  # the global batch; this process trains its share of it
        batch_ids = whole[accelerator.process_index :: accelerator.num_processes] or whole[:1]
        t0, c0 = time.perf_counter(), time.process_time()
        input_ids, mask, labels = (t.to(accelerator.device) for t in batch_tensors([examples[i] for i in batch_ids], pad_id))
        lr = lr_at(cfg if planned is None else by_steps, step, total, elapsed)
        for g in opt.param_groups:
            g["lr"] = lr
        with accelerator.autocast():
            if loss_fn is None:
                if prefix is not None:
                    logp = prefix.selected_logprobs(batch_ids, input_ids, mask, labels)
                else:
                    logp = selected_logprobs(model, input_ids, mask, labels, full)
                loss = token_loss(logp, cfg.focal_gamma)
                info = {f"losses/{name}_focal": loss.item()} if cfg.focal_gamma else {}
                nll = -logp.detach().mean()
            else:
                loss, info = loss_fn(model, [examples[i] for i in batch_ids], input_ids, mask, labels, full)
                nll = loss.detach()  # logged unscaled: the batch's mean
                loss = loss * step_weight(len(whole), len(examples), per_epoch)
        accelerator.backward(loss)
        if cfg.grad_clip:
            accelerator.clip_grad_norm_(params, cfg.grad_clip)
        opt.step()
        opt.zero_grad(set_to_none=True)
        dt, budget_s = clock_advance(cfg, t0, c0)
        step += 1
        wall += dt
        elapsed += budget_s
        if cfg.minutes and planned is None and step >= max(1, cfg.warmup_steps):
            planned = total = _plan(accelerator, out, name, cfg.minutes, step, elapsed, total)
            bar.total = total
            bar.refresh()
        window["loss"] += nll.item()
        window["n"] += 1
        window["tokens"] += int(mask.sum())
        window["padded"] += mask.numel()
        window["seconds"] += dt
        for k, v in info.items():
            window.setdefault(k, 0.0)
            window[k] += v
        bar.update(1)
        bar.set_postfix(loss=f"{nll.item():.3f}", tok_s=f"{int(mask.sum()) / dt:.0f}")
        if step % cfg.log_every == 0 or step == total:
            line = {"step": step, "epoch": round(step / per_epoch, 3), "elapsed_s": round(elapsed, 1),
                    "wall_s": round(wall, 1), f"losses/{name}": round(window["loss"] / window["n"], 4),
                    "charts/lr": lr, "charts/tokens_s": round(window["tokens"] / window["seconds"], 1),
                    "charts/padding": round(window["tokens"] / window["padded"], 3),
                    **({"charts/frozen_cache_mb": round(prefix.bytes / 2**20, 1)} if prefix else {}),
                    **{k: round(v / window["n"], 5) for k, v in window.items() if "/" in k}}  # fmt: skip
            if accelerator.is_main_process:
                with metrics_path.open("a") as f:
                    f.write(json.dumps(line) + "\n")
                tb.write(line, step)
            window = {"loss": 0.0, "n": 0, "tokens": 0, "padded": 0, "seconds": 0.0}
        if time.perf_counter() - last_save >= cfg.save_minutes * 60 and step < total:
            save(out / f"ckpt-{step}")
            last_save = time.perf_counter()
            if on_checkpoint is not None:
                on_checkpoint(step)
    bar.close()
    tb.close()
    final = out / "final"
    save(out / f"ckpt-{step}")
    if accelerator.is_main_process:
        copytree_atomic(out / f"ckpt-{step}", final, ignore=shutil.ignore_patterns("trainer_state.pt"))
    return (line or {"step": step, "elapsed_s": round(elapsed, 1), "wall_s": round(wall, 1)}) | (
        {"planned_steps": planned} if planned is not None else {})


def write_plan(out: Path, name: str, planned: int, minutes: float, step: int, elapsed: float) -> None:
    """OUT/plan.json: the step count a time budget became (`planned_steps`), and how to rerun it."""
    write_json_atomic(out / "plan.json", {"planned_steps": planned, "budget_minutes": minutes, "after_steps": step,
                                          "after_seconds": round(elapsed, 2)})  # fmt: skip
    tqdm.write(f"{name}: the {minutes:g}-min budget at this pace = {planned} steps; "
               f"`--minutes 0 --max-steps {planned}` reproduces this run")


def _plan(accelerator, out: Path, name: str, minutes: float, step: int, elapsed: float, cap: int) -> int:
    """`planned_steps` for `fit`'s time budget, the main process's count for every process (they
    must stop together)."""
    planned = planned_steps(step, minutes * 60, elapsed, cap)
    if accelerator.num_processes > 1:
        from accelerate.utils import broadcast_object_list

        planned = broadcast_object_list([planned])[0]
    if accelerator.is_main_process:
        write_plan(out, name, planned, minutes, step, elapsed)
    return planned


def _checkpoint(accelerator, model, tok, model_cfg, extra_files: dict[str, dict], opt, path: Path, step: int,
                elapsed: float, wall: float, name: str, planned: int | None = None) -> None:
    accelerator.wait_for_everyone()
    if not accelerator.is_main_process:
        return
    (path / "trainer_state.pt").unlink(missing_ok=True)  # re-saving a checkpoint: untrusted until done
    save_checkpoint(accelerator.unwrap_model(model), tok, model_cfg, path, extra={f"{name}_step": step})
    for fname, data in extra_files.items():
        (path / fname).write_text(json.dumps(data, indent=1) + "\n")
    tmp = path / "trainer_state.tmp"
    torch.save({"optimizer": opt.state_dict(), "step": step, "elapsed_s": elapsed, "wall_s": wall,
                "torch_rng": torch.get_rng_state(), "planned_steps": planned}, tmp)  # fmt: skip
    tmp.replace(path / "trainer_state.pt")  # written last: a checkpoint without it is ignored


def _load_weights(model, ckpt: Path) -> None:
    """Load a checkpoint's trained weights (the adapter under LoRA) into `model` in place."""
    from safetensors.torch import load_file

    adapter = ckpt / "adapter_model.safetensors"
    if adapter.exists():
        from peft import set_peft_model_state_dict

        set_peft_model_state_dict(model, load_file(str(adapter)), adapter_name=model.active_adapter)
    else:
        model.load_state_dict(load_file(str(ckpt / "model.safetensors")), strict=False)

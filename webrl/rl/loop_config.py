"""Settings of the WebRL phase loop (`webrl train`): `LoopConfig`, its presets and the
metric names `rl/loop.py` writes to `metrics.jsonl`."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

from webrl.models.training import TrainConfig

METRICS = {
    "rollout/success": "share of rollouts the training reward calls a success (ORM, or evaluators)",
    "rollout/true_success": "share of rollouts the ground-truth evaluators call a success",
    "orm/positive_rate": "share of rollouts the ORM labels a success",
    "orm/agreement": "ORM label == evaluator label, over rollouts that have an evaluator",
    "orm/precision": "share of rewarded rollouts (with an evaluator) that the evaluator calls a success",
    "orm/false_positives": "rewarded rollouts the evaluator calls a failure (they teach wrong behaviour)",
    "curriculum/generated": "candidate tasks generated from the failures",
    "curriculum/feasible": "candidates left after the feasibility filter (the rule, then the LLM judge if any)",
    "curriculum/judged_out": "candidates the LLM feasibility judge dropped (feasibility_judge)",
    "curriculum/kept": "candidates inside the critic filter's window",
    "curriculum/used": "tasks rolled out (a sample of the kept ones; topped up when too few: `fill`)",
    "curriculum/filled": "tasks of the phase that are the `fill` top-up (not in the critic window)",
    "curriculum/mean_value": "mean critic value V(s0, I) of the candidates",
    "buffer/size": "successful trajectories in the replay buffer (all phases)",
    "replay/scored": "replay steps scored by π_ref before the perplexity filter",
    "replay/kept": "replay steps mixed into this phase's actor update after the perplexity filter",
    "critic/loss": "final BCE of the value head (eq. 8)",
    "critic/mean_value": "mean V(s, I) over this phase's on-policy steps",
    "critic/tune_loss": "final BCE of the backbone+head training (critic_backbone lora)",
    "actor/steps": "optimizer steps of the phase's actor update",
    "actor/loss": "mean actor loss over the epoch (eq. 6 unless another --actor-loss)",
    "actor/kl": "mean log π_θ/π_ref of the trained actions over the epoch (not with --actor-loss released)",
    "actor/log_ratio": "eq. 6 and released: the same mean log π_θ/π_ref, as the loss saw it",
    "actor/advantage": "eq. 6: mean advantage (eq. 9) of the trained steps",
    "actor/weight": "awr: mean exp(A / temperature) weight, capped",
    "actor/positive": "released: steps with a positive binarised advantage (the only ones trained)",
    "actor/beta": "released: mean adaptive β",
    "eval/success": "greedy success on the eval subset (ground-truth evaluators)",
    "eval/per_site": "the same per site",
    "minutes": "wall minutes of the phase, summed over every process that worked on it (phase-k/wall_seconds)",
}


CRITIC_BACKBONES = ("head", "lora")  # LoopConfig.critic_backbone: what eq. 8 trains
FILLS = ("nearest", "train")  # LoopConfig.fill: how a phase with too few tasks in the critic window is topped up

# the actor update's optimiser settings unless a preset says otherwise
LOOP_TRAIN = TrainConfig(lr=2e-4, epochs=1.0, warmup_steps=2, max_seq_tokens=1400, save_minutes=3.0)


@dataclass(frozen=True)
class LoopConfig:
    """`webrl train` settings (saved as `train_config.json` in the run folder)."""

    init: str = field(default="", metadata={"help": "starting actor checkpoint (the SFT model)"})
    orm: str = field(default="", metadata={"help": "ORM checkpoint (not needed with reward=oracle)"})
    demos: str = field(default="", metadata={"help": "SFT demonstrations JSONL: replay phase 0 ('' = none)"})
    phases: int = field(default=3, metadata={"help": "WebRL phases"})
    tasks_per_phase: int = field(default=48, metadata={"help": "tasks rolled out per phase"})
    rollouts_per_task: int = field(
        default=1, metadata={"help": "episodes sampled per task and phase (copies get task ids TASK#k)"}
    )
    train_tasks: str = field(
        default="",
        metadata={"help": "task file (.json/.jsonl) used instead of the train split for phase 1 and --no-curriculum "
                  "('' = the train split less the eval split's tasks)"},
    )
    reward: str = field(default="orm", metadata={"help": "orm | oracle (the evaluators; an ablation)"})
    orm_threshold: float = field(
        default=0.5,
        metadata={"help": "reward = 1 iff the ORM's P(success) > this (0.5: P(YES) > P(NO), the paper's rule)"},
    )
    method: str = field(default="webrl", metadata={"help": "webrl | filtered_bc | awr | digirl | sft (rl/actor.py)"})
    actor_loss: str = field(default="", metadata={"help": "eq6 | released | sft | awr ('' = the method's)"})
    beta: float = field(default=1.0, metadata={"help": "β of eq. 6"})
    lam: float = field(default=0.5, metadata={"help": "λ of eq. 9"})
    gamma: float = field(default=1.0, metadata={"help": "discount in eq. 9 (paper: none = 1)"})
    replay: bool = field(default=True, metadata={"help": "mix replayed successes into the actor update"})
    ppl_filter: bool = field(default=True, metadata={"help": "keep replay steps with perplexity in [ppl_lo, ppl_hi]"})
    ppl_lo: float = field(default=1 / 0.95, metadata={"help": "perplexity window low end"})
    ppl_hi: float = field(default=1 / 0.5, metadata={"help": "perplexity window high end"})
    replay_ratio: float = field(default=2.0, metadata={"help": "replay steps at most this × new steps"})
    replay_sample: float = field(default=4.0, metadata={"help": "replay steps scored per new step (before the filter)"})
    curriculum: bool = field(default=True, metadata={"help": "generate tasks from failures (off: train split only)"})
    generator: str = field(default="offline", metadata={"help": "offline | an OpenAI-compatible URL (LLM generator)"})
    feasibility_judge: str = field(
        default="",
        metadata={"help": "with the LLM generator: an OpenAI-compatible URL asked, after the feasibility rule, "
                  "whether each task can be done on its site (rl/curriculum.py JUDGE_PROMPT; only a clear YES "
                  "keeps it); empty = off"},
    )
    candidates: float = field(default=3.0, metadata={"help": "candidates generated per task needed"})
    rephrase_share: float = field(default=0.0, metadata={"help": "share of the offline generator's tasks re-phrased "
                                                                 "(rl/curriculum.py REPHRASINGS; 0 = off)"})  # fmt: skip
    constraint_share: float = field(default=0.0, metadata={"help": "share of the offline generator's tasks drawn, when "
                                                                   "the seed's family has one, from the family one "
                                                                   "constraint narrower or broader (CONSTRAINT_PAIRS; "
                                                                   "0 = off)"})  # fmt: skip
    critic_lo: float = field(default=0.05, metadata={"help": "critic filter low end"})
    critic_hi: float = field(default=0.75, metadata={"help": "critic filter high end"})
    fill: str = field(
        default="nearest",
        metadata={"help": "when fewer candidates than tasks_per_phase lie in the critic window, top the phase up "
                  "with the other candidates nearest the window's middle (nearest) or with train-pool tasks (train)"},
    )
    critic_replay: bool = field(
        default=False,
        metadata={"help": "also fit the value head on the kept replay steps (all successes: V drifts upward, "
                  "away from the current policy's success rate)"},
    )
    critic_epochs: int = field(default=30, metadata={"help": "value-head epochs over the cached features"})
    critic_lr: float = field(default=1e-3, metadata={"help": "value-head learning rate"})
    critic_backbone: str = field(
        default="head",
        metadata={"help": "head: only the value head is fit, on π_ref's cached features; lora: then a LoRA "
                  "adapter of the backbone (from π_ref's) and the head are trained together (eq. 8 through the "
                  "backbone; a LoRA actor only)"},
    )
    critic_tune_epochs: int = field(default=1, metadata={"help": "passes of the backbone+head training (lora)"})
    temperature: float = field(default=1.0, metadata={"help": "rollout sampling temperature"})
    rollout_max_steps: int = field(default=12, metadata={"help": "steps before a rollout is truncated"})
    eval_max_steps: int = field(default=30, metadata={"help": "steps before an eval episode is truncated"})
    envs: int = field(default=16, metadata={"help": "parallel envs (episodes in one batched generate)"})
    workers: int = field(
        default=1,
        metadata={"help": "worker processes for rollouts and evals, each with `envs` episodes in flight, sharing the "
                  "actor served on a loopback port (1 = all in this process; rollout/workers.py)"},
    )
    executor: str = field(default="process", metadata={"help": "workers as local processes, or Ray tasks (ray)"})
    eval_split: str = field(default="test", metadata={"help": "split for the per-phase and final evals"})
    eval_subset: int = field(default=48, metadata={"help": "per-phase eval tasks, site-stratified (0 = all)"})
    final_eval: bool = field(default=True, metadata={"help": "evaluate the final actor on the whole eval split"})
    max_batch_tokens: int = field(default=8192, metadata={"help": "padded tokens per scoring forward pass"})
    seed: int = field(default=0, metadata={"help": "task sampling, generation and data order"})
    train: TrainConfig = field(default_factory=lambda: LOOP_TRAIN)

    def __post_init__(self):
        if not 1.0 <= self.ppl_lo < self.ppl_hi:
            raise ValueError(f"LoopConfig perplexity window must have 1 <= ppl_lo < ppl_hi (a perplexity is >= 1), "
                             f"got [{self.ppl_lo}, {self.ppl_hi}]")  # fmt: skip
        sizes = {"phases": 1, "tasks_per_phase": 1, "envs": 1, "rollout_max_steps": 1, "eval_max_steps": 1, "eval_subset": 0}
        if bad := [f"{k}={getattr(self, k)} (>= {lo})" for k, lo in sizes.items() if getattr(self, k) < lo]:
            raise ValueError(f"LoopConfig sizes out of range: {', '.join(bad)}")
        if self.temperature < 0:
            raise ValueError(f"LoopConfig.temperature must be >= 0 (0 = greedy rollouts), got {self.temperature}")
        if self.replay_sample < 0 or self.replay_ratio < 0:
            raise ValueError(f"LoopConfig.replay_sample and replay_ratio must be >= 0, got {self.replay_sample} and "
                             f"{self.replay_ratio}")  # fmt: skip
        if self.fill not in FILLS:
            raise ValueError(f"LoopConfig.fill must be one of {', '.join(FILLS)}, got {self.fill!r}")
        if not 0.0 <= self.rephrase_share <= 1.0:
            raise ValueError(f"LoopConfig.rephrase_share must be in [0, 1], got {self.rephrase_share}")
        if self.critic_backbone not in CRITIC_BACKBONES:
            raise ValueError(f"LoopConfig.critic_backbone must be one of {', '.join(CRITIC_BACKBONES)}, "
                             f"got {self.critic_backbone!r}")  # fmt: skip
        if self.critic_tune_epochs < 1 or (self.critic_tune_epochs != 1 and self.critic_backbone != "lora"):
            raise ValueError(f"LoopConfig.critic_tune_epochs must be >= 1 and is used with critic_backbone lora only, "
                             f"got {self.critic_tune_epochs} with {self.critic_backbone!r}")  # fmt: skip
        if not 0.0 <= self.constraint_share <= 1.0:
            raise ValueError(f"LoopConfig.constraint_share must be in [0, 1], got {self.constraint_share}")
        if not 0.0 <= self.lam <= 1.0:
            raise ValueError(f"LoopConfig.lam (λ of eq. 9) must be in [0, 1], got {self.lam}")
        if not 0.0 < self.gamma <= 1.0:
            raise ValueError(f"LoopConfig.gamma (γ of eq. 9) must be in (0, 1], got {self.gamma}")
        if not 0.0 < self.orm_threshold < 1.0:
            raise ValueError(f"LoopConfig.orm_threshold must be in (0, 1), got {self.orm_threshold}")
        if self.workers < 1 or self.executor not in ("process", "ray"):
            raise ValueError(f"LoopConfig.workers must be >= 1 and executor 'process' or 'ray', got {self.workers} "
                             f"and {self.executor!r}")  # fmt: skip
        if self.feasibility_judge and (self.generator == "offline"
                                       or not re.match(r"https?://[^/\s]+", self.feasibility_judge)):
            raise ValueError(f"LoopConfig.feasibility_judge must be an OpenAI-compatible URL (http://HOST:PORT/v1) "
                             f"and needs the LLM generator (offline tasks are feasible by construction), got "
                             f"{self.feasibility_judge!r} with generator {self.generator!r}")  # fmt: skip
        if self.generator != "offline" and not re.match(r"https?://[^/\s]+", self.generator):
            raise ValueError(f"LoopConfig.generator must be 'offline' or an OpenAI-compatible URL "
                             f"(http://HOST:PORT/v1), got {self.generator!r}")  # fmt: skip
        if self.reward not in ("orm", "oracle"):
            raise ValueError(f"LoopConfig.reward must be 'orm' or 'oracle', got {self.reward!r}")
        if self.reward == "orm" and not self.orm:
            raise ValueError("reward 'orm' needs an ORM checkpoint (--orm PATH), or use --reward oracle")
        if not self.init:
            raise ValueError("LoopConfig.init: give the starting actor checkpoint (--init runs/sft/final)")
        from webrl.rl.actor import ACTOR_LOSSES, METHODS

        if self.method not in METHODS:
            raise ValueError(f"LoopConfig.method must be one of {', '.join(METHODS)}, got {self.method!r}")
        if self.eval_split not in ("test", "train") and not _task_file(self.eval_split):
            raise ValueError(f"LoopConfig.eval_split must be 'test', 'train' or a task file (.json/.jsonl) that "
                             f"exists, got {self.eval_split!r}")  # fmt: skip
        if self.rollouts_per_task < 1:
            raise ValueError(f"LoopConfig.rollouts_per_task must be >= 1, got {self.rollouts_per_task}")
        if self.train_tasks:
            _check_train_tasks(self.train_tasks)
        if self.method == "sft" and not self.demos:
            raise ValueError("method 'sft' (continued SFT) trains on the demonstrations: give them with --demos FILE")
        if self.actor_loss and self.actor_loss not in ACTOR_LOSSES:
            raise ValueError(f"LoopConfig.actor_loss must be one of {', '.join(ACTOR_LOSSES)}, got {self.actor_loss!r}")

    @property
    def loss(self) -> str:
        from webrl.rl.actor import METHODS

        return self.actor_loss or METHODS[self.method]

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict) -> LoopConfig:
        d = dict(d)
        d["train"] = TrainConfig(**d.get("train", {}))
        return cls(**d)


def _task_file(path: str) -> bool:
    return path.endswith((".json", ".jsonl")) and Path(path).is_file()


def _check_train_tasks(path: str) -> None:
    """`train_tasks` must be a task file with no test-split task in it (checked before any stage runs)."""
    from webrl.tasks.splits import load_eval_tasks, load_split

    if not _task_file(path):
        raise ValueError(f"LoopConfig.train_tasks must be a task file (.json/.jsonl) that exists, got {path!r}")
    test = {t.intent for t in load_split("test")}
    bad = [str(t.task_id) for t in load_eval_tasks(path) if t.intent in test]
    if bad:
        raise ValueError(f"{path}: {len(bad)} task(s) are test-split tasks (e.g. {bad[0]}); train on train-side tasks only")


LOOP_PRESETS: dict[str, dict] = {
    "cpu-tiny": {"phases": 2, "tasks_per_phase": 4, "eval_subset": 4, "rollout_max_steps": 3, "eval_max_steps": 3,
                 "envs": 4, "final_eval": False, "critic_epochs": 3,
                 "train": TrainConfig(lr=1e-3, epochs=1.0, warmup_steps=1, max_seq_tokens=4096,
                                      max_batch_tokens=4096, log_every=1)},
    # 2 CPU cores: 8-14 min per phase. Rollouts at T=0.5: with ground-truth rewards the SFT actor at T=1
    # found no success in 32 rollouts and fell from 15.2 to 4.8 % on test; at T=0.5, 1 in 16 per phase,
    # and it held 12.7 % (runs/rl-oracle, runs/rl-oracle-t05; docs/results.md). ORM threshold 0.7: on 389
    # policy rollouts of train-side tasks the small ORM's positives at 0.5 were 44 % right, at 0.7 70 %;
    # on 48 held-out train tasks 3 phases ended at 13/48 against 10/48 at 0.5 (docs/results.md, session (7))
    "cpu": {"tasks_per_phase": 16, "eval_subset": 16, "replay_sample": 1.0, "temperature": 0.5,
            "orm_threshold": 0.7},
    "gpu": {"tasks_per_phase": 500, "eval_subset": 0, "envs": 64, "max_batch_tokens": 65536,
            "train": TrainConfig(lr=1e-6, epochs=1.0, max_batch_tokens=32768, max_seq_tokens=4096)},
}  # fmt: skip

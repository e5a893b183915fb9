"""Replay buffer of successful trajectories and the perplexity filter.

Before each actor update, WebRL keeps the replayed steps whose perplexity under
the previous phase's actor lies in [1/0.95, 1/0.5]: steps the actor already
finds trivial (perplexity near 1) teach nothing, steps it finds very unlikely
(perplexity above 2) pull it too far from what it does now. At most twice the
current phase's step count is mixed in.

The episodes scored each phase are sampled whole (`sample_episodes`); continued SFT
(`--method sft`) draws demonstrations the same way (`demo_sample`).
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path

import torch

PPL_WINDOW = (1 / 0.95, 1 / 0.5)


def ppl_window(ppl: torch.Tensor, lo: float = PPL_WINDOW[0], hi: float = PPL_WINDOW[1]) -> torch.Tensor:
    """(N,) bool: which steps' perplexity lies in [lo, hi]."""
    return (ppl >= lo) & (ppl <= hi)


def select_replay(
    ppl: torch.Tensor, new_steps: int, ratio: float = 2.0, seed: int = 0,
    lo: float = PPL_WINDOW[0], hi: float = PPL_WINDOW[1],
) -> list[int]:  # fmt: skip
    """Indices of replay steps to train on: inside the window, at most
    `ratio` × `new_steps` of them (a seeded random subset when there are more)."""
    keep = torch.nonzero(ppl_window(ppl, lo, hi)).flatten().tolist()
    cap = int(ratio * new_steps)
    if len(keep) > cap:
        keep = sorted(random.Random(seed).sample(keep, cap))
    return keep


def take_steps(episodes: list[dict], n_steps: int) -> list[dict]:
    """The first episodes, whole, until they hold at least `n_steps` steps (all when fewer)."""
    out, total = [], 0
    for ep in episodes:
        if total >= n_steps:
            break
        out.append(ep)
        total += len(ep["steps"])
    return out


def sample_episodes(buffer: list[dict], n_steps: int, rng: random.Random) -> list[dict]:
    """Whole episodes of `buffer` in `rng`'s random order until they hold at least `n_steps` steps
    (eq. 9 needs V of each next step, so replay keeps trajectories whole)."""
    order = list(range(len(buffer)))
    rng.shuffle(order)
    return take_steps([buffer[k] for k in order], n_steps)


def demo_sample(buffer: list[dict], n_steps: int, seed: int) -> list[dict]:
    """The buffer's demonstrations (phase 0) in a seeded random order, whole episodes, until they
    hold at least `n_steps` steps (all of them when they hold fewer)."""
    demos = [e for e in buffer if e.get("phase") == 0]
    random.Random(seed + 7919).shuffle(demos)
    return take_steps(demos, n_steps)


class ReplayBuffer:
    """Successful trajectories of every phase, one JSON line each (append-only).

    Each line is an episode record (see webrl.rollout.runner) plus its `phase`.
    Appends are whole lines, so a crash loses at most the line being written,
    which `load` drops.
    """

    def __init__(self, path: str | Path):
        self.path = Path(path)

    def add(self, episodes: list[dict], phase: int) -> int:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        added = 0
        with self.path.open("a") as f:
            for ep in episodes:
                if ep.get("success"):
                    f.write(json.dumps({**ep, "phase": phase}) + "\n")
                    added += 1
        return added

    def load(self) -> list[dict]:
        if not self.path.exists():
            return []
        out = []
        for line in self.path.read_text().splitlines():
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                break
        return out

    def __len__(self) -> int:
        return len(self.load())

    def steps(self) -> Iterator[tuple[dict, int]]:
        """(episode, step index) for every step of every stored trajectory."""
        for ep in self.load():
            for i in range(len(ep["steps"])):
                yield ep, i

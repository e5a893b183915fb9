"""The critic filter of WebRL's self-evolving curriculum.

Generated tasks are kept when the critic's value at the task's start state,
V(s_0, I) ≈ P(success), lies in [0.05, 0.75]: tasks the agent surely fails or
surely solves teach little. A phase rolls out `tasks_per_phase` tasks: a sample of
the kept ones when there are more, topped up with the candidates closest to the
window's middle when there are fewer (a critic that has seen only failures, V ≡ 0,
keeps none; the phase still rolls out a full set, since its rollouts are the
only new learning signal). With `--curriculum-fill train` the top-up comes from the
train split instead (rl/task_stage.py: `generate_tasks`): a critic that keeps too few
candidates says the generated tasks are out of the actor's reach, and the train
split's tasks are the easier ones it knows.
"""

from __future__ import annotations

import random

import torch

CRITIC_WINDOW = (0.05, 0.75)


def critic_filter(values: torch.Tensor, lo: float = CRITIC_WINDOW[0], hi: float = CRITIC_WINDOW[1]) -> torch.Tensor:
    """(N,) bool: which tasks' start-state values lie in [lo, hi]."""
    return (values >= lo) & (values <= hi)


def window_selection(values: list[float], n: int, seed: int, lo: float = CRITIC_WINDOW[0],
                     hi: float = CRITIC_WINDOW[1]) -> list[int]:
    """Indices of the candidates with V in [lo, hi]: all of them, or a seeded sample of `n` when more."""
    keep = [i for i, v in enumerate(values) if lo <= v <= hi]
    return sorted(random.Random(seed).sample(keep, n)) if len(keep) > n else keep


def phase_selection(values: list[float], n: int, seed: int, lo: float = CRITIC_WINDOW[0],
                    hi: float = CRITIC_WINDOW[1]) -> list[int]:
    """Indices of the candidates a phase rolls out: those with V in [lo, hi] (a seeded sample of
    `n` when more), else all of them plus the others nearest (lo + hi) / 2 up to `n`."""
    keep = window_selection(values, n, seed, lo, hi)
    mid = (lo + hi) / 2
    rest = sorted((i for i in range(len(values)) if not lo <= values[i] <= hi), key=lambda i: abs(values[i] - mid))
    return keep + rest[: max(0, n - len(keep))]

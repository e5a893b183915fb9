"""The critic filter of WebRL's self-evolving curriculum.

Generated tasks are kept when the critic's value at the task's start state,
V(s_0, I) ≈ P(success), lies in [0.05, 0.75]: tasks the agent surely fails or
surely solves teach little.
"""

from __future__ import annotations

import torch

CRITIC_WINDOW = (0.05, 0.75)


def critic_filter(values: torch.Tensor, lo: float = CRITIC_WINDOW[0], hi: float = CRITIC_WINDOW[1]) -> torch.Tensor:
    """(N,) bool: which tasks' start-state values lie in [lo, hi]."""
    return (values >= lo) & (values <= hi)

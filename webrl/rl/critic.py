"""Training the critic's value head (paper eq. 8) on cached backbone features (models/critic.py)."""

from __future__ import annotations

import torch

from webrl.models.critic import ValueHead
from webrl.rl.losses import critic_loss


def train_value_head(
    head: ValueHead, feats: torch.Tensor, rewards: torch.Tensor, epochs: int = 30, lr: float = 1e-3,
    batch: int = 64, seed: int = 0, weight_decay: float = 1e-2,
) -> list[float]:  # fmt: skip
    """Eq. 8 (BCE against the final reward) on cached features; returns the loss per epoch."""
    g = torch.Generator().manual_seed(seed)
    opt = torch.optim.AdamW(head.parameters(), lr=lr, weight_decay=weight_decay)
    head.train()
    losses = []
    for _ in range(epochs):
        perm = torch.randperm(len(feats), generator=g)
        total = 0.0
        for k in range(0, len(perm), batch):
            idx = perm[k : k + batch]
            loss = critic_loss(head(feats[idx]), rewards[idx].float())
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item() * len(idx)
        losses.append(total / max(1, len(perm)))
    head.eval()
    return losses


def critic_targets(new_rewards: list[float], rep_keep: list[int], with_replay: bool) -> tuple[list[int], torch.Tensor]:
    """Rows of the π_ref features the value head fits (new steps first, then replay steps) and
    their eq. 8 targets: each new step's final trajectory reward; kept replay steps (successes,
    target 1) only `with_replay`."""
    n_new = len(new_rewards)
    on_replay = list(rep_keep) if with_replay else []
    idx = list(range(n_new)) + [n_new + j for j in on_replay]
    return idx, torch.tensor(list(new_rewards) + [1.0] * len(on_replay))

"""The actor update: training examples carrying their advantage and π_ref log-prob,
and the loss functions `fit` (models/training.py) calls on each batch.

  eq6       (default) L = mean((β·(log π_θ(a|s,I) − log π_ref(a|s,I)) − A)²)   (paper eq. 6)
  released  the authors' released-code variant (rl/losses.py:released_actor_loss)
  sft       plain NLL of the actions, per token, on the steps of successful trajectories only
            (the buffer: the `--no-kl` ablation; Filtered BC)
  awr       advantage-weighted regression: L = −mean(min(exp(A/τ), w_max) · log π_θ(a|s,I) / |a|)

log π sums over the action's tokens (the response and its end token).

Methods (`webrl train --method`), all on the same machinery and budget:
  webrl        eq6 on every new step + filtered replay (the paper)
  filtered_bc  sft on the steps of successful trajectories only (new + replay)
  awr          awr on every new step + replay, A from the critic (eq. 9)
  digirl       awr after DigiRL's step-level filter (only steps with A > 0); the
               instruction-level value curriculum is the critic filter on tasks
  sft          continued SFT, the SFT-alone baseline on the same budget: sft on demonstration
               steps only, as many as webrl's update would train in the phase (its new steps
               + kept replay); the rollouts run but are not trained on
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from webrl.models.scoring import IGNORE, selected_logprobs
from webrl.models.training import Example
from webrl.rl.losses import actor_loss, released_actor_loss

ACTOR_LOSSES = ("eq6", "released", "sft", "awr")
METHODS = {"webrl": "eq6", "filtered_bc": "sft", "awr": "awr", "digirl": "awr", "sft": "sft"}


def method_examples(method: str, examples: list, loss: str = "") -> list:
    """The steps a method trains on (see the module docstring). The `sft` loss trains on the buffer
    whatever the method: steps of successful trajectories only (this phase's rewarded rollouts and
    the kept replay), so `--no-kl` imitates successes, never the failed rollouts' steps."""
    if method == "filtered_bc" or loss == "sft":
        return [e for e in examples if e.mc_return > 0]  # the trajectory succeeded
    if method == "digirl":
        return [e for e in examples if e.advantage > 0]
    return examples


@dataclass(frozen=True)
class RLExample(Example):
    """A step of a trajectory: prompt + action ids, and what the losses need about it."""

    advantage: float = 0.0  # eq. 9
    ref_logp: float = 0.0  # summed action log-prob under π_ref
    value: float = 0.0  # V(s_t)
    next_value: float = 0.0  # V(s_{t+1}) (0 after the last step)
    reward: float = 0.0  # r_t (the final reward on the last step, else 0)
    mc_return: float = 0.0  # γ^{T-1-t} r_T


def row_logprobs(model, input_ids, mask, labels, full_forward: bool) -> torch.Tensor:
    """(B,) summed log-probs of each row's labelled tokens."""
    flat = selected_logprobs(model, input_ids, mask, labels, full_forward)
    counts = (labels[:, 1:] != IGNORE).sum(dim=1).tolist()
    return torch.stack([part.sum() for part in torch.split(flat, counts)])


def make_loss_fn(kind: str, beta: float, awr_temperature: float = 0.5, awr_max_weight: float = 20.0):
    """A `fit` loss function for the actor loss `kind` (see module docstring)."""
    if kind not in ACTOR_LOSSES:
        raise ValueError(f"unknown actor loss {kind!r}; choose one of {', '.join(ACTOR_LOSSES)}")

    def loss_fn(model, batch: list[RLExample], input_ids, mask, labels, full_forward: bool):
        logp = row_logprobs(model, input_ids, mask, labels, full_forward)
        f = lambda name: torch.tensor([getattr(e, name) for e in batch], dtype=torch.float32, device=logp.device)  # noqa: E731
        n = torch.tensor([e.n_tokens - e.prompt_len for e in batch], dtype=torch.float32, device=logp.device)
        if kind == "sft":
            loss = -(logp / n).mean()
            return loss, {"actor/loss": loss.item(), "actor/kl": (logp.detach() - f("ref_logp")).mean().item()}
        if kind == "eq6":
            return actor_loss(logp, f("ref_logp"), f("advantage"), beta)
        if kind == "awr":
            w = torch.exp(f("advantage") / awr_temperature).clamp(max=awr_max_weight)
            loss = -(w * logp / n).mean()
            return loss, {"actor/loss": loss.item(), "actor/weight": w.mean().item(),
                          "actor/kl": (logp.detach() - f("ref_logp")).mean().item()}  # fmt: skip
        return released_actor_loss(logp, f("ref_logp"), n, f("value"), f("next_value"), f("reward"), f("mc_return"))

    return loss_fn

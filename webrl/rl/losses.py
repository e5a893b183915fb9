"""Losses of WebRL, as pure functions over tensors (no models, no env).

- critic: binary cross-entropy between V(s_t, I) and the trajectory's final
  reward (paper eq. 8);
- actor: the KL-constrained objective (paper eq. 6)
      L = E[(β · log(π_θ(a|s,I) / π_ref(a|s,I)) − A(s, a, I))²],
  log-probs summed over the action's tokens, π_ref frozen (previous phase);
- `released_actor_loss`: what the authors' released code optimises, kept as a
  named variant (see its docstring);
- sequence log-probs and perplexities used by the replay filter.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F


def sequence_logprob(token_logprobs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """(N, L) per-token log-probs and 0/1 action-token mask -> (N,) summed log-probs."""
    return (token_logprobs * mask).sum(dim=-1)


def perplexity(token_logprobs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """(N,) perplexity exp(−mean log-prob) over each row's action tokens."""
    counts = mask.sum(dim=-1).clamp(min=1)
    return torch.exp(-sequence_logprob(token_logprobs, mask) / counts)


def critic_loss(value_logits: torch.Tensor, final_rewards: torch.Tensor) -> torch.Tensor:
    """Eq. 8: BCE(σ(logit), r_T), mean over steps. Takes logits for numerical safety."""
    return F.binary_cross_entropy_with_logits(value_logits, final_rewards.to(value_logits))


def actor_loss(
    logp: torch.Tensor, ref_logp: torch.Tensor, advantages: torch.Tensor, beta: float
) -> tuple[torch.Tensor, dict[str, float]]:
    """Eq. 6. logp, ref_logp: (N,) summed action log-probs; advantages: (N,) (no grad)."""
    log_ratio = logp - ref_logp.detach()  # (N,)
    loss = ((beta * log_ratio - advantages.detach()) ** 2).mean()
    info = {"actor/loss": loss.item(), "actor/log_ratio": log_ratio.mean().item(),
            "actor/kl": log_ratio.detach().mean().item(), "actor/advantage": advantages.mean().item()}  # fmt: skip
    return loss, info


def released_actor_loss(
    logp: torch.Tensor,
    ref_logp: torch.Tensor,
    n_tokens: torch.Tensor,
    value: torch.Tensor,
    next_value: torch.Tensor,
    reward: torch.Tensor,
    mc_return: torch.Tensor,
) -> tuple[torch.Tensor, dict[str, float]]:
    """The actor update of the authors' released code (a variant, not the default).

    1. A = clamp(V(s') − V(s) − 0.05 + r + mc_return, −1, 1), then binarised:
       +1 if A ≥ 0 else −0.6;
    2. only positive-advantage steps contribute (mask = A > 0);
    3. log-ratio = (Σ log π_θ − Σ log π_ref) / (action tokens of the masked steps);
    4. β = 5 where (A ≥ 0 and the reference's per-token probability ≥ 0.8) or
       (A < 0 and it is < 0.9), else 1; then capped by |A / log-ratio| (no grad);
    5. loss = mean(mask · SmoothL1(β · log-ratio, A) / β).
    """
    ref_logp = ref_logp.detach()
    raw = torch.clamp(next_value - value - 0.05 + reward + mc_return, -1.0, 1.0)
    adv = torch.where(raw >= 0, torch.ones_like(raw), torch.full_like(raw, -0.6))
    ref_prob = torch.exp(ref_logp / n_tokens.clamp(min=1))
    beta = torch.ones_like(adv)
    beta = torch.where(((adv >= 0) & (ref_prob >= 0.8)) | ((adv < 0) & (ref_prob < 0.9)), 5.0, beta)
    mask = (adv > 0).to(logp)
    count = (n_tokens * mask).sum()
    count = torch.where(count > 0, count, torch.ones_like(count))
    log_ratio = (logp - ref_logp) / count
    beta = torch.minimum(beta, (adv / log_ratio.detach()).abs()).detach()
    loss = (F.smooth_l1_loss(beta * log_ratio, adv, reduction="none") / beta * mask).mean()
    info = {"actor/loss": loss.item(), "actor/positive": mask.sum().item(),
            "actor/beta": beta.mean().item(), "actor/log_ratio": log_ratio.mean().item()}  # fmt: skip
    return loss, info

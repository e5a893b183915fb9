"""Advantages of WebRL (paper eq. 9), as pure functions over tensors.

A trajectory s_0, a_0, ..., s_{T-1}, a_{T-1} gets one outcome reward r_T in
{0, 1} after its last action (from the ORM in training). With V the critic:

    A_t = λ (r_t + γ V(s_{t+1}) − V(s_t)) + (1 − λ) (γ^{T-1-t} r_T − V(s_t))       (eq. 9)

r_t = 0 except at the last step, where r_{T-1} = r_T; the successor of the last
state is terminal, so its value is 0. λ = 0.5 by default. The paper writes eq. 9
without a discount, which is γ = 1 (our default); the released code discounts
Monte-Carlo returns with γ = 0.9, available through `gamma`.
"""

from __future__ import annotations

import torch


def step_rewards(final_reward: float, steps: int) -> torch.Tensor:
    """(T,) rewards: zero everywhere but the last step."""
    r = torch.zeros(steps)
    if steps:
        r[-1] = final_reward
    return r


def mc_returns(final_reward: float, steps: int, gamma: float = 1.0) -> torch.Tensor:
    """(T,) discounted Monte-Carlo returns γ^{T-1-t} r_T of each step."""
    exponents = torch.arange(steps - 1, -1, -1, dtype=torch.float32)
    return final_reward * gamma**exponents


def webrl_advantages(
    values: torch.Tensor, final_reward: float, lam: float = 0.5, gamma: float = 1.0
) -> torch.Tensor:
    """Eq. 9 for one trajectory. `values`: (T,) critic values V(s_t) in [0, 1]."""
    T = values.shape[0]
    next_values = torch.cat([values[1:], values.new_zeros(1)])  # V(terminal) = 0
    td = step_rewards(final_reward, T).to(values) + gamma * next_values - values
    mc = mc_returns(final_reward, T, gamma).to(values) - values
    return lam * td + (1 - lam) * mc


def batch_advantages(
    values: list[torch.Tensor], final_rewards: list[float], lam: float = 0.5, gamma: float = 1.0
) -> torch.Tensor:
    """Eq. 9 over several trajectories, concatenated step by step: (sum T_i,)."""
    parts = [webrl_advantages(v, r, lam, gamma) for v, r in zip(values, final_rewards, strict=True)]
    return torch.cat(parts) if parts else torch.zeros(0)

"""Training the critic (paper eq. 8): the value head on cached backbone features (models/critic.py),
and, with `critic_backbone="lora"`, a LoRA adapter of the backbone together with the head."""

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


def tune_critic(
    model, head: ValueHead, prompts: list[tuple[int, ...]], rewards: torch.Tensor, pad_id: int, epochs: int = 1,
    lr: float = 1e-4, head_lr: float = 1e-3, max_batch_tokens: int = 8192, seed: int = 0,
    autocast_bf16: bool = False, progress=None,
) -> list[float]:  # fmt: skip
    """Eq. 8 through the backbone: BCE of σ(head(h)) against the final reward, h = the hidden state at
    each prompt's last token, trained in `model`'s trainable parameters (the active adapter's, under
    PEFT) and `head` together, `epochs` passes of length-bucketed batches; returns the loss per epoch.
    The head should come warm (fit on cached features first), so its first gradients do not pull
    the backbone towards a random direction."""
    from webrl.models.device import bf16_autocast, module_device
    from webrl.models.scoring import decoder_and_head, pad_right
    from webrl.models.training import length_batches

    decoder, _ = decoder_and_head(model)
    device = module_device(model)
    head_device, was_training = next(head.parameters()).device, model.training
    head.to(device)
    params = [p for p in model.parameters() if p.requires_grad]
    if not params:
        raise ValueError("tune_critic: the model has no trainable parameters (load the critic adapter trainable)")
    opt = torch.optim.AdamW([{"params": params, "lr": lr}, {"params": list(head.parameters()), "lr": head_lr}],
                            weight_decay=0.0)  # fmt: skip
    model.train()
    head.train()
    losses = []
    for epoch in range(epochs):
        total = 0.0
        for batch in length_batches([len(p) for p in prompts], max_batch_tokens, seed + epoch):
            x, mask = pad_right([prompts[i] for i in batch], pad_id)
            last = torch.tensor([len(prompts[i]) - 1 for i in batch], device=device)
            with bf16_autocast(device, autocast_bf16):
                hidden = decoder(input_ids=x.to(device), attention_mask=mask.to(device)).last_hidden_state
            h = hidden[torch.arange(len(batch), device=device), last]
            loss = critic_loss(head(h), rewards[batch].to(device).float())
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item() * len(batch)
            if progress is not None:
                progress(len(batch))
        losses.append(total / max(1, len(prompts)))
    model.train(was_training)
    head.to(head_device).eval()  # back where it came from: the cached features it scores next live there
    return losses

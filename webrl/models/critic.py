"""The critic V(s, I) = P(success | state, instruction) and the step scorer behind it.

Backbone + value head. The backbone is the actor at the start of the phase (the
frozen reference π_ref of eq. 6): one teacher-forced pass over every training
step gives, together, π_ref's summed action log-probs (for eq. 6 and the
perplexity filter) and the hidden state at the prompt's last token — the
critic's features. The value head (a small MLP) is trained on those features
with binary cross-entropy against the trajectory's final reward (eq. 8), so the
critic costs no extra pass over the backbone on a CPU. A critic checkpoint is
the head plus the path of the backbone adapter its features came from.

    feats, logp, n_tok = score_steps(model, tok, steps)      # one forward per batch
    head = ValueHead(feats.shape[1]); train_value_head(head, feats, rewards)  # rl/critic.py
    v = values(head, feats)                                   # (N,) in [0, 1]
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import nn

from webrl.models.device import bf16_autocast, module_device
from webrl.models.scoring import decoder_and_head, pad_right


@dataclass(frozen=True)
class Step:
    """A prompt and the action written after it (token ids)."""

    prompt_ids: tuple[int, ...]
    action_ids: tuple[int, ...]


class ValueHead(nn.Module):
    """Features (N, H) -> value logits (N,); V = σ(logit)."""

    def __init__(self, hidden: int, width: int = 256, seed: int = 0):
        super().__init__()
        g = torch.Generator().manual_seed(seed)
        self.hidden = hidden
        self.width = width
        self.net = nn.Sequential(nn.LayerNorm(hidden), nn.Linear(hidden, width), nn.GELU(), nn.Linear(width, 1))
        with torch.no_grad():
            for m in self.net:
                if isinstance(m, nn.Linear):
                    m.weight.copy_(torch.randn(m.weight.shape, generator=g) * (1.0 / m.in_features) ** 0.5)
                    m.bias.zero_()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x.float()).squeeze(-1)


def _batches(lengths: list[int], max_tokens: int) -> list[list[int]]:
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    out, cur = [], []
    for i in order:
        if cur and lengths[i] * (len(cur) + 1) > max_tokens:
            out.append(cur)
            cur = []
        cur.append(i)
    return out + ([cur] if cur else [])


@torch.no_grad()
def score_steps(
    model, steps: list[Step], pad_id: int, max_batch_tokens: int = 8192, autocast_bf16: bool = False, progress=None
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """For each step: (features (N, H) = hidden state at the prompt's last token,
    summed log-prob of the action tokens (N,), action token count (N,))."""
    decoder, head = decoder_and_head(model)
    device = module_device(model)
    was_training = model.training
    model.eval()
    n = len(steps)
    feats: list[torch.Tensor | None] = [None] * n
    logp = torch.zeros(n)
    counts = torch.tensor([len(s.action_ids) for s in steps], dtype=torch.float32)
    seqs = [list(s.prompt_ids) + list(s.action_ids) for s in steps]
    for batch in _batches([len(s) for s in seqs], max_batch_tokens):
        x, mask = pad_right([seqs[i] for i in batch], pad_id)
        x, mask = x.to(device), mask.to(device)
        with bf16_autocast(device, autocast_bf16):
            hidden = decoder(input_ids=x, attention_mask=mask).last_hidden_state  # (B, T, H)
        for r, i in enumerate(batch):
            p = len(steps[i].prompt_ids)
            a = len(steps[i].action_ids)
            feats[i] = hidden[r, p - 1].float().cpu()
            if a:
                with bf16_autocast(device, autocast_bf16):
                    lg = head(hidden[r, p - 1 : p - 1 + a]).float()  # predicts tokens p .. p+a-1
                ids = torch.tensor(steps[i].action_ids, device=lg.device).unsqueeze(1)
                logp[i] = float(torch.log_softmax(lg, dim=-1).gather(1, ids).sum())
        if progress is not None:
            progress(len(batch))
    model.train(was_training)
    H = feats[0].shape[0] if n else 0
    return (torch.stack(feats) if n else torch.zeros(0, H)), logp, counts  # type: ignore[arg-type]


@torch.no_grad()
def values(head: ValueHead, feats: torch.Tensor) -> torch.Tensor:
    """V(s) = σ(head(features)), (N,)."""
    head.eval()
    return torch.sigmoid(head(feats)) if len(feats) else torch.zeros(0)


def save_critic(head: ValueHead, backbone: str | Path, path: str | Path) -> None:
    """The head's weights and the backbone adapter its features come from."""
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    torch.save(head.state_dict(), path / "value_head.pt")
    (path / "critic.json").write_text(json.dumps({"backbone": str(backbone), "hidden": head.hidden, "width": head.width}, indent=1) + "\n")


def load_critic(path: str | Path) -> tuple[ValueHead, str]:
    path = Path(path)
    meta = json.loads((path / "critic.json").read_text())
    head = ValueHead(meta["hidden"], meta.get("width", 256))
    head.load_state_dict(torch.load(path / "value_head.pt", weights_only=True, map_location="cpu"))
    return head.eval(), meta["backbone"]

"""Where models run: the GPU when there is one, else the CPU (`WEBRL_DEVICE` overrides).

Training through `fit` (models/training.py) gets its device from `accelerate`; everything else
that runs a model (batched generation, teacher-forced scoring, the critic's features,
both ORMs, the encoder ORM's training loop) puts its model on `default_device()`
and its input tensors on the model's device, so the same commands run on either.

    WEBRL_DEVICE=cpu webrl eval ...     # keep a GPU machine's model on the CPU
"""

from __future__ import annotations

import contextlib
import os

import torch


def default_device() -> torch.device:
    """`$WEBRL_DEVICE` when set (e.g. cpu, cuda, cuda:1), else cuda when available, else cpu."""
    name = os.environ.get("WEBRL_DEVICE", "").strip()
    if name:
        try:
            device = torch.device(name)
        except RuntimeError as e:
            raise ValueError(f"WEBRL_DEVICE={name!r} is not a torch device (try cpu or cuda): {e}") from None
        if device.type == "cuda" and not torch.cuda.is_available():
            raise ValueError(f"WEBRL_DEVICE={name!r} but torch sees no CUDA device; unset it or use cpu")
        return device
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def module_device(module) -> torch.device:
    """The device of a module's first parameter (cpu for a module without parameters)."""
    for p in module.parameters():
        return p.device
    return torch.device("cpu")


def bf16_autocast(device: torch.device, enabled: bool = True):
    """A bf16 autocast context for `device`'s type (a no-op context when not `enabled`)."""
    return torch.autocast(device.type, dtype=torch.bfloat16) if enabled else contextlib.nullcontext()

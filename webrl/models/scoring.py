"""Log-probabilities of chosen tokens, computing the LM head only where it is needed.

Every causal LM here is `decoder -> hidden states -> lm_head`. Training and
teacher-forced scoring need log-probs at the action tokens only (a few dozen of
~600 positions), so the vocabulary projection (49k x 576 for SmolLM2, a fifth of
the model's FLOPs) runs on those positions alone.
"""

from __future__ import annotations

import torch

IGNORE = -100


def decoder_and_head(model):
    """(decoder, lm_head) of a causal LM, through a PeftModel wrapper if any (adapters stay active)."""
    model = getattr(model, "module", model)  # a single-process accelerate wrapper, if any
    inner = model.get_base_model() if hasattr(model, "get_base_model") else model
    return inner.get_decoder(), inner.get_output_embeddings()


def selected_logprobs(
    model, input_ids: torch.Tensor, attention_mask: torch.Tensor, labels: torch.Tensor, full_forward: bool = False
) -> torch.Tensor:
    """log p(labels[b, t] | input_ids[b, :t]) for every position with labels != IGNORE.

    input_ids, attention_mask, labels: (B, T), right-padded; labels are the
    input ids themselves where scored. Returns (N,), row-major over (b, t).
    `full_forward` calls the model itself (all logits): needed when a DDP/FSDP
    wrapper must see the forward pass to synchronise gradients.
    """
    targets = labels[:, 1:]  # (B, T-1): token t+1 is predicted at position t
    keep = targets != IGNORE
    if full_forward:
        logits = model(input_ids=input_ids, attention_mask=attention_mask).logits[:, :-1][keep].float()
    else:
        decoder, head = decoder_and_head(model)
        hidden = decoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state  # (B, T, H)
        logits = head(hidden[:, :-1][keep]).float()  # (N, V)
    return torch.log_softmax(logits, dim=-1).gather(1, targets[keep].unsqueeze(1)).squeeze(1)

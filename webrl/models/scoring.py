"""Log-probabilities of chosen tokens, computing the LM head only where it is needed.

Every causal LM here is `decoder -> hidden states -> lm_head`. Training and
teacher-forced scoring need log-probs at the action tokens only (a few dozen of
~600 positions), so the vocabulary projection (49k x 576 for SmolLM2, a fifth of
the model's FLOPs) runs on those positions alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import contextmanager

import torch

IGNORE = -100


def pad_right(seqs: Sequence[Sequence[int]], pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Token id lists -> right-padded (input_ids, attention_mask), both (B, T) long, on the CPU."""
    T = max(len(s) for s in seqs)
    ids = torch.full((len(seqs), T), pad_id, dtype=torch.long)
    mask = torch.zeros_like(ids)
    for r, s in enumerate(seqs):
        ids[r, : len(s)] = torch.tensor(list(s), dtype=torch.long)
        mask[r, : len(s)] = 1
    return ids, mask


def decoder_and_head(model):
    """(decoder, lm_head) of a causal LM, through a PeftModel wrapper if any (adapters stay active)."""
    model = getattr(model, "module", model)  # a single-process accelerate wrapper, if any
    inner = model.get_base_model() if hasattr(model, "get_base_model") else model
    return inner.get_decoder(), inner.get_output_embeddings()


def cache_kwarg(module) -> str:
    """The KV-cache argument's name in `module.forward`: `cache` in recent transformers 5.x releases
    (5.25 here), `past_key_values` before (4.x, and 5.17 on the H200 machine). Passing the wrong
    name is silent, since the forward takes **kwargs, and the cache is then simply not used."""
    import inspect

    inner = module.get_base_model() if hasattr(module, "get_base_model") else module
    return "cache" if "cache" in inspect.signature(inner.forward).parameters else "past_key_values"


def selected_logprobs(
    model, input_ids: torch.Tensor, attention_mask: torch.Tensor, labels: torch.Tensor, full_forward: bool = False
) -> torch.Tensor:
    """log p(labels[b, t] | input_ids[b, :t]) for every position with labels != IGNORE.

    input_ids, attention_mask, labels: (B, T), right-padded; labels are the
    input ids themselves where scored. Returns (N,), row-major over (b, t).
    `full_forward` calls the model itself (all logits): needed when a DDP/FSDP
    wrapper must see the forward pass to synchronise gradients.
    """
    if full_forward:
        targets = labels[:, 1:]  # (B, T-1): token t+1 is predicted at position t
        keep = targets != IGNORE
        logits = model(input_ids=input_ids, attention_mask=attention_mask).logits[:, :-1][keep].float()
        return torch.log_softmax(logits, dim=-1).gather(1, targets[keep].unsqueeze(1)).squeeze(1)
    decoder, head = decoder_and_head(model)
    hidden = decoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state  # (B, T, H)
    return _head_logprobs(head, hidden, labels)


def _head_logprobs(head, hidden: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """log p(labels[b, t+1]) from the final hidden states (B, T, H), the LM head run on scored positions only."""
    targets = labels[:, 1:]  # (B, T-1): token t+1 is predicted at position t
    keep = targets != IGNORE
    logits = head(hidden[:, :-1][keep]).float()  # (N, V)
    return torch.log_softmax(logits, dim=-1).gather(1, targets[keep].unsqueeze(1)).squeeze(1)


@contextmanager
def _decoder_slice(decoder, layers: slice, final_norm: bool):
    """Run `decoder` through `layers` only (and without its final norm unless `final_norm`)."""
    full, norm = decoder.layers, decoder.norm
    decoder.layers = torch.nn.ModuleList(list(full)[layers])
    if not final_norm:
        decoder.norm = torch.nn.Identity()
    try:
        yield
    finally:
        decoder.layers, decoder.norm = full, norm


def first_trainable_layer(model) -> int:
    """Index of the lowest decoder layer holding a trainable parameter (0 when the embeddings
    train, or when the decoder has no `layers`/`norm` to split)."""
    decoder, _ = decoder_and_head(model)
    if not (hasattr(decoder, "layers") and hasattr(decoder, "norm")):
        return 0
    if any(p.requires_grad for p in decoder.get_input_embeddings().parameters()):
        return 0
    for i, layer in enumerate(decoder.layers):
        if any(p.requires_grad for p in layer.parameters()):
            return i
    return 0


class FrozenPrefix:
    """The hidden states entering the first trainable decoder layer, cached per example.

    Under LoRA on the top layers only (`LoraSpec.top_layers`), the layers below never change
    during training, so what they compute for an example is the same every epoch. The first time
    an example is seen its frozen-prefix output is computed (no autograd) and kept; later epochs
    run only the trainable layers on it. For SmolLM2 with adapters on the top 12 of 30 layers,
    that skips 18 of the 30 layer forwards from the second epoch on.

    Exact when the frozen layers are deterministic (no dropout in them; `usable` checks) and the
    batch is right-padded (a row's states do not depend on the rows batched with it). The cache
    is kept in memory up to `max_bytes`; examples past the cap are computed each time.

    `detach_context`: the trainable layers run the context (every position before the one that
    predicts the first scored token) without autograd and keep its keys/values; only the scored
    part runs with gradients, attending to them (`context_detached`). The forward, so the loss, is
    unchanged; the gradient leaves out what flows through the context's keys and values.
    """

    def __init__(self, model, max_bytes: float, detach_context: bool = False):
        self.decoder, self.head = decoder_and_head(model)
        self.split = first_trainable_layer(model)
        self.max_bytes = max_bytes
        self.detach_context = detach_context
        self.states: dict[int, torch.Tensor] = {}
        self.bytes = 0
        self.hits = self.misses = 0

    @staticmethod
    def usable(model) -> bool:
        """True when some bottom layers are frozen and deterministic (so caching them is exact)."""
        cfg = getattr(decoder_and_head(model)[0], "config", None)
        return first_trainable_layer(model) > 0 and not getattr(cfg, "attention_dropout", 0.0)

    def _prefix(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        with torch.no_grad(), _decoder_slice(self.decoder, slice(0, self.split), final_norm=False):
            return self.decoder(input_ids=input_ids, attention_mask=attention_mask, use_cache=False).last_hidden_state

    def hidden(self, keys: list[int], input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        """(B, T, H): the frozen prefix's output for each row (cached where possible; pads are 0)."""
        lengths = attention_mask.sum(1).tolist()
        missing = [b for b, k in enumerate(keys) if k not in self.states]
        self.hits += len(keys) - len(missing)
        self.misses += len(missing)
        fresh: dict[int, torch.Tensor] = {}
        if missing:
            t = max(lengths[b] for b in missing)
            h = self._prefix(input_ids[missing, :t], attention_mask[missing, :t])
            for j, b in enumerate(missing):
                fresh[b] = h[j, : lengths[b]]
                size = fresh[b].numel() * fresh[b].element_size()
                if self.bytes + size <= self.max_bytes:
                    self.states[keys[b]] = fresh[b].detach().to("cpu", copy=True)
                    self.bytes += size
        rows = [fresh[b] if b in fresh else self.states[k] for b, k in enumerate(keys)]
        out = rows[0].new_zeros((len(keys), input_ids.shape[1], rows[0].shape[-1]), device=input_ids.device)
        for b, r in enumerate(rows):
            out[b, : r.shape[0]] = r.to(input_ids.device)
        return out

    def selected_logprobs(self, keys: list[int], input_ids: torch.Tensor, attention_mask: torch.Tensor,
                          labels: torch.Tensor) -> torch.Tensor:  # fmt: skip
        """`selected_logprobs` with the frozen prefix read from the cache; `keys` name the rows' examples."""
        hidden_in = self.hidden(keys, input_ids, attention_mask)
        with _decoder_slice(self.decoder, slice(self.split, None), final_norm=True):
            if self.detach_context:
                return context_detached(self.decoder, self.head, hidden_in, attention_mask, labels)
            hidden = self.decoder(inputs_embeds=hidden_in, attention_mask=attention_mask, use_cache=False).last_hidden_state
        return _head_logprobs(self.head, hidden, labels)


def context_detached(decoder, head, hidden_in: torch.Tensor, attention_mask: torch.Tensor,
                     labels: torch.Tensor) -> torch.Tensor:  # fmt: skip
    """`_head_logprobs` of `decoder` run on `hidden_in` (B, T, H, right-padded) in two passes.

    Row b's context is [0, c_b), c_b = the position predicting its first scored token. Pass 1
    runs every row's context without autograd and keeps the keys/values (a `DynamicCache`);
    pass 2 runs the rest, [c_b, len_b), gathered into a right-padded (B, Q) block, with its own
    RoPE positions and an explicit mask (context keys of the row, then causal within the
    block). Same log-probs as one pass over the whole sequence; gradients reach the weights only
    through the scored part (the ~30 response tokens of a ~600-token step), so a training step
    costs about one no-grad forward instead of a forward and a backward over every position.
    """
    from transformers import DynamicCache

    bsz, _, width = hidden_in.shape
    dev = hidden_in.device
    lengths = attention_mask.sum(1)
    scored = labels[:, 1:] != IGNORE  # position t predicts token t + 1
    first = torch.where(scored.any(1), scored.int().argmax(1), lengths - 1).clamp(min=0)  # c_b
    ctx, q = int(first.max()), int((lengths - first).max())
    cache = DynamicCache(config=decoder.config)
    kw = cache_kwarg(decoder)
    ctx_mask = torch.arange(ctx, device=dev)[None] < first[:, None]  # (B, C)
    if ctx:
        with torch.no_grad():
            decoder(inputs_embeds=hidden_in[:, :ctx], attention_mask=ctx_mask.long(), use_cache=True, **{kw: cache},
                    position_ids=torch.arange(ctx, device=dev)[None].expand(bsz, -1))  # fmt: skip
        if max(cache.get_seq_length(i) for i in range(len(getattr(cache, "layers", ())) or 1)) != ctx:
            raise RuntimeError(f"the decoder did not fill the KV cache through `{kw}=` (transformers renamed "
                               "the argument?): the detached-context forward needs it")  # fmt: skip
    pos = first[:, None] + torch.arange(q, device=dev)[None]  # (B, Q) global positions of the block
    valid = pos < lengths[:, None]
    pos = torch.where(valid, pos, lengths[:, None] - 1)
    block = hidden_in.gather(1, pos[..., None].expand(-1, -1, width))
    causal = torch.ones(q, q, dtype=torch.bool, device=dev).tril()[None] & valid[:, None, :]
    mask = torch.cat([ctx_mask[:, None, :].expand(-1, q, -1), causal], dim=2)[:, None]  # (B, 1, Q, C + Q)
    hidden = decoder(inputs_embeds=block, attention_mask=mask, position_ids=pos, use_cache=True,
                     **{kw: cache}).last_hidden_state
    nxt = (pos + 1).clamp(max=labels.shape[1] - 1)
    targets = torch.where(valid & (pos + 1 < labels.shape[1]), labels.gather(1, nxt), IGNORE)  # (B, Q)
    keep = targets != IGNORE
    logits = head(hidden[keep]).float()
    return torch.log_softmax(logits, dim=-1).gather(1, targets[keep].unsqueeze(1)).squeeze(1)

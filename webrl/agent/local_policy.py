"""`LocalPolicy`: a causal LM in this process, batched.

    policy = LocalPolicy.from_checkpoint("runs/sft/final")
    gens = policy.generate(prompts, SamplingParams(temperature=0))   # greedy, one per prompt
    gens[0].text, gens[0].logprobs                                    # action text, per-token log-probs
    policy.score(prompts, completions)                                # teacher-forced log-probs

`generate` sorts the prompts by length and cuts them into micro-batches of at
most `max_batch_tokens` padded tokens, then for each: the prefill, then
token-by-token decoding with the KV cache over the left-padded rows. On a GPU the
prefill is one batched forward over the left-padded prompts; on the CPU, when the
padding would cost more than a forward per prompt does (`row_overhead_tokens` of
padding a prompt), each prompt is prefilled alone, so no padding is computed, and the
rows' caches are left-padded into one (`prefill_rows`).
Prompts that begin like an earlier prompt reuse its KV cache (`prefix_cache_tokens`, on the
row-by-row path): an episode's next prompt repeats the instruction and every past round of the
last one up to that round's page (replaced now by a placeholder), so only the rest is prefilled.
The cache remembers the latest prompts' keys and values within a token budget, newest first, and
forgets them when the weights change (an optimizer step, a merge of adapters). Measured on
oracle episodes of the `cpu` preset's prompt: 17 % of the prompt tokens reused, 5 % less time
(the page is most of a prompt; docs/results.md, session 2026-12-06).
Greedy rows decode with prompt lookup (`draft_tokens`): the tokens that followed the
latest earlier occurrence of the context's last n-gram (in the prompt or the response
so far; responses copy element names, intents and the action syntax of past rounds)
are proposed as a draft, the model checks all of them in one forward, and the longest
prefix that greedy decoding would have produced is kept; rejected slots stay in the KV
cache, hidden by the attention mask. The tokens are greedy decoding's own (up to
floating-point ties); each forward reads the weights once for several tokens. Measured:
section "Session 2026-12-05 (9)" of docs/results.md. A row
stops at an end-of-turn token, at the end of its first complete action line
(`do(...)`/`exit(...)` followed by a newline), at one of its stop strings, or
at `max_new_tokens`. Log-probs are those of the unmodified model (temperature
1, no top-p): what the RL losses and the perplexity filter need.

The model runs where it is (`from_checkpoint` puts it on `default_device()`: the GPU
when there is one); sampling happens on the CPU with the policy's own generator, so a
seed gives the same samples whatever the device. A row whose `SamplingParams.seed` is set samples
with a generator of its own: the same tokens whatever else shares its batch (the server's `seed`).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field

import torch

from webrl.agent.prompt import end_of_action, stop_token_ids
from webrl.models.device import bf16_autocast, default_device, module_device
from webrl.models.scoring import IGNORE, cache_kwarg, selected_logprobs


@dataclass(frozen=True)
class SamplingParams:
    """How to sample one response."""

    temperature: float = field(default=0.0, metadata={"help": "0 = greedy; > 0 samples from softmax(logits / T)"})
    top_p: float = field(default=1.0, metadata={"help": "nucleus sampling: smallest token set with this mass"})
    max_new_tokens: int = field(default=128, metadata={"help": "cap on generated tokens"})
    stop: tuple[str, ...] = field(default=(), metadata={"help": "extra stop strings (cut from the text)"})
    end_of_action: bool = field(default=True, metadata={"help": "stop once an action line is complete"})
    seed: int | None = field(default=None, metadata={"help": "the row samples with a generator of its own seeded "
                                                             "so (the same tokens whatever shares its batch); None: "
                                                             "the policy's generator"})  # fmt: skip

    def __post_init__(self):
        if self.temperature < 0:
            raise ValueError(f"temperature must be >= 0, got {self.temperature}")
        if not 0 < self.top_p <= 1:
            raise ValueError(f"top_p must be in (0, 1], got {self.top_p}")
        if self.max_new_tokens < 1:
            raise ValueError(f"max_new_tokens must be >= 1, got {self.max_new_tokens}")


@dataclass
class Generation:
    text: str  # the response, without the end token
    token_ids: list[int]  # generated tokens (an end-of-turn token included when one was produced)
    logprobs: list[float]  # log p(token) under the model, one per token_ids entry
    finish_reason: str  # "stop" | "length"
    prompt_tokens: int


def _sample(logits: torch.Tensor, temperature: float, top_p: float, gen: torch.Generator) -> int:
    """One token from 1-D `logits` (float32)."""
    if temperature == 0:
        return int(torch.argmax(logits))
    probs = torch.softmax(logits / temperature, dim=-1)
    if top_p < 1.0:
        sorted_p, order = torch.sort(probs, descending=True)
        cut = int((torch.cumsum(sorted_p, 0) < top_p).sum()) + 1  # keep the smallest set reaching top_p
        probs = torch.zeros_like(probs).scatter_(0, order[:cut], sorted_p[:cut])
    return int(torch.multinomial(probs, 1, generator=gen))


class LocalPolicy:
    """Batched generation and scoring with a local model (see module docstring)."""

    # A forward of its own costs a prompt about as much as this many more tokens of prefill (SmolLM2,
    # 2 CPU threads: 16 prompts of ~12 tokens took 0.74 s alone against 0.14 s batched; of ~170
    # tokens, 2.1 against 1.9 s), so a micro-batch is prefilled row by row only when its padding
    # exceeds this many tokens a prompt.
    row_overhead_tokens = 48
    # A cached prefix is used from this many shared tokens on (shorter ones save too little).
    min_prefix_tokens = 16

    def __init__(
        self,
        model,
        tokenizer,
        max_batch_tokens: int = 16384,
        max_batch: int = 32,
        autocast_bf16: bool = False,
        seed: int = 0,
        name: str = "local",
        bf16_weights: bool = False,
        prefill_rows: bool | None = None,
        draft_tokens: int = 4,
        prefix_cache_tokens: int = 16384,
    ):
        if bf16_weights:  # inference only: cast once instead of autocasting the weights at every step
            model = model.to(torch.bfloat16)
        self.model = model.eval()
        self.device = module_device(model)
        self.tokenizer = tokenizer
        self.max_batch_tokens = max_batch_tokens
        self.max_batch = max_batch
        self.autocast_bf16 = autocast_bf16
        self.stop_ids = set(stop_token_ids(tokenizer))
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
        self.gen = torch.Generator().manual_seed(seed)
        self.name = name
        self.fingerprint: str | None = None  # the checkpoint's, when loaded from one (from_checkpoint)
        self._cache_kw = cache_kwarg(model)
        self.prefill_rows = self.device.type == "cpu" if prefill_rows is None else prefill_rows
        if draft_tokens < 0:
            raise ValueError(f"draft_tokens must be >= 0, got {draft_tokens}")
        self.draft_tokens = draft_tokens  # 0: one token per forward
        self.forwards = 0  # model forwards run (prefill and decode), for benchmarks
        self.drafted = self.accepted = 0  # draft tokens proposed / kept
        if prefix_cache_tokens < 0:
            raise ValueError(f"prefix_cache_tokens must be >= 0, got {prefix_cache_tokens}")
        self.prefix_cache_tokens = prefix_cache_tokens  # 0: no reuse
        self._prefixes: OrderedDict[tuple[int, ...], list] = OrderedDict()  # prompt -> its layers' (k, v)
        self._weights_version: int | None = None
        self.prefilled = self.reused = 0  # prompt tokens run through the model / taken from the cache

    @classmethod
    def from_checkpoint(cls, path: str, **kw) -> LocalPolicy:
        from webrl.models.build import checkpoint_fingerprint, load_checkpoint
        from webrl.models.lora import merged_for_inference

        model, tok, cfg = load_checkpoint(path)
        model = merged_for_inference(model).to(default_device())  # LoRA merged: ~3.8x faster prefill on CPU
        kw.setdefault("autocast_bf16", cfg.autocast_bf16)
        kw.setdefault("bf16_weights", cfg.autocast_bf16)
        policy = cls(model, tok, name=str(path), **kw)
        policy.fingerprint = checkpoint_fingerprint(path)
        return policy

    def _autocast(self):
        return bf16_autocast(self.device, self.autocast_bf16)

    def encode(self, text: str) -> list[int]:
        return self.tokenizer(text, add_special_tokens=False)["input_ids"]

    def micro_batches(self, lengths: list[int]) -> list[list[int]]:
        """Indices grouped by similar length, each group within max_batch_tokens and max_batch."""
        order = sorted(range(len(lengths)), key=lambda i: lengths[i])
        batches: list[list[int]] = []
        cur: list[int] = []
        for i in order:
            longest = max([lengths[j] for j in cur] + [lengths[i]])
            if cur and (len(cur) + 1 > self.max_batch or longest * (len(cur) + 1) > self.max_batch_tokens):
                batches.append(cur)
                cur = []
            cur.append(i)
        if cur:
            batches.append(cur)
        return batches

    # --- generation ---------------------------------------------------------------------
    @torch.no_grad()
    def generate(self, prompts: list[str] | list[list[int]], params: SamplingParams | list[SamplingParams] | None = None) -> list[Generation]:
        """One response per prompt (text, or token ids); `params` may differ per prompt."""
        if not isinstance(params, list):
            params = [params or SamplingParams()] * len(prompts)
        if len(params) != len(prompts):
            raise ValueError(f"got {len(params)} SamplingParams for {len(prompts)} prompts")
        encoded = [self.encode(p) if isinstance(p, str) else list(p) for p in prompts]
        self._check_weights()
        out: list[Generation | None] = [None] * len(prompts)
        for batch in self.micro_batches([len(e) for e in encoded]):
            gens = self._generate_batch([encoded[i] for i in batch], [params[i] for i in batch])
            for i, g in zip(batch, gens, strict=True):
                out[i] = g
        return out  # type: ignore[return-value]

    def _forward(self, inputs, mask, pos, cache, keep: int = 1) -> torch.Tensor:
        """Float32 logits of the last `keep` positions on the CPU, (rows, V) for keep 1 else
        (rows, keep, V); `cache` grows in place."""
        self.forwards += 1
        # The kept positions as indices, not an int: transformers slices the hidden states with an
        # int (`[:, -keep:]`), a view whose batch stride keeps torch.matmul from folding it into
        # one matrix product, and the LM head then copies its 49k x 576 weight per row into a
        # batched product (measured: 55-95 ms a forward, against 5 with an index tensor's copy).
        T = inputs.shape[1]
        with self._autocast():
            out = self.model(
                input_ids=inputs, attention_mask=mask, position_ids=pos, use_cache=True,
                logits_to_keep=torch.arange(T - keep, T, device=self.device), **{self._cache_kw: cache},
            )  # fmt: skip
        logits = out.logits.float().cpu()
        return logits[:, -1] if keep == 1 else logits

    # --- the prefix cache ---------------------------------------------------------------------
    def _check_weights(self) -> None:
        """Forget the cached prefixes when any weight changed since they were computed."""
        version = sum(p._version for p in self.model.parameters())
        if version != self._weights_version:
            self._prefixes.clear()
            self._weights_version = version

    def _cached_prefix(self, prompt: list[int]) -> tuple[tuple[int, ...] | None, int]:
        """(key, n): the cached prompt sharing the longest beginning with `prompt`, and how many
        tokens of it to reuse (at least `min_prefix_tokens`, and one token short of the whole
        prompt, whose last position must run to give logits); (None, 0) when none does."""
        if not self.prefix_cache_tokens:
            return None, 0
        best, n, prompt_t = None, 0, tuple(prompt)
        for key in self._prefixes:
            c = shared_prefix(key, prompt_t)
            if c > n:
                best, n = key, c
        n = min(n, len(prompt) - 1)
        return (best, n) if n >= self.min_prefix_tokens else (None, 0)

    def _remember(self, prompt: list[int], layers: list, used: tuple[int, ...] | None) -> None:
        """Cache a prefilled prompt's keys and values (its own tensors, (1, heads, len, dim));
        the entry it started from is dropped (the new one shares what it shared), then the oldest
        entries until the budget holds."""
        if not self.min_prefix_tokens < len(prompt) <= self.prefix_cache_tokens:  # too short to serve, or too long
            return
        self._prefixes.pop(used, None)
        self._prefixes[tuple(prompt)] = layers
        while sum(len(k) for k in self._prefixes) > self.prefix_cache_tokens:
            self._prefixes.popitem(last=False)

    def _prefill_rows(self, prompts: list[list[int]], L: int):
        """Each prompt's prefill alone, from a cached prefix when one matches; their caches
        left-padded to L and stacked into one (the padded slots hold zeros that the attention
        mask hides). (cache, logits)."""
        from transformers import DynamicCache

        rows, logits = [], []
        for p in prompts:
            cache = DynamicCache()
            key, n = self._cached_prefix(p)
            for layer, (k, v) in enumerate(self._prefixes[key] if key else []):
                cache.update(k[:, :, :n], v[:, :, :n], layer)
            ids = torch.tensor([p[n:]], dtype=torch.long, device=self.device)
            pos = torch.arange(n, len(p), device=self.device)[None]
            logits.append(self._forward(ids, None, pos, cache))
            self.prefilled, self.reused = self.prefilled + len(p) - n, self.reused + n
            rows.append(layer_tensors(cache))
            self._remember(p, rows[-1], key)
        merged = DynamicCache()
        for layer in range(len(rows[0])):
            keys, values = [], []
            for p, row in zip(prompts, rows, strict=True):
                k, v = row[layer]
                pad = (0, 0, L - len(p), 0)  # left-pad the sequence dimension (-2)
                keys.append(torch.nn.functional.pad(k, pad))
                values.append(torch.nn.functional.pad(v, pad))
            merged.update(torch.cat(keys), torch.cat(values), layer)
        return merged, torch.cat(logits)

    def _generate_batch(self, prompts: list[list[int]], params: list[SamplingParams]) -> list[Generation]:
        from transformers import DynamicCache

        B, L = len(prompts), max(len(p) for p in prompts)
        ids = torch.full((B, L), self.pad_id, dtype=torch.long)
        mask = torch.zeros((B, L), dtype=torch.long)
        for b, p in enumerate(prompts):  # left padding: every row's last token is at L-1
            ids[b, L - len(p) :] = torch.tensor(p, dtype=torch.long)
            mask[b, L - len(p) :] = 1
        pos = (mask.cumsum(-1) - 1).clamp(min=0)  # (B, L)
        ids, mask, pos = ids.to(self.device), mask.to(self.device), pos.to(self.device)
        padding = B * L - sum(len(p) for p in prompts)
        reuse = self.prefill_rows and any(self._cached_prefix(p)[0] for p in prompts)  # (only rows store)
        if self.prefill_rows and (reuse or B > 1 and padding > self.row_overhead_tokens * B):
            cache, logits = self._prefill_rows(prompts, L)
        else:
            cache = DynamicCache()
            logits = self._forward(ids, mask, pos, cache)
            self.prefilled += B * L
            if self.prefill_rows:  # each row's own slice, for the prompts that follow this one
                for b, p in enumerate(prompts):
                    layers = [(k[b : b + 1, :, L - len(p) :].clone(), v[b : b + 1, :, L - len(p) :].clone())
                              for k, v in layer_tensors(cache)]  # fmt: skip
                    self._remember(p, layers, None)
        tokens: list[list[int]] = [[] for _ in range(B)]
        logps: list[list[float]] = [[] for _ in range(B)]
        finish = [""] * B
        texts = [""] * B

        def append(b: int, tok: int, logp: float) -> None:
            tokens[b].append(tok)
            logps[b].append(logp)
            finish[b], texts[b] = self._check_stop(tokens[b], tok, params[b])

        gens = [torch.Generator().manual_seed(p.seed % 2**64) if p.seed is not None else self.gen for p in params]
        alive = list(range(B))  # the original row of each row still being decoded
        while True:  # every round adds >= 1 token to each alive row, so max_new_tokens ends it
            logprobs = torch.log_softmax(logits, dim=-1)  # (rows, V): each row's next token
            for j, b in enumerate(alive):
                if not finish[b]:  # (a row can finish inside the last round's draft)
                    tok = _sample(logits[j], params[b].temperature, params[b].top_p, gens[b])
                    append(b, tok, float(logprobs[j, tok]))
            keep = [j for j, b in enumerate(alive) if not finish[b]]
            if not keep:
                break
            if len(keep) < len(alive):  # finished rows leave the batch (and the KV cache)
                idx = torch.tensor(keep, dtype=torch.long, device=self.device)
                cache.batch_select_indices(idx)
                mask, pos = mask[idx], pos[idx]
                alive = [alive[j] for j in keep]
            drafts = [self._draft(prompts[b], tokens[b], params[b]) for b in alive]
            K = max(len(d) for d in drafts)
            # this round's block: each row's new token, its draft, padding to the longest draft
            block = [[tokens[b][-1]] + d + [self.pad_id] * (K - len(d)) for b, d in zip(alive, drafts, strict=True)]
            seen = [[1] * (1 + len(d)) + [0] * (K - len(d)) for d in drafts]
            inputs = torch.tensor(block, dtype=torch.long, device=self.device)  # (rows, 1 + K)
            mask = torch.cat([mask, torch.tensor(seen, dtype=torch.long, device=self.device)], dim=1)
            block_pos = pos[:, -1:] + 1 + torch.arange(1 + K, device=self.device)  # (rows, 1 + K)
            out = self._forward(inputs, mask, block_pos, cache, keep=1 + K)
            if K == 0:
                logits, pos = out, block_pos
                continue
            nxt, last = [], []
            for j, (b, d) in enumerate(zip(alive, drafts, strict=True)):
                a = 0  # drafted tokens accepted: each must be what greedy decoding picks there
                while a < len(d) and not finish[b] and int(torch.argmax(out[j, a])) == d[a]:
                    append(b, d[a], float(torch.log_softmax(out[j, a], dim=-1)[d[a]]))
                    a += 1
                self.drafted, self.accepted = self.drafted + len(d), self.accepted + a
                mask[j, mask.shape[1] - K + a :] = 0  # rejected (and padding) slots: hidden from now on
                nxt.append(out[j, a])
                last.append(a)
            logits = torch.stack(nxt)
            pos = block_pos.gather(1, torch.tensor(last, device=self.device)[:, None])
        return [
            Generation(texts[b] if finish[b] else self._decode(tokens[b]), tokens[b], logps[b],
                       finish[b] or "length", len(prompts[b]))
            for b in range(B)
        ]  # fmt: skip

    def _draft(self, prompt: list[int], toks: list[int], p: SamplingParams) -> list[int]:
        """Prompt-lookup draft for a greedy row (none when sampling, or with no room left)."""
        room = p.max_new_tokens - len(toks) - 1  # the token after the draft is always produced
        if p.temperature > 0 or self.draft_tokens == 0 or room <= 0:
            return []
        return lookup_draft(prompt + toks, min(self.draft_tokens, room))

    def _decode(self, toks: list[int]) -> str:
        return self.tokenizer.decode([t for t in toks if t not in self.stop_ids], skip_special_tokens=False)

    def _check_stop(self, toks: list[int], tok: int, p: SamplingParams) -> tuple[str, str]:
        """(finish_reason or "", text so far)."""
        if tok in self.stop_ids:
            return "stop", self._decode(toks[:-1])
        text = self._decode(toks)
        for s in p.stop:
            if s and s in text:
                return "stop", text[: text.index(s)]
        if p.end_of_action:
            end = end_of_action(text)
            if end is not None:
                return "stop", text[:end]
        if len(toks) >= p.max_new_tokens:
            return "length", text
        return "", text

    # --- scoring --------------------------------------------------------------------------
    @torch.no_grad()
    def score(self, prompts: list[str] | list[list[int]], completions: list[str] | list[list[int]]) -> list[list[float]]:
        """Per-token log-probs of each completion given its prompt (each text, or token ids)."""
        if len(prompts) != len(completions):
            raise ValueError(f"got {len(completions)} completions for {len(prompts)} prompts")
        seqs = []
        for prompt, comp in zip(prompts, completions, strict=True):
            c = self.encode(comp) if isinstance(comp, str) else list(comp)
            seqs.append((self.encode(prompt) if isinstance(prompt, str) else list(prompt), c))
        out: list[list[float]] = [[] for _ in seqs]
        for batch in self.micro_batches([len(p) + len(c) for p, c in seqs]):
            rows = [seqs[i] for i in batch]
            input_ids, mask, labels = pack_right([p + c for p, c in rows], [len(p) for p, _ in rows], self.pad_id)
            input_ids, mask, labels = input_ids.to(self.device), mask.to(self.device), labels.to(self.device)
            with self._autocast():
                lp = selected_logprobs(self.model, input_ids, mask, labels)
            k = 0
            for i, (_, c) in zip(batch, rows, strict=True):
                out[i] = lp[k : k + len(c)].tolist()
                k += len(c)
        return out


def pack_right(seqs: list[list[int]], prompt_lens: list[int], pad_id: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Right-padded (input_ids, attention_mask, labels); labels are IGNORE over prompts and padding."""
    B, T = len(seqs), max(len(s) for s in seqs)
    ids = torch.full((B, T), pad_id, dtype=torch.long)
    mask = torch.zeros((B, T), dtype=torch.long)
    labels = torch.full((B, T), IGNORE, dtype=torch.long)
    for b, (s, n) in enumerate(zip(seqs, prompt_lens, strict=True)):
        ids[b, : len(s)] = torch.tensor(s, dtype=torch.long)
        mask[b, : len(s)] = 1
        labels[b, n : len(s)] = ids[b, n : len(s)]
    return ids, mask, labels


def layer_tensors(cache) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """(keys, values) of each layer of a transformers KV cache: `cache.layers` in 5.x,
    `key_cache` / `value_cache` lists in 4.x."""
    if hasattr(cache, "layers"):
        return [(layer.keys, layer.values) for layer in cache.layers]
    return list(zip(cache.key_cache, cache.value_cache, strict=True))


def shared_prefix(a: tuple, b: tuple) -> int:
    """How many leading items two tuples share (a binary search over slice comparisons, which run
    in C: a few microseconds for prompts of a thousand tokens)."""
    lo, hi = 0, min(len(a), len(b))  # a[:lo] == b[:lo] holds throughout
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def lookup_draft(context: list[int], k: int, max_ngram: int = 3) -> list[int]:
    """Up to `k` tokens that followed the latest earlier occurrence of the context's last n-gram,
    trying n = max_ngram down to 1; [] when none recurs (prompt-lookup decoding's proposal)."""
    n_ctx = len(context)
    for n in range(min(max_ngram, n_ctx - 1), 0, -1):
        tail = context[n_ctx - n :]
        for i in range(n_ctx - n - 1, -1, -1):  # latest start first; the occurrence must end before the tail
            if context[i + n - 1] == tail[-1] and context[i : i + n] == tail:
                return context[i + n : i + n + k]
    return []

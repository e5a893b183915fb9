"""`OpenAIPolicy`: the text-policy interface over any OpenAI-compatible `/v1/completions`
endpoint (vLLM, SGLang, `webrl serve-model`), with the official `openai` client.

    policy = OpenAIPolicy("http://127.0.0.1:8000/v1")          # model id and tokenizer from /v1/models
    gens = policy.generate(prompts, SamplingParams(temperature=0))

Prompts are built client-side (agent/prompt.py needs the tokenizer for its token
budget), so the tokenizer comes from `tokenizer=`, or else from the served model
id when that is a local directory (our server and vLLM report the model path).
All prompts of one `generate` call that sample alike go in one request (a list prompt),
so the server sees the same batch a `LocalPolicy` would; prompts that sample differently
(another temperature, a seed each: `step_sampling`) go as concurrent requests, which the
server batches again. With our server, two extensions
are used: `stop_at_action` (stop once an action line is complete) and
`return_tokens_as_token_ids` (vLLM's convention, "token_id:123"). Elsewhere the
text is cut after its first action line client-side.

`score` (teacher forcing, as `LocalPolicy.score`) sends prompt + completion as token ids
with `echo=true, logprobs=1, max_tokens=1` and reads the echoed prompt log-probs: the
convention of vLLM and of our server; it needs the tokenizer.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from webrl.agent.local_policy import Generation, SamplingParams
from webrl.agent.prompt import trim_response


class OpenAIPolicy:
    def __init__(
        self,
        base_url: str,
        model: str | None = None,
        tokenizer=None,
        api_key: str = "EMPTY",
        timeout: float = 1800.0,
        max_prompts_per_request: int = 64,
        max_concurrent: int = 64,
    ):
        from openai import APIConnectionError, APITimeoutError, OpenAI

        self.client = OpenAI(base_url=base_url, api_key=api_key, timeout=timeout, max_retries=0)
        try:
            served = self.client.models.list().data
        except (APIConnectionError, APITimeoutError) as e:  # an OSError: the CLI prints it as one line
            raise ConnectionError(f"cannot reach {base_url} ({e}); start the server (e.g. `webrl serve-model "
                                  "runs/sft/final --port 8000`) or check the URL") from e  # fmt: skip
        if model is None:
            if not served:
                raise ValueError(f"{base_url} serves no models")
            model = served[0].id
        self.model = model
        self.ours = any(m.id == model and getattr(m, "owned_by", "") == "webrl" for m in served)
        self.name = f"{base_url}#{model}"
        self.max_prompts = max_prompts_per_request
        self.max_concurrent = max_concurrent  # requests in flight at once for one generate call
        self.tokenizer = tokenizer if tokenizer is not None else _tokenizer_for(model)

    def generate(self, prompts: list[str], params: SamplingParams | list[SamplingParams] | None = None) -> list[Generation]:
        if not isinstance(params, list):
            params = [params or SamplingParams()] * len(prompts)
        out: list[Generation | None] = [None] * len(prompts)
        groups: dict[SamplingParams, list[int]] = {}
        for i, p in enumerate(params):
            groups.setdefault(p, []).append(i)
        requests = [(p, idx[k : k + self.max_prompts]) for p, idx in groups.items()
                    for k in range(0, len(idx), self.max_prompts)]  # fmt: skip

        def ask(request: tuple[SamplingParams, list[int]]) -> tuple[list[int], list[Generation]]:
            p, chunk = request
            return chunk, self._request([prompts[i] for i in chunk], p)

        if len(requests) <= 1:
            answers = [ask(r) for r in requests]
        else:  # rows that sample differently (e.g. a seed each) go as concurrent requests: the server batches them
            with ThreadPoolExecutor(max_workers=min(len(requests), self.max_concurrent)) as pool:
                answers = list(pool.map(ask, requests))
        for chunk, gens in answers:
            for i, g in zip(chunk, gens, strict=True):
                out[i] = g
        return out  # type: ignore[return-value]

    def encode(self, text: str) -> list[int]:
        if self.tokenizer is None:
            raise ValueError(f"{self.name}: no tokenizer (pass tokenizer=)")
        return self.tokenizer(text, add_special_tokens=False)["input_ids"]

    def score(self, prompts: list[str] | list[list[int]], completions: list[str] | list[list[int]]) -> list[list[float]]:
        """Per-token log-probs of each completion given its prompt (each text, or token ids),
        tokenized here as `LocalPolicy.score` does (prompt and completion apart)."""
        if len(prompts) != len(completions):
            raise ValueError(f"got {len(completions)} completions for {len(prompts)} prompts")
        if self.tokenizer is None:
            raise ValueError(f"{self.name}: scoring needs the model's tokenizer (pass tokenizer=)")

        pairs = [(self.encode(p) if isinstance(p, str) else list(p), self.encode(c) if isinstance(c, str) else list(c)) for p, c in zip(prompts, completions, strict=True)]
        out: list[list[float]] = []
        for k in range(0, len(pairs), self.max_prompts):
            chunk = pairs[k : k + self.max_prompts]
            resp = self.client.completions.create(
                model=self.model, prompt=[p + c for p, c in chunk], echo=True, logprobs=1, max_tokens=1,
                temperature=0.0, n=1,
            )  # fmt: skip
            choices = sorted(resp.choices, key=lambda c: c.index)
            if len(choices) != len(chunk):
                raise RuntimeError(f"server returned {len(choices)} choices for {len(chunk)} prompts")
            for (p, c), choice in zip(chunk, choices, strict=True):
                values = list(choice.logprobs.token_logprobs or []) if choice.logprobs else []
                if len(values) < len(p) + len(c):
                    raise RuntimeError(f"{self.name} echoed {len(values)} log-probs for a {len(p) + len(c)}-token "
                                       "prompt: it does not support echo with logprobs")  # fmt: skip
                out.append([float(v) for v in values[len(p) : len(p) + len(c)]])
        return out

    def _request(self, prompts: list[str], p: SamplingParams) -> list[Generation]:
        extra = {"stop_at_action": p.end_of_action, "return_tokens_as_token_ids": True} if self.ours else None
        resp = self.client.completions.create(
            model=self.model, prompt=prompts, max_tokens=p.max_new_tokens, temperature=p.temperature,
            top_p=p.top_p, stop=list(p.stop) or None, logprobs=1, n=1, extra_body=extra, seed=p.seed,
        )  # fmt: skip
        choices = sorted(resp.choices, key=lambda c: c.index)
        if len(choices) != len(prompts):
            raise RuntimeError(f"server returned {len(choices)} choices for {len(prompts)} prompts")
        gens = []
        for prompt, c in zip(prompts, choices, strict=True):
            lp = c.logprobs
            tokens = list(lp.tokens or []) if lp else []
            ids = [int(t.split(":", 1)[1]) for t in tokens if t.startswith("token_id:")]
            text = c.text if (self.ours or not p.end_of_action) else trim_response(c.text)
            n_prompt = len(self.tokenizer(prompt, add_special_tokens=False)["input_ids"]) if self.tokenizer else 0
            gens.append(Generation(text, ids, [float(x) for x in (lp.token_logprobs or [])] if lp else [],
                                   c.finish_reason or "stop", n_prompt))  # fmt: skip
        return gens


def _tokenizer_for(model: str):
    """The tokenizer of a served model id that is a local checkpoint / model directory."""
    from pathlib import Path

    from webrl.models.build import build_tokenizer
    from webrl.models.config import CONFIG_FILE, ModelConfig

    p = Path(model)
    if (p / CONFIG_FILE).exists():
        return build_tokenizer(ModelConfig.load(p), p)
    if p.exists():
        return build_tokenizer(ModelConfig(base=str(p), lora=None))
    raise ValueError(
        f"cannot find a tokenizer for served model {model!r}: pass --tokenizer PATH (a local copy of the model)"
    )

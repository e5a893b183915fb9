"""ORM scorers: a local LM judge with a LoRA adapter, and a judge over any
OpenAI-compatible endpoint. Both take trajectory dicts (intent, responses,
final_obs) in batches and return P(success); reward = 1 iff P > 0.5.

    orm = LocalORM.from_checkpoint("runs/orm/final")
    p = orm.prob_success(trajectories)           # batched, length-bucketed
    judge = JudgeORM("http://127.0.0.1:8000/v1")  # e.g. `webrl serve-model` or vLLM
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import torch

from webrl.models.device import bf16_autocast, default_device, module_device
from webrl.orm.prompt import ORMPromptConfig, answer_token_ids, orm_prompt

ORM_PROMPT_FILE = "orm_prompt_config.json"


def rewards(probs: list[float], threshold: float = 0.5) -> list[float]:
    """reward = 1 iff P(yes) > `threshold` (0.5: iff P(yes) > P(no), the paper's rule)."""
    return [1.0 if p > threshold else 0.0 for p in probs]


def sorted_batches(lengths: list[int], max_batch_tokens: int) -> list[list[int]]:
    """Indices in batches of similar length: sorted by length, each batch grown while its padded
    size (count x its longest) stays within `max_batch_tokens` (an over-long item goes alone)."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    batches: list[list[int]] = []
    for i in order:
        if batches and lengths[i] * (len(batches[-1]) + 1) <= max_batch_tokens:
            batches[-1].append(i)
        else:
            batches.append([i])
    return batches


class LocalORM:
    """P(success) = softmax(logit_yes, logit_no)[yes] at the answer position."""

    def __init__(self, model, tokenizer, prompt: ORMPromptConfig, max_batch_tokens: int = 8192, autocast_bf16: bool = False):
        self.model = model.eval()
        self.device = module_device(model)
        self.tokenizer = tokenizer
        self.prompt = prompt
        self.max_batch_tokens = max_batch_tokens
        self.autocast_bf16 = autocast_bf16
        self.yes_id, self.no_id = answer_token_ids(tokenizer)
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0

    @classmethod
    def from_checkpoint(cls, path: str | Path, **kw) -> LocalORM:
        from webrl.models.build import load_checkpoint
        from webrl.models.lora import merged_for_inference

        model, tok, cfg = load_checkpoint(path)
        model = merged_for_inference(model).to(default_device())
        if cfg.autocast_bf16:  # inference only: bf16 weights, no per-op casts
            model = model.to(torch.bfloat16)
        kw.setdefault("autocast_bf16", cfg.autocast_bf16)
        return cls(model, tok, load_orm_prompt_config(path), **kw)

    def prompts(self, trajs: list[dict]) -> list[str]:
        return [orm_prompt(self.tokenizer, t["intent"], t["responses"], t["final_obs"], self.prompt) for t in trajs]

    @torch.no_grad()
    def prob_success(self, trajs: list[dict]) -> list[float]:
        from webrl.models.scoring import decoder_and_head, pad_right

        ids = [self.tokenizer(p, add_special_tokens=False)["input_ids"] for p in self.prompts(trajs)]
        out = [0.0] * len(ids)
        decoder, head = decoder_and_head(self.model)
        for batch in sorted_batches([len(x) for x in ids], self.max_batch_tokens):
            x, mask = pad_right([ids[i] for i in batch], self.pad_id)
            x, mask = x.to(self.device), mask.to(self.device)
            with bf16_autocast(self.device, self.autocast_bf16):
                hidden = decoder(input_ids=x, attention_mask=mask).last_hidden_state
                last = hidden[torch.arange(len(batch)), mask.sum(1) - 1]
                logits = head(last).float()[:, [self.yes_id, self.no_id]]
            p = torch.softmax(logits, dim=-1)[:, 0].cpu()
            for r, i in enumerate(batch):
                out[i] = float(p[r])
        return out


class JudgeORM:
    """Any OpenAI-compatible `/v1/completions` endpoint as the judge: the same prompt, greedy,
    a few tokens; "yes"/"no" read from the text, P from the answer token's log-prob."""

    def __init__(self, base_url: str, model: str | None = None, tokenizer=None, prompt: ORMPromptConfig | None = None,
                 api_key: str = "EMPTY", max_prompts_per_request: int = 32):  # fmt: skip
        from webrl.agent.openai_policy import OpenAIPolicy

        self.policy = OpenAIPolicy(base_url, model=model, tokenizer=tokenizer, api_key=api_key,
                                   max_prompts_per_request=max_prompts_per_request)  # fmt: skip
        self.tokenizer = self.policy.tokenizer
        self.prompt = prompt or ORMPromptConfig()
        self.unparsed = 0  # answers that were neither yes nor no (counted as "no")

    def prob_success(self, trajs: list[dict]) -> list[float]:
        from webrl.agent.local_policy import SamplingParams

        prompts = [orm_prompt(self.tokenizer, t["intent"], t["responses"], t["final_obs"], self.prompt) for t in trajs]
        params = SamplingParams(temperature=0.0, max_new_tokens=3, end_of_action=False)
        out = []
        for g in self.policy.generate(prompts, params):
            word = g.text.strip().lower()
            conf = math.exp(g.logprobs[0]) if g.logprobs else 1.0
            if word.startswith(("yes", "y")):
                out.append(conf)
            elif word.startswith(("no", "n")):
                out.append(1.0 - conf)
            else:
                self.unparsed += 1
                out.append(0.0)
        return out


def load_orm(path: str | Path, **kw):
    """The ORM saved in `path`: an encoder ORM (orm/encoder.py) or the LM judge (LocalORM)."""
    from webrl.orm.encoder import ENCODER_FILE, EncoderORM

    if (Path(path) / ENCODER_FILE).is_file():
        return EncoderORM.from_checkpoint(path, **kw)
    return LocalORM.from_checkpoint(path, **kw)


def save_orm_prompt_config(cfg: ORMPromptConfig, directory: str | Path) -> None:
    from dataclasses import asdict

    Path(directory).mkdir(parents=True, exist_ok=True)
    (Path(directory) / ORM_PROMPT_FILE).write_text(json.dumps(asdict(cfg), indent=1) + "\n")


def load_orm_prompt_config(directory: str | Path) -> ORMPromptConfig:
    f = Path(directory) / ORM_PROMPT_FILE
    if not f.is_file():
        return ORMPromptConfig()
    data = json.loads(f.read_text())
    data.setdefault("layout", "paper")  # saved before the field existed: trained on the paper's order
    return ORMPromptConfig(**data)

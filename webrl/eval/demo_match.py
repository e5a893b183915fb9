"""Does an actor reproduce its demonstrations? Greedy decoding on every demonstration
step's own prompt (the oracle's history, not the actor's), compared with the
demonstrated response, per step index and per family.

It separates "not learnt" from "drifts off the demonstrated states": an actor that
matches its training steps but fails the same tasks in the env is meeting states
the demonstrations never showed; one that does not match them has not learnt them.
Measured with it (docs/results.md): on 60 shop train tasks after 3 epochs of SFT
the actor matched 239/331 of its own training steps, and 15/56 at step index 2;
repeating the intent after the page (PromptConfig.repeat_intent) made that 288/331
and 41/56.

`fit_report` scores the demonstrated responses themselves (teacher forcing, for a
policy with `score`): the token-averaged NLL that SFT logs can be tiny while whole
responses stay unlikely, because nearly every token of a response is a copy (the
element's label and id, the action syntax) and the loss sits on the one or two tokens
that decide the action. It reports the mean NLL per token and per response, the share
of responses with P > 0.5, the share of each response's NLL its worst token carries,
and the worst tokens themselves.
"""

from __future__ import annotations

import math
from collections import defaultdict

from webrl.agent.prompt import PromptConfig, completion_text, trim_response
from webrl.rl.demos import demo_steps


def _rate(hits: list[bool]) -> dict:
    return {"match": round(sum(hits) / len(hits), 4), "steps": len(hits)}


def match_report(rows: list[dict], responses: list[str], examples: int = 20) -> dict:
    """Match rates of `responses` (one per row of `demo_rows`) against the rows' targets."""
    if len(rows) != len(responses):
        raise ValueError(f"got {len(responses)} responses for {len(rows)} demonstration steps")
    hits = [trim_response(r) == row["target"].strip() for row, r in zip(rows, responses, strict=True)]
    by_step: dict[int, list[bool]] = defaultdict(list)
    by_family: dict[str, list[bool]] = defaultdict(list)
    for row, hit in zip(rows, hits, strict=True):
        by_step[row["step"]].append(hit)
        by_family[row["family"]].append(hit)
    misses = [{**{k: row[k] for k in ("task_id", "family", "step", "target")}, "response": trim_response(r)}
              for row, r, hit in zip(rows, responses, hits, strict=True) if not hit]  # fmt: skip
    return {
        "overall": _rate(hits),
        "per_step": {str(k): _rate(v) for k, v in sorted(by_step.items())},
        "per_family": {k: _rate(v) for k, v in sorted(by_family.items())},
        "mismatches": misses[:examples],
    }


def demo_rows(demos: list[dict], tokenizer, prompt: PromptConfig) -> list[dict]:
    return [{"task_id": d["task_id"], "family": d["family"], "step": i, "prompt": text, "target": response}
            for d, i, text, response in demo_steps(demos, tokenizer, prompt)]  # fmt: skip


def run_demo_match(policy, demos: list[dict], prompt: PromptConfig, chunk: int = 32, progress: bool = True) -> dict:
    """Greedy responses of `policy` on every demonstration step, scored by `match_report`."""
    from tqdm import tqdm

    from webrl.agent.local_policy import SamplingParams

    rows = demo_rows(demos, policy.tokenizer, prompt)
    texts: list[str] = []
    with tqdm(total=len(rows), desc="demo steps", unit="step", disable=not progress) as bar:
        for k in range(0, len(rows), chunk):
            gens = policy.generate([r["prompt"] for r in rows[k : k + chunk]], SamplingParams(temperature=0.0))
            texts += [g.text for g in gens]
            bar.update(len(gens))
    return match_report(rows, texts)


def fit_summary(rows: list[dict], logprobs: list[list[float]], tokens: list[list[str]], worst: int = 10) -> dict:
    """Teacher-forced fit of the rows' targets from per-token log-probs (see module docstring)."""
    if not len(rows) == len(logprobs) == len(tokens):
        raise ValueError(f"got {len(logprobs)} scored responses for {len(rows)} demonstration steps")
    seq = [-sum(lp) for lp in logprobs]
    n_tok = sum(len(lp) for lp in logprobs)
    shares = [max(-x for x in lp) / s for lp, s in zip(logprobs, seq, strict=True) if lp and s > 0]
    hard = []
    for row, lp, toks in zip(rows, logprobs, tokens, strict=True):
        if lp:
            j = min(range(len(lp)), key=lambda k: lp[k])
            hard.append({"task_id": row["task_id"], "family": row["family"], "step": row["step"],
                         "token": toks[j], "nll": round(-lp[j], 3), "response_nll": round(-sum(lp), 3)})  # fmt: skip
    hard.sort(key=lambda h: -h["nll"])
    return {
        "steps": len(rows),
        "mean_token_nll": round(sum(seq) / max(n_tok, 1), 4),
        "mean_response_nll": round(sum(seq) / max(len(rows), 1), 4),
        "p_response_over_half": round(sum(math.exp(-s) > 0.5 for s in seq) / max(len(rows), 1), 4),
        "worst_token_share": round(sum(shares) / len(shares), 4) if shares else None,
        "worst_tokens": hard[:worst],
    }


def fit_report(policy, demos: list[dict], prompt: PromptConfig, chunk: int = 32, progress: bool = True) -> dict:
    """`fit_summary` of every demonstration step, scored by `policy.score` in chunks."""
    from tqdm import tqdm

    rows = demo_rows(demos, policy.tokenizer, prompt)
    comps = [completion_text(policy.tokenizer, r["target"], prompt) for r in rows]
    logprobs: list[list[float]] = []
    with tqdm(total=len(rows), desc="scoring demo steps", unit="step", disable=not progress) as bar:
        for k in range(0, len(rows), chunk):
            logprobs += policy.score([r["prompt"] for r in rows[k : k + chunk]], comps[k : k + chunk])
            bar.update(min(chunk, len(rows) - k))
    tokens = [policy.tokenizer.convert_ids_to_tokens(policy.encode(c)) for c in comps]
    return fit_summary(rows, logprobs, tokens)

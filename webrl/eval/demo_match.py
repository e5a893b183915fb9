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
"""

from __future__ import annotations

from collections import defaultdict

from webrl.agent.prompt import PromptConfig, trim_response
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

"""Error taxonomy of failed episodes (the WebRL paper's four classes) and success by
oracle step-count bucket. Pure functions over episode records.

Rules, applied to each failed episode in this order (first match wins):

  other             episodes ended by an agent crash or a backend failure (checked
                    first: their steps say nothing about the agent's skill).
  fail_to_attempt   "fails to make a reasonable attempt": no step ever ran without an
                    error (every action invalid or impossible), or the agent exited at
                    its very first step with a wrong answer.
  fail_to_recover   "fails to recover": an action failed and the agent then sent the
                    same action again at once (it repeats a failing action), at least once.
  stuck_midway      "gets stuck midway": the episode was cut off (max steps, or the env's
                    no-progress rules: 5 repeats in a row, or the same action on the
                    same page a 3rd time, on by default) without the agent exiting: it looped
                    or ran out of steps.
  wrong_page        "stops at the wrong page": the agent exited (after its first step)
                    but the evaluator says the task is not done: wrong page, wrong state,
                    or wrong answer.
"""

from __future__ import annotations

from collections import Counter, defaultdict

from webrl.rollout.oracle import STEP_BUCKETS, step_bucket

CLASSES = ("fail_to_attempt", "fail_to_recover", "stuck_midway", "wrong_page", "other")


def classify(rec: dict) -> str | None:
    """The error class of one episode record, or None if it succeeded."""
    if rec["success"]:
        return None
    if rec.get("agent_error") or rec.get("backend_error"):
        return "other"
    steps = rec.get("steps") or []
    errors = [s.get("error") is not None for s in steps]
    if not steps or all(errors) or (rec.get("terminated") and len(steps) == 1):
        return "fail_to_attempt"
    for prev, cur in zip(steps, steps[1:], strict=False):
        if prev.get("error") is not None and cur.get("action") is not None and cur.get("action") == prev.get("action"):
            return "fail_to_recover"
    if not rec.get("terminated"):
        return "stuck_midway"
    return "wrong_page"


def taxonomy(records: list[dict]) -> dict:
    """Counts and shares of each class among failed episodes, overall and per site."""
    failed = [r for r in records if not r["success"]]
    counts = Counter(classify(r) for r in failed)
    per_site: dict[str, Counter] = defaultdict(Counter)
    for r in failed:
        per_site[r["site"]][classify(r)] += 1
    n = len(failed)
    return {
        "failed": n,
        "counts": {c: counts.get(c, 0) for c in CLASSES},
        "shares": {c: round(counts.get(c, 0) / n, 3) if n else 0.0 for c in CLASSES},
        "per_site": {s: {c: per_site[s].get(c, 0) for c in CLASSES} for s in sorted(per_site)},
    }


def by_step_bucket(records: list[dict], difficulty: dict[str, int] | None = None) -> dict:
    """Success rate per oracle step-count bucket (1-3, 4-9, 10+). Difficulty comes from the
    record's `difficulty` field, or from `difficulty[str(task_id)]`."""
    groups: dict[str, list[dict]] = {step_bucket(lo): [] for lo, _ in STEP_BUCKETS}
    for r in records:
        d = r.get("difficulty")
        if d is None and difficulty is not None:
            d = difficulty.get(str(r["task_id"]))
        if d is None:
            continue
        groups.setdefault(step_bucket(int(d)), []).append(r)
    return {
        b: {"success_rate": round(sum(r["success"] for r in rs) / len(rs), 3) if rs else 0.0, "episodes": len(rs)}
        for b, rs in groups.items()
    }


def format_taxonomy(tax: dict) -> str:
    lines = [f"failed episodes: {tax['failed']}"]
    for c in CLASSES:
        lines.append(f"  {c:<16} {tax['counts'][c]:>4}  {tax['shares'][c] * 100:5.1f}%")
    return "\n".join(lines)

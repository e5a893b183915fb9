"""Oracle runs over task lists: solvability checks and measured difficulty."""

from __future__ import annotations

import dataclasses

from webrl.agent.policies import OracleAgent
from webrl.env.web_env import WebEnv
from webrl.rollout.runner import run_episode
from webrl.tasks.schema import Task


class UnsolvedTask(RuntimeError):
    """The oracle failed a task: a bug in the site, the family or its oracle."""


def with_measured_difficulty(tasks: list[Task], env: WebEnv) -> list[Task]:
    """Copies of `tasks` whose `difficulty` is the oracle's step count.

    Raises UnsolvedTask if the oracle does not solve one, so no split is ever
    written with a task the oracle cannot do.
    """
    out = []
    for task in tasks:
        rec = run_episode(env, OracleAgent(), task, keep_obs=False)
        if not rec["success"]:
            raise UnsolvedTask(f"oracle failed task {task.task_id} ({task.family}): {task.intent}")
        out.append(dataclasses.replace(task, difficulty=rec["n_steps"]))
    return out


STEP_BUCKETS = ((1, 3), (4, 9), (10, 10**6))


def step_bucket(steps: int) -> str:
    for lo, hi in STEP_BUCKETS:
        if lo <= steps <= hi:
            return f"{lo}-{hi}" if hi < 10**6 else f"{lo}+"
    return "0"


def split_stats(tasks: list[Task]) -> dict:
    """Counts per site, per eval type and per oracle step-count bucket."""
    per_site: dict[str, int] = {}
    per_eval: dict[str, int] = {}
    per_bucket: dict[str, int] = {step_bucket(lo): 0 for lo, _ in STEP_BUCKETS}
    for t in tasks:
        per_site[t.site] = per_site.get(t.site, 0) + 1
        for kind in t.eval["eval_types"]:
            per_eval[kind] = per_eval.get(kind, 0) + 1
        per_bucket[step_bucket(t.difficulty)] += 1
    infeasible = sum(1 for t in tasks if is_infeasible(t))
    return {"tasks": len(tasks), "per_site": per_site, "per_eval_type": per_eval,
            "per_step_bucket": per_bucket, "infeasible": infeasible}  # fmt: skip


def is_infeasible(task: Task) -> bool:
    """Tasks whose reference answer is "N/A" (WebArena's unachievable tasks)."""
    refs = (task.eval.get("reference_answers") or {}).values()
    flat = [x for v in refs for x in (v if isinstance(v, list) else [v])]
    return bool(flat) and all(str(x).strip().upper() == "N/A" for x in flat)

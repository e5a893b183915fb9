"""Replay recorded episodes under other env rules (`webrl bench replay`).

The env is deterministic and an episode record keeps every response the agent
sent, so feeding those responses to a fresh `WebEnv` reproduces the episode up
to the point where the new rules end it (a stricter step cap or no-progress
rule can only end it earlier). What changes is measured exactly, without a
model: the steps a rule saves and the outcomes it flips (an episode cut before
the agent finished, or before it undid a finished task).
"""

from __future__ import annotations

from webrl.env.web_env import EnvConfig, WebEnv
from webrl.tasks.schema import Task


def replay_episode(env: WebEnv, task: Task, responses: list[str]) -> dict:
    """The recorded responses through `env` until it ends the episode (or they run out)."""
    env.reset(options={"task": task})
    steps, reward, ended = 0, 0.0, False
    for response in responses:
        _, reward, terminated, truncated, _ = env.step(response)
        steps += 1
        if terminated or truncated:
            ended = True
            break
    if not ended:  # the recording was cut by a rule these replay rules lack: score it as the env scores a cut
        reward = env.score(None)
    return {"n_steps": steps, "reward": reward, "success": reward >= 1.0}


def replay_records(records: list[dict], tasks: dict, config: EnvConfig) -> dict:
    """Steps and outcomes of `records` (eval/rollout episodes) replayed under `config`; `tasks`
    maps task ids to Tasks (episodes of other tasks, or void ones, are skipped and counted)."""
    env = WebEnv(config)
    before = after = skipped = 0
    changed = []
    succ_before = succ_after = 0
    for rec in records:
        if rec.get("backend_error") or not rec.get("steps") or rec["task_id"] not in tasks:
            skipped += 1
            continue
        new = replay_episode(env, tasks[rec["task_id"]], [s["response"] for s in rec["steps"]])
        before += rec["n_steps"]
        after += new["n_steps"]
        succ_before += bool(rec["success"])
        succ_after += new["success"]
        if new["success"] != bool(rec["success"]):
            changed.append({"task_id": rec["task_id"], "recorded": bool(rec["success"]), "replayed": new["success"]})
    env.close()
    return {
        "episodes": len(records) - skipped, "skipped": skipped, "steps_recorded": before, "steps_replayed": after,
        "steps_saved_share": round(1 - after / max(1, before), 4),
        "success_recorded": succ_before, "success_replayed": succ_after,
        "outcomes_changed": changed,
        "config": {"max_steps": config.max_steps, "max_repeats": config.max_repeats, "max_revisits": config.max_revisits},
    }  # fmt: skip

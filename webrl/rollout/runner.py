"""Run an agent over tasks; one JSONL line per episode, resumable.

Episode record (one JSON object per line of `episodes.jsonl`):
  task_id, family, site, intent, reward, success, steps (list of
  {obs, response, action, error, url}), answer, n_steps, terminated,
  truncated, agent_error, backend_error, seconds, final_obs (the page after the
  last step, for the ORM). A step also has `screenshot`
  (a PNG path) when the backend saves them. `backend_error` marks an episode the
  browser spoiled (crash, hang): not the agent's failure; the runner retries it
  once and the summary leaves such episodes out of the success rates.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from tqdm import tqdm

from webrl.agent.policies import Agent
from webrl.env.backend import BackendError
from webrl.env.web_env import EnvConfig, WebEnv
from webrl.files import read_text_or_gz, write_json_atomic, write_jsonl_atomic
from webrl.rollout.summary import format_table, summarize
from webrl.tasks.schema import Task

RESUME_KEYS = ("policy", "fingerprint", "prompt", "sampling", "env")  # what an episode's outcome depends on


def _defaults() -> dict[str, dict]:
    """Each settings group's defaults, as a config.json holds them."""
    from webrl.agent.local_policy import SamplingParams  # (torch: only when an LLM eval resumes)
    from webrl.agent.prompt import PromptConfig

    return {"prompt": PromptConfig().__dict__, "sampling": json.loads(json.dumps(SamplingParams().__dict__, default=list)),
            "env": EnvConfig().__dict__}  # fmt: skip


def _same(key: str, old, new) -> bool:
    """Settings equal, a setting that a later version of the code added counting as equal when it
    is at its default (the old run had that behaviour): so an upgrade does not orphan resumable evals."""
    if old == new:
        return True
    if key == "fingerprint" and None in (old, new):  # unknown on one side: no verdict
        return True
    if not (isinstance(old, dict) and isinstance(new, dict)) or set(old) - set(new):
        return False
    defaults = _defaults().get(key, {})
    return all(old[k] == new[k] if k in old else k in defaults and new[k] == defaults[k] for k in new)


def check_resume(saved: Path, config: dict, keys: tuple[str, ...] = RESUME_KEYS) -> None:
    """Refuse to resume an eval whose finished episodes came from another agent or settings (e.g. the
    checkpoint at the same path was retrained): a ValueError naming the fields (of `keys`) that differ."""
    if not saved.exists():
        return
    old = json.loads(saved.read_text())
    diff = [k for k in keys if k in old and not _same(k, old[k], config.get(k))]
    if diff:
        raise ValueError(f"{saved.parent}: its episodes were run with another {', '.join(diff)} (e.g. a "
                         "retrained checkpoint at the same path); delete that folder to evaluate again, or "
                         "evaluate into another --out")  # fmt: skip


SCRIPTED_RESUME_KEYS = ("agent", "seed", "backend", "env")  # a scripted agent's episodes depend on these


def run_episode(env: WebEnv, agent: Agent, task: Task, keep_obs: bool = True) -> dict:
    t0 = time.perf_counter()
    steps: list[dict] = []
    reward, terminated, truncated, agent_error, answer = 0.0, False, False, None, None
    backend_error = None
    try:
        obs, info = env.reset(options={"task": task})
    except BackendError as e:
        backend_error = str(e)
    else:
        agent.reset(task)
    while backend_error is None:
        try:
            response = agent.act(obs, info)
        except Exception as e:  # an agent bug ends its episode, not the run
            agent_error = f"{type(e).__name__}: {e}"
            reward = 0.0
            break
        step = {"obs": obs if keep_obs else None, "response": response}
        if info.get("screenshot"):
            step["screenshot"] = info["screenshot"]
        obs, reward, terminated, truncated, info = env.step(response)
        step.update(action=info["action_text"], error=info["action_error"], url=info["url"])
        steps.append(step)
        backend_error = info.get("backend_error")
        if terminated or truncated:
            answer = info.get("answer")
            break
    return {
        "task_id": task.task_id,
        "family": task.family,
        "site": task.site,
        "intent": task.intent,
        "reward": reward,
        "success": reward >= 1.0,
        "answer": answer,
        "n_steps": len(steps),
        "terminated": terminated,
        "truncated": truncated,
        "agent_error": agent_error,
        "backend_error": backend_error,
        "seconds": round(time.perf_counter() - t0, 4),
        "steps": steps,
        "final_obs": obs if keep_obs and backend_error is None else None,
    }


def read_episodes(path: Path) -> list[dict]:
    """The episodes of an episodes.jsonl (or of its archived `.gz`), up to a torn line."""
    text = read_text_or_gz(path)
    if text is None:
        return []
    out = []
    for i, line in enumerate(text.splitlines(), 1):
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            break  # a torn last line from a crash: rerun that episode
        if not isinstance(row, dict) or "task_id" not in row:
            raise ValueError(f"{path}: line {i} is not an episode (a JSON object with a task_id); this file was "
                             "not written by an eval: use another --out")  # fmt: skip
        out.append(row)
    return out


def run_eval(
    tasks: Iterable[Task],
    make_agent: Callable[[], Agent],
    env: WebEnv,
    out_dir: Path | None = None,
    progress: bool = True,
    keep_obs: bool = True,
    extra_config: dict | None = None,
) -> tuple[dict, list[dict]]:
    """Run every task once; with `out_dir`, append to episodes.jsonl and skip tasks
    already there (resume), then write summary.json and config.json."""
    tasks = list(tasks)
    done: list[dict] = []
    path = None
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
        path = out_dir / "episodes.jsonl"
        done = read_episodes(path)
        config = {"env": env.config.__dict__, "tasks": len(tasks), **(extra_config or {})}
        if done:  # another agent's (or seed's, backend's, env rules') episodes are not this run's
            check_resume(out_dir / "config.json", json.loads(json.dumps(config)), SCRIPTED_RESUME_KEYS)
        write_jsonl_atomic(path, done)  # drop a torn line
        write_json_atomic(out_dir / "config.json", config)
    finished = {str(r["task_id"]) for r in done}
    todo = [t for t in tasks if str(t.task_id) not in finished]
    agent = make_agent()
    bar = tqdm(todo, desc="episodes", unit="ep", disable=not progress, leave=False)
    records = list(done)
    for task in bar:
        rec = run_episode(env, agent, task, keep_obs=keep_obs)
        if rec["backend_error"]:  # the browser failed, not the agent: one more try
            rec = run_episode(env, agent, task, keep_obs=keep_obs)
        records.append(rec)
        if path is not None:
            with path.open("a") as f:
                f.write(json.dumps(rec) + "\n")
        bar.set_postfix(success=f"{sum(r['success'] for r in records) / len(records):.2f}")
    wanted = {str(t.task_id) for t in tasks}
    records = [r for r in records if str(r["task_id"]) in wanted]
    summary = summarize(records)
    if out_dir is not None:
        write_json_atomic(out_dir / "summary.json", summary)
    return summary, records


__all__ = ["run_episode", "run_eval", "read_episodes", "format_table"]

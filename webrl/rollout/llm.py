"""Evaluate an LLM agent (local checkpoint or OpenAI-compatible endpoint) over tasks,
batched across parallel envs; same outputs as `run_eval`, plus the error taxonomy
and success by oracle step-count bucket in `summary.json`."""

from __future__ import annotations

import json
from pathlib import Path

from tqdm import tqdm

from webrl.agent.llm_agent import TextPolicy, run_batched
from webrl.agent.local_policy import SamplingParams
from webrl.agent.prompt import PromptConfig
from webrl.env.web_env import EnvConfig, WebEnv
from webrl.files import write_json_atomic, write_jsonl_atomic
from webrl.rollout.runner import check_resume, read_episodes
from webrl.rollout.summary import summarize
from webrl.rollout.taxonomy import by_step_bucket, taxonomy
from webrl.rollout.wallclock import WallClock
from webrl.rollout.workers import Chunk, Workers, run_distributed
from webrl.sites.world import WorldApp
from webrl.tasks.schema import Task


def llm_summary(records: list[dict]) -> dict:
    return {**summarize(records), "errors": taxonomy(records), "per_step_bucket": by_step_bucket(records)}


def run_eval_llm(
    tasks: list[Task],
    policy: TextPolicy,
    prompt: PromptConfig | None = None,
    sampling: SamplingParams | None = None,
    n_envs: int = 16,
    env_config: EnvConfig | None = None,
    out_dir: Path | None = None,
    progress: bool = True,
    keep_obs: bool = True,
    extra_config: dict | None = None,
    on_record=None,
    workers: Workers | None = None,
    backend=None,
) -> tuple[dict, list[dict]]:
    """Run every task once with `n_envs` episodes in flight; resumable through `out_dir`
    (episodes are appended as they finish; `on_record(rec)` is called after each is written).
    With `workers` (n > 1) the episodes run in worker processes against `workers.endpoint`
    (rollout/workers.py), `n_envs` in flight in each; `policy` then only names the agent. `backend`
    (e.g. a `ChromiumBackend`, one browser context per env; `env_config.base_url` must be its
    `base_url`) replaces the in-process `http` backend; it is closed at the end."""
    if backend is not None and workers is not None and workers.n > 1:
        raise ValueError("a browser backend runs in this process: use one worker (workers.n == 1)")
    prompt = prompt or PromptConfig()
    sampling = sampling or SamplingParams()
    env_config = env_config or EnvConfig()
    done: list[dict] = []
    path = None
    clock = WallClock(out_dir)  # the eval's wall time, summed over the invocations that resumed it
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
        path = out_dir / "episodes.jsonl"
        done = read_episodes(path)
        config = {"env": env_config.__dict__, "tasks": len(tasks), "n_envs": n_envs, "policy": policy.name,
                  "fingerprint": getattr(policy, "fingerprint", None), "prompt": prompt.__dict__,
                  "sampling": sampling.__dict__, **(extra_config or {}),
                  **({"workers": {"n": workers.n, "executor": workers.executor}} if workers else {})}  # fmt: skip
        if done:
            check_resume(out_dir / "config.json", json.loads(json.dumps(config, default=list)))
        write_jsonl_atomic(path, done)  # drop a torn line
        write_json_atomic(out_dir / "config.json", config, default=list)
    finished = {str(r["task_id"]) for r in done}
    todo = [t for t in tasks if str(t.task_id) not in finished]
    distributed = workers is not None and workers.n > 1
    world = None if distributed else (backend.world if backend is not None else WorldApp())
    envs = [] if distributed else [WebEnv(env_config, world, backend=backend) for _ in range(max(1, min(n_envs, len(todo))))]
    bar = tqdm(total=len(todo), desc="episodes", unit="ep", disable=not progress, leave=False)
    records = list(done)

    def on_episode(rec: dict) -> None:
        records.append(rec)
        if path is not None:
            with path.open("a") as f:
                f.write(json.dumps(rec) + "\n")
            clock.save()
        bar.update(1)
        if on_record is not None:
            on_record(rec)
        bar.set_postfix(success=f"{sum(r['success'] for r in records) / len(records):.2f}")

    try:
        if distributed:
            template = Chunk(workers.endpoint, (), prompt, sampling, env_config, n_envs, keep_obs)
            run_distributed(todo, template, workers, on_episode)
        else:
            run_batched(todo, envs, policy, prompt, sampling, keep_obs=keep_obs, on_episode=on_episode)
    finally:
        bar.close()
        for env in envs:
            env.close()
        if backend is not None:  # (also when no env was made)
            backend.close()
    wanted = {str(t.task_id) for t in tasks}
    records = [r for r in records if str(r["task_id"]) in wanted]
    summary = {**llm_summary(records), "wall_minutes": clock.minutes()}
    if out_dir is not None:
        write_json_atomic(out_dir / "summary.json", summary)
    return summary, records

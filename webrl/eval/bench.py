"""Environment throughput and reset latency, over oracle trajectories."""

from __future__ import annotations

import statistics
import time

from webrl.agent.policies import OracleAgent
from webrl.env.web_env import EnvConfig, WebEnv
from webrl.tasks.schema import Task


def _pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else 0.0


def bench_env(tasks: list[Task], config: EnvConfig | None = None, repeats: int = 3) -> dict:
    """Replay each task's oracle actions `repeats` times; time resets and steps."""
    env = WebEnv(config or EnvConfig(evaluate=False))
    scripts: list[tuple[Task, list[str]]] = []
    for task in tasks:  # record the oracle's actions once (not timed)
        agent = OracleAgent()
        obs, info = env.reset(options={"task": task})
        agent.reset(task)
        actions = []
        while True:
            a = agent.act(obs, info)
            actions.append(a)
            obs, _, term, trunc, info = env.step(a)
            if term or trunc:
                break
        scripts.append((task, actions))
    reset_ms: list[float] = []
    step_ms: list[float] = []
    t_steps = 0.0
    n_steps = 0
    for _ in range(repeats):
        for task, actions in scripts:
            t0 = time.perf_counter()
            env.reset(options={"task": task})
            reset_ms.append((time.perf_counter() - t0) * 1000)
            for a in actions:
                t1 = time.perf_counter()
                env.step(a)
                dt = time.perf_counter() - t1
                step_ms.append(dt * 1000)
                t_steps += dt
                n_steps += 1
    env.close()
    return {
        "backend": "http",
        "episodes": len(scripts) * repeats,
        "steps": n_steps,
        "steps_per_s": round(n_steps / t_steps, 1) if t_steps else 0.0,
        "step_ms_p50": round(_pct(step_ms, 0.5), 3),
        "step_ms_p90": round(_pct(step_ms, 0.9), 3),
        "reset_ms_p50": round(_pct(reset_ms, 0.5), 3),
        "reset_ms_p90": round(_pct(reset_ms, 0.9), 3),
        "reset_ms_p99": round(_pct(reset_ms, 0.99), 3),
        "reset_ms_mean": round(statistics.fmean(reset_ms), 3) if reset_ms else 0.0,
        "threads": 1,
    }

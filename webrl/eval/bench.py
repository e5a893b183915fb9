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


def oracle_scripts(env: WebEnv, tasks: list[Task]) -> list[tuple[Task, list[str]]]:
    """Each task's oracle actions, recorded once on `env` (not timed)."""
    scripts: list[tuple[Task, list[str]]] = []
    for task in tasks:
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
    return scripts


def bench_env(tasks: list[Task], config: EnvConfig | None = None, repeats: int = 3) -> dict:
    """Replay each task's oracle actions `repeats` times; time resets and steps."""
    env = WebEnv(config or EnvConfig(evaluate=False))
    scripts = oracle_scripts(env, tasks)
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


def bench_browser(
    tasks: list[Task],
    repeats: int = 1,
    parallel: int = 4,
    executable: str | None = None,
) -> dict:
    """The `chromium` backend: oracle scripts (recorded on `http`) replayed by
    `parallel` threads sharing one Chromium, each episode in its own context.

    `steps_per_s` is throughput (all steps / wall time); `mem_mb_per_episode`
    is the browser's growth in proportional memory from 1 to `parallel` open
    episodes, divided by `parallel - 1` (0 when parallel is 1).
    """
    import queue
    import threading

    from webrl.env.chromium_backend import ChromiumBackend, ChromiumConfig
    from webrl.env.chromium_engine import browser_memory_mb
    from webrl.sites.world import WorldApp

    world = WorldApp()
    backend = ChromiumBackend(
        world, base_url="http://127.0.0.1:0",
        config=ChromiumConfig(executable=executable, max_sessions=max(parallel, 1)),
    )  # fmt: skip
    config = EnvConfig(evaluate=False, base_url=backend.base_url)
    scripts = oracle_scripts(WebEnv(config, world), tasks)
    envs = [WebEnv(config, world, backend=backend) for _ in range(parallel)]
    try:
        envs[0].reset(options={"task": scripts[0][0]})  # launch Chromium (not timed)
        mem_one = browser_memory_mb()
        for env in envs[1:]:
            env.reset(options={"task": scripts[0][0]})
        mem_all = browser_memory_mb()
        jobs: queue.Queue = queue.Queue()
        for _ in range(repeats):
            for job in scripts:
                jobs.put(job)
        reset_ms: list[float] = []
        step_ms: list[float] = []
        errors: list[str] = []
        peak = [mem_all]

        def worker(env: WebEnv) -> None:
            while True:
                try:
                    task, actions = jobs.get_nowait()
                except queue.Empty:
                    return
                t0 = time.perf_counter()
                env.reset(options={"task": task})
                reset_ms.append((time.perf_counter() - t0) * 1000)
                for a in actions:
                    t1 = time.perf_counter()
                    _, _, term, trunc, info = env.step(a)
                    step_ms.append((time.perf_counter() - t1) * 1000)
                    if info.get("backend_error"):
                        errors.append(info["backend_error"])
                        break

        threads = [threading.Thread(target=worker, args=(env,)) for env in envs]
        t_start = time.perf_counter()
        for t in threads:
            t.start()
        while any(t.is_alive() for t in threads):
            peak[0] = max(peak[0], browser_memory_mb())
            time.sleep(0.5)
        wall = time.perf_counter() - t_start
    finally:
        for env in envs:
            env.close()  # also closes the shared backend (idempotent)
        backend.close()
    return {
        "backend": "chromium",
        "parallel": parallel,
        "episodes": len(reset_ms),
        "steps": len(step_ms),
        "wall_s": round(wall, 2),
        "steps_per_s": round(len(step_ms) / wall, 2) if wall else 0.0,
        "step_ms_p50": round(_pct(step_ms, 0.5), 1),
        "step_ms_p90": round(_pct(step_ms, 0.9), 1),
        "reset_ms_p50": round(_pct(reset_ms, 0.5), 1),
        "reset_ms_p90": round(_pct(reset_ms, 0.9), 1),
        "browser_mb_one_episode": round(mem_one, 1),
        "browser_mb_peak": round(peak[0], 1),
        "mem_mb_per_episode": round((mem_all - mem_one) / (parallel - 1), 1) if parallel > 1 else 0.0,
        "backend_errors": len(errors),
    }

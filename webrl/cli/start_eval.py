"""Sharing the starting actor's eval (`phase-000/eval`) between runs that start alike.

Runs that start from the same actor evaluate it greedily on the same tasks before their first
phase: on 2 CPU cores ~10-20 minutes each for the same episodes. `webrl study` shares one such
eval between its runs, and `webrl train --start-eval RUN` takes one from a finished run."""

from __future__ import annotations

import json
from pathlib import Path

from webrl.files import copytree_atomic

# what the starting actor's eval depends on, besides which tasks it covers (`start_tasks`)
START_KEYS = ("init", "eval_split", "eval_max_steps", "envs")


def start_tasks(cfg: dict) -> tuple:
    """Which tasks a run's start eval covers (`rl/loop.py: evaluate_start`): the whole eval split
    with a final eval or a whole-split subset (0), else the seed's stratified subset."""
    if cfg.get("final_eval", True) or not cfg.get("eval_subset"):
        return ("all",)
    return ("subset", cfg["eval_subset"], cfg.get("seed", 0))


def share_start_eval(src: Path, dst: Path) -> bool:
    """Give run `dst` the finished eval of the starting actor from run `src` (one eval serves
    every run that starts alike). False when `dst` has its own or `src` has none."""
    s, d = src / "phase-000" / "eval", dst / "phase-000" / "eval"
    if d.exists() or not (s / "done").exists():
        return False
    d.parent.mkdir(parents=True, exist_ok=True)
    copytree_atomic(s, d)
    return True


def start_eval_source(runs: list[Path], cfg) -> Path | None:
    """The first of `runs` whose finished start eval `cfg`'s run can share: same starting actor,
    eval split, step limit, envs and tasks (a greedy eval does not depend on the seed otherwise)."""
    want = cfg.to_json()
    for run in runs:
        saved = run / "train_config.json"
        if not saved.exists() or not (run / "phase-000" / "eval" / "done").exists():
            continue
        got = json.loads(saved.read_text())
        if all(got.get(k) == want[k] for k in START_KEYS) and start_tasks(got) == start_tasks(want):
            return run
    return None

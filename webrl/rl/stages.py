"""A phase folder's record of its finished stages and of its wall time (rl/loop.py's resume), the
seed of its own random draws, and the fault points the resume tests kill a run at."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from webrl.files import write_json_atomic
from webrl.rollout.wallclock import WallClock


class Stages:
    """`stages.json` of a phase folder: which stages have finished, with what they reported and
    `minutes`, the wall time this process spent on the stage (since the previous mark, or since
    the phase folder was opened; a resumed stage counts only its resumed part). The phase's own
    wall time is kept across processes in `wall_seconds` (each process adds its time, saved at
    every mark and `tick`), so a phase resumed after a stop still reports all of its minutes
    (less what a killed process spent after its last save)."""

    def __init__(self, pdir: Path):
        self.path = pdir / "stages.json"
        pdir.mkdir(parents=True, exist_ok=True)
        self.done = json.loads(self.path.read_text()) if self.path.exists() else {}
        self.since = time.perf_counter()
        self.clock = WallClock(pdir)

    def __contains__(self, stage: str) -> bool:
        return stage in self.done

    def wall_minutes(self) -> float:
        """The phase's wall minutes so far, over every process that worked on it."""
        return self.clock.minutes()

    def tick(self) -> None:
        """Save the phase's wall time (called as work is saved, e.g. after each rollout episode)."""
        self.clock.save()

    def mark(self, stage: str, info: dict | None = None) -> None:
        now = time.perf_counter()
        self.done[stage] = {**(info or {}), "minutes": round((now - self.since) / 60, 2)}
        self.since = now
        write_json_atomic(self.path, self.done)
        self.tick()


def phase_seed(seed: int, pdir: Path) -> int:
    """The seed of a phase's own random draws (rollout sampling, replay and demonstration samples):
    the run's seed + 1000 × the phase number of `pdir` ("phase-002" -> 2; 0 for another name), so
    each phase draws afresh and a rerun of a phase draws the same."""
    name = pdir.name
    return seed + 1000 * (int(name.split("-")[1]) if name.startswith("phase-") and name[6:].isdigit() else 0)


def rollout_seed(seed: int, temperature: float, saved_config: Path, episodes_done: int) -> int | None:
    """The `SamplingParams.seed` of a phase's rollouts: the phase's seed when they sample (T > 0),
    each episode step then drawing from a seed of its own (`step_sampling`); None for greedy
    rollouts, and for a rollout stage begun by code before that rule (its saved config.json has no
    sampling seed, and episodes exist), which then finishes under its own rule (one generator for
    the phase) instead of refusing to resume."""
    if temperature == 0:
        return None
    old_rule = episodes_done and saved_config.exists() and \
        json.loads(saved_config.read_text()).get("sampling", {}).get("seed") is None
    return None if old_rule else seed


def fault(point: str) -> None:
    """Fault injection for the resume tests: WEBRL_FAULT=<point> kills the process here."""
    if os.environ.get("WEBRL_FAULT") == point:
        os._exit(137)

"""Wall time of a resumable piece of work, summed over the processes that ran it."""

from __future__ import annotations

import time
from pathlib import Path

from webrl.files import write_text_atomic

WALL_FILE = "wall_seconds"


class WallClock:
    """`folder/wall_seconds`: the seconds earlier (finished, stopped or killed) processes spent on
    the work in `folder`, up to their last `save`; this process adds its own from its start. The
    time a killed process spent after its last save is lost. `folder` None: this process only."""

    def __init__(self, folder: Path | None):
        self.path = folder / WALL_FILE if folder is not None else None
        self.t0 = time.perf_counter()
        try:
            self.before = float(self.path.read_text()) if self.path is not None else 0.0
        except (FileNotFoundError, ValueError):
            self.before = 0.0

    def seconds(self) -> float:
        return self.before + time.perf_counter() - self.t0

    def minutes(self) -> float:
        return round(self.seconds() / 60, 2)

    def save(self) -> None:
        if self.path is not None:
            write_text_atomic(self.path, f"{self.seconds():.3f}")

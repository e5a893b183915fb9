"""TensorBoard scalars beside the `metrics.jsonl` files, when a writer is installed.

The phase loop (one line per phase, step = the phase) and the training loop shared by SFT, the
actor update and the ORM (one line per `log_every` steps, step = the optimizer step) append their
metrics lines to `metrics.jsonl`; each line also goes to TensorBoard event files in `<folder>/tb/`
when `tensorboardX` (the `tb` extra, installed by `make`) or `tensorboard` (torch's writer) is
importable. `tensorboard --logdir runs/NAME` then shows the phase curves and every fit's losses.
Without a writer the JSONL files are the record and nothing else changes.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Mapping
from pathlib import Path

STEP_KEYS = ("phase", "step")  # the x axis, not a scalar


def scalars(line: Mapping, prefix: str = "") -> dict[str, float]:
    """The finite numeric leaves of a metrics line, nested mappings joined with "/" (`eval/per_site`
    -> `eval/per_site/shop`); strings, None, booleans, NaN and the step keys are left out."""
    out: dict[str, float] = {}
    for key, value in line.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out.update(scalars(value, name + "/"))
        elif isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
            out[name] = float(value)
    if not prefix:
        for key in STEP_KEYS:
            out.pop(key, None)
    return out


def writer_class():
    """A writer class for `ScalarLog`: `SyncEvents` (tensorboardX's event files, written at once), else
    torch's `SummaryWriter` (needs the `tensorboard` package, which `make` does not install: that path
    is not exercised by the tests), else None."""
    try:
        import tensorboardX  # noqa: F401

        return SyncEvents
    except ImportError:
        pass
    try:
        from torch.utils.tensorboard import SummaryWriter

        return SummaryWriter
    except ImportError:
        return None


class SyncEvents:
    """tensorboardX's event-file format written in the calling thread. tensorboardX's `SummaryWriter`
    queues events for a worker thread and its `flush` does not wait for that queue, so a process
    killed right after a flush lost the last lines (a CI run of tests/rl/test_loop.py: the killed
    actor fit had 6 steps in metrics.jsonl and 5 in TensorBoard)."""

    def __init__(self, logdir: str, filename_suffix: str = ""):
        from tensorboardX.event_file_writer import EventsWriter

        os.makedirs(logdir, exist_ok=True)
        self.events = EventsWriter(os.path.join(logdir, "events"), filename_suffix)

    def add_scalar(self, tag: str, value: float, step: int) -> None:
        from tensorboardX.proto.event_pb2 import Event
        from tensorboardX.summary import scalar

        self.events.write_event(Event(wall_time=time.time(), step=int(step), summary=scalar(tag, value)))

    def flush(self) -> None:
        self.events.flush()

    def close(self) -> None:
        self.events.close()


class ScalarLog:
    """Writes metrics lines as scalars to the event files in `logdir` (created on the first line);
    a no-op without a writer. Each line is on disk when `write` returns, so a crash loses none that
    were written."""

    def __init__(self, logdir: str | Path, enabled: bool = True):
        self.logdir, self.writer = Path(logdir), None
        self.cls = writer_class() if enabled else None

    def write(self, line: Mapping, step: int) -> None:
        if self.cls is None:
            return
        if self.writer is None:
            # a unique file per writer: the default name (seconds + host) of a process resumed within
            # the same second would overwrite the last one's events
            self.writer = self.cls(str(self.logdir), filename_suffix=f".{os.getpid()}.{time.time_ns()}")
        for name, value in scalars(line).items():
            self.writer.add_scalar(name, value, step)
        self.writer.flush()

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None


def read_scalars(logdir: str | Path) -> dict[str, dict[int, float]]:
    """The scalars of every event file in `logdir` (oldest file first, so a rewritten step keeps
    its latest value): {tag: {step: value}}. Needs tensorboardX (its protobuf classes); reads the
    TFRecord framing directly (8-byte length, 4-byte CRC, data, 4-byte CRC; CRCs not checked)."""
    import struct

    from tensorboardX.proto.event_pb2 import Event

    out: dict[str, dict[int, float]] = {}
    for path in sorted(Path(logdir).glob("events.out.tfevents.*"), key=lambda p: (p.stat().st_mtime, p.name)):
        data, pos = path.read_bytes(), 0
        while pos + 12 <= len(data):
            (n,) = struct.unpack("<Q", data[pos : pos + 8])
            if pos + 12 + n + 4 > len(data):
                break  # a record cut short by a crash
            event = Event.FromString(data[pos + 12 : pos + 12 + n])
            pos += 12 + n + 4
            for value in event.summary.value:
                out.setdefault(value.tag, {})[event.step] = value.simple_value
    return out

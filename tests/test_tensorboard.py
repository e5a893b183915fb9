"""TensorBoard scalars beside metrics.jsonl (webrl/tensorboard.py)."""

import math

import pytest

from webrl.tensorboard import ScalarLog, scalars


def test_scalars_flatten_numeric_leaves_and_drop_the_rest():
    line = {"phase": 2, "step": 7, "eval/success": 0.25, "eval/per_site": {"shop": 0.5, "map": 0},
            "orm/precision": None, "note": "x", "done": True, "bad": math.nan, "minutes": 3}  # fmt: skip
    assert scalars(line) == {"eval/success": 0.25, "eval/per_site/shop": 0.5, "eval/per_site/map": 0.0, "minutes": 3.0}
    assert scalars({"a": {"step": 1}}) == {"a/step": 1.0}  # only the top-level step keys are the x axis


def test_scalar_log_writes_events_a_reader_gets_back(tmp_path):
    pytest.importorskip("tensorboardX")
    from webrl.tensorboard import read_scalars

    log = ScalarLog(tmp_path / "tb")
    log.write({"phase": 1, "eval/success": 0.5, "eval/per_site": {"shop": 1.0}}, 1)
    log.write({"phase": 2, "eval/success": 0.75}, 2)
    log.close()
    again = ScalarLog(tmp_path / "tb")  # a resumed process rewrites step 2 into a new event file
    again.write({"eval/success": 0.125}, 2)
    again.close()
    got = read_scalars(tmp_path / "tb")
    assert got["eval/success"] == {1: 0.5, 2: 0.125} and got["eval/per_site/shop"] == {1: 1.0}
    assert "phase" not in got
    off = ScalarLog(tmp_path / "off", enabled=False)
    off.write({"x": 1.0}, 1)
    assert not (tmp_path / "off").exists()


def test_lines_written_before_a_kill_are_in_the_event_files(tmp_path):
    """tensorboardX's SummaryWriter queues events for a thread that `flush` does not wait for: a
    process killed right after writing lost its last lines. ScalarLog's lines are on disk at once."""
    import subprocess
    import sys

    pytest.importorskip("tensorboardX")
    from webrl.tensorboard import read_scalars

    code = ("import os, sys; from webrl.tensorboard import ScalarLog\n"
            "log = ScalarLog(sys.argv[1])\n"
            "for step in range(1, 201): log.write({'losses/actor': step / 8}, step)\n"
            "os._exit(137)\n")  # fmt: skip
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path / "tb")], capture_output=True, text=True)
    assert done.returncode == 137, done.stderr
    assert read_scalars(tmp_path / "tb")["losses/actor"] == {step: step / 8 for step in range(1, 201)}

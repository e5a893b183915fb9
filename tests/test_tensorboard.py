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

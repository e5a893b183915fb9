"""The report's per-phase curve starts from the starting actor on the per-phase eval's own tasks."""

import json

from webrl.eval.report import start_on_subset


def _episodes(path, rows):
    path.mkdir(parents=True)
    (path / "episodes.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_start_on_subset_hand_checked(tmp_path):
    start = [  # the whole split: 5 tasks, 3 successes (60 %)
        {"task_id": 1, "site": "shop", "success": True},
        {"task_id": 2, "site": "shop", "success": False},
        {"task_id": 3, "site": "map", "success": True},
        {"task_id": 4, "site": "map", "success": True},
        {"task_id": 5, "site": "forum", "success": False},
    ]
    start = [{**r, "family": f"{r['site']}.f", "n_steps": 2} for r in start]  # the fields every episode has
    _episodes(tmp_path / "phase-000" / "eval", start)
    assert start_on_subset(tmp_path) is None  # no phase eval yet
    # phase 1 evaluated tasks 2, 3, 5 (ids may be strings in one file and ints in the other)
    _episodes(tmp_path / "phase-001" / "eval", [{"task_id": str(i), "success": True} for i in (2, 3, 5)])
    got = start_on_subset(tmp_path)
    assert got["episodes"] == 3 and abs(got["success_rate"] - 1 / 3) < 1e-9  # only task 3 succeeded
    assert got["per_site"] == {"shop": {"success_rate": 0.0, "episodes": 1}, "map": {"success_rate": 1.0, "episodes": 1},
                               "forum": {"success_rate": 0.0, "episodes": 1}}  # fmt: skip


def test_start_on_subset_none_when_phases_run_the_whole_split_or_tasks_are_missing(tmp_path):
    rows = [{"task_id": i, "site": "shop", "family": "shop.f", "n_steps": 1, "success": i == 1} for i in (1, 2)]
    _episodes(tmp_path / "a" / "phase-000" / "eval", rows)
    _episodes(tmp_path / "a" / "phase-001" / "eval", rows)
    assert start_on_subset(tmp_path / "a") is None  # the same tasks: phase 0's own eval is the start
    _episodes(tmp_path / "b" / "phase-000" / "eval", rows)
    _episodes(tmp_path / "b" / "phase-001" / "eval", [{"task_id": 9, "success": False}])
    assert start_on_subset(tmp_path / "b") is None  # a task the start eval never ran

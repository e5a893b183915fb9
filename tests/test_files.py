"""Crash-safe writes and tolerant JSONL reads (webrl/files.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from webrl.files import copytree_atomic, read_jsonl, write_json_atomic, write_jsonl_atomic


def test_read_jsonl_drops_torn_lines_anywhere(tmp_path):
    f = tmp_path / "metrics.jsonl"
    # a kill mid-append tore line 2; the next append was glued onto the fragment
    f.write_text('{"a": 1}\n{"b": 2, "c"{"d": 4}\n\n{"e": 5}\n{"f": ')
    assert read_jsonl(f) == [{"a": 1}, {"e": 5}]
    assert read_jsonl(tmp_path / "missing.jsonl") == []


def test_atomic_writes_leave_no_temporary_behind(tmp_path):
    write_json_atomic(tmp_path / "new" / "dir" / "s.json", {})  # folders made, as save_jsonl does
    assert (tmp_path / "new" / "dir" / "s.json").read_text() == "{}\n"
    import shutil

    shutil.rmtree(tmp_path / "new")
    write_json_atomic(tmp_path / "c.json", {"x": [1, 2]})
    write_jsonl_atomic(tmp_path / "r.jsonl", [{"i": 0}, {"i": 1}])
    assert json.loads((tmp_path / "c.json").read_text()) == {"x": [1, 2]}
    assert read_jsonl(tmp_path / "r.jsonl") == [{"i": 0}, {"i": 1}]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.json", "r.jsonl"]


def test_copytree_atomic_replaces_the_whole_folder(tmp_path):
    src, dst = tmp_path / "ckpt-9", tmp_path / "final"
    src.mkdir()
    (src / "model.bin").write_text("new")
    (src / "trainer_state.pt").write_text("opt")
    dst.mkdir()
    (dst / "model.bin").write_text("old")
    (dst / "stale.txt").write_text("from an older final")
    (tmp_path / ".final.tmp").mkdir()  # left by a crash mid-copy: replaced, never trusted
    import shutil

    copytree_atomic(src, dst, ignore=shutil.ignore_patterns("trainer_state.pt"))
    assert sorted(p.name for p in dst.iterdir()) == ["model.bin"] and (dst / "model.bin").read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ckpt-9", "final"]


def test_pruning_keeps_the_newest_complete_checkpoints(tmp_path):
    from webrl.files import prune_checkpoints

    for step, complete in ((2, True), (10, True), (9, True), (11, False), (1, False)):
        (tmp_path / f"ckpt-{step}").mkdir()
        if complete:
            (tmp_path / f"ckpt-{step}" / "trainer_state.pt").write_text("s")
    (tmp_path / "final").mkdir()
    (tmp_path / "ckpt-notes").mkdir()  # not a step: never touched
    gone = prune_checkpoints(tmp_path, keep=2)
    # 9 and 10 are the newest complete ones; 11 is being written (or was torn by a crash) and stays
    assert sorted(p.name for p in gone) == ["ckpt-1", "ckpt-2"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ckpt-10", "ckpt-11", "ckpt-9", "ckpt-notes", "final"]
    assert prune_checkpoints(tmp_path, keep=2) == []
    assert [p.name for p in prune_checkpoints(tmp_path, keep=1)] == ["ckpt-9"]
    with pytest.raises(ValueError, match="keep must be >= 1"):
        prune_checkpoints(tmp_path, keep=0)


def test_claiming_a_run_folder_records_the_code_that_ran_it(tmp_path):
    from webrl.models.training import claim_run_config
    from webrl.provenance import code_version
    from webrl.rl.loop_config import LoopConfig

    cfg = LoopConfig(init="x", reward="oracle")
    claim_run_config(tmp_path / "train_config.json", cfg, "--run")
    claim_run_config(tmp_path / "train_config.json", cfg, "--run")  # a resume: same settings, one more line
    lines = read_jsonl(tmp_path / "invocations.jsonl")
    assert len(lines) == 2 and lines[0]["commit"] == code_version()["commit"]
    if (Path(__file__).resolve().parent.parent / ".git").exists():  # a git checkout (CI's fresh clone is one)
        assert len(lines[0]["commit"]) == 40 and isinstance(lines[0]["dirty"], bool)


def test_read_jsonl_reads_the_gzipped_copy_when_the_file_is_absent(tmp_path):
    import gzip

    from webrl.rollout.runner import read_episodes

    (tmp_path / "episodes.jsonl.gz").write_bytes(gzip.compress(b'{"task_id": 1}\n{"task_id": 2}\n'))
    assert read_jsonl(tmp_path / "episodes.jsonl") == [{"task_id": 1}, {"task_id": 2}]
    assert read_episodes(tmp_path / "episodes.jsonl") == [{"task_id": 1}, {"task_id": 2}]
    (tmp_path / "episodes.jsonl").write_text('{"task_id": 3}\n')  # the plain file, when there, wins
    assert read_jsonl(tmp_path / "episodes.jsonl") == [{"task_id": 3}]

"""The slim archive of run folders (webrl/eval/archive.py); the round trip on a real run is in
tests/rl/test_loop.py (`test_an_archived_study_regenerates_its_table_and_report`)."""

from __future__ import annotations

import gzip
import json
import os

import pytest

from webrl.eval import archive as arch
from webrl.files import read_jsonl


def test_slim_row_drops_page_text_only():
    row = {"task_id": 7, "intent": "Buy X", "final_obs": "PAGE", "success": True,
           "steps": [{"obs": "P1", "response": "r1", "action": "click(3)", "error": None, "url": "u1", "screenshot": "s.png"},
                     {"obs": "P2", "response": "r2", "action": "exit()", "error": "bad", "url": "u2"}]}  # fmt: skip
    assert arch.slim_row(row) == {"task_id": 7, "intent": "Buy X", "success": True, "steps": [
        {"response": "r1", "action": "click(3)", "error": None, "url": "u1"},
        {"response": "r2", "action": "exit()", "error": "bad", "url": "u2"}]}  # fmt: skip
    assert row["steps"][0]["obs"] == "P1"  # the input is not changed
    assert arch.slim_row({"step": 3, "loss": 0.5}) == {"step": 3, "loss": 0.5}
    assert arch.slim_row([1, 2]) == [1, 2]


def _tree(root, files: dict[str, bytes]) -> None:
    for rel, data in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)


def test_archive_keeps_records_drops_weights_and_gzips_large_jsonl(tmp_path, monkeypatch):
    src, dst = tmp_path / "run", tmp_path / "arch"
    eps = "".join(json.dumps({"task_id": i, "success": i % 2 == 0, "final_obs": "x" * 500,
                              "steps": [{"obs": "y" * 500, "action": "exit()"}]}) + "\n" for i in range(40))  # fmt: skip
    _tree(src, {"train_config.json": b"{}", "metrics.jsonl": b'{"phase": 1}\n', "phase-001/eval/done": b"", "phase-001/wall_seconds": b"61.5",
                "phase-001/eval/summary.json": b'{"success_rate": 0.5}', "phase-001/eval/episodes.jsonl": eps.encode(),
                "phase-001/actor/final/adapter_model.safetensors": b"W", "phase-001/actor/final/adapter_config.json": b"{}",
                "phase-001/actor/ckpt-2/trainer_state.pt": b"S", "phase-001/actor/metrics.jsonl": b'{"step": 1}\n',
                "tb/events.out.tfevents.1": b"E", "notes.txt": b"n", ".phase-002.tmp/x.json": b"{}",
                "big/orm.jsonl": ("".join(json.dumps({"i": i, "pad": str(i) * 40}) + "\n" for i in range(4000))).encode()})  # fmt: skip
    monkeypatch.setattr(arch, "GZIP_OVER", 1000)
    m = arch.archive(src, dst, max_bytes=20_000)
    got = sorted(str(p.relative_to(dst)) for p in dst.rglob("*") if p.is_file())
    assert got == ["ARCHIVE.json", "metrics.jsonl", "phase-001/actor/metrics.jsonl", "phase-001/eval/done",
                   "phase-001/eval/episodes.jsonl.gz", "phase-001/eval/summary.json", "phase-001/wall_seconds",
                   "train_config.json"]  # fmt: skip
    assert [x["path"] for x in m["left_out"]] == ["big/orm.jsonl"] and m["left_out"][0]["bytes"] > 20_000
    slim = read_jsonl(dst / "phase-001" / "eval" / "episodes.jsonl")  # through the .gz
    assert [e["task_id"] for e in slim] == list(range(40)) and all("final_obs" not in e for e in slim)
    assert slim[0]["steps"] == [{"action": "exit()"}]
    assert json.loads(gzip.decompress((dst / "phase-001/eval/episodes.jsonl.gz").read_bytes()).splitlines()[0])["task_id"] == 0
    saved = json.loads((dst / "ARCHIVE.json").read_text())
    assert saved["source"] == str(src.resolve()) and saved["files"] == 7 and "archiver" in saved
    # archiving again, after the file shrank below the gzip threshold: the stale .gz goes
    (src / "phase-001/eval/episodes.jsonl").write_text('{"task_id": 0, "success": true}\n')
    arch.archive(src, dst, max_bytes=20_000)
    assert not (dst / "phase-001/eval/episodes.jsonl.gz").exists()
    assert read_jsonl(dst / "phase-001/eval/episodes.jsonl") == [{"task_id": 0, "success": True}]
    # and a file that has grown past the cap: its earlier copy goes too (no stale record is kept)
    (src / "metrics.jsonl").write_text("".join(json.dumps({"phase": i, "pad": os.urandom(50).hex()}) + "\n" for i in range(300)))
    arch.archive(src, dst, max_bytes=2_000)
    assert not (dst / "metrics.jsonl").exists() and not (dst / "metrics.jsonl.gz").exists()
    assert "metrics.jsonl" in [x["path"] for x in json.loads((dst / "ARCHIVE.json").read_text())["left_out"]]


def test_archive_of_an_adopted_archived_run_keeps_its_gzipped_records(tmp_path):
    """A study that adopted a run from an archive holds that run's JSONL as `NAME.gz` only: archiving
    the study anew must carry those records (slimmed), and a plain `NAME` beside a `NAME.gz` wins."""
    src, dst = tmp_path / "study", tmp_path / "arch"
    eps = [{"task_id": i, "success": True, "final_obs": "PAGE", "steps": [{"obs": "P", "action": "exit()"}]} for i in range(3)]
    _tree(src, {"webrl/seed-0/final/eval/episodes.jsonl.gz": gzip.compress("".join(json.dumps(e) + "\n" for e in eps).encode()),
                "webrl/seed-0/final/eval/summary.json": b'{"success_rate": 1.0}',
                "webrl/seed-0/metrics.jsonl": b'{"phase": 1}\n', "webrl/seed-0/metrics.jsonl.gz": gzip.compress(b'{"phase": 9}\n')})  # fmt: skip
    m = arch.archive(src, dst)
    got = sorted(str(p.relative_to(dst)) for p in dst.rglob("*") if p.is_file())
    assert got == ["ARCHIVE.json", "webrl/seed-0/final/eval/episodes.jsonl", "webrl/seed-0/final/eval/summary.json",
                   "webrl/seed-0/metrics.jsonl"] and m["files"] == 3  # fmt: skip
    assert read_jsonl(dst / "webrl/seed-0/final/eval/episodes.jsonl") == [
        {"task_id": i, "success": True, "steps": [{"action": "exit()"}]} for i in range(3)]  # fmt: skip
    assert read_jsonl(dst / "webrl/seed-0/metrics.jsonl") == [{"phase": 1}]


def test_archive_leaves_excluded_folders_out_and_their_earlier_copies_alone(tmp_path):
    """`exclude` (a study's unfinished runs): the folder is not walked, the manifest names it, and
    what the archive already held of it is neither replaced nor deleted."""
    src, dst = tmp_path / "study", tmp_path / "arch"
    _tree(src, {"webrl/seed-0/final/eval/summary.json": b'{"success_rate": 0.2}', "webrl/seed-0/metrics.jsonl": b'{"phase": 3}\n',
                "awr/seed-1/metrics.jsonl": b'{"phase": 1}\n', "awr/seed-1/phase-001/stages.json": b"{}"})  # fmt: skip
    _tree(dst, {"awr/seed-1/metrics.jsonl": b'{"phase": 3}\n', "ARCHIVE.json": b"{}"})  # an earlier archive's copy
    m = arch.archive(src, dst, exclude=["awr/seed-1"])
    got = sorted(str(p.relative_to(dst)) for p in dst.rglob("*") if p.is_file())
    assert got == ["ARCHIVE.json", "awr/seed-1/metrics.jsonl", "webrl/seed-0/final/eval/summary.json", "webrl/seed-0/metrics.jsonl"]
    assert read_jsonl(dst / "awr/seed-1/metrics.jsonl") == [{"phase": 3}]  # untouched
    assert m["files"] == 2 and m["excluded"] == ["awr/seed-1"]
    assert arch.archive(src, dst)["files"] == 4  # without it, the folder is archived
    assert read_jsonl(dst / "awr/seed-1/metrics.jsonl") == [{"phase": 1}]


def test_archive_refuses_a_missing_source_or_a_target_inside_it(tmp_path):
    with pytest.raises(FileNotFoundError, match="not a folder"):
        arch.archive(tmp_path / "nope", tmp_path / "a")
    (tmp_path / "run").mkdir()
    with pytest.raises(ValueError, match="outside"):
        arch.archive(tmp_path / "run", tmp_path / "run" / "archive")
    _tree(tmp_path, {"other/summary.json": b"{}", "afile": b"x"})  # a folder that is not an archive, a file
    for dst in ("other", "afile"):
        with pytest.raises(ValueError, match="neither a new or empty folder nor an archive"):
            arch.archive(tmp_path / "run", tmp_path / dst)
    assert (tmp_path / "other" / "summary.json").read_bytes() == b"{}"
    (tmp_path / "empty").mkdir()
    arch.archive(tmp_path / "run", tmp_path / "empty")  # an empty folder, then the archive it became
    arch.archive(tmp_path / "run", tmp_path / "empty")

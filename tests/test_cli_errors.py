"""Bad input on the command line: one clear line naming the flag, file or value, exit code 2, and
nothing claimed or overwritten (found by probing every command with bad input)."""

import json
import socket

import pytest

from webrl.cli.main import main


def _err(capsys) -> str:
    return capsys.readouterr().err


def test_model_paths_are_checked_before_anything_is_written(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    (tmp_path / "afile").write_text("x")
    demos = tmp_path / "demos.jsonl"
    demos.write_text(json.dumps({"task_id": 1, "family": "f", "intent": "x", "steps": []}) + "\n")
    run = tmp_path / "run"
    for init, says in ((tmp_path / "nope", "no such checkpoint folder"), (tmp_path / "empty", "not a model folder"),
                       (tmp_path / "afile", "a file; give the checkpoint's folder")):  # fmt: skip
        assert main(["train", "--run", str(run), "--preset", "cpu-tiny", "--init", str(init), "--reward", "oracle"]) == 2
        assert f"--init {init}: {says}" in _err(capsys)
        assert not run.exists()  # the corrected command can still start this run
    for args in (["eval", "--agent", str(tmp_path / "empty"), "--split", "test", "--limit", "1"],
                 ["orm", "eval", "--orm", str(tmp_path / "nope"), "--data", str(tmp_path / "afile")],
                 ["serve-model", str(tmp_path / "empty")],
                 ["eval-demos", "--agent", str(tmp_path / "nope"), "--demos", str(demos)]):  # fmt: skip
        assert main(args) == 2, args
        assert "model folder" in (e := _err(capsys)) or "no such checkpoint" in e, (args, e)


def test_an_endpoint_that_does_not_answer_is_one_clear_line(capsys):
    with socket.socket() as s:  # a loopback port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    assert main(["eval", "--agent", f"http://127.0.0.1:{port}/v1", "--split", "test", "--limit", "1"]) == 2
    assert f"cannot reach http://127.0.0.1:{port}/v1" in _err(capsys)


def test_splits_sites_and_sizes(tmp_path, capsys):
    assert main(["eval", "--agent", "oracle", "--split", "nosuch"]) == 2
    assert "unknown split 'nosuch': use train or test, or a task file" in _err(capsys)
    assert main(["eval", "--agent", "oracle", "--split", "test", "--sites", "forum,nosuch"]) == 2
    assert "--sites nosuch: no task of test is on that site" in _err(capsys)
    for args in (["eval", "--agent", "oracle", "--split", "test", "--limit", "-1"], ["bench", "env", "--repeats", "0"],
                 ["study", "--out", str(tmp_path / "st"), "--seeds", "0"]):  # fmt: skip
        with pytest.raises(SystemExit) as e:  # argparse's usage error
            main(args)
        assert e.value.code == 2 and "must be >= " in _err(capsys)
    assert main(["sft", "--preset", "cpu-tiny", "--out", str(tmp_path / "s"), "--sites", "nosuch"]) == 2
    assert "--sites nosuch" in _err(capsys) and not (tmp_path / "s").exists()
    assert main(["sft", "--preset", "bogus", "--out", str(tmp_path / "s")]) == 2
    assert "--preset 'bogus'" in _err(capsys)
    run = tmp_path / "r"
    assert main(["train", "--run", str(run), "--init", "x/y", "--reward", "oracle", "--phases", "0", "--tasks-per-phase", "0"]) == 2
    assert "phases=0 (>= 1), tasks_per_phase=0 (>= 1)" in _err(capsys) and not run.exists()
    assert main(["eval", "--agent", "oracle", "--split", "test", "--limit", "1", "--max-steps", "0"]) == 2
    assert "max_steps" in _err(capsys)


@pytest.mark.parametrize("where", ["dir", "file"])
def test_a_file_where_a_folder_belongs_names_it(tmp_path, capsys, where):
    target = tmp_path / "x"
    target.mkdir() if where == "dir" else target.write_text("x")
    args = (["tasks", "export", "--split", "test", "--out", str(target)] if where == "dir"
            else ["eval", "--agent", "oracle", "--split", "test", "--limit", "1", "--out", str(target)])  # fmt: skip
    assert main(args) == 2
    assert str(target) in _err(capsys)


def test_eval_demos_and_orm_data_name_the_bad_line(tmp_path, capsys):
    bad = tmp_path / "demos.jsonl"
    bad.write_text(json.dumps({"task_id": 1, "steps": []}) + "\n{not json\n")
    assert main(["eval-demos", "--agent", str(tmp_path), "--demos", str(bad)]) == 2
    assert str(tmp_path) in _err(capsys)


def test_broken_task_records_name_the_file_task_and_field(tmp_path, capsys):
    from webrl.tasks.splits import load_split

    good = load_split("test")[0].to_json()
    cases = {"a number": (5, "holds a JSON list of task objects"),
             "a bad id": ({**good, "intent_template_id": "abc"}, "'intent_template_id' must be int"),
             "a bad difficulty": ({**good, "difficulty": "hard"}, "'difficulty' must be int"),
             "a list of slots": ({**good, "instantiation_dict": [1, 2]}, "'instantiation_dict' must be dict"),
             "an outside start": ({**good, "start_url": "http://nowhere.invalid/x"}, "is outside the sites"),
             "an unknown site": ([{**good, "sites": ["nosuchsite"]}], "nosuchsite, which this world does not serve")}  # fmt: skip
    for name, (record, says) in cases.items():
        f = tmp_path / f"{name.replace(' ', '_')}.json"
        f.write_text(json.dumps(record))
        assert main(["eval", "--agent", "oracle", "--split", str(f)]) == 2, name
        err = _err(capsys)
        assert str(f) in err and says in err, (name, err)


def test_sites_serve_refuses_a_bad_or_taken_port(capsys):
    assert main(["sites", "serve", "--port", "99999"]) == 2
    assert "--port must be in 0-65535" in _err(capsys)
    with socket.socket() as s:  # a loopback port in use
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        assert main(["sites", "serve", "--port", str(port)]) == 2
        assert f"cannot serve on 127.0.0.1:{port}" in _err(capsys)


def test_damaged_json_files_are_named(tmp_path, capsys):
    bad = tmp_path / "orm.json"
    bad.write_text('{"foo": 1}')
    (tmp_path / "e").mkdir()
    assert main(["eval", "--agent", "oracle", "--split", "test", "--limit", "1", "--out", str(tmp_path / "e"),
                 "--no-progress"]) == 0  # fmt: skip
    assert main(["report", str(tmp_path / "e"), "--orm-eval", str(bad), "--out", str(tmp_path / "r.html")]) == 2
    assert f"--orm-eval {bad}: not an `orm eval` result" in _err(capsys)
    (tmp_path / "e" / "summary.json").write_text("{garbage")
    assert main(["report", str(tmp_path / "e"), "--out", str(tmp_path / "r.html")]) == 2
    assert f"{tmp_path / 'e' / 'summary.json'}: not valid JSON" in _err(capsys)
    study = tmp_path / "study" / "webrl" / "seed-0"
    study.mkdir(parents=True)
    (study / "train_config.json").write_text("{")
    assert main(["study", "--out", str(tmp_path / "study"), "--table"]) == 2
    assert "train_config.json: not valid JSON" in _err(capsys)


def test_foreign_lines_in_run_files_are_named(tmp_path, capsys):
    out = tmp_path / "e"
    out.mkdir()
    (out / "episodes.jsonl").write_text('{"success": true}\n')
    assert main(["eval", "--agent", "oracle", "--split", "test", "--limit", "1", "--out", str(out)]) == 2
    assert f"{out / 'episodes.jsonl'}: line 1 is not an episode" in _err(capsys)
    data = tmp_path / "orm.jsonl"
    data.write_text('{"intent": "x"}\n')
    assert main(["orm", "train", "--preset", "cpu-tiny", "--data", str(data), "--out", str(tmp_path / "o")]) == 2
    assert f"{data}: line 1 lacks" in _err(capsys) and not (tmp_path / "o").exists()


def test_a_missing_folder_is_said_so(tmp_path, capsys):
    assert main(["report", str(tmp_path / "nope"), "--out", str(tmp_path / "r.html")]) == 2
    assert f"{tmp_path / 'nope'}: no such folder" in _err(capsys)
    assert main(["study", "--out", str(tmp_path / "nope"), "--table"]) == 2
    assert f"{tmp_path / 'nope'}: no such folder" in _err(capsys)

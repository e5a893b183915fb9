import json

import pytest
from support import notes_task

from webrl.agent.policies import RandomAgent
from webrl.env.web_env import EnvConfig, WebEnv
from webrl.rollout.runner import read_episodes, run_eval
from webrl.rollout.summary import format_table, summarize
from webrl.tasks.schema import task_from_json


def test_summary_math():
    recs = [
        {"site": "shop", "family": "a", "success": True, "n_steps": 2},
        {"site": "shop", "family": "b", "success": False, "n_steps": 4},
        {"site": "forum", "family": "c", "success": True, "n_steps": 6},
    ]
    s = summarize(recs)
    assert s["episodes"] == 3 and abs(s["success_rate"] - 2 / 3) < 1e-9
    assert list(s["per_site"]) == ["shop", "forum"]
    assert s["per_site"]["shop"] == {"success_rate": 0.5, "episodes": 2}
    assert s["mean_steps"] == 4
    assert "forum" in format_table(s) and "66.7%" in format_table(s)


def test_run_eval_writes_and_resumes(tmp_path, notes_world):
    tasks = [task_from_json(notes_task(task_id=i)) for i in range(4)]
    env = WebEnv(EnvConfig(max_steps=5), world=notes_world)
    out = tmp_path / "run"
    summary, recs = run_eval(tasks[:2], lambda: RandomAgent(seed=1), env, out, progress=False)
    assert summary["episodes"] == 2
    lines = (out / "episodes.jsonl").read_text().splitlines()
    assert len(lines) == 2
    rec = json.loads(lines[0])
    assert {"task_id", "site", "reward", "success", "steps", "answer", "n_steps"} <= set(rec)
    assert rec["steps"][0]["obs"].startswith("URL: ") and "response" in rec["steps"][0]
    # a torn line from a crash is dropped and that episode re-run; finished ones are kept
    with (out / "episodes.jsonl").open("a") as f:
        f.write('{"task_id": 2, "tor')
    summary, recs = run_eval(tasks, lambda: RandomAgent(seed=1), env, out, progress=False)
    assert summary["episodes"] == 4
    assert [r["task_id"] for r in read_episodes(out / "episodes.jsonl")] == [0, 1, 2, 3]
    saved = json.loads((out / "summary.json").read_text())
    assert saved["episodes"] == 4 and "per_site" in saved
    assert json.loads((out / "config.json").read_text())["env"]["max_steps"] == 5


def test_an_eval_folder_refuses_another_agents_episodes(tmp_path, capsys):
    """`webrl eval --out DIR` again with another agent (or seed): an error naming the setting, not the
    old agent's episodes reported as the new one's; the same agent resumes (and may add tasks)."""
    from webrl.cli.main import main

    out = tmp_path / "ev"
    base = ["eval", "--split", "test", "--sites", "forum", "--limit", "2", "--out", str(out), "--no-progress"]
    assert main([*base, "--agent", "oracle"]) == 0
    before = (out / "episodes.jsonl").read_text()
    assert main([*base, "--agent", "random"]) == 2
    assert "another agent" in capsys.readouterr().err
    assert (out / "episodes.jsonl").read_text() == before and json.loads((out / "config.json").read_text())["agent"] == "oracle"
    assert main([*base, "--agent", "oracle", "--limit", "3"]) == 0  # one more task (the last --limit wins)
    assert len((out / "episodes.jsonl").read_text().splitlines()) == 3
    assert main([*base, "--agent", "random", "--out", str(tmp_path / "r"), "--seed", "1"]) == 0
    assert main([*base, "--agent", "random", "--out", str(tmp_path / "r"), "--seed", "2"]) == 2
    assert "another seed" in capsys.readouterr().err


def test_a_resumed_llm_eval_refuses_episodes_of_another_checkpoint(tmp_path):
    from webrl.models.build import checkpoint_fingerprint
    from webrl.rollout.llm import check_resume

    ckpt = tmp_path / "sft" / "final"
    ckpt.mkdir(parents=True)
    (ckpt / "adapter_model.safetensors").write_bytes(b"weights v1")
    (ckpt / "webrl_model.json").write_text("{}")
    (ckpt / "README.md").write_text("notes")
    first = checkpoint_fingerprint(ckpt)
    (ckpt / "README.md").write_text("other notes")  # not weights or config: same checkpoint
    assert checkpoint_fingerprint(ckpt) == first and len(first) == 16
    (ckpt / "adapter_model.safetensors").write_bytes(b"weights v2")  # retrained at the same path
    second = checkpoint_fingerprint(ckpt)
    assert second != first
    assert checkpoint_fingerprint(tmp_path / "hub-id") is None

    saved = tmp_path / "eval" / "config.json"
    saved.parent.mkdir()
    cfg = {"policy": str(ckpt), "fingerprint": first, "prompt": {"max_rounds": 6}, "sampling": {"temperature": 0.0},
           "env": {"max_steps": 12}, "tasks": 165}
    saved.write_text(json.dumps(cfg))
    check_resume(saved, {**cfg, "tasks": 16})  # the task count may differ (a subset eval grows into the whole)
    check_resume(saved, {**cfg, "fingerprint": None})  # an in-memory policy: nothing to compare
    with pytest.raises(ValueError, match="another fingerprint, sampling"):
        check_resume(saved, {**cfg, "fingerprint": second, "sampling": {"temperature": 1.0}})
    check_resume(tmp_path / "fresh" / "config.json", cfg)  # nothing saved yet
    # a prompt setting added by a later version of the code: resumable at its default, not otherwise
    check_resume(saved, {**cfg, "prompt": {"max_rounds": 6, "recap": False}})
    with pytest.raises(ValueError, match="another prompt"):
        check_resume(saved, {**cfg, "prompt": {"max_rounds": 6, "recap": True}})
    with pytest.raises(ValueError, match="another prompt"):
        check_resume(saved, {**cfg, "prompt": {}})  # a setting the old run had is gone
    with pytest.raises(ValueError, match="another env"):
        check_resume(saved, {**cfg, "env": {"max_steps": 12, "no_such_setting": 1}})

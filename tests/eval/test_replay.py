from webrl.env.web_env import EnvConfig, WebEnv
from webrl.eval.replay import replay_records
from webrl.tasks.splits import load_split


def _record(task, responses, config):
    """An eval-style record of `responses` played on a real env under `config`."""
    env = WebEnv(config)
    env.reset(options={"task": task})
    steps, reward = [], 0.0
    for r in responses:
        _, reward, term, trunc, _ = env.step(r)
        steps.append({"response": r})
        if term or trunc:
            break
    return {"task_id": task.task_id, "steps": steps, "n_steps": len(steps), "success": reward >= 1.0}


def test_replay_reproduces_under_the_same_rules_and_cuts_a_cycle_under_revisits():
    task = load_split("test")[0]
    env = WebEnv()
    _, info = env.reset(options={"task": task})
    link = next(e["id"] for e in info["elements"] if e["tag"] == "a" and e.get("visible"))
    cycle = [f'do(action="Click", element="{link}")', 'do(action="Go Backward")'] * 6
    rec = _record(task, cycle, EnvConfig(max_revisits=0))
    assert rec["n_steps"] == 12 and not rec["success"]
    same = replay_records([rec], {task.task_id: task}, EnvConfig(max_revisits=0))
    assert same["steps_replayed"] == 12 and same["outcomes_changed"] == [] and same["steps_saved_share"] == 0.0
    cut = replay_records([rec], {task.task_id: task}, EnvConfig(max_revisits=3))
    assert cut["steps_replayed"] == 5 and cut["steps_saved_share"] == round(1 - 5 / 12, 4)  # 3rd click on the start page
    other = replay_records([rec], {}, EnvConfig())
    assert other["episodes"] == 0 and other["skipped"] == 1


def test_bench_replay_cli(tmp_path, capsys):
    import json

    from webrl.cli.main import main

    task = load_split("test")[0]
    rec = _record(task, ['do(action="Scroll Down")', 'exit(message="N/A")'], EnvConfig())
    path = tmp_path / "episodes.jsonl"
    path.write_text(json.dumps(rec) + "\n")
    assert main(["bench", "replay", "--episodes", str(path), "--tasks", "test", "--max-revisits", "0"]) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert out["episodes"] == 1 and out["steps_replayed"] == 2 and out["config"]["max_revisits"] == 0
    assert main(["bench", "replay", "--episodes", str(tmp_path / "missing.jsonl")]) == 2

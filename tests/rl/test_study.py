"""`webrl study`: paired statistics, the results table, sharing the start eval and phase 1's
rollouts, adopting a run, and every config a valid loop config (pure functions and small run
folders; no training: tests/rl/test_loop.py trains with a shared phase 1)."""

import json
from dataclasses import replace
from pathlib import Path

import pytest

from webrl.cli.main import main
from webrl.rl.loop_config import LOOP_PRESETS, LoopConfig


def test_sign_test_and_paired_outcomes_by_hand():
    from webrl.eval.study import paired, sign_test

    # 5 won, 0 lost: 2 * (1/2)^5; 3 vs 3 is no evidence; 1 vs 4: 2 * (1 + 5) / 32
    assert sign_test(5, 0) == 2 / 32 and sign_test(0, 5) == 2 / 32
    assert sign_test(3, 3) == 1.0 and sign_test(0, 0) == 1.0
    assert sign_test(1, 4) == 12 / 32
    # 9 vs 1: 2 * (1 + 10) / 1024
    assert abs(sign_test(9, 1) - 22 / 1024) < 1e-12
    start = {1: True, 2: False, 3: False, 4: True, 5: True}
    final = {1: True, 2: True, 3: False, 4: False, 6: True}  # task 5 / 6: in one eval only, not paired
    assert paired(start, final) == (1, 1)


def test_study_time_left_is_the_mean_run_times_the_runs_left():
    from webrl.eval.study import eta_note

    assert eta_note([], 5) == "" and eta_note([20.0], 0) == ""
    assert eta_note([20.0, 30.0], 3) == "; about 75 min left"  # 25 min x 3
    assert eta_note([25.0], 30) == "; about 12.5 h left"


def test_study_table_rounds_once():
    from webrl.eval.study import format_results, stats

    assert stats([8 / 165])["mean"] == 0.048485 and stats([0.1, 0.3]) == {"mean": 0.2, "std": 0.141421, "n": 2}
    assert "| 4.8 (n=1) |" in format_results({"digirl": {"all": stats([8 / 165])}})
    # 0 won, 21 lost: p = 2 / 2^21 = 9.5e-7, kept as a number and shown as a bound, not as "p 0"
    from webrl.eval.study import _paired_cell, sign_test

    p = float(f"{sign_test(0, 21):.3g}")
    assert p == 9.54e-07 and _paired_cell({"won": 0, "lost": 21, "p": p}) == "+0 / −21, p < 0.001"
    assert _paired_cell({"won": 8, "lost": 11, "p": 0.6476}) == "+8 / −11, p 0.65"


def test_study_runs_share_the_start_eval(tmp_path):
    from webrl.cli.start_eval import share_start_eval

    src, dst = tmp_path / "webrl" / "seed-0", tmp_path / "awr" / "seed-0"
    ev = src / "phase-000" / "eval"
    ev.mkdir(parents=True)
    (ev / "episodes.jsonl").write_text('{"task_id": 0, "success": true}\n')
    (ev / "summary.json").write_text('{"success_rate": 1.0}\n')
    assert not share_start_eval(src, dst)  # not finished yet
    (ev / "done").write_text("")
    assert share_start_eval(src, dst)
    got = dst / "phase-000" / "eval"
    assert sorted(p.name for p in got.iterdir()) == ["done", "episodes.jsonl", "summary.json"]
    assert (got / "episodes.jsonl").read_text() == (ev / "episodes.jsonl").read_text()
    assert not share_start_eval(src, dst)  # a run's own eval is never replaced


def test_a_run_finds_a_finished_start_eval_to_share(tmp_path):
    from webrl.cli.start_eval import start_eval_source

    cfg = LoopConfig(init="sft/final", reward="oracle")
    runs = []
    for name, fields, finished in (("awr", {"init": "other/final"}, True), ("no_kl", {}, False),
                                   ("webrl", {}, True)):  # fmt: skip
        run = tmp_path / name / "seed-0"
        (run / "phase-000" / "eval").mkdir(parents=True)
        (run / "train_config.json").write_text(json.dumps({**cfg.to_json(), **fields, "seed": 3}))
        if finished:
            (run / "phase-000" / "eval" / "done").write_text("")
        runs.append(run)
    # awr started from another actor, no_kl's start eval is unfinished: webrl's (seed 3) serves seed 0
    assert start_eval_source(runs, cfg) == tmp_path / "webrl" / "seed-0"
    assert start_eval_source(runs, LoopConfig(init="sft/final", reward="oracle", eval_max_steps=10)) is None
    missing = tmp_path / "missing"
    assert start_eval_source([missing, *runs], cfg) == tmp_path / "webrl" / "seed-0"
    # without a final eval the start eval covers the per-phase subset, which depends on the seed;
    # a whole-split subset (0) is the whole split again
    sub = LoopConfig(init="sft/final", reward="oracle", final_eval=False, eval_subset=16, seed=3)
    assert start_eval_source(runs, sub) is None
    (runs[2] / "train_config.json").write_text(json.dumps(sub.to_json()))
    assert start_eval_source(runs, sub) == runs[2]
    assert start_eval_source(runs, replace(sub, seed=4)) is None
    whole = LoopConfig(init="sft/final", reward="oracle", final_eval=False, eval_subset=0, seed=4)
    assert start_eval_source(runs, whole) is None
    (runs[2] / "train_config.json").write_text(json.dumps({**whole.to_json(), "seed": 1}))
    assert start_eval_source(runs, whole) == runs[2]
    assert start_eval_source(runs, cfg) == runs[2]  # the whole split, as a final eval's start


def _phase_1(run, cfg, stages=("tasks", "rollout", "label")):
    """A run folder whose phase 1 finished `stages` (made-up files, as the loop writes them)."""
    pdir = run / "phase-001"
    (pdir / "rollouts").mkdir(parents=True)
    (run / "train_config.json").write_text(json.dumps(cfg.to_json()))
    (pdir / "tasks.json").write_text("[]\n")
    (pdir / "labels.jsonl").write_text('{"task_id": "7", "reward": 1.0}\n')
    step = {"obs": "[Sign in](1)", "response": 'do(action="Click", element="1")'}
    (pdir / "rollouts" / "episodes.jsonl").write_text(json.dumps({"task_id": "7", "steps": [step]}) + "\n")
    (pdir / "stages.json").write_text(json.dumps({k: {"minutes": 2.5} for k in stages}))
    return run


def test_configs_that_differ_only_in_their_update_share_phase_1(tmp_path):
    from webrl.cli.start_eval import UPDATE_ONLY, first_phase_source, rollout_settings
    from webrl.cli.study_cmds import CONFIGS

    base = LoopConfig(**{**LOOP_PRESETS["cpu"], "init": "sft/final", "orm": "orm/final", "demos": "d.jsonl"})
    src = _phase_1(tmp_path / "webrl" / "seed-0", base)
    # every study config changes only what follows the labels (no_curriculum too: phase 1 draws from
    # the train pool either way)
    for name, fields in CONFIGS.items():
        assert set(fields) <= UPDATE_ONLY, name
        assert first_phase_source([src], replace(base, **fields)) == src, name
    # what feeds phase 1's tasks, rollouts or labels keeps runs apart
    for fields in ({"seed": 1}, {"temperature": 1.0}, {"tasks_per_phase": 8}, {"rollout_max_steps": 6},
                   {"orm_threshold": 0.5}, {"reward": "oracle"}, {"init": "other/final"}, {"envs": 4},
                   {"max_batch_tokens": 4096}, {"rollouts_per_task": 2}):  # fmt: skip
        assert first_phase_source([src], replace(base, **fields)) is None, fields
    kept = rollout_settings(base.to_json())  # what phase 1 is made of is compared
    assert {"seed", "init", "orm", "reward", "orm_threshold", "temperature", "tasks_per_phase", "train_tasks",
            "rollout_max_steps", "rollouts_per_task", "envs", "max_batch_tokens"} <= set(kept)
    assert not set(kept) & UPDATE_ONLY
    # a phase 1 that has not labelled its rollouts yet is no source; the first finished one is
    early = _phase_1(tmp_path / "awr" / "seed-0", base, stages=("tasks", "rollout"))
    assert first_phase_source([early, tmp_path / "missing", src], base) == src
    assert first_phase_source([early], base) is None
    # a config saved by older code (without the settings added since) is read at their defaults;
    # one that is no config at all is no source
    older = _phase_1(tmp_path / "older" / "seed-0", base)
    saved = json.loads((older / "train_config.json").read_text())
    for key in ("constraint_share", "critic_backbone", "critic_tune_epochs"):
        del saved[key]
    (older / "train_config.json").write_text(json.dumps(saved))
    assert first_phase_source([older], base) == older
    (older / "train_config.json").write_text(json.dumps({**saved, "bogus": 1}))
    assert first_phase_source([older], base) is None
    # an archived run's episodes have lost their pages (the critic needs them): never a source
    from webrl.eval.archive import archive

    archive(tmp_path / "webrl", tmp_path / "archived")
    slim = tmp_path / "archived" / "seed-0"
    assert json.loads((slim / "phase-001" / "stages.json").read_text())["label"]
    assert first_phase_source([slim], base) is None


def test_share_first_phase_copies_three_stages_and_never_replaces(tmp_path):
    from webrl.cli.start_eval import share_first_phase

    base = LoopConfig(init="sft/final", reward="oracle")
    src = _phase_1(tmp_path / "webrl" / "seed-0", base, stages=("tasks", "rollout", "label", "replay", "critic"))
    (src / "phase-001" / "examples.jsonl").write_text("{}\n")  # the source's own update: not shared
    dst = tmp_path / "awr" / "seed-0"
    assert share_first_phase(src, dst)
    got = dst / "phase-001"
    assert sorted(p.name for p in got.iterdir()) == ["labels.jsonl", "rollouts", "stages.json", "tasks.json"]
    for name in ("labels.jsonl", "tasks.json", "rollouts/episodes.jsonl"):
        assert (got / name).read_text() == (src / "phase-001" / name).read_text()
    stages = json.loads((got / "stages.json").read_text())
    assert list(stages) == ["tasks", "rollout", "label"]  # the loop resumes at replay
    assert all(v["minutes"] == 0.0 and v["shared_from"] == str(src) for v in stages.values())
    assert all(v["shared_minutes"] == 2.5 for v in stages.values())  # what they cost the source
    (got / "labels.jsonl").write_text("")  # the run goes on from there: its phase 1 is its own now
    assert not share_first_phase(src, dst) and (got / "labels.jsonl").read_text() == ""
    unlabelled = _phase_1(tmp_path / "filtered_bc" / "seed-0", base, stages=("tasks", "rollout"))
    assert not share_first_phase(unlabelled, tmp_path / "digirl" / "seed-0")
    assert not (tmp_path / "digirl").exists()


def test_a_study_adopts_a_finished_run_with_its_exact_settings(tmp_path):
    from webrl.cli.study_cmds import adopt_run

    base = {"init": "sft/final", "reward": "oracle"}
    slots = {tmp_path / "study" / n / f"seed-{s}": LoopConfig(**base, **extra, seed=s)
             for n, extra in (("webrl", {}), ("beta_10", {"beta": 10.0})) for s in (0, 1)}  # fmt: skip
    demo = tmp_path / "demo" / "webrl"
    (demo / "final" / "eval").mkdir(parents=True)
    (demo / "train_config.json").write_text(json.dumps(LoopConfig(**base, seed=1).to_json()))
    with pytest.raises(ValueError, match="not a finished"):
        adopt_run(demo, slots)
    (demo / "final" / "eval" / "summary.json").write_text("{}")
    (demo / "final" / "eval" / "done").write_text("")
    assert adopt_run(demo, slots) == tmp_path / "study" / "webrl" / "seed-1"  # the seed is part of the match
    assert (tmp_path / "study" / "webrl" / "seed-1" / "final" / "eval" / "done").exists()
    assert adopt_run(demo, slots) == tmp_path / "study" / "webrl" / "seed-1"  # again: a no-op
    other = tmp_path / "other"  # the same run with another beta: no slot, and the error says what differs
    (other / "final").mkdir(parents=True)
    (other / "train_config.json").write_text(json.dumps(LoopConfig(**base, seed=1, beta=2.0).to_json()))
    (other / "final" / "eval").mkdir()
    (other / "final" / "eval" / "summary.json").write_text("{}")
    (other / "final" / "eval" / "done").write_text("")
    with pytest.raises(ValueError, match="differs in beta"):
        adopt_run(other, slots)
    started = tmp_path / "study" / "webrl" / "seed-0"  # a slot with a started run of its own is kept
    (started / "phase-001").mkdir(parents=True)
    (demo / "train_config.json").write_text(json.dumps(LoopConfig(**base, seed=0).to_json()))
    with pytest.raises(ValueError, match="already holds a started run"):
        adopt_run(demo, slots)
    # the command refuses before running anything, naming the run
    args = ["study", "--out", str(tmp_path / "s2"), "--init", "sft/final", "--configs", "webrl", "--seeds", "1"]
    assert main([*args, "--adopt", str(other)]) == 2
    assert not (tmp_path / "s2" / "webrl").exists()


def test_a_studys_archive_leaves_its_unfinished_runs_out(tmp_path):
    """A study stopped mid-run and restarted refreshes its archive after each (already finished)
    run: the stopped run's partial records must not reach the archive."""
    from webrl.cli.study_cmds import unfinished_runs
    from webrl.eval.archive import archive

    out = tmp_path / "study"
    for name, finished in (("webrl", True), ("awr", False)):
        run = out / name / "seed-0"
        (run / "final" / "eval").mkdir(parents=True)
        (run / "train_config.json").write_text(json.dumps(LoopConfig(init="sft/final", reward="oracle").to_json()))
        (run / "final" / "eval" / "summary.json").write_text('{"success_rate": 0.25}')
        if finished:
            (run / "final" / "eval" / "done").write_text("")
    (out / "digirl").mkdir()  # a config folder without runs is no run
    assert unfinished_runs(out) == [Path("awr/seed-0")]
    archive(out, tmp_path / "arch", exclude=unfinished_runs(out))
    assert (tmp_path / "arch" / "webrl" / "seed-0" / "final" / "eval" / "done").exists()
    assert not (tmp_path / "arch" / "awr").exists()
    (out / "awr" / "seed-0" / "final" / "eval" / "done").write_text("")  # finished: archived next time
    assert unfinished_runs(out) == []


def test_a_shared_phase_1_counts_in_a_runs_minutes_at_its_cost_to_the_source(tmp_path):
    from webrl.cli.start_eval import share_first_phase
    from webrl.eval.study import run_minutes

    def finish(run, phase_minutes, eval_minutes):
        (run / "metrics.jsonl").write_text("".join(json.dumps({"phase": k + 1, "minutes": m}) + "\n"
                                                   for k, m in enumerate(phase_minutes)))  # fmt: skip
        summary = run / "final" / "eval" / "summary.json"
        summary.parent.mkdir(parents=True)
        summary.write_text(json.dumps({"success_rate": 0.1, "wall_minutes": eval_minutes}))
        return summary

    base = LoopConfig(init="sft/final", reward="oracle")
    src = _phase_1(tmp_path / "webrl" / "seed-0", base)  # tasks, rollout, label: 2.5 min each
    assert run_minutes(src, finish(src, [10.0, 8.0], 12.0)) == 30.0
    dst = tmp_path / "awr" / "seed-0"
    assert share_first_phase(src, dst)
    # its phase 1 logged 3 minutes of its own (replay, critic, actor, eval); the shared 7.5 count too
    assert run_minutes(dst, finish(dst, [3.0, 8.0], 12.0)) == 30.5
    again = tmp_path / "digirl" / "seed-0"  # shared on from a run that shared it: still the first cost
    assert share_first_phase(dst, again)
    assert json.loads((again / "phase-001" / "stages.json").read_text())["label"]["shared_minutes"] == 2.5


def test_nothing_is_shared_into_a_folder_begun_with_other_settings(tmp_path):
    from webrl.cli.start_eval import claimed_otherwise
    from webrl.models.training import claim_run_config

    run = tmp_path / "awr" / "seed-0"
    cfg = LoopConfig(init="sft/final", reward="oracle", method="awr")
    assert not claimed_otherwise(run, cfg)  # a new folder
    run.mkdir(parents=True)
    claim_run_config(run / "train_config.json", replace(cfg, tasks_per_phase=8), "--run")
    assert claimed_otherwise(run, cfg)  # begun (and killed) under other settings: `train` refuses it
    assert not claimed_otherwise(run, replace(cfg, tasks_per_phase=8))


def test_study_table_pairs_each_config_with_continued_sft_and_webrl_seed_by_seed(tmp_path):
    from webrl.eval.study import format_results, results

    def final(name, seed, outs):
        ev = tmp_path / name / f"seed-{seed}" / "final" / "eval"
        ev.mkdir(parents=True)
        ev.joinpath("episodes.jsonl").write_text("".join(json.dumps({"task_id": t, "success": ok}) + "\n"
                                                         for t, ok in outs.items()))  # fmt: skip
        ev.joinpath("summary.json").write_text(json.dumps({"success_rate": sum(outs.values()) / len(outs)}))
        ev.joinpath("done").write_text("")
        (tmp_path / name / f"seed-{seed}" / "train_config.json").write_text("{}")

    final("continued_sft", 0, {1: True, 2: True, 3: False, 4: False})
    final("continued_sft", 1, {1: True, 2: False, 3: False, 4: False})
    final("webrl", 0, {1: False, 2: False, 3: True, 4: False})  # vs the bar: +1 (3) / -2 (1, 2)
    final("webrl", 1, {1: False, 2: True, 3: False, 4: False})  # +1 (2) / -1 (1)
    final("webrl", 2, {1: True, 2: True, 3: True, 4: True})  # the bar has no seed 2: not paired
    table = results(tmp_path, ["webrl", "continued_sft"], [0, 1, 2])
    assert table["webrl"]["vs_bar"] == {"won": 2, "lost": 3, "p": 1.0}
    assert "vs_bar" not in table["continued_sft"]
    # and each config against webrl's final actor of the same seed (an ablation's paired effect)
    assert table["continued_sft"]["vs_full"] == {"won": 3, "lost": 2, "p": 1.0}  # seed 0: +2 (1, 2) / -1 (3); seed 1: +1 / -1
    assert "vs_full" not in table["webrl"]
    final("awr", 2, {1: True, 2: False, 3: False, 4: False})  # no seed in common with the bar: "-", not +0 / −0
    awr = results(tmp_path, ["webrl", "continued_sft", "awr"], [0, 1, 2])["awr"]
    assert awr["vs_bar"] is None and awr["vs_full"] == {"won": 0, "lost": 3, "p": 0.25}  # seed 2 vs webrl's
    assert format_results({"awr": awr}).splitlines()[-1].endswith("| +0 / −0, p 1 | - | +0 / −3, p 0.25 |")  # no start eval here
    header = format_results(table).splitlines()[0]
    assert header.endswith("| tasks won / lost vs start | won / lost vs continued_sft | won / lost vs webrl |")
    assert "| +2 / −3, p 1 | - |" in format_results(table).split("| webrl |")[1].splitlines()[0]
    assert "| - | +3 / −2, p 1 |" in format_results(table).split("| continued_sft |")[1].splitlines()[0]
    alone = results(tmp_path, ["webrl"], [0, 1, 2])["webrl"]  # neither reference in the study: no column
    assert "vs_bar" not in alone and "vs_full" not in alone
    assert format_results({"webrl": alone}).splitlines()[0].endswith("| tasks won / lost vs start |")


def test_every_study_config_is_a_valid_loop_config():
    from webrl.cli.study_cmds import CONFIGS

    base = {**LOOP_PRESETS["cpu"], "init": "x", "orm": "o", "demos": "d.jsonl"}
    for name, override in CONFIGS.items():
        cfg = LoopConfig(**{**base, **override})
        assert all(getattr(cfg, k) == v for k, v in override.items()), name
    assert LoopConfig(**{**base, **CONFIGS["replay_x4"]}).replay_sample == 4.0 and base["replay_sample"] == 1.0
    assert LoopConfig(**{**base, **CONFIGS["released"]}).loss == "released"
    from webrl.cli.study_cmds import DEFAULT, config_names

    assert config_names("all") == [n for n in CONFIGS if n != "no_kl"] and "beta_10" in config_names("all")
    assert config_names(DEFAULT)[:5] == ["webrl", "continued_sft", "filtered_bc", "awr", "digirl"]
    assert config_names(" webrl, awr ,") == ["webrl", "awr"]


def test_an_archived_start_eval_is_shared_and_read(tmp_path, monkeypatch):
    """A run's archive (episodes gzipped, pages dropped) still serves as a start eval to share: a new
    run takes it, and the study's task-by-task outcomes read it."""
    from webrl.cli.start_eval import share_start_eval, start_eval_source
    from webrl.eval import archive as arch
    from webrl.eval.study import outcomes

    cfg = LoopConfig(init="sft/final", reward="oracle")
    src = tmp_path / "runs" / "demo" / "webrl"
    ev = src / "phase-000" / "eval"
    ev.mkdir(parents=True)
    (src / "train_config.json").write_text(json.dumps(cfg.to_json()))
    (ev / "done").write_text("")
    (ev / "summary.json").write_text(json.dumps({"success_rate": 0.5, "episodes": 2}))
    (ev / "episodes.jsonl").write_text("".join(json.dumps({"task_id": i, "success": i == 1, "final_obs": "P" * 900,
                                                           "steps": [{"obs": "P" * 900, "response": "r"}]}) + "\n"
                                               for i in range(2)))  # fmt: skip
    monkeypatch.setattr(arch, "GZIP_OVER", 100)
    arch.archive(tmp_path / "runs", tmp_path / "archive")
    archived = tmp_path / "archive" / "demo" / "webrl"
    assert (archived / "phase-000" / "eval" / "episodes.jsonl.gz").exists()
    assert start_eval_source([archived], cfg) == archived
    new = tmp_path / "new-run"
    assert share_start_eval(archived, new)
    assert outcomes(new / "phase-000" / "eval") == {0: False, 1: True} == outcomes(ev)

"""`webrl report` from hand-made run folders: seeds merged per config, the ORM against the
evaluators on the loop's rollouts, tasks won and lost by kind, PNG-only screenshots, the commits
that ran a run."""

import base64
import json


def test_report_merges_a_studys_seeds_per_config_and_orders_buckets():
    from webrl.eval.report import _by_config, _natural, _subset_curve, subset_change

    def run(name, fails):  # a final eval with `fails` wrong-page failures
        return {"name": name, "group": name.split("/")[0], "final": {"errors": {"counts": {"wrong_page": fails}}},
                "phase_evals": {}}  # fmt: skip

    runs = [run("webrl/seed-0", 4), run("webrl/seed-1", 7), run("alone", 2),
            {"name": "no_kl/seed-0", "group": "no_kl", "final": None, "phase_evals": {}}]  # fmt: skip
    merged = _by_config(runs, lambda f: {"wrong_page": f["errors"]["counts"]["wrong_page"]})
    assert merged == {"webrl": {"wrong_page": 5.5}, "alone": {"wrong_page": 2}}  # no_kl: nothing finished
    assert sorted(["10+", "4-9", "1-3"], key=_natural) == ["1-3", "4-9", "10+"]
    curve = _subset_curve({"phase_evals": {0: {"success_rate": 0.1}, 1: {"success_rate": 0.25}},
                           "start_on_subset": {"success_rate": 0.125}})  # fmt: skip
    assert curve == {0: 12.5, 1: 25.0}  # phase 0 is the start on the subset's tasks
    assert subset_change(curve) == {0: 0.0, 1: 12.5} and subset_change({1: 25.0}) == {}


def test_report_compares_the_loops_orm_rewards_with_the_evaluators(tmp_path):
    from webrl.eval.report import load_run, loop_orm_rows

    def run(path, reward, phases):
        path.mkdir(parents=True)
        (path / "train_config.json").write_text(json.dumps({"reward": reward}))
        for k, rows in enumerate(phases, 1):
            (path / f"phase-{k:03d}").mkdir()
            (path / f"phase-{k:03d}" / "labels.jsonl").write_text("".join(json.dumps(x) + "\n" for x in rows))
        return load_run(path)

    lab = lambda p, r, t: {"task_id": 1, "p_success": p, "reward": r, "true_reward": t}  # noqa: E731
    seed0 = run(tmp_path / "webrl" / "seed-0", "orm", [[lab(0.9, 1.0, 1.0), lab(0.8, 1.0, 0.0)], [lab(0.2, 0.0, 1.0)]])
    seed1 = run(tmp_path / "webrl" / "seed-1", "orm", [[lab(0.1, 0.0, 0.0), lab(0.3, 0.0, None)]])  # no evaluator: out
    oracle = run(tmp_path / "oracle" / "seed-0", "oracle", [[lab(0.5, 1.0, 1.0)]])  # rewarded by the evaluators: out
    # webrl's seeds pooled: 4 rollouts with an evaluator, 2 true successes (P 0.9, 0.2) against failures (0.8, 0.1):
    # AUC = (0.9 > 0.8, 0.9 > 0.1, 0.2 < 0.8, 0.2 > 0.1) = 3/4; rewarded 2, rightly 1, one false positive, one miss
    assert loop_orm_rows([seed0, seed1, oracle]) == [["webrl", 4, 2, 2, 1, 1, 1, "0.750"]]
    assert loop_orm_rows([oracle]) == []


def test_report_counts_tasks_won_and_lost_by_kind(tmp_path):
    from webrl.eval.report import kind_changes, load_run
    from webrl.tasks.registry import families
    from webrl.tasks.splits import load_split

    kind = {name: f.kind for name, f in families().items()}
    tasks = load_split("test")
    pick = {k: [t for t in tasks if kind[t.family] == k][:2] for k in ("info", "infeasible")}
    i0, i1, n0, n1 = (t.task_id for t in (*pick["info"], *pick["infeasible"]))
    fam = {t.task_id: t.family for ts in pick.values() for t in ts}
    start = {i0: True, i1: True, n0: False, n1: True}
    final = {i0: False, i1: True, n0: True, n1: True}
    for seed in (0, 1):  # two seeds of one config, the same outcomes: the counts add up
        run = tmp_path / "webrl" / f"seed-{seed}"
        for folder, outs in (("phase-000", start), ("final", final)):
            (run / folder / "eval").mkdir(parents=True)
            (run / folder / "eval" / "episodes.jsonl").write_text("".join(
                json.dumps({"task_id": t, "family": fam[t], "success": ok}) + "\n" for t, ok in outs.items()))
            (run / folder / "eval" / "summary.json").write_text(json.dumps({"success_rate": 0.5}))
        (run / "train_config.json").write_text(json.dumps({"eval_split": "test"}))
    runs = [load_run(tmp_path / "webrl" / f"seed-{s}") for s in (0, 1)]
    # per seed: one info task lost, one infeasible task won; the unchanged ones are not counted
    assert kind_changes(runs) == {"webrl": {"info": [0, 2], "infeasible": [2, 0]}}
    eps = run / "final" / "eval" / "episodes.jsonl"  # a family the registry does not know (an LLM-made task)
    eps.write_text(eps.read_text().replace(fam[n0], "llm.generated"))
    assert kind_changes([load_run(run)]) == {"webrl": {"info": [0, 1], "other": [1, 0]}}


def test_viewer_embeds_png_screenshots_only(tmp_path):
    from webrl.eval.report import _screenshot

    secret = tmp_path / "id_rsa"
    secret.write_text("-----BEGIN OPENSSH PRIVATE KEY-----")
    png = tmp_path / "shot.png"
    png.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 16)
    assert _screenshot(str(secret)) is None and _screenshot(str(tmp_path / "missing.png")) is None
    assert base64.b64decode(_screenshot(str(png))) == png.read_bytes()


def test_viewer_json_cannot_end_or_reopen_its_script_element():
    from webrl.eval.report import script_json

    texts = ['<!--<script>x</script>', "</script><b>&amp;", "a\\<b", "plain"]
    out = script_json({"steps": texts})
    assert not set("<>&") & set(out)  # nothing an HTML parser could read as markup or an entity
    assert json.loads(out) == {"steps": texts}


def test_the_report_names_the_commits_that_ran_a_run():
    from webrl.eval.report import code_label

    assert code_label([]) == "-"
    invs = [{"commit": "a" * 40, "dirty": False}, {"commit": "a" * 40, "dirty": False},
            {"commit": "b" * 40, "dirty": True}, {"commit": None, "dirty": None}]  # fmt: skip
    assert code_label(invs) == "aaaaaaaa, bbbbbbbb*, ?"

"""The committed split files: regenerable, sized like WebArena-Lite, solvable, disjoint."""

import json

import pytest

from webrl.agent.policies import OracleAgent, RandomAgent
from webrl.env.web_env import EnvConfig, WebEnv
from webrl.rollout.oracle import split_stats, with_measured_difficulty
from webrl.rollout.runner import run_eval
from webrl.tasks.registry import site_families
from webrl.tasks.splits import TEST_COUNTS, build_split, instances, load_split


@pytest.mark.parametrize("split", ["test", "train"])
def test_split_files_match_generator(split, db, world):
    committed = [t.to_json() for t in load_split(split)]
    built = with_measured_difficulty(build_split(split, db), WebEnv(world=world))
    assert committed == [t.to_json() for t in built], "run `webrl tasks build`"


def test_stats_of_test_split():
    stats = split_stats(load_split("test"))
    assert stats["per_site"] == TEST_COUNTS
    assert set(stats["per_eval_type"]) == {"string_match", "url_match", "program_html"}
    assert all(n > 0 for n in stats["per_step_bucket"].values()), stats
    assert stats["infeasible"] > 0


def test_split_sizes_and_disjointness():
    test, train = load_split("test"), load_split("train")
    counts = {}
    for t in test:
        counts[t.site] = counts.get(t.site, 0) + 1
    assert counts == TEST_COUNTS
    assert len(test) == 165 and 950 <= len(train) <= 1050
    assert not {t.intent for t in test} & {t.intent for t in train}
    ids = [t.task_id for t in test + train]
    assert len(ids) == len(set(ids))
    for site in TEST_COUNTS:  # every family of a site is represented in its test share
        fams = {f.name for f in site_families(site)}
        assert fams <= {t.family for t in train}


def test_oracle_solves_every_test_task_and_random_does_not(world):
    tasks = load_split("test")
    summary, records = run_eval(tasks, OracleAgent, WebEnv(world=world), progress=False)
    failed = [(r["task_id"], r["family"], r["steps"][-1]["error"] if r["steps"] else r["agent_error"])
              for r in records if not r["success"]]  # fmt: skip
    assert summary["success_rate"] == 1.0, failed
    rand, _ = run_eval(tasks, lambda: RandomAgent(seed=0), WebEnv(world=world), progress=False)
    assert rand["success_rate"] <= 0.1


@pytest.mark.slow
@pytest.mark.parametrize("site", list(TEST_COUNTS))
def test_oracle_on_200_fresh_instances(site, world, db):
    tasks = instances(site_families(site), db, "any", 200, set(), first_seed=5000)
    # under the loop rule too (it only ever cuts episodes short, so this covers the rule off as well)
    env = WebEnv(world=world, config=EnvConfig(max_revisits=3))
    summary, records = run_eval(tasks, OracleAgent, env, progress=False)
    failed = [(r["task_id"], r["agent_error"], r["truncated"]) for r in records if not r["success"]]
    assert summary["success_rate"] == 1.0, failed[:5]


def test_cli_generates_fresh_instances_that_evaluate(tmp_path, capsys):
    """`webrl tasks generate`: a family's (or a site's) fresh instances, loadable, and solved by the oracle."""
    from webrl.cli.main import main
    from webrl.tasks.schema import load_tasks

    out = tmp_path / "gen.json"
    assert main(["tasks", "generate", "--site", "forum", "--n", "4", "--seed", "5000", "--out", str(out)]) == 0
    tasks = load_tasks(out)
    assert len(tasks) == 4 and all(t.site == "forum" for t in tasks) and len({t.intent for t in tasks}) == 4
    assert main(["eval", "--agent", "oracle", "--split", str(out), "--json"]) == 0
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["success_rate"] == 1.0
    fam = tasks[0].family
    assert main(["tasks", "generate", "--family", fam, "--n", "2", "--out", str(tmp_path / "f.json")]) == 0
    assert {t.family for t in load_tasks(tmp_path / "f.json")} == {fam}

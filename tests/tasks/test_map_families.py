"""Map task families: oracles solve them, wrong endings fail them, slots are held out."""

from __future__ import annotations

import pytest
from support import play

from webrl.env.web_env import EnvConfig, WebEnv
from webrl.sites import map as map_site
from webrl.sites.map.data import SEED_NOTES
from webrl.sites.map.routing import RoadGraph, plan_route
from webrl.sites.world import WorldApp
from webrl.tasks.family import InfeasibleSlots, SeedDB, holdout
from webrl.tasks.map import FAMILIES
from webrl.tasks.map.base import NEW_NOTES, saved_places
from webrl.tasks.map.info import TravelTime
from webrl.tasks.schema import task_from_json


@pytest.fixture(scope="module")
def world() -> WorldApp:
    return WorldApp({"map": map_site.SPEC})


@pytest.fixture(scope="module")
def db(world) -> SeedDB:
    return SeedDB(world.store.snapshot)


@pytest.fixture(scope="module")
def env(world):
    e = WebEnv(EnvConfig(), world=world)
    yield e
    e.close()


def instances(fam, db, split, want: int = 2, max_seed: int = 40):
    """The first `want` feasible instances (seeds 0, 1, ...)."""
    out = []
    for seed in range(max_seed):
        try:
            out.append(fam.make(db, seed, split))
        except InfeasibleSlots:
            continue
        if len(out) == want:
            break
    return out



def test_families_are_well_formed():
    assert len(FAMILIES) >= 12
    names = [f.name for f in FAMILIES]
    ids = [f.template_id for f in FAMILIES]
    assert len(set(names)) == len(names) and len(set(ids)) == len(ids)
    assert all(n.startswith("map.") for n in names) and all(500 <= i <= 599 for i in ids)
    assert {f.kind for f in FAMILIES} == {"info", "nav", "state", "multi", "infeasible"}
    for f in FAMILIES:
        assert f.start_url.startswith("__MAP__/")
        assert f.require_login or f.kind != "state", f.name


def test_written_content_is_new():
    """Notes agents are asked to write never occur in the seed, so checks can't pass by accident."""
    assert not set(SEED_NOTES) & set(NEW_NOTES)


def test_instances_are_valid_task_json_with_a_spread_of_difficulty(db):
    tasks = [t for fam in FAMILIES for t in instances(fam, db, "train")]
    for t in tasks:
        assert task_from_json(t.to_json()) == t
        assert t.start_url.startswith("__MAP__/") and "{" not in t.intent
        if t.extra.get("answer") is not None:
            assert t.extra["answer"] != t.extra.get("wrong")
    levels = [t.difficulty for t in tasks]
    assert min(levels) <= 2 and max(levels) >= 15


@pytest.mark.parametrize("fam", FAMILIES, ids=lambda f: f.name)
def test_oracle_solves_and_wrong_ending_fails(fam, db, env):
    tasks = instances(fam, db, "train") + instances(fam, db, "test")
    assert len(tasks) == 4, f"{fam.name}: too few feasible instances"
    for task in tasks:
        reward, actions = play(env, task, fam.oracle)
        assert reward == 1.0, (task.intent, actions)
        assert len(actions) <= 30
        reward, actions = play(env, task, fam.wrong_ending)
        assert reward == 0.0, (task.intent, actions)


@pytest.mark.parametrize("fam", FAMILIES, ids=lambda f: f.name)
def test_test_split_slot_values_never_appear_in_train(fam, db):
    train = instances(fam, db, "train", want=12)
    test = instances(fam, db, "test", want=12)
    assert len(train) >= 3 and len(test) >= 3, f"{fam.name}: a split has too few instances"
    for slot in fam.held_out:
        train_values = {t.instantiation_dict[slot] for t in train}
        test_values = {t.instantiation_dict[slot] for t in test}
        assert not train_values & test_values, slot
        assert {holdout(v) for v in test_values} == {"test"}
        assert {holdout(v) for v in train_values} == {"train"}


def test_saved_place_pools_cover_both_splits(db):
    splits = [holdout(p["name"]) for p in saved_places(db)]
    assert splits.count("test") >= 3 and splits.count("train") >= 3


def test_answers_follow_the_routes(db):
    """Reference answers come from the road graph, not constants."""
    task = TravelTime().make(db, 0, "train")
    d = task.instantiation_dict
    conn = db["map"]
    a, b = (
        conn.execute("SELECT * FROM places WHERE name = ?", (n,)).fetchone()
        for n in (d["a"], d["b"])
    )
    minutes = plan_route(RoadGraph(conn), a, b, task.extra["mode"]).minutes
    assert task.eval["reference_answers"]["fuzzy_match"] == [str(minutes)]

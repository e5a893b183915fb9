"""Map task families: oracles solve them, wrong endings fail them, slots are held out."""

from __future__ import annotations

import pytest
from family_checks import (
    check_deterministic,
    check_held_out,
    check_instances,
    check_oracle_and_wrong_ending,
    check_registry,
)

from webrl.sites import map as map_site
from webrl.sites.map.data import SEED_NOTES
from webrl.sites.map.routing import RoadGraph, plan_route
from webrl.tasks.family import holdout
from webrl.tasks.map import FAMILIES
from webrl.tasks.map.base import NEW_NOTES, saved_places
from webrl.tasks.map.info import TravelTime

SITES = {"map": map_site.SPEC}


def test_families_are_well_formed():
    check_registry(FAMILIES, "map.", range(500, 600), "__MAP__/", at_least=12)
    for f in FAMILIES:
        assert f.require_login or f.kind != "state", f.name


def test_written_content_is_new():
    """Notes agents are asked to write never occur in the seed, so checks can't pass by accident."""
    assert not set(SEED_NOTES) & set(NEW_NOTES)


def test_instances_are_valid_task_json_with_a_spread_of_difficulty(db):
    check_instances(FAMILIES, db, "__MAP__/", spread=(2, 15))


@pytest.mark.parametrize("fam", FAMILIES, ids=lambda f: f.name)
def test_oracle_solves_and_wrong_ending_fails(fam, db, env):
    check_oracle_and_wrong_ending(env, db, fam, per_split=2)


@pytest.mark.parametrize("fam", FAMILIES, ids=lambda f: f.name)
def test_test_split_slot_values_never_appear_in_train(fam, db):
    check_held_out(db, fam)


def test_make_is_deterministic(db):
    check_deterministic(FAMILIES, db)


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

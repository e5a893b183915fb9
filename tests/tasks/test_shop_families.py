"""Shop task families: oracles solve them, wrong endings fail them, slots are held out."""

from __future__ import annotations

import pytest
from family_checks import (
    check_deterministic,
    check_held_out,
    check_instances,
    check_oracle_and_wrong_ending,
    check_registry,
)

from webrl.sites import shop
from webrl.tasks.shop import FAMILIES

SITES = {"shop": shop.SPEC}


def test_families_are_well_formed():
    check_registry(FAMILIES, "shop.", range(100, 200), "__SHOP__/", at_least=12)


def test_instances_are_valid_task_json_with_a_spread_of_difficulty(db):
    check_instances(FAMILIES, db, "__SHOP__/", spread=(2, 15))


@pytest.mark.parametrize("fam", FAMILIES, ids=lambda f: f.name)
def test_oracle_solves_and_wrong_ending_fails(fam, db, env):
    check_oracle_and_wrong_ending(env, db, fam, per_split=2)


@pytest.mark.parametrize("fam", FAMILIES, ids=lambda f: f.name)
def test_test_split_slot_values_never_appear_in_train(fam, db):
    check_held_out(db, fam)


def test_make_is_deterministic(db):
    check_deterministic(FAMILIES, db)

"""Cross-site families: oracles solve them, wrong endings score 0, slots held out."""

from __future__ import annotations

import pytest
from family_checks import (
    check_deterministic,
    check_held_out,
    check_oracle_and_wrong_ending,
    check_registry,
    feasible,
)

from webrl.tasks import cross


def test_cross_families_shape():
    check_registry(cross.FAMILIES, "cross.", range(600, 700), "__", at_least=2, kinds=["multi"])
    assert all(len(f.sites) == 2 for f in cross.FAMILIES)


def test_instances_are_cross_site(db):
    assert all(t.site == "cross" for fam in cross.FAMILIES for t in feasible(fam, db, "train", 2))


@pytest.mark.parametrize("fam", cross.FAMILIES, ids=lambda f: f.name)
def test_oracle_and_wrong_ending(fam, env, db):
    check_oracle_and_wrong_ending(env, db, fam, per_split=2)


@pytest.mark.parametrize("fam", cross.FAMILIES, ids=lambda f: f.name)
def test_held_out_slots_never_cross_splits(db, fam):
    check_held_out(db, fam)


def test_make_is_deterministic(db):
    check_deterministic(cross.FAMILIES, db)

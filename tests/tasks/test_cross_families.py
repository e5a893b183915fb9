"""Cross-site families: oracles solve them, wrong endings score 0, slots held out."""

from __future__ import annotations

import pytest
from support import play

from webrl.env.web_env import WebEnv
from webrl.sites.world import WorldApp, default_specs
from webrl.tasks import cross
from webrl.tasks.family import SeedDB

SEEDS = {"train": range(3), "test": range(2)}


@pytest.fixture(scope="module")
def env() -> WebEnv:
    return WebEnv(world=WorldApp(default_specs()))


@pytest.fixture(scope="module")
def db(env) -> SeedDB:
    return SeedDB(env.world.store.snapshot)



def test_cross_families_shape():
    assert len(cross.FAMILIES) >= 2
    for fam in cross.FAMILIES:
        assert len(fam.sites) == 2 and 600 <= fam.template_id < 700


@pytest.mark.parametrize("fam", cross.FAMILIES, ids=lambda f: f.name)
@pytest.mark.parametrize("split", ["train", "test"])
def test_oracle_and_wrong_ending(fam, split, env, db):
    for seed in SEEDS[split]:
        task = fam.make(db, seed, split)
        assert task.site == "cross"
        assert play(env, task, fam.oracle)[0] == 1.0, task.intent
        assert play(env, task, fam.wrong_ending)[0] == 0.0, task.intent

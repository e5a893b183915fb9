"""Forum task families: every oracle solves its task, every wrong ending scores 0,
and held-out slot values never cross between the train and test splits."""

from __future__ import annotations

import pytest
from support import play

from webrl.env.web_env import WebEnv
from webrl.sites import forum as forum_site
from webrl.sites.forum.data import BODY_SENTENCES, COMMENT_SENTENCES
from webrl.tasks import forum
from webrl.tasks.family import SeedDB, holdout
from webrl.tasks.forum.base import NEW_BODIES, NEW_COMMENTS, NEW_EDITS
from webrl.tasks.forum.info import UserKarma
from webrl.tasks.schema import task_from_json

SEEDS = {"train": range(3), "test": range(2)}


@pytest.fixture(scope="module")
def env() -> WebEnv:
    from webrl.sites.world import WorldApp

    return WebEnv(world=WorldApp({"forum": forum_site.SPEC}))


@pytest.fixture(scope="module")
def db(env) -> SeedDB:
    return SeedDB(env.world.store.snapshot)



def test_family_registry_shape():
    fams = forum.FAMILIES
    assert len(fams) >= 12
    assert len({f.name for f in fams}) == len(fams)
    ids = [f.template_id for f in fams]
    assert len(set(ids)) == len(ids) and all(200 <= i <= 299 for i in ids)
    assert {f.kind for f in fams} == {"info", "nav", "state", "multi", "infeasible"}
    for f in fams:
        assert f.start_url.startswith("__FORUM__/")
        assert f.require_login == (f.kind in ("state", "multi")), f.name


def test_written_content_is_new():
    """What agents are asked to write never occurs in the seed, so state checks can't pass by accident."""
    seeded = set(BODY_SENTENCES + COMMENT_SENTENCES)
    assert not seeded & set(NEW_BODIES + NEW_COMMENTS + NEW_EDITS)


@pytest.mark.parametrize("fam", forum.FAMILIES, ids=lambda f: f.name)
def test_oracle_solves_and_wrong_ending_fails(env, db, fam):
    for split, seeds in SEEDS.items():
        for seed in seeds:
            task = fam.make(db, seed, split)
            assert task_from_json(task.to_json()).eval == task.eval
            reward, actions = play(env, task, fam.oracle)
            assert reward == 1.0, f"oracle failed: {task.intent}"
            assert len(actions) <= 30
            wrong, _ = play(env, task, fam.wrong_ending)
            assert wrong == 0.0, f"wrong ending scored {wrong}: {task.intent}"


@pytest.mark.parametrize("fam", forum.FAMILIES, ids=lambda f: f.name)
def test_held_out_slots_never_cross_splits(db, fam):
    values = {
        split: {
            str(fam.make(db, seed, split).instantiation_dict[fam.held_out]) for seed in range(12)
        }
        for split in ("train", "test")
    }
    assert values["train"].isdisjoint(values["test"])
    for split, vals in values.items():
        assert all(holdout(v) == split for v in vals), (fam.name, split)


def test_answers_follow_the_state(env, db):
    """Reference answers come from the seed data, not constants."""
    task = UserKarma().make(db, 0, "train")
    user = task.instantiation_dict["user"]
    karma = db["forum"].execute("SELECT karma FROM users WHERE username = ?", (user,)).fetchone()[0]
    assert task.eval["reference_answers"]["exact_match"] == str(karma)

"""Code-site task families: every oracle solves its task, every wrong ending scores 0,
and held-out slot values never cross between the train and test splits."""

from __future__ import annotations

import pytest
from support import play

from webrl.env.web_env import WebEnv
from webrl.sites import code as code_site
from webrl.sites.code import content as C
from webrl.sites.world import WorldApp
from webrl.tasks import code
from webrl.tasks.code.base import (
    NEW_COMMENTS,
    NEW_DESCRIPTIONS,
    NEW_ISSUE_TITLES,
    NEW_PROJECT_DESCRIPTIONS,
)
from webrl.tasks.code.info import ProjectStars
from webrl.tasks.family import SeedDB, holdout
from webrl.tasks.schema import task_from_json

SEEDS = {"train": range(2), "test": range(1)}


@pytest.fixture(scope="module")
def env() -> WebEnv:
    return WebEnv(world=WorldApp({"code": code_site.SPEC}))


@pytest.fixture(scope="module")
def db(env) -> SeedDB:
    return SeedDB(env.world.store.snapshot)



def test_family_registry_shape():
    fams = code.FAMILIES
    assert len(fams) >= 10
    assert len({f.name for f in fams}) == len(fams)
    ids = [f.template_id for f in fams]
    assert len(set(ids)) == len(ids) and all(400 <= i <= 499 for i in ids)
    assert {f.kind for f in fams} == {"info", "nav", "state", "multi", "infeasible"}
    for f in fams:
        assert f.start_url.startswith("__CODE__/") and f.sites == ("code",)
        assert f.held_out in f.template, f.name


def test_written_content_is_new(db):
    """What agents are asked to write never occurs in the seed, so state checks can't pass by accident."""
    conn = db["code"]
    seeded = {
        r[0].lower()
        for r in conn.execute("SELECT title FROM issues UNION SELECT description FROM projects")
    }
    seeded |= {s.lower() for s in C.NOTE_SENTENCES + C.ISSUE_SENTENCES + C.MR_SENTENCES}
    for text in NEW_ISSUE_TITLES + NEW_DESCRIPTIONS + NEW_COMMENTS + NEW_PROJECT_DESCRIPTIONS:
        assert text.lower() not in seeded
        assert not any(text.lower() in s or s in text.lower() for s in seeded), text


@pytest.mark.parametrize("fam", code.FAMILIES, ids=lambda f: f.name)
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


@pytest.mark.parametrize("fam", code.FAMILIES, ids=lambda f: f.name)
def test_held_out_slots_never_cross_splits(db, fam):
    values = {
        split: {
            str(fam.make(db, seed, split).instantiation_dict[fam.held_out]) for seed in range(12)
        }
        for split in ("train", "test")
    }
    assert values["train"].isdisjoint(values["test"])
    for split, vals in values.items():
        assert len(vals) > 1, (fam.name, split)  # several instances in both splits
        assert all(holdout(v) == split for v in vals), (fam.name, split)


def test_answers_follow_the_state(db):
    """Reference answers come from the seed data, not constants."""
    task = ProjectStars().make(db, 0, "train")
    path = task.instantiation_dict["project"]
    stars = (
        db["code"]
        .execute("SELECT stars FROM projects WHERE namespace || '/' || name = ?", (path,))
        .fetchone()[0]
    )
    assert task.eval["reference_answers"]["exact_match"] == str(stars)

"""Code-site task families: every oracle solves its task, every wrong ending scores 0,
and held-out slot values never cross between the train and test splits."""

from __future__ import annotations

import pytest
from family_checks import (
    check_deterministic,
    check_held_out,
    check_instances,
    check_oracle_and_wrong_ending,
    check_registry,
)

from webrl.sites import code as code_site
from webrl.sites.code import content as C
from webrl.tasks.code import FAMILIES
from webrl.tasks.code.base import (
    NEW_COMMENTS,
    NEW_DESCRIPTIONS,
    NEW_ISSUE_TITLES,
    NEW_PROJECT_DESCRIPTIONS,
)
from webrl.tasks.code.info import ProjectStars

SITES = {"code": code_site.SPEC}


def test_family_registry_shape():
    check_registry(FAMILIES, "code.", range(400, 500), "__CODE__/", at_least=10)
    assert all(f.sites == ("code",) for f in FAMILIES)


def test_instances_are_valid_task_json_with_a_spread_of_difficulty(db):
    check_instances(FAMILIES, db, "__CODE__/", spread=(3, 12))


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


@pytest.mark.parametrize("fam", FAMILIES, ids=lambda f: f.name)
def test_oracle_solves_and_wrong_ending_fails(env, db, fam):
    check_oracle_and_wrong_ending(env, db, fam, per_split=2)


@pytest.mark.parametrize("fam", FAMILIES, ids=lambda f: f.name)
def test_held_out_slots_never_cross_splits(db, fam):
    check_held_out(db, fam, distinct=2)


def test_make_is_deterministic(db):
    check_deterministic(FAMILIES, db)


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

"""Forum task families: every oracle solves its task, every wrong ending scores 0,
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

from webrl.sites import forum as forum_site
from webrl.sites.forum.data import BODY_SENTENCES, COMMENT_SENTENCES
from webrl.tasks.forum import FAMILIES
from webrl.tasks.forum.base import NEW_BODIES, NEW_COMMENTS, NEW_EDITS
from webrl.tasks.forum.info import UserKarma

SITES = {"forum": forum_site.SPEC}


def test_family_registry_shape():
    check_registry(FAMILIES, "forum.", range(200, 300), "__FORUM__/", at_least=12)
    for f in FAMILIES:
        assert f.require_login == (f.kind in ("state", "multi")), f.name


def test_instances_are_valid_task_json_with_a_spread_of_difficulty(db):
    check_instances(FAMILIES, db, "__FORUM__/", spread=(2, 10))


def test_written_content_is_new():
    """What agents are asked to write never occurs in the seed, so state checks can't pass by accident."""
    seeded = set(BODY_SENTENCES + COMMENT_SENTENCES)
    assert not seeded & set(NEW_BODIES + NEW_COMMENTS + NEW_EDITS)


@pytest.mark.parametrize("fam", FAMILIES, ids=lambda f: f.name)
def test_oracle_solves_and_wrong_ending_fails(env, db, fam):
    check_oracle_and_wrong_ending(env, db, fam, per_split=2)


@pytest.mark.parametrize("fam", FAMILIES, ids=lambda f: f.name)
def test_held_out_slots_never_cross_splits(db, fam):
    check_held_out(db, fam)


def test_make_is_deterministic(db):
    check_deterministic(FAMILIES, db)


def test_answers_follow_the_state(db):
    """Reference answers come from the seed data, not constants."""
    task = UserKarma().make(db, 0, "train")
    user = task.instantiation_dict["user"]
    karma = db["forum"].execute("SELECT karma FROM users WHERE username = ?", (user,)).fetchone()[0]
    assert task.eval["reference_answers"]["exact_match"] == str(karma)

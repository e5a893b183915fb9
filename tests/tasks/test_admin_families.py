"""Admin task families: oracles solve them, wrong endings fail them, slots are held out."""

from __future__ import annotations

import pytest
from support import play

from webrl.env.web_env import EnvConfig, WebEnv
from webrl.sites import admin, shop
from webrl.sites.world import WorldApp
from webrl.tasks.admin import FAMILIES
from webrl.tasks.family import InfeasibleSlots, SeedDB, holdout
from webrl.tasks.schema import task_from_json

SEEDS = range(3)


@pytest.fixture(scope="module")
def world() -> WorldApp:
    return WorldApp({"shop": shop.SPEC, "admin": admin.SPEC})


@pytest.fixture(scope="module")
def db(world) -> SeedDB:
    return SeedDB(world.store.snapshot)


@pytest.fixture(scope="module")
def env(world):
    e = WebEnv(EnvConfig(), world=world)
    yield e
    e.close()


def instances(fam, db, split, seeds=SEEDS):
    out = []
    for seed in seeds:
        try:
            out.append(fam.make(db, seed, split))
        except InfeasibleSlots:
            continue
    return out



def test_families_are_well_formed():
    assert len(FAMILIES) >= 25
    names = [f.name for f in FAMILIES]
    ids = [f.template_id for f in FAMILIES]
    assert len(set(names)) == len(names) and len(set(ids)) == len(ids)
    assert all(n.startswith("admin.") for n in names) and all(300 <= i <= 399 for i in ids)
    assert {f.kind for f in FAMILIES} == {"info", "nav", "state", "multi", "infeasible"}


def test_instances_are_valid_task_json_with_a_spread_of_difficulty(db):
    tasks = [t for fam in FAMILIES for t in instances(fam, db, "train", range(2))]
    for t in tasks:
        assert task_from_json(t.to_json()) == t
        assert t.start_url.startswith("__ADMIN__/") and t.require_login and "{" not in t.intent
        if t.extra.get("answer") is not None:
            assert t.extra["answer"] != t.extra.get("wrong")
    levels = [t.difficulty for t in tasks]
    assert min(levels) <= 2 and max(levels) >= 10
    # catalogue changes are checked on the storefront too (the admin shares the shop's database)
    shop_checks = {
        t.family
        for t in tasks
        for p in t.eval.get("program_html", [])
        if p["url"].startswith("__SHOP__/")
    }
    assert {
        "admin.change_price",
        "admin.set_stock",
        "admin.add_product",
        "admin.approve_reviews",
    } <= shop_checks


def test_text_the_agent_must_write_is_not_in_the_seed(db):
    """Names, SKUs, codes and comments a task asks for cannot already be in the database."""
    conn = db["admin"]
    for fam_name, slot, sql in [
        ("admin.add_product", "name", "SELECT 1 FROM products WHERE name = ?"),
        ("admin.add_product", "sku", "SELECT 1 FROM products WHERE sku = ?"),
        ("admin.create_promotion", "code", "SELECT 1 FROM promotions WHERE code LIKE '%' || ? || '%'"),
        ("admin.hold_with_comment", "comment", "SELECT 1 FROM order_history WHERE comment = ?"),
    ]:  # fmt: skip
        fam = next(f for f in FAMILIES if f.name == fam_name)
        for task in instances(fam, db, "train", range(20)) + instances(fam, db, "test", range(20)):
            assert conn.execute(sql, (task.instantiation_dict[slot],)).fetchone() is None, (
                task.intent
            )


@pytest.mark.parametrize("fam", FAMILIES, ids=lambda f: f.name)
def test_oracle_solves_and_wrong_ending_fails(fam, db, env):
    tasks = instances(fam, db, "train") + instances(fam, db, "test")
    assert len(tasks) >= 3, f"{fam.name}: too few feasible instances"
    for task in tasks:
        reward, actions = play(env, task, fam.oracle)
        assert reward == 1.0, (task.intent, actions)
        assert len(actions) <= 30
        reward, actions = play(env, task, fam.wrong_ending)
        assert reward == 0.0, (task.intent, actions)


@pytest.mark.parametrize("fam", FAMILIES, ids=lambda f: f.name)
def test_test_split_slot_values_never_appear_in_train(fam, db):
    train = instances(fam, db, "train", range(40))
    test = instances(fam, db, "test", range(40))
    assert train and test, f"{fam.name}: a split has no instances"
    for slot in fam.held_out:
        train_values = {t.instantiation_dict[slot] for t in train}
        test_values = {t.instantiation_dict[slot] for t in test}
        assert not train_values & test_values, slot
        assert {holdout(v) for v in test_values} == {"test"}
        assert {holdout(v) for v in train_values} == {"train"}


def test_make_is_deterministic(db):
    for fam in FAMILIES:
        a, b = instances(fam, db, "test", [7]), instances(fam, db, "test", [7])
        assert a == b

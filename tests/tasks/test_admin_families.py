"""Admin task families: oracles solve them, wrong endings fail them, slots are held out."""

from __future__ import annotations

import pytest
from family_checks import (
    check_deterministic,
    check_held_out,
    check_instances,
    check_oracle_and_wrong_ending,
    check_registry,
    feasible,
)

from webrl.sites import admin, shop
from webrl.tasks.admin import FAMILIES

SITES = {"shop": shop.SPEC, "admin": admin.SPEC}


def test_families_are_well_formed():
    check_registry(FAMILIES, "admin.", range(300, 400), "__ADMIN__/", at_least=25)


def test_instances_are_valid_task_json_with_a_spread_of_difficulty(db):
    tasks = check_instances(FAMILIES, db, "__ADMIN__/", spread=(2, 10))
    assert all(t.require_login for t in tasks)
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
        for task in feasible(fam, db, "train", 20) + feasible(fam, db, "test", 20):
            assert conn.execute(sql, (task.instantiation_dict[slot],)).fetchone() is None, (
                task.intent
            )


@pytest.mark.parametrize("fam", FAMILIES, ids=lambda f: f.name)
def test_oracle_solves_and_wrong_ending_fails(fam, db, env):
    check_oracle_and_wrong_ending(env, db, fam, per_split=2)


@pytest.mark.parametrize("fam", FAMILIES, ids=lambda f: f.name)
def test_test_split_slot_values_never_appear_in_train(fam, db):
    check_held_out(db, fam)


def test_make_is_deterministic(db):
    check_deterministic(FAMILIES, db)

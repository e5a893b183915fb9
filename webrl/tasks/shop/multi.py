"""Multi-requirement shop tasks: several steps or constraints in one instruction."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from typing import TYPE_CHECKING

from webrl.sites.shop.data import CATEGORIES, SHIPPING
from webrl.tasks.family import InfeasibleSlots, SeedDB, page_has, pick, state_check
from webrl.tasks.schema import Task
from webrl.tasks.shop.base import (
    ShopFamily,
    add_to_cart,
    address_text,
    addresses,
    checkout,
    my_orders,
    next_order_number,
    open_category,
    open_order,
    ordered_lines,
    pick_recipient,
    product_row,
    products,
    shop_db,
    sorted_category,
    wishlist_names,
)

if TYPE_CHECKING:
    from webrl.env.page_view import PageView


class BuyTwo(ShopFamily):
    name = "shop.buy_two"
    template = "Buy {qty} units of {product} and one {other} in a single order."
    template_id = 121
    kind = "multi"
    held_out = ("product", "other")

    def sample(self, db, rng, split):
        rows = [p for p in products(db) if p["stock"] >= 5]
        first = pick(rng, rows, split, key=lambda p: p["name"])
        others = [p for p in rows if p["category_id"] != first["category_id"]]
        second = pick(rng, others, split, key=lambda p: p["name"])
        return {"qty": rng.randint(2, 3), "product": first["name"], "other": second["name"]}

    def build(self, db, slots):
        a, b = product_row(db, slots["product"]), product_row(db, slots["other"])
        url = f"__SHOP__/orders/{next_order_number(db)}"
        return {
            "eval": state_check(*ordered_lines(url, [(a, slots["qty"]), (b, 1)])),
            "difficulty": 10,
        }

    def oracle(self, task, page):
        slots = task.instantiation_dict
        yield from add_to_cart(page, slots["product"], slots["qty"])
        yield from add_to_cart(page, slots["other"], 1)
        yield from checkout(page)
        yield page.exit("Done")

    def wrong_ending(self, task, page):  # forgets the second product
        slots = task.instantiation_dict
        yield from add_to_cart(page, slots["product"], slots["qty"])
        yield from checkout(page)
        yield page.exit("Done")


class GiftOrder(ShopFamily):
    name = "shop.gift_order"
    template = "Order one {product} as a gift and ship it to {recipient}, {address}."
    template_id = 122
    kind = "multi"
    held_out = ("product", "recipient", "address")

    def sample(self, db, rng, split):
        rows = [p for p in products(db) if p["stock"] >= 5]
        p = pick(rng, rows, split, key=lambda p: p["name"])
        address = address_text(pick(rng, addresses(), split, key=address_text))
        return {"product": p["name"], "recipient": pick_recipient(rng, split), "address": address}

    def build(self, db, slots):
        a = next(a for a in addresses() if address_text(a) == slots["address"])
        url = f"__SHOP__/orders/{next_order_number(db)}"
        check = state_check(
            *ordered_lines(url, [(product_row(db, slots["product"]), 1)]),
            page_has(url, [slots["recipient"], address_text(a)], locator="#ship-to"),
        )
        return {
            "eval": check,
            "difficulty": 11,
            "extra": {"ship_to": {"ship_name": slots["recipient"], **a}},
        }

    def oracle(self, task, page):
        yield from add_to_cart(page, task.instantiation_dict["product"], 1)
        yield from checkout(page, ship_to=task.extra["ship_to"])
        yield page.exit("Done")

    def wrong_ending(self, task, page):  # ships to the recipient's name but my own address
        yield from add_to_cart(page, task.instantiation_dict["product"], 1)
        yield from checkout(page, ship_to={"ship_name": task.extra["ship_to"]["ship_name"]})
        yield page.exit("Done")


class Reorder(ShopFamily):
    name = "shop.reorder"
    template = "Order again everything from my order #{number}, in the same quantities."
    template_id = 128
    kind = "multi"
    held_out = ("number",)

    def _items(self, db: SeedDB, number: str) -> list[sqlite3.Row]:
        return (
            shop_db(db)
            .execute(
                "SELECT p.id, i.name, i.qty, p.stock FROM order_items i JOIN orders o ON o.id = i.order_id"
                " JOIN products p ON p.id = i.product_id WHERE o.number = ? ORDER BY i.id",
                (number,),
            )
            .fetchall()
        )

    def sample(self, db, rng, split):
        rows = [
            o
            for o in my_orders(db)
            if all(i["stock"] >= i["qty"] + 1 for i in self._items(db, o["number"]))
        ]
        return {"number": pick(rng, rows, split, key=lambda o: o["number"])["number"]}

    def build(self, db, slots):
        items = self._items(db, slots["number"])
        url = f"__SHOP__/orders/{next_order_number(db)}"
        check = state_check(*ordered_lines(url, [(i, i["qty"]) for i in items]))
        return {"eval": check, "difficulty": 6 + 5 * len(items),
                "extra": {"items": [[i["name"], i["qty"]] for i in items]}}  # fmt: skip

    def _reorder(self, task: Task, page: PageView, bump: int) -> Iterator[str]:
        yield from open_order(page, task.instantiation_dict["number"])
        for k, (name, qty) in enumerate(task.extra["items"]):
            qty += bump if k == 0 else 0
            yield from page.click(name, tag="a", exact=True)
            if qty != 1:
                yield from page.type(str(qty), name="qty")
            yield from page.click("Add to cart", tag="button")
            yield page.go_back()  # the product page
            yield page.go_back()  # the order
        yield from page.click("Cart (", tag="a")
        yield from checkout(page)
        yield page.exit("Done")

    def oracle(self, task, page):
        yield from self._reorder(task, page, 0)

    def wrong_ending(self, task, page):  # one more of the first item
        yield from self._reorder(task, page, 1)


class GiftBundle(ShopFamily):
    name = "shop.gift_bundle"
    template = ("Order {qty} units of {product} and one {other} for {recipient}, "
                "shipped with {method} shipping to {address}.")  # fmt: skip
    template_id = 129
    kind = "multi"
    held_out = ("product", "other", "recipient", "address")

    def sample(self, db, rng, split):
        rows = [p for p in products(db) if p["stock"] >= 5]
        first = pick(rng, rows, split, key=lambda p: p["name"])
        others = [p for p in rows if p["category_id"] != first["category_id"]]
        second = pick(rng, others, split, key=lambda p: p["name"])
        address = address_text(pick(rng, addresses(), split, key=address_text))
        return {"qty": rng.randint(2, 3), "product": first["name"], "other": second["name"],
                "recipient": pick_recipient(rng, split), "method": rng.choice(["express", "overnight"]),
                "address": address}  # fmt: skip

    def build(self, db, slots):
        a, b = product_row(db, slots["product"]), product_row(db, slots["other"])
        addr = next(x for x in addresses() if address_text(x) == slots["address"])
        url = f"__SHOP__/orders/{next_order_number(db)}"
        check = state_check(
            *ordered_lines(url, [(a, slots["qty"]), (b, 1)]),
            page_has(url, [SHIPPING[slots["method"]][0]], locator="#order-shipping"),
            page_has(url, [slots["recipient"], slots["address"]], locator="#ship-to"),
        )
        return {
            "eval": check,
            "difficulty": 17,
            "extra": {"ship_to": {"ship_name": slots["recipient"], **addr}},
        }

    def _buy(self, task: Task, page: PageView, method: str) -> Iterator[str]:
        slots = task.instantiation_dict
        yield from add_to_cart(page, slots["product"], slots["qty"])
        yield from add_to_cart(page, slots["other"], 1)
        yield from checkout(page, method, ship_to=task.extra["ship_to"])
        yield page.exit("Done")

    def oracle(self, task, page):
        yield from self._buy(task, page, task.instantiation_dict["method"])

    def wrong_ending(self, task, page):  # keeps the default shipping method
        yield from self._buy(task, page, "standard")


class SaveExtreme(ShopFamily):
    name = "shop.save_extreme"
    template = "Add the {which} product in the {category} category to my {target}."
    template_id = 123
    kind = "multi"
    held_out = ("category",)

    def sample(self, db, rng, split):
        cat = pick(rng, [c[1] for c in CATEGORIES], split, key=lambda c: c)
        return {"which": rng.choice(["cheapest", "most expensive"]), "category": cat,
                "target": rng.choice(["cart", "wish list"])}  # fmt: skip

    def build(self, db, slots):
        sort = "price_asc" if slots["which"] == "cheapest" else "price_desc"
        rows = sorted_category(db, slots["category"], sort)
        target = rows[0]["name"]
        if slots["target"] == "wish list":
            if target in wishlist_names(db):
                raise InfeasibleSlots(f"{target} is already in the wish list")
            check = page_has("__SHOP__/wishlist", [target], locator="#wishlist")
            wrong = rows[1]["name"]
        else:
            if not rows[0]["stock"]:
                raise InfeasibleSlots(f"{target} is out of stock")
            check = page_has("__SHOP__/cart", [target], locator="#cart")
            wrong = next(p["name"] for p in rows[1:] if p["stock"])
        return {"eval": state_check(check), "difficulty": 7,
                "extra": {"sort": sort, "answer": target, "wrong": wrong}}  # fmt: skip

    def _save(self, task: Task, page: PageView, name: str) -> Iterator[str]:
        yield from open_category(page, task.instantiation_dict["category"], task.extra["sort"])
        yield from page.click(name, tag="a", exact=True)
        button = (
            "Add to cart" if task.instantiation_dict["target"] == "cart" else "Add to wish list"
        )
        yield from page.click(button, tag="button")
        yield page.exit("Done")

    def oracle(self, task, page):
        yield from self._save(task, page, task.extra["answer"])

    def wrong_ending(self, task, page):
        yield from self._save(task, page, task.extra["wrong"])

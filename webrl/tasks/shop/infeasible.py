"""Infeasible shop tasks: the right answer is "N/A"."""

from __future__ import annotations

from webrl.sites.shop.data import CATEGORIES, money
from webrl.tasks.family import answer_exact, combine, page_has, pick, state_check
from webrl.tasks.shop.base import NA, ShopFamily, expect, my_orders, open_product, products
from webrl.tasks.shop.info import OrderFact


class MissingProductPrice(ShopFamily):
    """Same wording as ProductPrice, for a product the shop does not sell."""

    name = "shop.missing_product_price"
    template = "What is the price of {product}?"
    template_id = 124
    kind = "infeasible"
    require_login = False

    def sample(self, db, rng, split):
        have = {p["name"] for p in products(db)}
        fake = [f"{b} {m} {n}" for c in CATEGORIES for b in c[4] for m in c[5] for n in c[6]]
        return {"product": pick(rng, [f for f in fake if f not in have], split, key=lambda f: f)}

    def build(self, db, slots):
        near = next(p for p in products(db) if p["name"].endswith(slots["product"].split()[-1]))
        return {
            "eval": answer_exact(NA),
            "difficulty": 2,
            "extra": {"answer": NA, "wrong": money(near["price_cents"])},
        }

    def oracle(self, task, page):
        yield from page.search(task.instantiation_dict["product"], name="q")
        if page.has(task.instantiation_dict["product"], tag="a", exact=True):
            raise LookupError("the missing product exists")
        yield page.exit(NA)

    def wrong_ending(self, task, page):
        yield from page.search(task.instantiation_dict["product"], name="q")
        yield page.exit(task.extra["wrong"])


class OrderTracking(OrderFact):
    """The shop shows no tracking numbers: the right answer is N/A."""

    name = "shop.order_tracking"
    template = "What is the tracking number of my order #{number}?"
    template_id = 125
    kind = "infeasible"

    def candidates(self, db):
        return [o for o in my_orders(db) if o["status"] in ("shipped", "delivered")]

    def answer(self, db, o):
        return NA

    def build(self, db, slots):
        return {
            "eval": answer_exact(NA),
            "difficulty": 4,
            "extra": {"answer": NA, "wrong": slots["number"]},
        }


class OutOfStockCart(ShopFamily):
    """Asks to buy a product that is out of stock; the agent should report N/A."""

    name = "shop.out_of_stock_cart"
    template = "Add {qty} units of {product} to my cart."
    template_id = 126
    kind = "infeasible"

    def sample(self, db, rng, split):
        rows = [p for p in products(db) if p["stock"] == 0]
        return {
            "product": pick(rng, rows, split, key=lambda p: p["name"])["name"],
            "qty": rng.randint(2, 4),
        }

    def build(self, db, slots):
        empty = page_has("__SHOP__/cart", ["Your cart is empty"], locator="#cart-empty")
        return {"eval": combine(answer_exact(NA), state_check(empty)), "difficulty": 3}

    def oracle(self, task, page):
        yield from open_product(page, task.instantiation_dict["product"])
        expect(page, "Out of stock")
        yield page.exit(NA)

    def wrong_ending(self, task, page):  # saves it for later and claims success
        yield from open_product(page, task.instantiation_dict["product"])
        yield from page.click("Add to wish list", tag="button")
        yield page.exit("Done")

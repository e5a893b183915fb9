"""Multi-requirement admin tasks: look something up, then change it; or several changes at once."""

from __future__ import annotations

from webrl.sites.shop.data import CANCELABLE, CATEGORIES, money
from webrl.tasks.admin.base import (
    AdminFamily,
    best_seller_report,
    best_sellers,
    clear_best_sellers,
    discounted,
    expect,
    menu,
    open_order,
    orders,
    pending_reviews,
    price_field,
    product_row,
    products,
    published_count,
    save_product,
    submissions,
    with_pending,
)
from webrl.tasks.admin.changes import count_line, reviews_url
from webrl.tasks.family import InfeasibleSlots, page_has, pick, state_check


class DiscountBestSeller(AdminFamily):
    name = "admin.discount_best_seller"
    template = "Reduce the price of the best-selling product of {period} by {pct}%."
    template_id = 330
    kind = "multi"
    held_out = ("period",)

    def sample(self, db, rng, split):
        period = pick(rng, sorted(clear_best_sellers(db)), split, key=lambda p: p)
        return {"period": period, "pct": rng.choice([10, 15, 20, 25, 30])}

    def build(self, db, slots):
        start, end = clear_best_sellers(db)[slots["period"]]
        ranked = best_sellers(db, start, end)
        top = product_row(db, ranked[0]["name"])
        new = money(discounted(top["price_cents"], slots["pct"]))
        check = state_check(
            page_has(f"__ADMIN__/products/{top['id']}", [], locator="#price", exact=new),
            page_has(f"__SHOP__/product/{top['id']}", [], locator="#price", exact=new),
        )
        if len(ranked) > 1:  # the runner-up discounted instead
            wrong = (1, discounted(product_row(db, ranked[1]["name"])["price_cents"], slots["pct"]))
        else:  # the wrong percentage
            wrong = (0, discounted(top["price_cents"], slots["pct"] + 5))
        return {"eval": check, "difficulty": 10,
                "extra": {"range": [start, end], "price": price_field(discounted(top["price_cents"], slots["pct"])),
                          "wrong": [wrong[0], price_field(wrong[1])]}}  # fmt: skip

    def _discount(self, task, page, rank: int, price: str):
        yield from best_seller_report(page, *task.extra["range"])
        yield from page.click(href="/products/", tag="a", nth=rank)
        yield from save_product(page, price=price)
        yield page.exit("Done")

    def oracle(self, task, page):
        yield from self._discount(task, page, 0, task.extra["price"])

    def wrong_ending(self, task, page):
        yield from self._discount(task, page, *task.extra["wrong"])


class RestockCategory(AdminFamily):
    name = "admin.restock_category"
    template = "Set the stock of every product in the {category} category {which} to {m} units."
    template_id = 331
    kind = "multi"
    held_out = ("category",)
    max_products = 6

    def _low(self, db, category: str, n: int) -> list:
        """The category's products at or below `n` units, as the low-stock report lists them."""
        return [p for p in self._stocked(db, category) if p["stock"] <= n]

    def _stocked(self, db, category: str) -> list:
        """The category's products by stock, then name (the low-stock report's order)."""
        rows = [p for p in products(db) if p["category"] == category]
        return sorted(rows, key=lambda p: (p["stock"], p["name"]))

    @staticmethod
    def _which(n: int) -> str:
        return "that is out of stock" if n == 0 else f"with {n} or fewer units"

    def sample(self, db, rng, split):
        category = pick(rng, [c[1] for c in CATEGORIES], split, key=lambda c: c)
        stocks = [p["stock"] for p in self._stocked(db, category)]
        ns = [n for n in range(31) if 1 <= sum(s <= n for s in stocks) <= self.max_products]
        if not ns:
            raise InfeasibleSlots(
                f"{category}: no threshold with 1-{self.max_products} low products"
            )
        return {
            "category": category,
            "which": self._which(rng.choice(ns)),
            "m": rng.choice(range(50, 201, 10)),
        }

    def build(self, db, slots):
        n = next(n for n in range(31) if self._which(n) == slots["which"])
        low = self._low(db, slots["category"], n)
        m = str(slots["m"])
        check = state_check(
            *(
                page_has(f"__ADMIN__/products/{p['id']}", [], locator="#stock", exact=m)
                for p in low
            ),
            page_has(
                f"__SHOP__/product/{low[0]['id']}", [], locator="#stock", exact=f"In stock: {m}"
            ),
        )
        return {"eval": check, "difficulty": 7 + 2 * len(low),
                "extra": {"n": n, "products": [p["name"] for p in low]}}  # fmt: skip

    def _restock(self, task, page, names: list[str]):
        slots = task.instantiation_dict
        yield from menu(page, "Reports")
        yield from page.click("Low stock", tag="a", exact=True)
        yield from page.type(str(task.extra["n"]), name="threshold")
        yield from page.select(slots["category"], name="category")
        yield from page.click("Show report", tag="button")
        for name in names:  # a restocked product leaves the report, so the next is always first
            expect(page, name)
            yield from page.type(str(slots["m"]), name="stock")
            yield from page.click("Update stock", tag="button", exact=True)
        yield page.exit("Done")

    def oracle(self, task, page):
        yield from self._restock(task, page, task.extra["products"])

    def wrong_ending(self, task, page):  # misses the last product on the list
        yield from self._restock(task, page, task.extra["products"][:-1])


COMMENTS = [
    "Customer asked to change the delivery address",
    "Waiting for the payment to clear",
    "Item damaged in the warehouse, replacement requested",
    "Customer wants delivery after the holidays",
    "Address could not be verified by the courier",
    "Possible duplicate order, checking with the customer",
]


class HoldWithComment(AdminFamily):
    name = "admin.hold_with_comment"
    template = 'Put order #{number} on hold with the comment "{comment}".'
    template_id = 332
    kind = "multi"
    held_out = ("number",)

    def sample(self, db, rng, split):
        cands = [o for o in orders(db) if o["status"] in CANCELABLE]
        return {"number": pick(rng, cands, split, key=lambda o: o["number"])["number"],
                "comment": rng.choice(COMMENTS)}  # fmt: skip

    def build(self, db, slots):
        url = f"__ADMIN__/orders/{slots['number']}"
        check = state_check(
            page_has(url, [], locator="#order-status", exact="On hold"),
            page_has(url, [slots["comment"]], locator="#history"),
        )
        return {"eval": check, "difficulty": 5}

    def _comment(self, task, page, button: str):
        slots = task.instantiation_dict
        yield from open_order(page, slots["number"])
        yield from page.type(slots["comment"], name="comment")
        yield from page.click(button, tag="button", exact=True)
        expect(page, slots["comment"])
        yield page.exit("Done")

    def oracle(self, task, page):
        yield from self._comment(task, page, "Hold")

    def wrong_ending(self, task, page):  # only comments, the order stays as it was
        yield from self._comment(task, page, "Add comment")


class ModerateByRating(AdminFamily):
    name = "admin.moderate_by_rating"
    template = (
        "Approve the pending reviews of {product} rated {k} stars or more, and reject the others."
    )
    template_id = 333
    kind = "multi"

    def _ks(self, db, pid: int) -> list[int]:
        ratings = [s["rating"] for s in submissions(db, pid)]
        return [k for k in range(2, 6) if min(ratings) < k <= max(ratings)]

    def sample(self, db, rng, split):
        cands = [p for p in with_pending(db, 2) if self._ks(db, p["id"])]
        p = pick(rng, cands, split, key=lambda p: p["name"])
        return {"product": p["name"], "k": rng.choice(self._ks(db, p["id"]))}

    def build(self, db, slots):
        p = product_row(db, slots["product"])
        pending = submissions(db, p["id"])
        ops = ["Approve" if s["rating"] >= slots["k"] else "Reject" for s in pending]
        rejected = [s["author"] for s, op in zip(pending, ops, strict=True) if op == "Reject"]
        total = published_count(db, p["id"]) + ops.count("Approve")
        check = state_check(
            page_has(reviews_url("pending", p["name"]), [], locator="#review-count",
                     exact=count_line(0, "pending", p["name"])),
            page_has(reviews_url("rejected", p["name"]), rejected, locator="#reviews"),
            page_has(f"__SHOP__/product/{p['id']}", [f"({total} review"], locator="#rating"),
        )  # fmt: skip
        return {"eval": check, "difficulty": 3 + len(ops), "extra": {"ops": ops}}

    def _moderate(self, task, page, ops: list[str]):
        yield from pending_reviews(page, task.instantiation_dict["product"])
        for op in ops:  # each decision removes the top row from the pending list
            yield from page.click(op, tag="button", exact=True)
        yield page.exit("Done")

    def oracle(self, task, page):
        yield from self._moderate(task, page, task.extra["ops"])

    def wrong_ending(self, task, page):  # approves everything
        yield from self._moderate(task, page, ["Approve"] * len(task.extra["ops"]))

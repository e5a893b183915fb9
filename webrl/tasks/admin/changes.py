"""State-changing admin tasks: judged by admin and storefront pages fetched after the episode.

The admin shares the shop's database, so catalogue changes are also checked on
the storefront (`__SHOP__/product/<id>`), which needs no login.
"""

from __future__ import annotations

from datetime import date, timedelta
from urllib.parse import urlencode

from webrl.sites.admin.data import ORDER_ACTIONS, ORDER_STATUSES
from webrl.sites.shop.data import CANCELABLE, CATEGORIES, money
from webrl.tasks.admin.base import (
    AdminFamily,
    expect,
    menu,
    open_order,
    open_product,
    order_items,
    orders,
    pending_reviews,
    product_row,
    products,
    published_count,
    rows,
    save_product,
    submissions,
    with_pending,
)
from webrl.tasks.family import page_has, pick, state_check


def reviews_url(status: str, product: str) -> str:
    return "__ADMIN__/reviews?" + urlencode({"status": status, "product": product})


def count_line(n: int, status: str, product: str) -> str:
    """The review moderation page's count line for a product search."""
    return f'{n} {status} review{"s" if n != 1 else ""} for "{product}"'


class ChangePrice(AdminFamily):
    name = "admin.change_price"
    template = "Change the price of {product} to {price}."
    template_id = 316
    kind = "state"

    def sample(self, db, rng, split):
        p = pick(rng, products(db), split, key=lambda p: p["name"])
        cents = p["price_cents"]
        while cents == p["price_cents"]:
            cents = max(
                199, p["price_cents"] + rng.randint(-20, 20) * 100 + rng.choice([0, 50, -1])
            )
        return {"product": p["name"], "price": money(cents)}

    def build(self, db, slots):
        p = product_row(db, slots["product"])
        check = state_check(
            page_has(f"__ADMIN__/products/{p['id']}", [], locator="#price", exact=slots["price"]),
            page_has(f"__SHOP__/product/{p['id']}", [], locator="#price", exact=slots["price"]),
        )
        return {"eval": check, "difficulty": 5}

    def oracle(self, task, page):
        slots = task.instantiation_dict
        yield from open_product(page, slots["product"])
        yield from save_product(page, price=slots["price"].lstrip("$").replace(",", ""))
        yield page.exit("Done")

    def wrong_ending(self, task, page):  # types the price but never saves it
        slots = task.instantiation_dict
        yield from open_product(page, slots["product"])
        yield from page.type(slots["price"].lstrip("$"), name="price")
        yield from menu(page, "Products")
        yield page.exit("Done")


class SetStock(AdminFamily):
    name = "admin.set_stock"
    template = "Set the stock of {product} to {n} units."
    template_id = 317
    kind = "state"

    def sample(self, db, rng, split):
        p = pick(rng, products(db), split, key=lambda p: p["name"])
        n = p["stock"]
        while n == p["stock"]:
            n = rng.randint(5, 400)
        return {"product": p["name"], "n": n}

    def build(self, db, slots):
        p = product_row(db, slots["product"])
        check = state_check(
            page_has(f"__ADMIN__/products/{p['id']}", [], locator="#stock", exact=str(slots["n"])),
            page_has(
                f"__SHOP__/product/{p['id']}", [], locator="#stock", exact=f"In stock: {slots['n']}"
            ),
        )
        return {"eval": check, "difficulty": 5}

    def oracle(self, task, page):
        slots = task.instantiation_dict
        yield from open_product(page, slots["product"])
        yield from save_product(page, stock=str(slots["n"]))
        yield page.exit("Done")

    def wrong_ending(self, task, page):  # one unit off
        slots = task.instantiation_dict
        yield from open_product(page, slots["product"])
        yield from save_product(page, stock=str(slots["n"] + 1))
        yield page.exit("Done")


class CancelOrder(AdminFamily):
    name = "admin.cancel_order"
    template = "Cancel order #{number}."
    template_id = 318
    kind = "state"
    held_out = ("number",)

    def sample(self, db, rng, split):
        cands = [o for o in orders(db) if o["status"] in CANCELABLE]
        return {"number": pick(rng, cands, split, key=lambda o: o["number"])["number"]}

    def build(self, db, slots):
        number = slots["number"]
        item = order_items(db, number)[0]  # its units go back in stock
        stock = rows(db, "SELECT stock FROM products WHERE id = ?", (item["product_id"],))[0][0]
        check = state_check(
            page_has(f"__ADMIN__/orders/{number}", [], locator="#order-status", exact="Canceled"),
            page_has(f"__ADMIN__/products/{item['product_id']}", [], locator="#stock",
                     exact=str(stock + item["qty"])),
        )  # fmt: skip
        return {"eval": check, "difficulty": 4}

    def oracle(self, task, page):
        yield from open_order(page, task.instantiation_dict["number"])
        yield from page.click("Cancel order", tag="button", exact=True)
        yield page.exit("Done")

    def wrong_ending(self, task, page):  # puts it on hold instead
        yield from open_order(page, task.instantiation_dict["number"])
        yield from page.click("Hold", tag="button", exact=True)
        yield page.exit("Done")


# status an order can be moved to (besides canceled) -> the action that does it
MOVES = {a[2]: key for key, a in ORDER_ACTIONS.items() if a[2] not in (None, "canceled")}


class SetOrderStatus(AdminFamily):
    name = "admin.set_order_status"
    template = "Change the status of order #{number} to {status}."
    template_id = 319
    kind = "state"
    held_out = ("number",)

    def sample(self, db, rng, split):
        cands = [o for o in orders(db) if o["status"] in ("pending", "processing", "shipped")]
        o = pick(rng, cands, split, key=lambda o: o["number"])
        targets = [s for s, key in MOVES.items() if o["status"] in ORDER_ACTIONS[key][1]]
        return {"number": o["number"], "status": ORDER_STATUSES[rng.choice(targets)]}

    def build(self, db, slots):
        url = f"__ADMIN__/orders/{slots['number']}"
        status = next(k for k, v in ORDER_STATUSES.items() if v == slots["status"])
        current = next(o["status"] for o in orders(db) if o["number"] == slots["number"])
        others = [
            ORDER_ACTIONS[k][0]
            for k in MOVES.values()
            if current in ORDER_ACTIONS[k][1] and k != MOVES[status]
        ]
        return {"eval": state_check(page_has(url, [], locator="#order-status", exact=slots["status"])),
                "difficulty": 4,
                "extra": {"button": ORDER_ACTIONS[MOVES[status]][0], "wrong_button": (others or ["Add comment"])[0]}}  # fmt: skip

    def oracle(self, task, page):
        yield from open_order(page, task.instantiation_dict["number"])
        yield from page.click(task.extra["button"], tag="button", exact=True)
        yield page.exit("Done")

    def wrong_ending(self, task, page):
        yield from open_order(page, task.instantiation_dict["number"])
        if task.extra["wrong_button"] == "Add comment":
            yield from page.type("Status checked.", name="comment")
        yield from page.click(task.extra["wrong_button"], tag="button", exact=True)
        yield page.exit("Done")


class ApproveReviews(AdminFamily):
    name = "admin.approve_reviews"
    template = "Approve all pending reviews of {product}."
    template_id = 320
    kind = "state"

    def sample(self, db, rng, split):
        cands = with_pending(db)
        return {"product": pick(rng, cands, split, key=lambda p: p["name"])["name"]}

    def build(self, db, slots):
        p = product_row(db, slots["product"])
        n = len(submissions(db, p["id"]))
        total = published_count(db, p["id"]) + n
        check = state_check(
            page_has(reviews_url("pending", p["name"]), [], locator="#review-count",
                     exact=count_line(0, "pending", p["name"])),
            page_has(f"__SHOP__/product/{p['id']}", [f"({total} review"], locator="#rating"),
        )  # fmt: skip
        return {"eval": check, "difficulty": 3 + n, "extra": {"n": n}}

    def oracle(self, task, page):
        yield from pending_reviews(page, task.instantiation_dict["product"])
        for _ in range(task.extra["n"]):
            yield from page.click("Approve", tag="button", exact=True)
        yield page.exit("Done")

    def wrong_ending(self, task, page):  # leaves the last one (or rejects a lone one)
        yield from pending_reviews(page, task.instantiation_dict["product"])
        n = task.extra["n"]
        for _ in range(n - 1):
            yield from page.click("Approve", tag="button", exact=True)
        if n == 1:
            yield from page.click("Reject", tag="button", exact=True)
        yield page.exit("Done")


NEW_BRANDS = [
    "Zephyra",
    "Quillon",
    "Brightmoor",
    "Solvane",
    "Maravel",
    "Ostrava",
    "Tesselate",
    "Corvina",
]


def new_products() -> list[tuple[str, str, str, tuple[int, int]]]:
    """(name, category, SKU prefix, dollar range) of products the shop does not sell yet."""
    return [
        (f"{brand} {mod} {noun}", name, code, span)
        for _slug, name, code, span, _b, mods, nouns, _d in CATEGORIES
        for brand in NEW_BRANDS
        for mod in mods[:3]
        for noun in nouns[:3]
    ]


class AddProduct(AdminFamily):
    name = "admin.add_product"
    template = ('Add a new product "{name}" with SKU {sku} to the {category} category, '
                "priced at {price} with {stock} units in stock.")  # fmt: skip
    template_id = 321
    kind = "state"
    held_out = ("name",)

    def sample(self, db, rng, split):
        name, category, code, (lo, hi) = pick(rng, new_products(), split, key=lambda x: x[0])
        cents = rng.randint(lo, hi) * 100 + rng.choice([99, 49, 0])
        return {"name": name, "sku": f"{code}-{name[:3].upper()}-{rng.randint(5000, 9999)}",
                "category": category, "price": money(cents), "stock": rng.randint(5, 200)}  # fmt: skip

    def build(self, db, slots):
        pid = rows(db, "SELECT MAX(id) + 1 FROM products")[0][0]
        admin = f"__ADMIN__/products/{pid}"
        names = [c[1] for c in CATEGORIES]
        check = state_check(
            *(page_has(admin, [], locator=f"#{k}", exact=str(slots[k])) for k in ("name", "sku", "category", "price", "stock")),
            page_has(f"__SHOP__/product/{pid}", [], locator="#price", exact=slots["price"]),
        )  # fmt: skip
        wrong = names[names.index(slots["category"]) - 1]
        return {"eval": check, "difficulty": 9, "extra": {"wrong_category": wrong}}

    def _add(self, task, page, category: str):
        slots = task.instantiation_dict
        yield from menu(page, "Products")
        yield from page.click("Add product", tag="a", exact=True)
        yield from page.type(slots["name"], name="name")
        yield from page.type(slots["sku"], name="sku")
        yield from page.select(category, name="category")
        yield from page.type(slots["price"].lstrip("$").replace(",", ""), name="price")
        yield from page.type(str(slots["stock"]), name="stock")
        yield from page.click("Add product", tag="button", exact=True)
        expect(page, f"Added {slots['name']}")
        yield page.exit("Done")

    def oracle(self, task, page):
        yield from self._add(task, page, task.instantiation_dict["category"])

    def wrong_ending(self, task, page):
        yield from self._add(task, page, task.extra["wrong_category"])


PROMO_STEMS = ["FLASH", "LOYAL", "WEEKEND", "EASTER", "MOTHERS", "FATHERS", "CAMPUS", "PETLOVER",
               "GARDENER", "TECHWEEK", "COZY", "FRESH"]  # fmt: skip


class CreatePromotion(AdminFamily):
    name = "admin.create_promotion"
    template = "Create a promotion with the coupon code {code} for {pct}% off, valid from {start} to {end}."
    template_id = 322
    kind = "state"
    held_out = ("code",)

    def sample(self, db, rng, split):
        code = pick(
            rng, [f"{s}{k}" for s in PROMO_STEMS for k in range(10, 60, 5)], split, key=lambda c: c
        )
        start = date(2024, 3, 20) + timedelta(days=rng.randint(0, 250))
        end = start + timedelta(days=rng.randint(7, 45))
        return {
            "code": code,
            "pct": rng.choice(range(5, 55, 5)),
            "start": start.isoformat(),
            "end": end.isoformat(),
        }

    def build(self, db, slots):
        code = slots["code"]
        need = [code, f"{slots['pct']}% off", slots["start"], slots["end"]]
        check = page_has(f"__ADMIN__/promotions?q={code}", need, locator=f"#promo-{code}")
        return {"eval": state_check(check), "difficulty": 7}

    def _create(self, task, page, end: str):
        slots = task.instantiation_dict
        yield from menu(page, "Promotions")
        yield from page.click("Add promotion", tag="a", exact=True)
        yield from page.type(slots["code"], name="code")
        yield from page.type(str(slots["pct"]), name="percent")
        yield from page.type(slots["start"], name="starts")
        yield from page.type(end, name="ends")
        yield from page.click("Save promotion", tag="button", exact=True)
        yield page.exit("Done")

    def oracle(self, task, page):
        yield from self._create(task, page, task.instantiation_dict["end"])

    def wrong_ending(self, task, page):  # ends a day early
        end = date.fromisoformat(task.instantiation_dict["end"]) - timedelta(days=1)
        yield from self._create(task, page, end.isoformat())


class ToggleProduct(AdminFamily):
    name = "admin.toggle_product"
    template = "{action} the product {product} in the catalog."
    template_id = 323
    kind = "state"

    def sample(self, db, rng, split):
        p = pick(rng, products(db), split, key=lambda p: p["name"])
        return {"action": "Disable" if p["enabled"] else "Enable", "product": p["name"]}

    def build(self, db, slots):
        p = product_row(db, slots["product"])
        status = slots["action"] + "d"
        check = page_has(f"__ADMIN__/products/{p['id']}", [], locator="#status", exact=status)
        return {"eval": state_check(check), "difficulty": 5, "extra": {"status": status}}

    def oracle(self, task, page):
        yield from open_product(page, task.instantiation_dict["product"])
        yield from page.select(task.extra["status"], name="status")
        yield from page.click("Save product", tag="button", exact=True)
        yield page.exit("Done")

    def wrong_ending(self, task, page):  # chooses the status but leaves without saving
        yield from open_product(page, task.instantiation_dict["product"])
        yield from page.select(task.extra["status"], name="status")
        yield from page.click("Back to products", tag="a", exact=True)
        yield page.exit("Done")


class RejectReview(AdminFamily):
    name = "admin.reject_review"
    template = "Reject the pending review of {product} written by {author}."
    template_id = 324
    kind = "state"

    def sample(self, db, rng, split):
        cands = with_pending(db)
        p = pick(rng, cands, split, key=lambda p: p["name"])
        return {"product": p["name"], "author": rng.choice(submissions(db, p["id"]))["author"]}

    def build(self, db, slots):
        p = product_row(db, slots["product"])
        pending = [s["author"] for s in submissions(db, p["id"])]
        check = state_check(
            page_has(reviews_url("rejected", p["name"]), [slots["author"]], locator="#reviews"),
            page_has(reviews_url("pending", p["name"]), [], locator="#review-count",
                     exact=count_line(len(pending) - 1, "pending", p["name"])),
        )  # fmt: skip
        return {"eval": check, "difficulty": 4, "extra": {"nth": pending.index(slots["author"])}}

    def oracle(self, task, page):
        yield from pending_reviews(page, task.instantiation_dict["product"])
        expect(page, task.instantiation_dict["author"])
        yield from page.click("Reject", tag="button", exact=True, nth=task.extra["nth"])
        yield page.exit("Done")

    def wrong_ending(self, task, page):  # approves it instead
        yield from pending_reviews(page, task.instantiation_dict["product"])
        yield from page.click("Approve", tag="button", exact=True, nth=task.extra["nth"])
        yield page.exit("Done")

"""Information-retrieval admin tasks: the agent answers with exit(message=...)."""

from __future__ import annotations

from webrl.sites.admin.data import PRODUCT_SORTS, month_label
from webrl.sites.shop.data import CATEGORIES, STATUSES, money
from webrl.tasks.admin.base import (
    AdminFamily,
    best_seller_report,
    best_sellers,
    clear_best_sellers,
    customer_row,
    customers,
    expect,
    filter_orders,
    menu,
    money_answer,
    month_revenue,
    months,
    open_customer,
    open_order,
    order_row,
    orders,
    pending_reviews,
    products,
    rows,
    same_noun,
    submissions,
)
from webrl.tasks.family import InfeasibleSlots, answer_exact, answer_includes, pick


class Answered(AdminFamily):
    """An info family whose oracle and wrong ending share the route to the answer:
    subclasses implement `route` (the moves that reach the page showing it)."""

    kind = "info"

    def route(self, task, page):
        raise NotImplementedError

    def oracle(self, task, page):
        yield from self.route(task, page)
        expect(page, task.extra["shown"] if "shown" in task.extra else task.extra["answer"])
        yield page.exit(task.extra["answer"])

    def wrong_ending(self, task, page):
        yield from self.route(task, page)
        yield page.exit(task.extra["wrong"])


class CustomerStatusCount(Answered):
    name = "admin.customer_status_count"
    template = "How many orders of {customer} are {status}?"
    template_id = 300
    held_out = ("customer",)

    def sample(self, db, rng, split):
        c = pick(rng, customers(db), split, key=lambda c: c["full_name"])
        return {"customer": c["full_name"], "status": rng.choice(STATUSES)}

    def build(self, db, slots):
        n = sum(
            o["customer"] == slots["customer"] and o["status"] == slots["status"]
            for o in orders(db)
        )
        shown = f"{n} order{'s' if n != 1 else ''} found"
        return {"eval": answer_exact(str(n)), "difficulty": 5,
                "extra": {"answer": str(n), "wrong": str(n + 1), "shown": shown}}  # fmt: skip

    def route(self, task, page):
        slots = task.instantiation_dict
        yield from filter_orders(page, q=slots["customer"], status=slots["status"])


class BestSeller(Answered):
    name = "admin.best_seller"
    template = "What was the best-selling product in {period}?"
    template_id = 301
    held_out = ("period",)

    def sample(self, db, rng, split):
        return {"period": pick(rng, sorted(clear_best_sellers(db)), split, key=lambda p: p)}

    def build(self, db, slots):
        start, end = clear_best_sellers(db)[slots["period"]]
        ranked = best_sellers(db, start, end)
        wrong = ranked[1]["name"] if len(ranked) > 1 else same_noun(db, ranked[0]["name"])
        return {"eval": answer_includes(ranked[0]["name"]), "difficulty": 6,
                "extra": {"answer": ranked[0]["name"], "wrong": wrong, "range": [start, end]}}  # fmt: skip

    def route(self, task, page):
        yield from best_seller_report(page, *task.extra["range"])


class MonthRevenue(Answered):
    name = "admin.month_revenue"
    template = "What was the store's revenue in {month}?"
    template_id = 302
    held_out = ("month",)

    def sample(self, db, rng, split):
        return {"month": pick(rng, [month_label(m) for m in months(db)], split, key=lambda m: m)}

    def build(self, db, slots):
        month = next(m for m in months(db) if month_label(m) == slots["month"])
        cents = month_revenue(db, month)
        gross = rows(
            db, "SELECT SUM(total_cents) FROM orders WHERE substr(created, 1, 7) = ?", (month,)
        )[0][0]
        wrong = money(
            gross + (0 if gross != cents else 100)
        )  # canceled orders counted (or off by a dollar)
        return {"eval": answer_includes(money_answer(cents)), "difficulty": 5,
                "extra": {"answer": money(cents), "wrong": wrong, "year": month[:4]}}  # fmt: skip

    def route(self, task, page):
        yield from menu(page, "Reports")
        yield from page.click("Sales by month", tag="a", exact=True)
        yield from page.select(task.extra["year"], name="year")
        yield from page.click("Show report", tag="button")


EXTREMES = {  # how the instruction says it -> products grid sort that puts it first
    "most units in stock": "stock_desc",
    "fewest units in stock": "stock_asc",
    "highest price": "price_desc",
    "lowest price": "price_asc",
}


class CategoryExtreme(Answered):
    name = "admin.category_extreme"
    template = "Which product in the {category} category has the {which}?"
    template_id = 303
    held_out = ("category",)

    def _ranked(self, db, category: str, sort: str) -> list:
        key = {"stock_desc": lambda p: -p["stock"], "stock_asc": lambda p: p["stock"],
               "price_desc": lambda p: -p["price_cents"], "price_asc": lambda p: p["price_cents"]}[sort]  # fmt: skip
        return sorted((p for p in products(db) if p["category"] == category), key=key)

    def _unique(self, db, category: str, which: str) -> bool:
        ranked = self._ranked(db, category, EXTREMES[which])
        field = "stock" if "stock" in EXTREMES[which] else "price_cents"
        return ranked[0][field] != ranked[1][field]

    def sample(self, db, rng, split):
        category = pick(rng, [c[1] for c in CATEGORIES], split, key=lambda c: c)
        choices = [w for w in EXTREMES if self._unique(db, category, w)]
        return {"category": category, "which": rng.choice(choices)}

    def build(self, db, slots):
        sort = EXTREMES[slots["which"]]
        ranked = self._ranked(db, slots["category"], sort)
        return {"eval": answer_includes(ranked[0]["name"]), "difficulty": 5,
                "extra": {"answer": ranked[0]["name"], "wrong": ranked[1]["name"], "sort": sort}}  # fmt: skip

    def route(self, task, page):
        yield from menu(page, "Products")
        yield from page.select(task.instantiation_dict["category"], name="category")
        yield from page.select(PRODUCT_SORTS[task.extra["sort"]][0], name="sort")
        yield from page.click("Search", tag="button", exact=True)


CONTACT_FIELDS = ("email address", "phone number", "shipping address")


def contact(c, field: str) -> list[str]:
    """The phrases that answer `field` for customer row `c`."""
    if field == "email address":
        return [c["email"]]
    if field == "phone number":
        return [c["phone"]]
    return [c["street"], c["city"]]


class CustomerContact(Answered):
    name = "admin.customer_contact"
    template = "What is the {field} of customer {customer}?"
    template_id = 304
    held_out = ("customer",)

    def sample(self, db, rng, split):
        c = pick(rng, customers(db), split, key=lambda c: c["full_name"])
        return {"field": rng.choice(CONTACT_FIELDS), "customer": c["full_name"]}

    def build(self, db, slots):
        c = customer_row(db, slots["customer"])
        other = next(x for x in customers(db) if x["id"] != c["id"])
        need = contact(c, slots["field"])
        return {"eval": answer_includes(*need), "difficulty": 3,
                "extra": {"answer": ", ".join(need), "wrong": ", ".join(contact(other, slots["field"]))}}  # fmt: skip

    def route(self, task, page):
        yield from open_customer(page, task.instantiation_dict["customer"])


class PendingReviewCount(Answered):
    name = "admin.pending_review_count"
    template = "How many reviews of {product} are waiting for moderation?"
    template_id = 305

    def sample(self, db, rng, split):
        have = {r[0] for r in rows(db, "SELECT product_id FROM review_submissions")}
        cands = [
            p for p in products(db) if p["id"] in have
        ]  # some have only rejected ones (0 pending)
        return {"product": pick(rng, cands, split, key=lambda p: p["name"])["name"]}

    def build(self, db, slots):
        pid = next(p["id"] for p in products(db) if p["name"] == slots["product"])
        n = len(submissions(db, pid))
        shown = f"{n} pending review{'s' if n != 1 else ''}"
        return {"eval": answer_exact(str(n)), "difficulty": 3,
                "extra": {"answer": str(n), "wrong": str(n + 1), "shown": shown}}  # fmt: skip

    def route(self, task, page):
        yield from pending_reviews(page, task.instantiation_dict["product"])


class CustomerOrderTotal(Answered):
    name = "admin.customer_order_total"
    template = "What was the total of the {which} order placed by {customer}?"
    template_id = 306
    held_out = ("customer",)

    def sample(self, db, rng, split):
        c = pick(rng, customers(db), split, key=lambda c: c["full_name"])
        return {"which": rng.choice(["most recent", "first"]), "customer": c["full_name"]}

    def build(self, db, slots):
        mine = [o for o in orders(db) if o["customer"] == slots["customer"]]  # newest first
        o, other = (mine[0], mine[-1]) if slots["which"] == "most recent" else (mine[-1], mine[0])
        if o["total_cents"] == other["total_cents"]:
            raise InfeasibleSlots("first and last orders cost the same")
        return {"eval": answer_includes(money_answer(o["total_cents"])), "difficulty": 4 + len(mine) // 10,
                "extra": {"answer": money(o["total_cents"]), "wrong": money(other["total_cents"])}}  # fmt: skip

    def route(self, task, page):
        yield from open_customer(page, task.instantiation_dict["customer"])
        if task.instantiation_dict["which"] == "first":  # the oldest is on the last page
            while page.has("Next page", tag="a", exact=True):
                yield from page.click("Next page", tag="a", exact=True)


class SkuLookup(Answered):
    name = "admin.sku_lookup"
    template = "Which product has the SKU {sku}?"
    template_id = 307
    held_out = ("sku",)

    def sample(self, db, rng, split):
        return {"sku": pick(rng, products(db), split, key=lambda p: p["sku"])["sku"]}

    def build(self, db, slots):
        p = next(p for p in products(db) if p["sku"] == slots["sku"])
        return {"eval": answer_includes(p["name"]), "difficulty": 2,
                "extra": {"answer": p["name"], "wrong": same_noun(db, p["name"])}}  # fmt: skip

    def route(self, task, page):
        yield from menu(page, "Products")
        yield from page.search(task.instantiation_dict["sku"], name="q")


class PromotionFact(Answered):
    name = "admin.promotion_fact"
    template = "How much discount does the coupon {code} give, and on which date does it end?"
    template_id = 308
    held_out = ("code",)

    def sample(self, db, rng, split):
        codes = [r["code"] for r in rows(db, "SELECT code FROM promotions ORDER BY id")]
        return {"code": pick(rng, codes, split, key=lambda c: c)}

    def build(self, db, slots):
        p = rows(db, "SELECT * FROM promotions WHERE code = ?", (slots["code"],))[0]
        pct = f"{p['percent']}% |OR| {p['percent']} percent"
        return {"eval": answer_includes(pct, p["ends"]), "difficulty": 3,
                "extra": {"answer": f"{p['percent']}% off, ending on {p['ends']}",
                          "shown": p["ends"], "wrong": f"{p['percent']}% off, ending on {p['starts']}"}}  # fmt: skip

    def route(self, task, page):
        yield from menu(page, "Promotions")
        yield from page.search(task.instantiation_dict["code"], name="q")


class LowStockCount(Answered):
    name = "admin.low_stock_count"
    template = "How many products in the {category} category have {n} or fewer units in stock?"
    template_id = 309
    held_out = ("category",)

    def sample(self, db, rng, split):
        category = pick(rng, [c[1] for c in CATEGORIES], split, key=lambda c: c)
        return {"category": category, "n": rng.randint(3, 30)}

    def build(self, db, slots):
        n = sum(
            p["category"] == slots["category"] and p["stock"] <= slots["n"] for p in products(db)
        )
        shown = f"{n} product{'s' if n != 1 else ''} with {slots['n']} or fewer"
        return {"eval": answer_exact(str(n)), "difficulty": 6,
                "extra": {"answer": str(n), "wrong": str(n + 1), "shown": shown}}  # fmt: skip

    def route(self, task, page):
        slots = task.instantiation_dict
        yield from menu(page, "Reports")
        yield from page.click("Low stock", tag="a", exact=True)
        yield from page.type(str(slots["n"]), name="threshold")
        yield from page.select(slots["category"], name="category")
        yield from page.click("Show report", tag="button")


class OrderCustomerEmail(Answered):
    name = "admin.order_customer_email"
    template = "What is the email address of the customer who placed order #{number}?"
    template_id = 310
    held_out = ("number",)

    def sample(self, db, rng, split):
        return {"number": pick(rng, orders(db), split, key=lambda o: o["number"])["number"]}

    def build(self, db, slots):
        c = customer_row(db, order_row(db, slots["number"])["customer"])
        other = next(x for x in customers(db) if x["id"] != c["id"])
        return {"eval": answer_includes(c["email"]), "difficulty": 5,
                "extra": {"answer": c["email"], "wrong": other["email"]}}  # fmt: skip

    def route(self, task, page):
        yield from open_order(page, task.instantiation_dict["number"])
        yield from page.click(tag="a", href="/customers/")  # the customer's name

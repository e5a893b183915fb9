"""Infeasible admin tasks, worded like feasible ones: the right answer is "N/A"."""

from __future__ import annotations

from webrl.sites.shop.data import CATEGORIES, FIRST_NAMES, LAST_NAMES, money
from webrl.tasks.admin.base import (
    NA,
    AdminFamily,
    customers,
    expect,
    menu,
    open_order,
    orders,
    products,
    status_label,
)
from webrl.tasks.admin.info import CONTACT_FIELDS, contact
from webrl.tasks.family import answer_exact, combine, page_has, pick, state_check


class MissingCustomer(AdminFamily):
    """CustomerContact's wording, for someone who is not a customer."""

    name = "admin.missing_customer"
    template = "What is the {field} of customer {customer}?"
    template_id = 340
    kind = "infeasible"
    held_out = ("customer",)

    def sample(self, db, rng, split):
        have = {c["full_name"] for c in customers(db)}
        fake = [f"{f} {la}" for f in FIRST_NAMES for la in LAST_NAMES if f"{f} {la}" not in have]
        return {
            "field": rng.choice(CONTACT_FIELDS),
            "customer": pick(rng, fake, split, key=lambda n: n),
        }

    def build(self, db, slots):
        first = slots["customer"].split()[0]
        people = customers(db)
        near = next((c for c in people if c["full_name"].startswith(first + " ")), people[0])
        return {"eval": answer_exact(NA), "difficulty": 2,
                "extra": {"answer": NA, "wrong": ", ".join(contact(near, slots["field"]))}}  # fmt: skip

    def _search(self, task, page):
        yield from menu(page, "Customers")
        yield from page.search(task.instantiation_dict["customer"], name="q")

    def oracle(self, task, page):
        yield from self._search(task, page)
        expect(page, "0 customers found")
        yield page.exit(NA)

    def wrong_ending(self, task, page):
        yield from self._search(task, page)
        yield page.exit(task.extra["wrong"])


class MissingProductPrice(AdminFamily):
    """ChangePrice's wording, for a product the shop does not carry."""

    name = "admin.missing_product_price"
    template = "Change the price of {product} to {price}."
    template_id = 341
    kind = "infeasible"

    def sample(self, db, rng, split):
        have = {p["name"] for p in products(db)}
        fake = [f"{b} {m} {n}" for c in CATEGORIES for b in c[4] for m in c[5] for n in c[6]]
        name = pick(rng, [f for f in fake if f not in have], split, key=lambda f: f)
        return {"product": name, "price": money(rng.randint(5, 150) * 100 + 99)}

    def build(self, db, slots):
        return {"eval": answer_exact(NA), "difficulty": 2, "extra": {"answer": NA}}

    def _search(self, task, page):
        yield from menu(page, "Products")
        yield from page.search(task.instantiation_dict["product"], name="q")

    def oracle(self, task, page):
        yield from self._search(task, page)
        expect(page, "0 products found")
        yield page.exit(NA)

    def wrong_ending(self, task, page):  # claims success
        yield from self._search(task, page)
        yield page.exit("Done")


class CancelShippedOrder(AdminFamily):
    """CancelOrder's wording, for an order already shipped or delivered (no Cancel button)."""

    name = "admin.cancel_shipped_order"
    template = "Cancel order #{number}."
    template_id = 342
    kind = "infeasible"
    held_out = ("number",)

    def sample(self, db, rng, split):
        cands = [o for o in orders(db) if o["status"] in ("shipped", "delivered")]
        return {"number": pick(rng, cands, split, key=lambda o: o["number"])["number"]}

    def build(self, db, slots):
        status = status_label(
            next(o["status"] for o in orders(db) if o["number"] == slots["number"])
        )
        unchanged = page_has(
            f"__ADMIN__/orders/{slots['number']}", [], locator="#order-status", exact=status
        )
        return {"eval": combine(answer_exact(NA), state_check(unchanged)), "difficulty": 4,
                "extra": {"answer": NA, "status": status}}  # fmt: skip

    def oracle(self, task, page):
        yield from open_order(page, task.instantiation_dict["number"])
        if page.has("Cancel order", tag="button", exact=True):
            raise LookupError("the order can be canceled")
        yield page.exit(NA)

    def wrong_ending(self, task, page):  # marks it delivered (if shipped) and claims success
        yield from open_order(page, task.instantiation_dict["number"])
        if page.has("Complete", tag="button", exact=True):
            yield from page.click("Complete", tag="button", exact=True)
        yield page.exit("Done")

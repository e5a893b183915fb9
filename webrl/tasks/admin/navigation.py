"""Navigation admin tasks: judged by the final page's URL."""

from __future__ import annotations

from datetime import date, timedelta

from webrl.sites.admin.data import ORDER_STATUSES, PRODUCT_SORTS
from webrl.sites.shop.data import CATEGORIES
from webrl.tasks.admin.base import (
    AdminFamily,
    customers,
    filter_orders,
    menu,
    open_customer,
    open_order,
    open_product,
    orders,
    product_row,
    products,
    same_noun,
)
from webrl.tasks.family import pick, url_is

SORT_WORDS = {  # products grid sort key -> how an instruction names it
    "name": "name",
    "price_asc": "price from low to high",
    "price_desc": "price from high to low",
    "stock_asc": "stock from low to high",
    "stock_desc": "stock from high to low",
}


class CustomerOrdersNav(AdminFamily):
    name = "admin.customer_orders_nav"
    template = "Show me all orders placed by {customer} in the orders grid."
    template_id = 311
    kind = "nav"
    held_out = ("customer",)

    def sample(self, db, rng, split):
        return {
            "customer": pick(rng, customers(db), split, key=lambda c: c["full_name"])["full_name"]
        }

    def build(self, db, slots):
        return {"eval": url_is(f"__ADMIN__/orders?q={slots['customer']}"), "difficulty": 4}

    def oracle(self, task, page):
        yield from open_customer(page, task.instantiation_dict["customer"])
        yield from page.click("Show in the orders grid", tag="a")
        yield page.exit("")

    def wrong_ending(self, task, page):  # stops on the customer's page
        yield from open_customer(page, task.instantiation_dict["customer"])
        yield page.exit("")


class OpenProductEdit(AdminFamily):
    name = "admin.open_product_edit"
    template = "Open the edit page of the product {product}."
    template_id = 312
    kind = "nav"

    def sample(self, db, rng, split):
        return {"product": pick(rng, products(db), split, key=lambda p: p["name"])["name"]}

    def build(self, db, slots):
        p = product_row(db, slots["product"])
        return {"eval": url_is(f"__ADMIN__/products/{p['id']}"), "difficulty": 3,
                "extra": {"wrong": same_noun(db, p["name"])}}  # fmt: skip

    def oracle(self, task, page):
        yield from open_product(page, task.instantiation_dict["product"])
        yield page.exit("")

    def wrong_ending(self, task, page):
        yield from open_product(page, task.extra["wrong"])
        yield page.exit("")


class FilterOrders(AdminFamily):
    name = "admin.filter_orders"
    template = "Show me the orders with status {status} placed between {start} and {end}."
    template_id = 313
    kind = "nav"
    held_out = ("status",)

    def sample(self, db, rng, split):
        status = pick(rng, list(ORDER_STATUSES.values()), split, key=lambda s: s)
        start = date(2022, 1, 1) + timedelta(days=rng.randint(0, 700))
        end = start + timedelta(days=rng.randint(20, 150))
        return {"status": status, "start": start.isoformat(), "end": end.isoformat()}

    def build(self, db, slots):
        key = next(k for k, v in ORDER_STATUSES.items() if v == slots["status"])
        url = f"__ADMIN__/orders?status={key}&from={slots['start']}&to={slots['end']}"
        return {"eval": url_is(url), "difficulty": 5, "extra": {"status": key}}

    def oracle(self, task, page):
        slots = task.instantiation_dict
        yield from filter_orders(
            page, status=task.extra["status"], start=slots["start"], end=slots["end"]
        )
        yield page.exit("")

    def wrong_ending(self, task, page):  # forgets the end date
        slots = task.instantiation_dict
        yield from filter_orders(page, status=task.extra["status"], start=slots["start"])
        yield page.exit("")


class OpenOrder(AdminFamily):
    name = "admin.open_order"
    template = "Open order #{number}."
    template_id = 314
    kind = "nav"
    held_out = ("number",)

    def sample(self, db, rng, split):
        return {"number": pick(rng, orders(db), split, key=lambda o: o["number"])["number"]}

    def build(self, db, slots):
        numbers = [o["number"] for o in orders(db)]
        wrong = numbers[numbers.index(slots["number"]) - 1]
        return {"eval": url_is(f"__ADMIN__/orders/{slots['number']}"), "difficulty": 3,
                "extra": {"wrong": wrong}}  # fmt: skip

    def oracle(self, task, page):
        yield from open_order(page, task.instantiation_dict["number"])
        yield page.exit("")

    def wrong_ending(self, task, page):
        yield from open_order(page, task.extra["wrong"])
        yield page.exit("")


class ProductsSorted(AdminFamily):
    name = "admin.products_sorted"
    template = "List the products of the {category} category sorted by {order}."
    template_id = 315
    kind = "nav"
    held_out = ("category",)

    def sample(self, db, rng, split):
        category = pick(rng, [c[1] for c in CATEGORIES], split, key=lambda c: c)
        return {"category": category, "order": rng.choice(list(SORT_WORDS.values()))}

    def build(self, db, slots):
        sort = next(k for k, v in SORT_WORDS.items() if v == slots["order"])
        slug = next(c[0] for c in CATEGORIES if c[1] == slots["category"])
        return {"eval": url_is(f"__ADMIN__/products?category={slug}&sort={sort}"), "difficulty": 4,
                "extra": {"sort": sort}}  # fmt: skip

    def _list(self, task, page, sort: str | None):
        yield from menu(page, "Products")
        yield from page.select(task.instantiation_dict["category"], name="category")
        if sort is not None:
            yield from page.select(PRODUCT_SORTS[sort][0], name="sort")
        yield from page.click("Search", tag="button", exact=True)
        yield page.exit("")

    def oracle(self, task, page):
        yield from self._list(task, page, task.extra["sort"])

    def wrong_ending(self, task, page):
        wrong = "price_desc" if task.extra["sort"] != "price_desc" else "price_asc"
        yield from self._list(task, page, wrong)

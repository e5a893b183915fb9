"""Information-retrieval shop tasks: the agent answers with exit(message=...)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from typing import TYPE_CHECKING

from webrl.sites.shop.data import CATEGORIES, money, rating_text
from webrl.tasks.evaluators import normalize
from webrl.tasks.family import SeedDB, answer_exact, answer_includes, pick
from webrl.tasks.schema import Task
from webrl.tasks.shop.base import (
    NA,
    ShopFamily,
    expect,
    my_orders,
    open_category,
    open_order,
    open_product,
    order_row,
    product_row,
    products,
    same_noun,
    shop_db,
    sorted_category,
    unlike,
)

if TYPE_CHECKING:
    from webrl.env.page_view import PageView


class ProductFact(ShopFamily):
    """Read one fact off a product's page: the oracle searches, opens it and answers."""

    kind = "info"
    require_login = False

    def candidates(self, db: SeedDB) -> list[sqlite3.Row]:
        return products(db)

    def answer(self, p: sqlite3.Row) -> str:
        raise NotImplementedError

    def wrong(self, db: SeedDB, p: sqlite3.Row) -> str:
        return self.answer(product_row(db, same_noun(db, p["name"])))

    def spec(self, answer: str) -> dict:
        return answer_exact(answer)

    def sample(self, db, rng, split):
        return {"product": pick(rng, self.candidates(db), split, key=lambda p: p["name"])["name"]}

    def build(self, db, slots):
        p = product_row(db, slots["product"])
        answer = self.answer(p)
        wrong = self.wrong(db, p)
        if normalize(answer) in normalize(wrong):
            wrong = unlike(answer, [wrong + "0", "0", "1"])
        return {"eval": self.spec(answer), "difficulty": self.difficulty,
                "extra": {"answer": answer, "wrong": wrong}}  # fmt: skip

    def oracle(self, task, page):
        yield from open_product(page, task.instantiation_dict["product"])
        expect(page, task.extra["answer"])
        yield page.exit(task.extra["answer"])

    def wrong_ending(self, task, page):
        yield from open_product(page, task.instantiation_dict["product"])
        yield page.exit(task.extra["wrong"])


class ProductPrice(ProductFact):
    name = "shop.product_price"
    template = "What is the price of {product}?"
    template_id = 100

    def answer(self, p):
        return money(p["price_cents"])

    def spec(self, answer):
        return answer_includes(answer.lstrip("$"))


class ProductStock(ProductFact):
    name = "shop.product_stock"
    template = "How many units of {product} are in stock?"
    template_id = 101

    def candidates(self, db):
        return [p for p in products(db) if p["stock"] > 0]

    def answer(self, p):
        return str(p["stock"])


class ProductRating(ProductFact):
    name = "shop.product_rating"
    template = "What is the average star rating of {product}?"
    template_id = 102

    def candidates(self, db):
        return [p for p in products(db) if p["n_reviews"] > 0]

    def answer(self, p):
        return rating_text(p["rating_total"], p["n_reviews"])

    def wrong(self, db, p):
        return f"{min(5, p['rating_total'] // p['n_reviews'] + 1)}.0"

    def spec(self, answer):
        return answer_includes(answer)


class ReviewCount(ProductFact):
    name = "shop.review_count"
    template = "How many reviews does {product} have?"
    template_id = 103

    def answer(self, p):
        return str(p["n_reviews"])

    def wrong(self, db, p):
        return str(min(p["n_reviews"], 5) if p["n_reviews"] > 5 else p["n_reviews"] + 1)

    def oracle(self, task, page):
        yield from open_product(page, task.instantiation_dict["product"])
        if task.extra["answer"] == "0":
            expect(page, "No reviews yet")
        else:
            expect(page, f"({task.extra['answer']} review")
        yield page.exit(task.extra["answer"])


class ProductSku(ProductFact):
    name = "shop.product_sku"
    template = "What is the SKU of {product}?"
    template_id = 104

    def answer(self, p):
        return p["sku"]


class CategoryExtreme(ShopFamily):
    name = "shop.category_extreme"
    template = "What is the {which} product in the {category} category?"
    template_id = 105
    kind = "info"
    require_login = False
    held_out = ("category",)

    def sample(self, db, rng, split):
        cat = pick(rng, [c[1] for c in CATEGORIES], split, key=lambda c: c)
        return {"which": rng.choice(["cheapest", "most expensive"]), "category": cat}

    def build(self, db, slots):
        sort = "price_asc" if slots["which"] == "cheapest" else "price_desc"
        rows = sorted_category(db, slots["category"], sort)
        return {"eval": answer_includes(rows[0]["name"]), "difficulty": 5,
                "extra": {"answer": rows[0]["name"], "wrong": rows[1]["name"], "sort": sort}}  # fmt: skip

    def oracle(self, task, page):
        yield from open_category(page, task.instantiation_dict["category"], task.extra["sort"])
        expect(page, task.extra["answer"])
        yield page.exit(task.extra["answer"])

    def wrong_ending(self, task, page):
        yield from open_category(page, task.instantiation_dict["category"], task.extra["sort"])
        yield page.exit(task.extra["wrong"])


class OrderFact(ShopFamily):
    """Read one fact off one of my orders."""

    kind = "info"
    held_out = ("number",)
    difficulty = 4

    def candidates(self, db: SeedDB) -> list[sqlite3.Row]:
        return my_orders(db)

    def answer(self, db: SeedDB, o: sqlite3.Row) -> str:
        raise NotImplementedError

    def spec(self, answer: str) -> dict:
        return answer_exact(answer)

    def sample(self, db, rng, split):
        return {
            "number": pick(rng, self.candidates(db), split, key=lambda o: o["number"])["number"]
        }

    def build(self, db, slots):
        o = order_row(db, slots["number"])
        answer = self.answer(db, o)
        wrong = unlike(answer, [self.answer(db, x) for x in my_orders(db)])
        return {"eval": self.spec(answer), "difficulty": self.difficulty,
                "extra": {"answer": answer, "wrong": wrong}}  # fmt: skip

    def oracle(self, task, page):
        yield from open_order(page, task.instantiation_dict["number"])
        if task.extra["answer"] != NA:
            expect(page, task.extra["answer"])
        yield page.exit(task.extra["answer"])

    def wrong_ending(self, task, page):
        yield from open_order(page, task.instantiation_dict["number"])
        yield page.exit(task.extra["wrong"])


class OrderStatus(OrderFact):
    name = "shop.order_status"
    template = "What is the status of my order #{number}?"
    template_id = 106

    def answer(self, db, o):
        return o["status"].capitalize()


class OrderTotal(OrderFact):
    name = "shop.order_total"
    template = "How much did I pay in total for order #{number}?"
    template_id = 107

    def answer(self, db, o):
        return money(o["total_cents"])

    def spec(self, answer):
        return answer_includes(answer.lstrip("$"))


class LastOrderDate(ShopFamily):
    name = "shop.last_order_date"
    template = "When did I last order {product}? Give the date as YYYY-MM-DD."
    template_id = 108
    kind = "info"

    def _ordered(self, db: SeedDB) -> dict[str, list[str]]:
        """Product name -> dates of my orders containing it, newest first."""
        out: dict[str, list[str]] = {}
        for o in my_orders(db):
            for it in shop_db(db).execute(
                "SELECT name FROM order_items WHERE order_id = ?", (o["id"],)
            ):
                out.setdefault(it["name"], []).append(o["created"])
        return out

    def sample(self, db, rng, split):
        return {"product": pick(rng, sorted(self._ordered(db)), split, key=lambda n: n)}

    def build(self, db, slots):
        dates = self._ordered(db)[slots["product"]]
        wrong = (
            dates[-1] if len(dates) > 1 else unlike(dates[0], [o["created"] for o in my_orders(db)])
        )
        return {"eval": answer_includes(dates[0]), "difficulty": 3,
                "extra": {"answer": dates[0], "wrong": wrong}}  # fmt: skip

    def _search(self, task: Task, page: PageView) -> Iterator[str]:
        yield from page.click("My orders", tag="a", exact=True)
        yield from page.search(task.instantiation_dict["product"], name="product")

    def oracle(self, task, page):
        yield from self._search(task, page)
        expect(page, task.extra["answer"])
        yield page.exit(task.extra["answer"])

    def wrong_ending(self, task, page):
        yield from self._search(task, page)
        yield page.exit(task.extra["wrong"])


class LatestReviewer(ShopFamily):
    name = "shop.latest_reviewer"
    template = "Who wrote the most recent review of {product}?"
    template_id = 109
    kind = "info"
    require_login = False

    def _reviews(self, db: SeedDB, pid: int) -> list[sqlite3.Row]:
        return (
            shop_db(db)
            .execute(
                "SELECT * FROM reviews WHERE product_id = ? ORDER BY created DESC, id DESC", (pid,)
            )
            .fetchall()
        )

    def sample(self, db, rng, split):
        rows = [p for p in products(db) if p["n_reviews"] >= 2]
        return {"product": pick(rng, rows, split, key=lambda p: p["name"])["name"]}

    def build(self, db, slots):
        reviews = self._reviews(db, product_row(db, slots["product"])["id"])
        answer = reviews[0]["author"]
        wrong = unlike(answer, [r["author"] for r in reviews[1:]] + ["Emma Lopez"])
        return {
            "eval": answer_includes(answer),
            "difficulty": 3,
            "extra": {"answer": answer, "wrong": wrong},
        }

    def oracle(self, task, page):
        yield from open_product(page, task.instantiation_dict["product"])
        expect(page, task.extra["answer"])
        yield page.exit(task.extra["answer"])

    def wrong_ending(self, task, page):
        yield from open_product(page, task.instantiation_dict["product"])
        yield page.exit(task.extra["wrong"])

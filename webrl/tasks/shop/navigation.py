"""Navigation shop tasks: judged by the final page's URL."""

from __future__ import annotations

from webrl.sites.shop.data import CATEGORIES, SORTS
from webrl.tasks.family import SeedDB, pick, url_is
from webrl.tasks.shop.base import (
    SORT_WORDS,
    ShopFamily,
    my_orders,
    open_category,
    open_order,
    open_product,
    product_row,
    products,
    same_noun,
)


class OpenProduct(ShopFamily):
    name = "shop.open_product"
    template = "Open the product page of {product}."
    template_id = 110
    kind = "nav"
    require_login = False

    def sample(self, db, rng, split):
        return {"product": pick(rng, products(db), split, key=lambda p: p["name"])["name"]}

    def build(self, db, slots):
        p = product_row(db, slots["product"])
        return {"eval": url_is(f"__SHOP__/product/{p['id']}"), "difficulty": 3,
                "extra": {"wrong_product": same_noun(db, p["name"])}}  # fmt: skip

    def oracle(self, task, page):
        yield from open_product(page, task.instantiation_dict["product"])
        yield page.exit("")

    def wrong_ending(self, task, page):
        yield from open_product(page, task.extra["wrong_product"])
        yield page.exit("")


class OpenCategory(ShopFamily):
    name = "shop.open_category"
    template = "Show me the {category} category."
    template_id = 127
    kind = "nav"
    require_login = False
    held_out = ("category",)

    def sample(self, db, rng, split):
        return {"category": pick(rng, [c[1] for c in CATEGORIES], split, key=lambda c: c)}

    def build(self, db, slots):
        names = [c[1] for c in CATEGORIES]
        wrong = names[names.index(slots["category"]) - 1]
        slug = next(c[0] for c in CATEGORIES if c[1] == slots["category"])
        return {
            "eval": url_is(f"__SHOP__/category/{slug}"),
            "difficulty": 2,
            "extra": {"wrong": wrong},
        }

    def oracle(self, task, page):
        yield from page.click(task.instantiation_dict["category"], tag="a", exact=True)
        yield page.exit("")

    def wrong_ending(self, task, page):
        yield from page.click(task.extra["wrong"], tag="a", exact=True)
        yield page.exit("")


class OpenOrder(ShopFamily):
    name = "shop.open_order"
    template = "Show me the details of my order #{number}."
    template_id = 111
    kind = "nav"
    held_out = ("number",)

    def sample(self, db, rng, split):
        return {"number": pick(rng, my_orders(db), split, key=lambda o: o["number"])["number"]}

    def build(self, db, slots):
        numbers = [o["number"] for o in my_orders(db)]
        wrong = numbers[numbers.index(slots["number"]) - 1]  # a neighbour in the list
        return {"eval": url_is(f"__SHOP__/orders/{slots['number']}"), "difficulty": 4,
                "extra": {"wrong_number": wrong}}  # fmt: skip

    def oracle(self, task, page):
        yield from open_order(page, task.instantiation_dict["number"])
        yield page.exit("")

    def wrong_ending(self, task, page):
        yield from open_order(page, task.extra["wrong_number"])
        yield page.exit("")


class CategorySorted(ShopFamily):
    name = "shop.category_sorted"
    template = "Show me the products in the {category} category sorted by {order}."
    template_id = 112
    kind = "nav"
    require_login = False
    held_out = ("category",)

    def sample(self, db, rng, split):
        cat = pick(rng, [c[1] for c in CATEGORIES], split, key=lambda c: c)
        return {"category": cat, "order": rng.choice(list(SORT_WORDS.values()))}

    def build(self, db, slots):
        sort = next(k for k, v in SORT_WORDS.items() if v == slots["order"])
        slug = next(c[0] for c in CATEGORIES if c[1] == slots["category"])
        return {"eval": url_is(f"__SHOP__/category/{slug}?sort={sort}"), "difficulty": 5,
                "extra": {"sort": sort}}  # fmt: skip

    def oracle(self, task, page):
        yield from open_category(page, task.instantiation_dict["category"], task.extra["sort"])
        yield page.exit("")

    def wrong_ending(self, task, page):
        yield from open_category(page, task.instantiation_dict["category"])  # not sorted
        yield page.exit("")


class SearchSorted(ShopFamily):
    name = "shop.search_sorted"
    template = 'Search the store for "{term}" and sort the results by {order}.'
    template_id = 113
    kind = "nav"
    require_login = False
    held_out = ("term",)

    def _terms(self, db: SeedDB) -> list[str]:
        brands = {w.lower() for c in CATEGORIES for b in c[4] for w in b.split()}
        words = {w.lower() for p in products(db) for w in p["name"].split()}
        return sorted(w for w in words - brands if w.isalpha() and len(w) > 3)

    def sample(self, db, rng, split):
        return {"term": pick(rng, self._terms(db), split, key=lambda t: t),
                "order": rng.choice(list(SORT_WORDS.values()))}  # fmt: skip

    def build(self, db, slots):
        sort = next(k for k, v in SORT_WORDS.items() if v == slots["order"])
        return {"eval": url_is(f"__SHOP__/search?q={slots['term']}&sort={sort}"), "difficulty": 4,
                "extra": {"sort": sort}}  # fmt: skip

    def oracle(self, task, page):
        yield from page.search(task.instantiation_dict["term"], name="q")
        yield from page.select(SORTS[task.extra["sort"]][0], name="sort")
        yield from page.click("Sort", tag="button", exact=True)
        yield page.exit("")

    def wrong_ending(self, task, page):
        yield from page.search(task.instantiation_dict["term"], name="q")
        yield page.exit("")

"""Shared pieces of the shop's task families: seed-data lookups, slot pools,
oracle moves (search, open, add to cart, checkout) and the `ShopFamily` base.
"""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, ClassVar

from webrl.sites.shop.data import (
    DEFAULT_USER,
    FIRST_NAMES,
    LAST_NAMES,
    SHIPPING,
    SORTS,
    money,
    order_number,
)
from webrl.tasks.evaluators import normalize
from webrl.tasks.family import InfeasibleSlots, SeedDB, TaskFamily, page_has, pick
from webrl.tasks.family import expect as expect  # re-exported for the site's families

if TYPE_CHECKING:
    from webrl.env.page_view import PageView

NA = "N/A"
PRODUCTS_SQL = """
SELECT p.*, c.name AS category, c.slug, COUNT(r.id) AS n_reviews, COALESCE(SUM(r.rating), 0) AS rating_total
FROM products p JOIN categories c ON c.id = p.category_id LEFT JOIN reviews r ON r.product_id = p.id
GROUP BY p.id ORDER BY p.id
"""
SORT_WORDS = {  # sort key -> how an instruction names it
    "price_asc": "price from low to high",
    "price_desc": "price from high to low",
    "rating": "rating",
    "name": "name",
}
REVIEW_TEXTS = [
    ("Great for weekend trips", "Light, sturdy and easy to pack."),
    ("Good value", "Works well and the price was right."),
    ("Not what I expected", "The size was smaller than the photos suggest."),
    ("Stopped working", "It broke after two weeks of normal use."),
    ("Five stars from me", "Exactly as described and it arrived early."),
    ("Decent but noisy", "Does the job, although it is louder than I hoped."),
    ("My new favorite", "I use it every day and would buy it again."),
    ("Okay for the price", "Nothing special, but it does what it should."),
]


# --- seed lookups ---------------------------------------------------------------


def shop_db(db: SeedDB) -> sqlite3.Connection:
    return db["shop"]


def products(db: SeedDB) -> list[sqlite3.Row]:
    return shop_db(db).execute(PRODUCTS_SQL).fetchall()


def product_row(db: SeedDB, name: str) -> sqlite3.Row:
    row = next((p for p in products(db) if p["name"] == name), None)
    if row is None:
        raise KeyError(f"no shop product named {name!r}")
    return row


def my_account(db: SeedDB) -> sqlite3.Row:
    return (
        shop_db(db).execute("SELECT * FROM users WHERE username = ?", (DEFAULT_USER[0],)).fetchone()
    )


def my_orders(db: SeedDB) -> list[sqlite3.Row]:
    """The default user's orders, newest first (the order history's order)."""
    return (
        shop_db(db)
        .execute(
            "SELECT * FROM orders WHERE user_id = ? ORDER BY created DESC, id DESC",
            (my_account(db)["id"],),
        )
        .fetchall()
    )


def order_row(db: SeedDB, number: str) -> sqlite3.Row:
    return shop_db(db).execute("SELECT * FROM orders WHERE number = ?", (number,)).fetchone()


def next_order_number(db: SeedDB) -> str:
    return order_number(shop_db(db).execute("SELECT MAX(id) + 1 FROM orders").fetchone()[0])


def sorted_category(db: SeedDB, category: str, sort: str) -> list[sqlite3.Row]:
    """A category's products in the order the site lists them for `sort`."""
    rows = [p for p in products(db) if p["category"] == category]
    if sort == "price_asc":
        return sorted(rows, key=lambda p: (p["price_cents"], p["id"]))
    if sort == "price_desc":
        return sorted(rows, key=lambda p: (-p["price_cents"], p["id"]))
    raise ValueError(f"unsupported sort {sort!r}")


def wishlist_names(db: SeedDB) -> set[str]:
    return {
        r[0]
        for r in shop_db(db).execute(
            "SELECT p.name FROM wishlist w JOIN products p ON p.id = w.product_id WHERE w.user_id = ?",
            (my_account(db)["id"],),
        )
    }


def unlike(ref: str, options: Iterable[str]) -> str:
    """The first option that does not contain `ref` (a plausible wrong answer)."""
    for o in options:
        if normalize(ref) not in normalize(o):
            return o
    raise InfeasibleSlots(f"no wrong answer distinct from {ref!r}")


def same_noun(db: SeedDB, name: str) -> str:
    """Another product of the same category (the natural mix-up for `name`)."""
    p = product_row(db, name)
    others = [
        q["name"]
        for q in products(db)
        if q["category_id"] == p["category_id"] and q["name"] != name
    ]
    noun = name.split()[-1]
    return next((o for o in others if o.endswith(noun)), others[0])


def ordered_lines(url: str, lines: Iterable[tuple[sqlite3.Row, int]]) -> list[dict]:
    """program_html checks: the order at `url` has each (product, quantity) line."""
    out = []
    for p, qty in lines:
        out.append(page_has(url, [p["name"]], locator=f"#item-{p['id']}"))
        out.append(page_has(url, [], locator=f"#item-{p['id']} .qty", exact=str(qty)))
    return out


def addresses() -> list[dict[str, str]]:
    """A fixed pool of postal addresses for account and shipping tasks."""
    rng = random.Random(1117)
    cities = [("Madison", "WI", "537"), ("Tucson", "AZ", "857"), ("Raleigh", "NC", "276"),
              ("Omaha", "NE", "681"), ("Albany", "NY", "122"), ("Boise", "ID", "837"),
              ("Savannah", "GA", "314"), ("Spokane", "WA", "992")]  # fmt: skip
    streets = ["Willow Ct", "Sunset Blvd", "River Rd", "Hillcrest Ave", "Chestnut St", "Meadow Ln",
               "Park Pl", "Spruce Dr", "Aspen Way", "Juniper St"]  # fmt: skip
    out = []
    for _ in range(120):
        city, state, zip3 = rng.choice(cities)
        out.append(dict(street=f"{rng.randint(10, 9899)} {rng.choice(streets)}", city=city, state=state,
                        zip=f"{zip3}{rng.randint(10, 99)}"))  # fmt: skip
    return out


def phones() -> list[str]:
    rng = random.Random(2203)
    return [f"555-{rng.randint(200, 999)}-{rng.randint(1000, 9999)}" for _ in range(200)]


def pick_recipient(rng: random.Random, split: str) -> str:
    return pick(
        rng, [f"{f} {la}" for f in FIRST_NAMES for la in LAST_NAMES], split, key=lambda n: n
    )


def address_text(a: dict[str, str]) -> str:
    return f"{a['street']}, {a['city']}, {a['state']} {a['zip']}"


# --- oracle building blocks -----------------------------------------------------------


def open_product(page: PageView, name: str) -> Iterator[str]:
    yield from page.search(name, name="q")
    yield from page.click(name, tag="a", exact=True)


def open_category(page: PageView, category: str, sort: str | None = None) -> Iterator[str]:
    yield from page.click("One Stop Shop", tag="a", exact=True)
    yield from page.click(category, tag="a", exact=True)
    if sort is not None:
        yield from page.select(SORTS[sort][0], name="sort")
        yield from page.click("Sort", tag="button", exact=True)


def open_order(page: PageView, number: str) -> Iterator[str]:
    yield from page.click("My orders", tag="a", exact=True)
    link = f"Order #{number}"
    for _ in range(10):
        if page.has(link, tag="a", exact=True):
            break
        yield from page.click("Next page", tag="a", exact=True)
    yield from page.click(link, tag="a", exact=True)


def add_to_cart(page: PageView, name: str, qty: int) -> Iterator[str]:
    yield from open_product(page, name)
    if qty != 1:
        yield from page.type(str(qty), name="qty")
    yield from page.click("Add to cart", tag="button")


def checkout(
    page: PageView, method: str = "standard", ship_to: dict[str, str] | None = None
) -> Iterator[str]:
    """From the cart: fill the checkout form and place the order."""
    yield from page.click("Proceed to checkout", tag="a")
    for field, value in (ship_to or {}).items():
        yield from page.type(value, name=field)
    if method != "standard":
        label, cents = SHIPPING[method]
        yield from page.select(f"{label} ({money(cents)})", name="shipping")
    yield from page.click("Place order", tag="button")


# --- family base ---------------------------------------------------------------------


class ShopFamily(TaskFamily):
    sites = ("shop",)
    start_url = "__SHOP__/"
    held_out: ClassVar[tuple[str, ...]] = ("product",)  # slots whose values never cross splits
    difficulty: ClassVar[int] = 3

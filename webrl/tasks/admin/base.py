"""Shared pieces of the admin panel's task families: seed-data lookups, oracle
moves (open a product, an order, a customer; filter the orders grid) and the
`AdminFamily` base.

The admin works on the shop's database, so the lookups read `db["admin"]`
(the shop's catalogue and orders plus the admin's own tables).
"""

from __future__ import annotations

import calendar
import sqlite3
from collections.abc import Iterator
from typing import TYPE_CHECKING, ClassVar

from webrl.sites.admin.data import ORDER_STATUSES, month_label
from webrl.sites.shop.data import money
from webrl.tasks.family import SeedDB, TaskFamily
from webrl.tasks.family import expect as expect  # re-exported for the site's families

if TYPE_CHECKING:
    from webrl.env.page_view import PageView

NA = "N/A"
PRODUCTS_SQL = """
SELECT p.*, c.name AS category, c.slug, COALESCE(s.enabled, 1) AS enabled
FROM products p JOIN categories c ON c.id = p.category_id
LEFT JOIN product_status s ON s.product_id = p.id ORDER BY p.id
"""
ORDERS_SQL = """
SELECT o.*, u.full_name AS customer FROM orders o JOIN users u ON u.id = o.user_id
ORDER BY o.created DESC, o.id DESC
"""


# --- seed lookups ---------------------------------------------------------------


def admin_db(db: SeedDB) -> sqlite3.Connection:
    return db["admin"]


def rows(db: SeedDB, sql: str, params: tuple = ()) -> list[sqlite3.Row]:
    return admin_db(db).execute(sql, params).fetchall()


def products(db: SeedDB) -> list[sqlite3.Row]:
    return rows(db, PRODUCTS_SQL)


def product_row(db: SeedDB, name: str) -> sqlite3.Row:
    row = next((p for p in products(db) if p["name"] == name), None)
    if row is None:
        raise KeyError(f"no product named {name!r}")
    return row


def same_noun(db: SeedDB, name: str) -> str:
    """Another product of the same category (the natural mix-up for `name`)."""
    p = product_row(db, name)
    others = [
        q["name"]
        for q in products(db)
        if q["category_id"] == p["category_id"] and q["name"] != name
    ]
    return next((o for o in others if o.endswith(name.split()[-1])), others[0])


def orders(db: SeedDB) -> list[sqlite3.Row]:
    """Every order, newest first (the orders grid's order)."""
    return rows(db, ORDERS_SQL)


def order_row(db: SeedDB, number: str) -> sqlite3.Row:
    return next(o for o in orders(db) if o["number"] == number)


def order_items(db: SeedDB, number: str) -> list[sqlite3.Row]:
    return rows(
        db,
        "SELECT i.* FROM order_items i JOIN orders o ON o.id = i.order_id WHERE o.number = ? ORDER BY i.id",
        (number,),
    )


def customers(db: SeedDB) -> list[sqlite3.Row]:
    return rows(db, "SELECT * FROM users ORDER BY full_name")


def customer_row(db: SeedDB, name: str) -> sqlite3.Row:
    return next(c for c in customers(db) if c["full_name"] == name)


def submissions(db: SeedDB, product_id: int, status: str = "pending") -> list[sqlite3.Row]:
    """A product's reviews awaiting moderation (or rejected), newest first like the site."""
    return rows(
        db,
        "SELECT * FROM review_submissions WHERE product_id = ? AND status = ? ORDER BY created DESC, id DESC",
        (product_id, status),
    )


def with_pending(db: SeedDB, at_least: int = 1) -> list[sqlite3.Row]:
    """Products with at least `at_least` reviews awaiting moderation."""
    counts = dict(
        rows(
            db,
            "SELECT product_id, COUNT(*) FROM review_submissions WHERE status = 'pending' GROUP BY product_id",
        )
    )
    return [p for p in products(db) if counts.get(p["id"], 0) >= at_least]


def published_count(db: SeedDB, product_id: int) -> int:
    return rows(db, "SELECT COUNT(*) FROM reviews WHERE product_id = ?", (product_id,))[0][0]


def months(db: SeedDB) -> list[str]:
    """Months ("YYYY-MM") with at least one order that was not canceled."""
    return [r[0] for r in rows(db, "SELECT DISTINCT substr(created, 1, 7) FROM orders WHERE status != 'canceled' ORDER BY 1")]  # fmt: skip


def month_range(month: str) -> tuple[str, str]:
    """First and last day of a month, as the report's date fields take them."""
    year, mon = map(int, month.split("-"))
    return f"{month}-01", f"{month}-{calendar.monthrange(year, mon)[1]:02d}"


def periods(db: SeedDB) -> dict[str, tuple[str, str]]:
    """Report periods an instruction can name -> (first day, last day): every month
    with sales ("October 2023"), every quarter ("Q4 2023") and every year ("2023")."""
    out: dict[str, tuple[str, str]] = {}
    for m in months(db):
        year, mon = m.split("-")
        q = (int(mon) - 1) // 3
        out[month_label(m)] = month_range(m)
        out[f"Q{q + 1} {year}"] = (
            f"{year}-{3 * q + 1:02d}-01",
            month_range(f"{year}-{3 * q + 3:02d}")[1],
        )
        out[year] = (f"{year}-01-01", f"{year}-12-31")
    return out


def best_sellers(db: SeedDB, start: str, end: str) -> list[sqlite3.Row]:
    """Products by units sold from `start` to `end` (canceled orders left out), best first."""
    return rows(
        db,
        "SELECT p.id, p.name, SUM(i.qty) AS qty, SUM(i.qty * i.price_cents) AS revenue"
        " FROM order_items i JOIN orders o ON o.id = i.order_id JOIN products p ON p.id = i.product_id"
        " WHERE o.status != 'canceled' AND o.created BETWEEN ? AND ?"
        " GROUP BY p.id ORDER BY qty DESC, revenue DESC, p.name",
        (start, end),
    )


def clear_best_sellers(db: SeedDB) -> dict[str, tuple[str, str]]:
    """The periods whose best seller is a single product: the report ranks by units
    sold, then by revenue, and says so; a tie on both leaves the period out."""
    out = {}
    for label, (start, end) in periods(db).items():
        ranked = best_sellers(db, start, end)
        if len(ranked) == 1 or (ranked[0]["qty"], ranked[0]["revenue"]) != (
            ranked[1]["qty"],
            ranked[1]["revenue"],
        ):
            out[label] = (start, end)
    return out


def month_revenue(db: SeedDB, month: str) -> int:
    return rows(
        db,
        "SELECT COALESCE(SUM(total_cents), 0) FROM orders WHERE status != 'canceled' AND substr(created, 1, 7) = ?",
        (month,),
    )[0][0]


def money_answer(cents: int) -> str:
    """must_include reference for an amount: with or without the thousands comma."""
    text = money(cents).lstrip("$")
    return text if "," not in text else f"{text} |OR| {text.replace(',', '')}"


def price_field(cents: int) -> str:
    """What the oracle types into a price field ("1049.50")."""
    return f"{cents // 100}.{cents % 100:02d}"


def discounted(cents: int, percent: int) -> int:
    """`cents` reduced by `percent`, rounded half up to the cent."""
    return (cents * (100 - percent) * 2 + 100) // 200


def status_label(status: str) -> str:
    return ORDER_STATUSES[status]


# --- oracle building blocks -----------------------------------------------------------


def menu(page: PageView, label: str) -> Iterator[str]:
    """Follow a link of the admin's menu bar (Orders, Products, Reports, ...)."""
    yield from page.click(label, tag="a", exact=True)


def open_product(page: PageView, name: str) -> Iterator[str]:
    yield from menu(page, "Products")
    yield from page.search(name, name="q")
    yield from page.click(name, tag="a", exact=True)


def open_order(page: PageView, number: str) -> Iterator[str]:
    yield from menu(page, "Orders")
    yield from page.search(number, name="q")
    yield from page.click(f"#{number}", tag="a", exact=True)


def open_customer(page: PageView, name: str) -> Iterator[str]:
    yield from menu(page, "Customers")
    yield from page.search(name, name="q")
    yield from page.click(name, tag="a", exact=True)


def filter_orders(
    page: PageView, q: str = "", status: str = "", start: str = "", end: str = ""
) -> Iterator[str]:
    """Open the orders grid and apply its filters (`status` is a status key)."""
    yield from menu(page, "Orders")
    if q:
        yield from page.type(q, name="q")
    if status:
        yield from page.select(status_label(status), name="status")
    if start:
        yield from page.type(start, name="from")
    if end:
        yield from page.type(end, name="to")
    yield from page.click("Filter", tag="button", exact=True)


def best_seller_report(page: PageView, start: str, end: str) -> Iterator[str]:
    yield from menu(page, "Reports")
    yield from page.click("Best sellers", tag="a", exact=True)
    yield from page.type(start, name="from")
    yield from page.type(end, name="to")
    yield from page.click("Show report", tag="button")


def pending_reviews(page: PageView, product: str) -> Iterator[str]:
    yield from menu(page, "Reviews")
    yield from page.search(product, name="product")


def save_product(page: PageView, **fields: str) -> Iterator[str]:
    """On a product's edit page: type the given fields and save."""
    for name, value in fields.items():
        yield from page.type(value, name=name)
    yield from page.click("Save product", tag="button", exact=True)


# --- family base ---------------------------------------------------------------------


class AdminFamily(TaskFamily):
    sites = ("admin",)
    start_url = "__ADMIN__/"
    held_out: ClassVar[tuple[str, ...]] = ("product",)  # slots whose values never cross splits
    difficulty: ClassVar[int] = 3

"""The admin panel's own tables and seed data, added to the shop's database.

The admin (the shop's back office) shares the shop's SQLite database, so a
price set here is the price the storefront shows in the same episode.
`build_db` runs after `webrl.sites.shop.data.build_db` and only ADDS tables:
staff logins, product enabled/disabled flags, reviews waiting for moderation,
promotions (coupon codes) and the order history (status changes and staff
comments). The shop's seed rows are never touched, because the shop's task
families are computed from them.

Reviews: everything in the shop's `reviews` table is published (approved).
New submissions wait in `review_submissions` (pending or rejected); approving
one copies it into `reviews`, where the storefront shows it.
"""

from __future__ import annotations

import random
import re
import sqlite3
from datetime import date, timedelta

from webrl.sites.common import hash_password
from webrl.sites.shop.data import BODIES, FIRST_NAMES, LAST_NAMES, TITLES, TODAY

SEED = 20240316
DEFAULT_USER = ("admin", "admin-pass")
LOW_STOCK = 10  # default threshold of the low-stock report and dashboard

SCHEMA = """
CREATE TABLE admin_users (
    id INTEGER PRIMARY KEY,
    username TEXT UNIQUE NOT NULL,
    password_hash TEXT NOT NULL,
    full_name TEXT NOT NULL,
    email TEXT NOT NULL,
    role TEXT NOT NULL
);
CREATE TABLE admin_sessions (
    token TEXT PRIMARY KEY,
    user_id INTEGER NOT NULL REFERENCES admin_users(id)
);
CREATE TABLE product_status (
    product_id INTEGER PRIMARY KEY REFERENCES products(id),
    enabled INTEGER NOT NULL DEFAULT 1
);
CREATE TABLE review_submissions (
    id INTEGER PRIMARY KEY,
    product_id INTEGER NOT NULL REFERENCES products(id),
    author TEXT NOT NULL,
    rating INTEGER NOT NULL CHECK (rating BETWEEN 1 AND 5),
    title TEXT NOT NULL,
    body TEXT NOT NULL,
    created TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('pending', 'rejected'))
);
CREATE INDEX review_submissions_product ON review_submissions(product_id);
CREATE TABLE promotions (
    id INTEGER PRIMARY KEY,
    code TEXT UNIQUE NOT NULL,
    description TEXT NOT NULL,
    percent INTEGER NOT NULL CHECK (percent BETWEEN 1 AND 90),
    starts TEXT NOT NULL,
    ends TEXT NOT NULL
);
CREATE TABLE order_history (
    id INTEGER PRIMARY KEY,
    order_id INTEGER NOT NULL REFERENCES orders(id),
    created TEXT NOT NULL,
    author TEXT NOT NULL,
    status TEXT NOT NULL,
    prev_status TEXT NOT NULL,
    comment TEXT NOT NULL
);
CREATE INDEX order_history_order ON order_history(order_id);
"""

# status key -> label; "on hold" exists only in the back office (the shop shows it capitalised)
ORDER_STATUSES = {
    "pending": "Pending",
    "processing": "Processing",
    "on hold": "On hold",
    "shipped": "Shipped",
    "delivered": "Delivered",
    "canceled": "Canceled",
}
# action -> (button label, statuses it applies to, new status; None = back to the status before the hold)
ORDER_ACTIONS = {
    "process": ("Start processing", ("pending",), "processing"),
    "ship": ("Ship", ("processing",), "shipped"),
    "complete": ("Complete", ("shipped",), "delivered"),
    "hold": ("Hold", ("pending", "processing"), "on hold"),
    "unhold": ("Release hold", ("on hold",), None),
    "cancel": ("Cancel order", ("pending", "processing"), "canceled"),
}
# sort key -> (label, ORDER BY over the products grid query)
PRODUCT_SORTS = {
    "name": ("Name", "p.name, p.id"),
    "price_asc": ("Price: low to high", "p.price_cents, p.id"),
    "price_desc": ("Price: high to low", "p.price_cents DESC, p.id"),
    "stock_asc": ("Stock: low to high", "p.stock, p.name"),
    "stock_desc": ("Stock: high to low", "p.stock DESC, p.name"),
    "newest": ("Newest first", "p.id DESC"),
}
REVIEW_STATUSES = {"pending": "Pending", "approved": "Approved", "rejected": "Rejected"}
STAFF = [  # username, full name, role
    ("admin", "Alex Morgan", "Administrator"),
    ("jordan", "Jordan Blake", "Catalog manager"),
    ("sam", "Sam Rivera", "Customer support"),
]
PROMOTION_THEMES = [  # code stem, description, (month, day) start, length in days
    ("WINTER", "Winter clearance", (1, 5), 25),
    ("VALENTINE", "Valentine's Day gifts", (2, 1), 14),
    ("SPRING", "Spring refresh", (3, 20), 30),
    ("GARDEN", "Garden season", (4, 15), 31),
    ("SUMMER", "Summer sale", (6, 21), 40),
    ("SCHOOL", "Back to school", (8, 10), 30),
    ("FALL", "Fall savings", (9, 23), 21),
    ("BLACKFRIDAY", "Black Friday", (11, 20), 8),
    ("HOLIDAY", "Holiday gifts", (12, 1), 24),
]
PRICE_RE = re.compile(r"^\$?(\d{1,3}(,\d{3})*|\d+)(\.\d{1,2})?$")
CODE_RE = re.compile(r"^[A-Z0-9-]{3,20}$")
PERCENT_RE = re.compile(r"^[0-9]{1,3}$")  # ASCII digits ("²".isdigit() is True, int("²") fails)
MAX_PRICE_CENTS = 100_000_000_00  # $100 million; larger numbers would overflow SQLite's integers


def parse_price(text: str) -> int | None:
    """'$1,049.5' -> 104950 cents; None if it is not a price (or is above MAX_PRICE_CENTS)."""
    text = text.strip()
    if not PRICE_RE.match(text):
        return None
    whole, _, frac = text.lstrip("$").replace(",", "").partition(".")
    cents = int(whole) * 100 + int((frac + "00")[:2])
    return cents if cents <= MAX_PRICE_CENTS else None


def parse_date(text: str) -> str | None:
    """An ISO date (YYYY-MM-DD) or None."""
    try:
        return date.fromisoformat(text.strip()).isoformat()
    except ValueError:
        return None


def month_label(month: str) -> str:
    """'2023-10' -> 'October 2023' (how reports and tasks name a month)."""
    return date.fromisoformat(month + "-01").strftime("%B %Y")


def promotion_state(starts: str, ends: str, today: str = TODAY) -> str:
    if today < starts:
        return "Scheduled"
    return "Expired" if today > ends else "Active"


def build_db(conn: sqlite3.Connection) -> None:
    """Add the admin's tables to the shop's (already built) database and seed them."""
    conn.executescript(SCHEMA)
    rng = random.Random(SEED)
    for uid, (username, full, role) in enumerate(STAFF, 1):
        conn.execute(
            "INSERT INTO admin_users VALUES (?, ?, ?, ?, ?, ?)",
            (
                uid,
                username,
                hash_password(f"{username}-pass"),
                full,
                f"{username}@onestopshop.example",
                role,
            ),
        )
    pids = [r[0] for r in conn.execute("SELECT id FROM products ORDER BY id")]
    disabled = set(rng.sample(pids, 12))
    conn.executemany(
        "INSERT INTO product_status VALUES (?, ?)", [(p, int(p not in disabled)) for p in pids]
    )
    _submissions(conn, rng, pids)
    _promotions(conn, rng)


def _submissions(conn: sqlite3.Connection, rng: random.Random, pids: list[int]) -> None:
    """Reviews waiting for moderation (pending) and ones staff turned down (rejected)."""
    names = [f"{f} {la[0]}." for f in FIRST_NAMES for la in LAST_NAMES]
    d0 = date.fromisoformat("2024-02-29")
    plans = [(pid, "pending", rng.choice([1, 1, 1, 2, 2, 3, 4])) for pid in rng.sample(pids, 45)]
    plans += [(pid, "rejected", 1) for pid in rng.sample(pids, 20)]
    for pid, status, n in plans:
        taken = {
            r[0] for r in conn.execute("SELECT author FROM reviews WHERE product_id = ?", (pid,))
        }
        taken |= {
            r[0]
            for r in conn.execute(
                "SELECT author FROM review_submissions WHERE product_id = ?", (pid,)
            )
        }
        for author in rng.sample([x for x in names if x not in taken], n):
            rating = rng.choice([1, 2, 3, 4, 4, 5, 5, 5])
            day = d0 + timedelta(days=rng.randint(0, (date.fromisoformat(TODAY) - d0).days - 1))
            conn.execute(
                "INSERT INTO review_submissions (product_id, author, rating, title, body, created, status)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (pid, author, rating, rng.choice(TITLES[rating]), rng.choice(BODIES[rating]),
                 day.isoformat(), status),
            )  # fmt: skip


def _promotions(conn: sqlite3.Connection, rng: random.Random) -> None:
    for year in (2022, 2023, 2024):
        for stem, desc, (month, day), days in PROMOTION_THEMES:
            start = date(year, month, day)
            if start.isoformat() > "2024-06-30":
                continue
            conn.execute(
                "INSERT INTO promotions (code, description, percent, starts, ends) VALUES (?, ?, ?, ?, ?)",
                (f"{stem}{year % 100}", f"{desc} {year}", rng.choice([5, 10, 10, 15, 20, 25, 30, 40]),
                 start.isoformat(), (start + timedelta(days=days)).isoformat()),
            )  # fmt: skip

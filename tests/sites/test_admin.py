"""The admin panel through WSGI: login, grids, order workflow, catalogue edits seen by
the storefront (shared database), moderation, reports, promotions, isolation."""

from __future__ import annotations

import re
import sqlite3
from urllib.parse import urlencode

import pytest
from lxml import html as lxml_html
from werkzeug.test import Client

from webrl.sites import admin, shop
from webrl.sites.admin.data import build_db as build_admin
from webrl.sites.admin.data import parse_price
from webrl.sites.shop.data import build_db as build_shop
from webrl.sites.world import WorldApp

SHOP_TABLES = ("users", "categories", "products", "reviews", "orders", "order_items", "wishlist")


@pytest.fixture(scope="module")
def world() -> WorldApp:
    return WorldApp({"shop": shop.SPEC, "admin": admin.SPEC})


class Browser:
    """A werkzeug client bound to one episode state (and its own cookies)."""

    def __init__(self, world: WorldApp, state=None):
        self.state = state or world.new_state()
        self.client = Client(world)

    def get(self, url: str, follow_redirects: bool = False):
        resp = self.client.get(url, environ_base={"webrl.world": self.state})
        return self._follow(resp) if follow_redirects else resp

    def post(self, url: str, data: dict, follow_redirects: bool = False):
        resp = self.client.post(url, data=data, environ_base={"webrl.world": self.state})
        return self._follow(resp) if follow_redirects else resp

    def _follow(self, resp):
        # werkzeug's own redirect following drops environ_base (our episode state)
        while resp.status_code in (301, 302, 303):
            self.last_url = resp.headers["Location"]
            resp = self.client.get(self.last_url, environ_base={"webrl.world": self.state})
        return resp

    def text(self, url: str) -> str:
        resp = self.get(url, follow_redirects=True)
        assert resp.status_code == 200, (url, resp.status_code)
        return page_text(resp.get_data(as_text=True))

    def html(self, url: str):
        return lxml_html.document_fromstring(
            self.get(url, follow_redirects=True).get_data(as_text=True)
        )

    def login(self, site: str = "admin", user: str = "admin") -> Browser:
        resp = self.post(f"/{site}/login", {"username": user, "password": f"{user}-pass"})
        assert resp.status_code == 302, resp.status_code
        return self

    def db(self) -> sqlite3.Connection:
        return self.state.db("shop")


def page_text(body: str) -> str:
    root = lxml_html.document_fromstring(body)
    for bad in root.iter("script", "style", "head"):
        bad.drop_tree()
    return re.sub(r"\s+", " ", root.text_content()).strip()


def one(db: sqlite3.Connection, sql: str, params: tuple = ()):
    return db.execute(sql, params).fetchone()[0]


@pytest.fixture
def staff(world) -> Browser:
    return Browser(world).login()


# --- seed data -----------------------------------------------------------------------


def test_admin_only_adds_tables_to_the_shop_database(world):
    alone = sqlite3.connect(":memory:")
    build_shop(alone)
    shared = world.store.snapshot("shop")
    for table in SHOP_TABLES:
        dump = f"SELECT * FROM {table} ORDER BY rowid"
        assert [tuple(r) for r in alone.execute(dump)] == [
            tuple(r) for r in shared.execute(dump)
        ], table
    assert world.store.snapshot("admin") is shared  # one database, two sites
    count = lambda sql: one(shared, sql)  # noqa: E731
    assert count("SELECT COUNT(*) FROM product_status WHERE enabled = 0") == 12
    assert 80 <= count("SELECT COUNT(*) FROM review_submissions WHERE status = 'pending'") <= 130
    assert count("SELECT COUNT(*) FROM promotions") >= 20
    assert count("SELECT COUNT(*) FROM order_history") == 0

    again = sqlite3.connect(":memory:")
    build_shop(again)
    build_admin(again)
    dump = "SELECT * FROM review_submissions UNION ALL SELECT id, code, description, percent, starts, ends, 0, 0 FROM promotions"
    assert [tuple(r) for r in again.execute(dump)] == [tuple(r) for r in shared.execute(dump)]


def test_parse_price():
    assert (
        parse_price("19.99") == 1999
        and parse_price("$1,049.5") == 104950
        and parse_price("7") == 700
    )
    assert parse_price("") is None and parse_price("12.345") is None and parse_price("-3") is None
    assert parse_price("100,000,000") == 100_000_000_00 and parse_price("100,000,000.01") is None
    assert parse_price("9" * 25) is None  # beyond SQLite's integers: a form error, not a failed page


# --- login and permissions ------------------------------------------------------------


def test_every_page_needs_a_staff_login(world):
    b = Browser(world)
    for url in ["/admin/", "/admin/orders", "/admin/orders/000215", "/admin/products/1", "/admin/customers",
                "/admin/reviews", "/admin/reports/sales", "/admin/promotions/new"]:  # fmt: skip
        resp = b.get(url)
        assert resp.status_code == 302 and "/admin/login?next=" in resp.headers["Location"], url
    resp = b.post("/admin/orders/000215/update", {"action": "cancel"})
    assert resp.status_code == 302 and "/admin/login" in resp.headers["Location"]
    assert one(b.db(), "SELECT status FROM orders WHERE number = '000215'") == "pending"


def test_shop_customers_cannot_sign_in_to_the_admin(world):
    b = Browser(world).login("shop", "emma")  # a storefront session is not a staff session
    assert b.get("/admin/").status_code == 302
    resp = b.post("/admin/login", {"username": "emma", "password": "emma-pass"})
    assert resp.status_code == 200 and "Invalid username or password" in page_text(
        resp.get_data(as_text=True)
    )
    b.login()
    assert "Signed in as admin" in b.text("/admin/")


def test_pages_stay_small(staff):
    for url in ["/admin/", "/admin/orders", "/admin/orders/000215", "/admin/products", "/admin/products/1",
                "/admin/products/new", "/admin/customers", "/admin/customers/1", "/admin/reviews",
                "/admin/reviews?status=approved", "/admin/reviews?status=rejected", "/admin/reports",
                "/admin/reports/bestsellers", "/admin/reports/sales?year=2023", "/admin/reports/low-stock",
                "/admin/promotions", "/admin/promotions/new"]:  # fmt: skip
        assert len(staff.text(url)) <= 1500, url


# --- orders ---------------------------------------------------------------------------


def order_numbers(page) -> list[str]:
    return [a.text_content().lstrip("#") for a in page.cssselect("#orders a")]


def test_orders_grid_filters_and_pages(staff):
    db = staff.db()
    first = order_numbers(staff.html("/admin/orders"))
    newest = [r[0] for r in db.execute("SELECT number FROM orders ORDER BY created DESC, id DESC")]
    assert first == newest[:10] and "Page 1 of 7" in staff.text("/admin/orders")
    assert order_numbers(staff.html("/admin/orders?page=7")) == newest[60:]
    pending = order_numbers(staff.html("/admin/orders?status=pending"))
    assert pending and all(
        one(db, "SELECT status FROM orders WHERE number = ?", (n,)) == "pending" for n in pending
    )
    lily = order_numbers(staff.html("/admin/orders?q=Lily+Cohen"))
    assert len(lily) == one(
        db,
        "SELECT COUNT(*) FROM orders o JOIN users u ON u.id = o.user_id WHERE u.full_name = 'Lily Cohen'",
    )
    dated = order_numbers(staff.html("/admin/orders?from=2023-10-01&to=2023-10-31"))
    assert len(dated) == one(
        db, "SELECT COUNT(*) FROM orders WHERE created BETWEEN '2023-10-01' AND '2023-10-31'"
    )
    assert order_numbers(staff.html("/admin/orders?q=%23000215")) == ["000215"]
    junk = staff.get("/admin/orders?status=evil&from=never&page=abc")
    assert junk.status_code == 200 and "70 orders found" in page_text(junk.get_data(as_text=True))


def test_order_workflow_hold_release_ship_and_comment(staff):
    url = "/admin/orders/000204"  # processing
    page = staff.text(url)
    assert "Status: Processing" in page and "Ship" in page and "Start processing" not in page
    staff.post(f"{url}/update", {"action": "hold", "comment": "Waiting <b>for</b> stock"})
    body = staff.get(url).get_data(as_text=True)
    assert "Status: On hold" in page_text(body) and "&lt;b&gt;for&lt;/b&gt;" in body  # escaped
    resp = staff.post(
        f"{url}/update", {"action": "ship"}, follow_redirects=True
    )  # not while on hold
    assert "cannot be changed" in page_text(resp.get_data(as_text=True))
    staff.post(f"{url}/update", {"action": "unhold"})
    assert "Status: Processing" in staff.text(url)  # back where it was
    staff.post(f"{url}/update", {"action": "ship"})
    staff.post(f"{url}/update", {"action": "complete"})
    assert "Status: Delivered" in staff.text(url)
    assert staff.post(f"{url}/update", {"action": "comment", "comment": ""}).status_code == 302
    assert one(staff.db(), "SELECT COUNT(*) FROM order_history") == 4


def test_canceling_restocks_and_the_customer_sees_it(world, staff):
    db = staff.db()
    pid, qty = db.execute(
        "SELECT product_id, qty FROM order_items i JOIN orders o ON o.id = i.order_id WHERE o.number = '000215'"
    ).fetchone()
    stock = one(db, "SELECT stock FROM products WHERE id = ?", (pid,))
    staff.post("/admin/orders/000215/update", {"action": "cancel"})
    assert one(db, "SELECT stock FROM products WHERE id = ?", (pid,)) == stock + qty
    emma = Browser(world, staff.state).login("shop", "emma")  # same episode, storefront side
    assert "Status: Canceled" in emma.text("/shop/orders/000215")
    resp = staff.post("/admin/orders/000215/update", {"action": "cancel"}, follow_redirects=True)
    assert "cannot be changed" in page_text(resp.get_data(as_text=True))
    assert one(db, "SELECT stock FROM products WHERE id = ?", (pid,)) == stock + qty  # not twice


# --- catalogue ------------------------------------------------------------------------


def grid_names(page) -> list[str]:
    return [a.text_content() for a in page.cssselect("#products a")]


def test_products_grid_search_filter_sort(staff):
    db = staff.db()
    sku, name = db.execute("SELECT sku, name FROM products WHERE id = 42").fetchone()
    assert grid_names(staff.html(f"/admin/products?q={sku}")) == [name]
    low = [r[0] for r in db.execute(
        "SELECT p.name FROM products p JOIN categories c ON c.id = p.category_id"
        " WHERE c.slug = 'grocery' ORDER BY p.stock, p.name")]  # fmt: skip
    assert grid_names(staff.html("/admin/products?category=grocery&sort=stock_asc")) == low[:10]
    assert (
        grid_names(staff.html("/admin/products?category=grocery&sort=stock_asc&page=3")) == low[20:]
    )
    top = one(db, "SELECT name FROM products ORDER BY price_cents DESC")
    assert grid_names(staff.html("/admin/products?sort=price_desc"))[0] == top
    assert "0 products found" in staff.text(
        "/admin/products?q=%25%25"
    )  # LIKE wildcards are literal
    assert staff.get("/admin/products/99999").status_code == 404


def test_price_and_stock_edits_show_on_the_storefront(staff):
    form = {"name": "Harvest Lane Organic Granola X", "price": "$12.34", "stock": "77", "status": "disabled",
            "description": "Crunchy."}  # fmt: skip
    resp = staff.post("/admin/products/200", form)
    assert resp.status_code == 302 and "/admin/products/200" in resp.headers["Location"]
    admin_page = staff.text("/admin/products/200")
    assert "$12.34" in admin_page and "Disabled" in admin_page
    store = staff.html("/shop/product/200")  # the shop reads the same database
    assert store.cssselect("#price")[0].text_content() == "$12.34"
    assert store.cssselect("#stock")[0].text_content() == "In stock: 77"
    assert store.cssselect("h1")[0].text_content() == form["name"]
    for bad in ({"price": "cheap"}, {"price": "0"}, {"price": "9" * 25}, {"stock": "-1"}, {"name": ""}):
        resp = staff.post("/admin/products/200", {**form, **bad})
        assert resp.status_code == 200 and 'class="error"' in resp.get_data(as_text=True), bad
    assert one(staff.db(), "SELECT price_cents FROM products WHERE id = 200") == 1234


def test_add_product_appears_in_the_store(staff):
    form = {"name": "Zephyra <i>Test</i> Kettle", "sku": "HK-ZEP-9001", "category": "home-kitchen",
            "price": "45", "stock": "12", "status": "enabled", "description": ""}  # fmt: skip
    resp = staff.post("/admin/products/new", form)
    assert resp.status_code == 302 and "/admin/products/301?msg=" in resp.headers["Location"]
    body = staff.get("/shop/product/301").get_data(as_text=True)
    assert "Zephyra &lt;i&gt;Test&lt;/i&gt; Kettle" in body and "$45.00" in body
    assert "Home & Kitchen (26)" in staff.text("/shop/")
    again = staff.post("/admin/products/new", {**form, "name": "Other Kettle"})
    assert "already exists" in page_text(again.get_data(as_text=True))
    nocat = staff.post(
        "/admin/products/new", {**form, "name": "Other", "sku": "X-1", "category": ""}
    )
    assert "Choose a category" in page_text(nocat.get_data(as_text=True))


# --- reviews --------------------------------------------------------------------------


def test_moderation_publishes_and_unpublishes_reviews(staff):
    db = staff.db()
    sid, pid, author = db.execute(
        "SELECT id, product_id, author FROM review_submissions WHERE status = 'pending' ORDER BY id LIMIT 1"
    ).fetchone()
    before = one(db, "SELECT COUNT(*) FROM reviews WHERE product_id = ?", (pid,))
    resp = staff.post(
        f"/admin/reviews/pending/{sid}", {"op": "approve", "product": "", "page": "1"}
    )
    assert resp.status_code == 302 and "status=pending" in resp.headers["Location"]
    assert f"({before + 1} review" in staff.text(f"/shop/product/{pid}") and author in staff.text(
        f"/shop/product/{pid}"
    )
    rid = one(db, "SELECT id FROM reviews WHERE product_id = ? AND author = ?", (pid, author))
    staff.post(f"/admin/reviews/approved/{rid}", {"op": "reject"})
    assert author not in staff.text(f"/shop/product/{pid}")
    name = one(db, "SELECT name FROM products WHERE id = ?", (pid,))
    rejected = staff.text("/admin/reviews?" + urlencode({"status": "rejected", "product": name}))
    assert author in rejected
    bad = staff.post(f"/admin/reviews/approved/{rid}", {"op": "approve"}, follow_redirects=True)
    assert "cannot be changed" in page_text(bad.get_data(as_text=True))
    assert staff.post("/admin/reviews/pending/999999", {"op": "delete"}).status_code == 404


def test_review_search_counts_pending_by_product(staff):
    db = staff.db()
    pid, n = db.execute(
        "SELECT product_id, COUNT(*) n FROM review_submissions WHERE status = 'pending'"
        " GROUP BY product_id ORDER BY n DESC, product_id LIMIT 1"
    ).fetchone()
    name = one(db, "SELECT name FROM products WHERE id = ?", (pid,))
    assert f'{n} pending reviews for "{name}"' in staff.text(
        "/admin/reviews?" + urlencode({"product": name})
    )


# --- reports and promotions ------------------------------------------------------------


def test_reports_agree_with_the_orders(staff):
    db = staff.db()
    page = staff.html("/admin/reports/bestsellers?from=2023-01-01&to=2023-12-31")
    top_qty = one(db, """SELECT SUM(i.qty) q FROM order_items i JOIN orders o ON o.id = i.order_id
                         WHERE o.status != 'canceled' AND o.created BETWEEN '2023-01-01' AND '2023-12-31'
                         GROUP BY i.product_id ORDER BY q DESC LIMIT 1""")  # fmt: skip
    assert page.cssselect("#rank-1 .qty")[0].text_content() == str(top_qty)
    revenue = one(
        db,
        "SELECT SUM(total_cents) FROM orders WHERE status != 'canceled' AND created LIKE '2023%'",
    )
    total = staff.html("/admin/reports/sales?year=2023").cssselect("#sales-total")[0].text_content()
    assert f"${revenue // 100:,}.{revenue % 100:02d}" in total
    low = one(db, "SELECT COUNT(*) FROM products WHERE stock <= 5")
    assert f"{low} products with 5 or fewer" in staff.text("/admin/reports/low-stock?threshold=5")


def test_restock_from_the_low_stock_report(staff):
    pid = one(staff.db(), "SELECT id FROM products WHERE stock = 0 ORDER BY id")
    resp = staff.post(
        f"/admin/reports/low-stock/{pid}",
        {"stock": "60", "threshold": "0", "category": "", "page": "1"},
    )
    assert resp.status_code == 302 and "threshold=0" in resp.headers["Location"]
    assert (
        staff.html(f"/shop/product/{pid}").cssselect("#stock")[0].text_content() == "In stock: 60"
    )
    staff.post(f"/admin/reports/low-stock/{pid}", {"stock": "lots"})
    assert one(staff.db(), "SELECT stock FROM products WHERE id = ?", (pid,)) == 60


def test_promotions_create_validate_delete(staff):
    form = {"code": "flash15", "description": "<b>Flash</b>", "percent": "15%", "starts": "2024-04-01",
            "ends": "2024-04-07"}  # fmt: skip
    resp = staff.post("/admin/promotions/new", form, follow_redirects=True)
    row = lxml_html.document_fromstring(resp.get_data(as_text=True)).cssselect("#promo-FLASH15")[0]
    assert "15% off" in row.text_content() and "Scheduled" in row.text_content()
    for bad, why in [({}, "already in use"), ({"code": "A B"}, "letters, digits"),
                     ({"code": "NEW1", "percent": "95"}, "from 1 to 90"),
                     ({"code": "NEW1", "percent": "²"}, "from 1 to 90"),  # a digit to str.isdigit, not to int()
                     ({"code": "NEW1", "ends": "2024-03-01"}, "must not be before")]:  # fmt: skip
        resp = staff.post("/admin/promotions/new", {**form, **bad})
        assert why in page_text(resp.get_data(as_text=True)), bad
    staff.post("/admin/promotions/FLASH15/delete", {})
    assert "No promotions found" in staff.text("/admin/promotions?q=FLASH15")


# --- isolation ---------------------------------------------------------------------------


def test_episodes_do_not_see_each_other(world):
    a, b = Browser(world).login(), Browser(world).login()
    a.post("/admin/orders/000213/update", {"action": "hold"})
    a.post(
        "/admin/products/7",
        {"name": "Renamed Product", "price": "1.00", "stock": "1", "status": "enabled"},
    )
    assert "Status: On hold" in a.text("/admin/orders/000213")
    assert "Status: Pending" in b.text("/admin/orders/000213")
    assert "Renamed Product" not in b.text("/shop/product/7")
    seed = world.store.snapshot("shop")
    assert one(seed, "SELECT status FROM orders WHERE number = '000213'") == "pending"
    assert one(seed, "SELECT name FROM products WHERE id = 7") != "Renamed Product"

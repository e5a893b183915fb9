"""The shop site through WSGI: seed data, catalogue, cart, checkout, account, isolation."""

from __future__ import annotations

import re
import sqlite3
from urllib.parse import quote

import pytest
from lxml import html as lxml_html
from werkzeug.test import Client

from webrl.sites import shop
from webrl.sites.shop.data import build_db
from webrl.sites.world import WorldApp


@pytest.fixture(scope="module")
def world() -> WorldApp:
    return WorldApp({"shop": shop.SPEC})


class Browser:
    """A werkzeug client bound to one episode state (and its own cookies)."""

    def __init__(self, world: WorldApp, state=None):
        self.state = state or world.new_state()
        self.client = Client(world)

    def get(self, url: str, follow_redirects: bool = False, **kw):
        resp = self.client.get(url, environ_base={"webrl.world": self.state}, **kw)
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

    def login(self) -> Browser:
        resp = self.post("/shop/login", {"username": "emma", "password": "emma-pass"})
        assert resp.status_code == 302
        return self

    def db(self):
        return self.state.db("shop")


def page_text(body: str) -> str:
    root = lxml_html.document_fromstring(body)
    for bad in root.iter("script", "style", "head"):
        bad.drop_tree()
    return re.sub(r"\s+", " ", root.text_content()).strip()


def product_names(body: str) -> list[str]:
    root = lxml_html.document_fromstring(body)
    return [a.text_content() for a in root.cssselect("ul.products a")]


@pytest.fixture
def browser(world) -> Browser:
    return Browser(world)


# --- seed data ---------------------------------------------------------------------


def test_seed_data_is_realistic_and_deterministic(world):
    db = world.store.snapshot("shop")
    count = lambda sql: db.execute(sql).fetchone()[0]  # noqa: E731
    assert count("SELECT COUNT(*) FROM products") == 300
    assert count("SELECT COUNT(*) FROM categories") == 12
    assert 600 <= count("SELECT COUNT(*) FROM reviews") <= 900
    assert (
        15
        <= count(
            "SELECT COUNT(*) FROM orders o JOIN users u ON u.id = o.user_id WHERE u.username = 'emma'"
        )
        <= 25
    )
    assert count("SELECT COUNT(*) FROM wishlist") == 3
    assert count("SELECT COUNT(*) FROM cart_items") == 0
    assert count("SELECT COUNT(DISTINCT price_cents) FROM products") == 300
    names = [r[0].lower() for r in db.execute("SELECT name FROM products")]
    assert not [
        (a, b) for a in names for b in names if a != b and a in b
    ]  # no name hides in another

    again = sqlite3.connect(":memory:")
    build_db(again)
    dump = "SELECT * FROM products UNION ALL SELECT id, order_id, product_id, name, price_cents, qty, 0, 0 FROM order_items"
    assert [tuple(r) for r in again.execute(dump)] == [tuple(r) for r in db.execute(dump)]


# --- catalogue ---------------------------------------------------------------------


def test_home_lists_categories_and_featured(browser):
    text = browser.text("/shop/")
    assert "Electronics (25)" in text and "Pet Supplies (25)" in text
    assert "Featured products" in text and "Sign in" in text


def test_category_sorting_and_pagination(browser):
    body = browser.get("/shop/category/grocery?sort=price_asc").get_data(as_text=True)
    db = browser.db()
    cheapest = [r[0] for r in db.execute(
        "SELECT p.name FROM products p JOIN categories c ON c.id = p.category_id"
        " WHERE c.slug = 'grocery' ORDER BY price_cents")]  # fmt: skip
    assert product_names(body) == cheapest[:10]
    assert '<option value="price_asc" selected>Price: low to high</option>' in body
    assert "Page 1 of 3" in page_text(body)
    next_href = lxml_html.fromstring(body).xpath("//a[text()='Next page']/@href")[0]
    assert "sort=price_asc" in next_href and "page=2" in next_href
    last = browser.get("/shop/category/grocery?sort=price_asc&page=3").get_data(as_text=True)
    assert product_names(last) == cheapest[20:]
    desc = browser.get("/shop/category/grocery?sort=price_desc").get_data(as_text=True)
    assert product_names(desc)[0] == cheapest[-1]
    junk = browser.get("/shop/category/grocery?sort=evil&page=abc")
    assert junk.status_code == 200
    assert browser.get("/shop/category/nope").status_code == 404


def test_search_matches_every_word(browser):
    name = browser.db().execute("SELECT name FROM products WHERE id = 42").fetchone()[0]
    body = browser.get("/shop/search", query_string={"q": name.lower()}).get_data(as_text=True)
    assert product_names(body)[0] == name
    assert "No products match" in browser.text("/shop/search?q=zzzqqq")
    assert "No products match" in browser.text("/shop/search?q=%25")  # LIKE wildcards are literal


def test_product_page_facts_and_review_pages(browser):
    db = browser.db()
    pid, n = db.execute(
        "SELECT product_id, COUNT(*) n FROM reviews GROUP BY product_id ORDER BY n DESC, product_id LIMIT 1"
    ).fetchone()
    p = db.execute("SELECT * FROM products WHERE id = ?", (pid,)).fetchone()
    text = browser.text(f"/shop/product/{pid}")
    assert p["name"] in text and p["sku"] in text and f"({n} reviews)" in text
    assert text.count("out of 5 stars") == 5 and f"Page 1 of {-(-n // 5)}" in text
    newest = db.execute(
        "SELECT author FROM reviews WHERE product_id = ? ORDER BY created DESC", (pid,)
    ).fetchone()[0]
    assert newest in text
    assert browser.get("/shop/product/99999").status_code == 404


def test_pages_stay_small(browser):
    browser.login()
    browser.post("/shop/cart/add", {"product_id": "7", "qty": "1"})
    for url in ["/shop/", "/shop/category/electronics", "/shop/search?q=bamboo", "/shop/product/1",
                "/shop/cart", "/shop/checkout", "/shop/orders", "/shop/orders?page=2", "/shop/wishlist",
                "/shop/account", "/shop/account/edit", "/shop/product/1/review"]:  # fmt: skip
        assert len(browser.text(url)) <= 1500, url


# --- login, cart, checkout ----------------------------------------------------------


def test_account_pages_require_login(browser):
    for url in ["/shop/cart", "/shop/orders", "/shop/account", "/shop/wishlist", "/shop/checkout"]:
        resp = browser.get(url)
        assert resp.status_code == 302 and "/shop/login?next=" + url in resp.headers["Location"]
    resp = browser.post("/shop/cart/add", {"product_id": "1", "qty": "1"})
    assert resp.status_code == 302 and "/shop/login" in resp.headers["Location"]
    assert browser.db().execute("SELECT COUNT(*) FROM cart_items").fetchone()[0] == 0


def test_login_never_redirects_off_the_site(browser):
    for bad in ["//evil.example/x", "/\\evil.example/x", "http://evil.example/", "/\tx", "javascript:alert(1)"]:
        resp = browser.post(f"/shop/login?next={quote(bad)}", {"username": "emma", "password": "emma-pass"})
        assert resp.status_code == 302 and resp.headers["Location"].endswith("/shop/"), (bad, resp.headers["Location"])
    resp = Browser(browser.client.application).post(
        f"/shop/login?next={quote('/shop/cart')}", {"username": "emma", "password": "emma-pass"}
    )
    assert resp.headers["Location"].endswith("/shop/cart")


def test_out_of_range_ids_are_bad_input_not_a_crash(browser):
    browser.login()
    for pid in ("9" * 30, "-" + "9" * 25, "1" * 5000):
        assert browser.post("/shop/cart/add", {"product_id": pid, "qty": "1"}).status_code in (302, 400, 404)
    assert browser.get("/shop/product/" + "9" * 30).status_code == 404


def in_stock(db, n=2):
    return [
        tuple(r)
        for r in db.execute(
            "SELECT id, name FROM products WHERE stock >= 10 ORDER BY id LIMIT ?", (n,)
        )
    ]


def test_cart_is_private_to_each_episode(world):
    a, b = Browser(world).login(), Browser(world).login()
    (pid, name), _ = in_stock(a.db())
    resp = a.post("/shop/cart/add", {"product_id": str(pid), "qty": "3"})
    assert resp.status_code == 302 and "/shop/cart" in resp.headers["Location"]
    assert name in a.text("/shop/cart") and "Cart (3)" in a.text("/shop/cart")
    assert "Your cart is empty." in b.text("/shop/cart")
    assert (
        world.store.snapshot("shop").execute("SELECT COUNT(*) FROM cart_items").fetchone()[0] == 0
    )


def test_cart_update_and_remove(browser):
    browser.login()
    (p1, n1), (p2, n2) = in_stock(browser.db())
    for pid in (p1, p2):
        browser.post("/shop/cart/add", {"product_id": str(pid), "qty": "1"})
    browser.post("/shop/cart/update", {f"qty_{p1}": "4", f"qty_{p2}": "1"})
    assert (
        browser.db().execute("SELECT qty FROM cart_items WHERE product_id = ?", (p1,)).fetchone()[0]
        == 4
    )
    browser.post("/shop/cart/update", {f"qty_{p1}": "4", f"qty_{p2}": "1", "remove": str(p2)})
    text = browser.text("/shop/cart")
    assert n1 in text and n2 not in text
    msg = browser.post(
        "/shop/cart/add", {"product_id": str(p1), "qty": "500"}, follow_redirects=True
    )
    assert "Enter a quantity from 1 to 99." in page_text(msg.get_data(as_text=True))


def test_checkout_places_order_and_empties_cart(browser):
    browser.login()
    db = browser.db()
    (pid, name), _ = in_stock(db)
    stock = db.execute("SELECT stock FROM products WHERE id = ?", (pid,)).fetchone()[0]
    browser.post("/shop/cart/add", {"product_id": str(pid), "qty": "2"})
    form = browser.get("/shop/checkout").get_data(as_text=True)
    assert 'value="1234 Maple Ave"' in form  # prefilled from the account
    fields = {"ship_name": "Ann Lee", "street": "1 Main St", "city": "Boise", "state": "ID", "zip": "83701",
              "phone": "555-000-1111", "shipping": "express"}  # fmt: skip
    resp = browser.post("/shop/checkout", fields, follow_redirects=True)
    text = page_text(resp.get_data(as_text=True))
    number = re.search(r"Your order #(\d{6}) has been placed", text).group(1)
    assert f"/shop/orders/{number}" in browser.last_url
    assert (
        name in text
        and "Express shipping ($15.00)" in text
        and "Ann Lee, 1 Main St, Boise, ID 83701" in text
    )
    assert "Your cart is empty." in browser.text("/shop/cart")
    assert db.execute("SELECT stock FROM products WHERE id = ?", (pid,)).fetchone()[0] == stock - 2
    assert f"Order #{number}" in browser.text("/shop/orders")
    bad = browser.post("/shop/checkout", fields, follow_redirects=True)  # the cart is now empty
    assert "Your cart is empty." in page_text(bad.get_data(as_text=True))


def test_checkout_rejects_missing_fields(browser):
    browser.login()
    (pid, _), _ = in_stock(browser.db())
    browser.post("/shop/cart/add", {"product_id": str(pid), "qty": "1"})
    resp = browser.post("/shop/checkout", {"ship_name": "", "shipping": "standard"})
    assert resp.status_code == 200 and "Please fill in every shipping field." in page_text(
        resp.get_data(as_text=True)
    )
    assert browser.db().execute("SELECT COUNT(*) FROM cart_items").fetchone()[0] == 1


def test_order_history_pages_and_cancel(browser):
    browser.login()
    db = browser.db()
    mine = db.execute(
        "SELECT number, status FROM orders WHERE user_id = 1 ORDER BY created DESC, id DESC"
    ).fetchall()
    page1, page2 = browser.text("/shop/orders"), browser.text("/shop/orders?page=2")
    assert f"Order #{mine[0]['number']}" in page1 and f"Order #{mine[10]['number']}" in page2
    other = db.execute("SELECT number FROM orders WHERE user_id != 1").fetchone()[0]
    assert browser.get(f"/shop/orders/{other}").status_code == 404  # not mine
    pending = next(o["number"] for o in mine if o["status"] == "pending")
    browser.post(f"/shop/orders/{pending}/cancel", {})
    assert "Status: Canceled" in browser.text(f"/shop/orders/{pending}")
    delivered = next(o["number"] for o in mine if o["status"] == "delivered")
    resp = browser.post(f"/shop/orders/{delivered}/cancel", {}, follow_redirects=True)
    assert "can no longer be canceled" in page_text(resp.get_data(as_text=True))
    item = db.execute(
        "SELECT i.name FROM order_items i JOIN orders o ON o.id = i.order_id WHERE o.number = ?",
        (mine[-1]["number"],),
    ).fetchone()[0]
    assert f"Order #{mine[-1]['number']}" in browser.text(f"/shop/orders?product={item}")


# --- reviews, wish list, account -----------------------------------------------------


def test_review_is_saved_and_escaped(browser):
    browser.login()
    resp = browser.post(
        "/shop/product/3/review",
        {"rating": "2", "title": "<script>alert(1)</script>", "body": "x & y"},
    )
    assert resp.status_code == 302
    body = browser.get("/shop/product/3").get_data(as_text=True)
    assert "<script>alert(1)</script>" not in body
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body and "x &amp; y" in body
    mine = browser.text("/shop/account/reviews")
    assert "2 out of 5 stars" in mine and "<script>alert(1)</script>" in mine
    bad = browser.post("/shop/product/3/review", {"rating": "9", "title": "t", "body": "b"})
    assert "Choose a rating" in page_text(bad.get_data(as_text=True))


def test_wishlist_add_and_remove(browser):
    browser.login()
    name = browser.db().execute("SELECT name FROM products WHERE id = 11").fetchone()[0]
    browser.post("/shop/wishlist/add", {"product_id": "11"})
    browser.post("/shop/wishlist/add", {"product_id": "11"})  # twice: still one line
    assert browser.text("/shop/wishlist").count(name) == 1
    browser.post("/shop/wishlist/remove", {"product_id": "11"})
    assert name not in browser.text("/shop/wishlist")


def test_account_edit(browser):
    browser.login()
    fields = {"full_name": "Emma Lopez", "email": "emma@example.com", "phone": "555-222-3333",
              "street": "9 Elm St", "city": "Austin", "state": "TX", "zip": "78701"}  # fmt: skip
    resp = browser.post("/shop/account/edit", fields, follow_redirects=True)
    text = page_text(resp.get_data(as_text=True))
    assert (
        "Your account has been saved." in text
        and "555-222-3333" in text
        and "9 Elm St, Austin, TX 78701" in text
    )
    bad = browser.post("/shop/account/edit", {**fields, "email": "nope"})
    assert "Enter a valid email address." in page_text(bad.get_data(as_text=True))

"""One Stop Shop: the storefront's pages (catalogue, cart, checkout, orders, account).

Plain server-rendered forms and links, no JavaScript. Every POST redirects
(PRG) to a page that shows its outcome through the `msg` query argument.
Views are module-level functions; `create_app` wires them to their URLs, and
the endpoint names (`index`, `product`, `cart`, ...) are what templates link to.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from flask import Flask, redirect, render_template, request, url_for

from webrl.sites.common import (
    create_site_app,
    current_user,
    db,
    form_int,
    get_or_404,
    login_required,
    paginate,
)
from webrl.sites.shop.data import (
    CANCELABLE,
    SHIPPING,
    SORTS,
    TODAY,
    money,
    order_number,
    rating_text,
)

PER_PAGE = 10
REVIEWS_PER_PAGE = 5
SHIP_FIELDS = ("ship_name", "street", "city", "state", "zip", "phone")
ACCOUNT_FIELDS = ("full_name", "email", "phone", "street", "city", "state", "zip")

# One listing query for home, category and search pages; ORDER BY comes from SORTS only.
LISTING = """
SELECT p.id, p.name, p.price_cents, p.stock,
       COALESCE(r.n, 0) AS n_reviews, COALESCE(r.total, 0) AS rating_total,
       COALESCE(r.total * 1.0 / r.n, 0) AS avg_rating, {relevance} AS relevance
FROM products p
LEFT JOIN (SELECT product_id, COUNT(*) AS n, SUM(rating) AS total FROM reviews GROUP BY product_id) r
  ON r.product_id = p.id
WHERE {where}
"""


# --- helpers ---------------------------------------------------------------------------


def _all(sql: str, params: tuple = ()) -> list[sqlite3.Row]:
    return db().execute(sql, params).fetchall()


def _one(sql: str, params: tuple = ()) -> sqlite3.Row | None:
    return db().execute(sql, params).fetchone()


def _go(endpoint: str, msg: str = "", **values):
    """Redirect (PRG) to `endpoint`, carrying a notice for the next page."""
    if msg:
        values["msg"] = msg
    return redirect(url_for(endpoint, **values))


def _text_arg(name: str) -> str:
    return " ".join(request.args.get(name, "").split())[:100]


def _form_text(name: str) -> str:
    return " ".join(request.form.get(name, "").split())[:200]


def _like(term: str) -> str:
    """A LIKE pattern matching `term` literally anywhere."""
    escaped = term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def _sort_key() -> str:
    sort = request.args.get("sort", "relevance")
    return sort if sort in SORTS else "relevance"


def _listing(where: str, params: tuple, relevance: str = "-p.featured", rel_params: tuple = ()):
    """(page, rows) of products matching `where`, sorted by the `sort` argument."""
    total = _one(f"SELECT COUNT(*) FROM products p WHERE {where}", params)[0]
    page = paginate(total, PER_PAGE)
    sql = LISTING.format(relevance=relevance, where=where)
    sql += f" ORDER BY {SORTS[_sort_key()][1]} LIMIT ? OFFSET ?"
    return page, _all(sql, rel_params + params + (PER_PAGE, page.offset))


def _cart_lines(user_id: int) -> list[sqlite3.Row]:
    return _all(
        "SELECT p.id, p.name, p.price_cents, p.stock, c.qty, p.price_cents * c.qty AS line_cents"
        " FROM cart_items c JOIN products p ON p.id = c.product_id WHERE c.user_id = ? ORDER BY p.name",
        (user_id,),
    )


def _my_order(number: str) -> sqlite3.Row:
    return get_or_404(
        "SELECT * FROM orders WHERE number = ? AND user_id = ?", (number, current_user()["id"])
    )


def _posted_product() -> sqlite3.Row:
    return get_or_404("SELECT * FROM products WHERE id = ?", (form_int("product_id", 0),))


def notice_and_cart() -> dict:
    """Template variables on every page: the PRG notice and the cart's item count."""
    user = current_user()
    count = 0
    if user is not None:
        count = _one(
            "SELECT COALESCE(SUM(qty), 0) FROM cart_items WHERE user_id = ?", (user["id"],)
        )[0]
    return {"message": request.args.get("msg", ""), "cart_count": count}


# --- catalogue ---------------------------------------------------------------------------


def index():
    cats = _all(
        "SELECT c.slug, c.name, COUNT(p.id) AS n FROM categories c"
        " LEFT JOIN products p ON p.category_id = c.id GROUP BY c.id ORDER BY c.name"
    )
    featured = _all(LISTING.format(relevance="0", where="p.featured = 1") + " ORDER BY p.id")
    return render_template("index.html", categories=cats, products=featured)


def category(slug: str):
    cat = get_or_404("SELECT * FROM categories WHERE slug = ?", (slug,))
    page, rows = _listing("p.category_id = ?", (cat["id"],))
    return render_template(
        "category.html", category=cat, page=page, products=rows, sort=_sort_key()
    )


def search():
    """Products whose name or description contains every word of `q`."""
    q = _text_arg("q")
    page, rows = None, []
    if q:
        terms = q.split()
        match = "(p.name LIKE ? ESCAPE '\\' OR p.description LIKE ? ESCAPE '\\')"
        params = tuple(x for t in terms for x in (_like(t), _like(t)))
        relevance = (
            "CASE WHEN p.name LIKE ? ESCAPE '\\' THEN 0 ELSE 1 END"  # whole query in the name first
        )
        page, rows = _listing(" AND ".join([match] * len(terms)), params, relevance, (_like(q),))
    return render_template("search.html", q=q, page=page, products=rows, sort=_sort_key())


def product(pid: int):
    p = get_or_404(
        "SELECT p.*, c.name AS category, c.slug FROM products p"
        " JOIN categories c ON c.id = p.category_id WHERE p.id = ?",
        (pid,),
    )
    n, total = _one(
        "SELECT COUNT(*), COALESCE(SUM(rating), 0) FROM reviews WHERE product_id = ?", (pid,)
    )
    page = paginate(n, REVIEWS_PER_PAGE)
    reviews = _all(
        "SELECT * FROM reviews WHERE product_id = ? ORDER BY created DESC, id DESC LIMIT ? OFFSET ?",
        (pid, REVIEWS_PER_PAGE, page.offset),
    )
    avg = rating_text(total, n)
    return render_template("product.html", p=p, n_reviews=n, avg=avg, reviews=reviews, page=page)


@login_required
def write_review(pid: int):
    p = get_or_404("SELECT id, name FROM products WHERE id = ?", (pid,))
    form, error = {"rating": "5", "title": "", "body": ""}, ""
    if request.method == "POST":
        form = {k: request.form.get(k, "").strip() for k in form}
        rating = form_int("rating")
        if rating not in range(1, 6):
            error = "Choose a rating from 1 to 5 stars."
        elif not form["title"] or not form["body"]:
            error = "Please fill in the title and the review."
        else:
            user = current_user()
            db().execute(
                "INSERT INTO reviews (product_id, user_id, author, rating, title, body, created)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    pid,
                    user["id"],
                    user["full_name"],
                    rating,
                    form["title"][:200],
                    form["body"][:2000],
                    TODAY,
                ),
            )
            db().commit()
            return _go("product", "Thank you for your review!", pid=pid)
    return render_template("review_form.html", p=p, form=form, error=error)


# --- cart and checkout -------------------------------------------------------------------


@login_required
def cart():
    lines = _cart_lines(current_user()["id"])
    return render_template("cart.html", lines=lines, subtotal=sum(x["line_cents"] for x in lines))


@login_required
def cart_add():
    if request.method == "GET":  # e.g. after signing in from a product page
        return _go("cart")
    user, p, qty = current_user(), _posted_product(), form_int("qty")
    have = _one(
        "SELECT qty FROM cart_items WHERE user_id = ? AND product_id = ?", (user["id"], p["id"])
    )
    if qty is None or not 1 <= qty <= 99:
        return _go("product", "Enter a quantity from 1 to 99.", pid=p["id"])
    if (have["qty"] if have else 0) + qty > p["stock"]:
        return _go("product", f"Sorry, only {p['stock']} left in stock.", pid=p["id"])
    db().execute(
        "INSERT INTO cart_items (user_id, product_id, qty) VALUES (?, ?, ?)"
        " ON CONFLICT(user_id, product_id) DO UPDATE SET qty = qty + excluded.qty",
        (user["id"], p["id"], qty),
    )
    db().commit()
    return _go("cart", f"Added {qty} × {p['name']} to your cart.")


@login_required
def cart_update():
    """New quantities for every line (0 removes it), or the line of the Remove button pressed."""
    uid = current_user()["id"]
    remove = form_int("remove")
    for line in _cart_lines(uid):
        qty = form_int(f"qty_{line['id']}", line["qty"])
        if line["id"] == remove or qty < 1:
            db().execute(
                "DELETE FROM cart_items WHERE user_id = ? AND product_id = ?", (uid, line["id"])
            )
        else:
            db().execute(
                "UPDATE cart_items SET qty = ? WHERE user_id = ? AND product_id = ?",
                (min(qty, 99, line["stock"]), uid, line["id"]),
            )
    db().commit()
    return _go("cart", "Item removed." if remove is not None else "Cart updated.")


@login_required
def checkout():
    user = current_user()
    lines = _cart_lines(user["id"])
    if not lines:
        return _go("cart", "Your cart is empty.")
    form = {k: user["full_name" if k == "ship_name" else k] for k in SHIP_FIELDS}
    method, error = "standard", ""
    if request.method == "POST":
        form = {k: _form_text(k) for k in SHIP_FIELDS}
        method = request.form.get("shipping", "")
        short = [x for x in lines if x["qty"] > x["stock"]]
        if method not in SHIPPING:
            error, method = "Choose a shipping method.", "standard"
        elif not all(form.values()):
            error = "Please fill in every shipping field."
        elif short:
            error = f"Sorry, only {short[0]['stock']} of {short[0]['name']} left in stock."
        else:
            number = _place_order(user["id"], lines, form, method)
            return _go("order", f"Thank you! Your order #{number} has been placed.", number=number)
    subtotal = sum(x["line_cents"] for x in lines)
    return render_template(
        "checkout.html", lines=lines, subtotal=subtotal, form=form, method=method, error=error
    )


def _place_order(user_id: int, lines: list[sqlite3.Row], form: dict, method: str) -> str:
    """Turn the cart into a pending order (stock reserved, cart emptied); its number."""
    conn = db()
    oid = conn.execute("SELECT COALESCE(MAX(id), 100) + 1 FROM orders").fetchone()[0]
    subtotal = sum(x["line_cents"] for x in lines)
    ship = SHIPPING[method][1]
    conn.execute(
        "INSERT INTO orders VALUES (?, ?, ?, ?, 'pending', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (oid, order_number(oid), user_id, TODAY, method, ship, subtotal, subtotal + ship,
         *(form[k] for k in SHIP_FIELDS)),
    )  # fmt: skip
    for x in lines:
        conn.execute(
            "INSERT INTO order_items (order_id, product_id, name, price_cents, qty) VALUES (?, ?, ?, ?, ?)",
            (oid, x["id"], x["name"], x["price_cents"], x["qty"]),
        )
        conn.execute("UPDATE products SET stock = stock - ? WHERE id = ?", (x["qty"], x["id"]))
    conn.execute("DELETE FROM cart_items WHERE user_id = ?", (user_id,))
    conn.commit()
    return order_number(oid)


# --- orders -------------------------------------------------------------------------------


@login_required
def orders():
    """My orders, newest first; `product` keeps those containing a product name."""
    product_q = _text_arg("product")
    where, params = "o.user_id = ?", (current_user()["id"],)
    if product_q:
        where += " AND EXISTS (SELECT 1 FROM order_items i WHERE i.order_id = o.id AND i.name LIKE ? ESCAPE '\\')"
        params += (_like(product_q),)
    page = paginate(_one(f"SELECT COUNT(*) FROM orders o WHERE {where}", params)[0], PER_PAGE)
    rows = _all(
        f"SELECT o.* FROM orders o WHERE {where} ORDER BY o.created DESC, o.id DESC LIMIT ? OFFSET ?",
        params + (PER_PAGE, page.offset),
    )
    return render_template("orders.html", orders=rows, page=page, product=product_q)


@login_required
def order(number: str):
    o = _my_order(number)
    items = _all("SELECT * FROM order_items WHERE order_id = ? ORDER BY id", (o["id"],))
    return render_template("order.html", o=o, items=items, cancelable=o["status"] in CANCELABLE)


@login_required
def cancel_order(number: str):
    o = _my_order(number)
    if o["status"] not in CANCELABLE:
        return _go("order", f"Order #{number} can no longer be canceled.", number=number)
    db().execute("UPDATE orders SET status = 'canceled' WHERE id = ?", (o["id"],))
    for it in _all("SELECT product_id, qty FROM order_items WHERE order_id = ?", (o["id"],)):
        db().execute(
            "UPDATE products SET stock = stock + ? WHERE id = ?", (it["qty"], it["product_id"])
        )
    db().commit()
    return _go("order", f"Order #{number} has been canceled.", number=number)


# --- wish list -------------------------------------------------------------------------------


@login_required
def wishlist():
    items = _all(
        "SELECT p.id, p.name, p.price_cents FROM wishlist w JOIN products p ON p.id = w.product_id"
        " WHERE w.user_id = ? ORDER BY w.added, p.name",
        (current_user()["id"],),
    )
    return render_template("wishlist.html", items=items)


@login_required
def wishlist_add():
    p = _posted_product()
    cur = db().execute(
        "INSERT OR IGNORE INTO wishlist (user_id, product_id, added) VALUES (?, ?, ?)",
        (current_user()["id"], p["id"], TODAY),
    )
    db().commit()
    note = "Added" if cur.rowcount else "Already in your wish list:"
    return _go("wishlist", f"{note} {p['name']}.")


@login_required
def wishlist_remove():
    p = _posted_product()
    db().execute(
        "DELETE FROM wishlist WHERE user_id = ? AND product_id = ?", (current_user()["id"], p["id"])
    )
    db().commit()
    return _go("wishlist", f"Removed {p['name']} from your wish list.")


# --- account -----------------------------------------------------------------------------------


@login_required
def account():
    return render_template("account.html", user=current_user())


@login_required
def account_edit():
    user = current_user()
    form, error = {k: user[k] for k in ACCOUNT_FIELDS}, ""
    if request.method == "POST":
        form = {k: _form_text(k) for k in ACCOUNT_FIELDS}
        if not all(form.values()):
            error = "Please fill in every field."
        elif "@" not in form["email"]:
            error = "Enter a valid email address."
        else:
            sets = ", ".join(f"{k} = ?" for k in ACCOUNT_FIELDS)  # column names from a constant
            db().execute(f"UPDATE users SET {sets} WHERE id = ?", (*form.values(), user["id"]))
            db().commit()
            return _go("account", "Your account has been saved.")
    return render_template("account_edit.html", form=form, error=error)


@login_required
def my_reviews():
    rows = _all(
        "SELECT r.*, p.name FROM reviews r JOIN products p ON p.id = r.product_id"
        " WHERE r.user_id = ? ORDER BY r.created DESC, r.id DESC",
        (current_user()["id"],),
    )
    return render_template("my_reviews.html", reviews=rows)


ROUTES = [  # (rule, view, methods); the endpoint is the view's name
    ("/", index, ["GET"]),
    ("/category/<slug>", category, ["GET"]),
    ("/search", search, ["GET"]),
    ("/product/<int:pid>", product, ["GET"]),
    ("/product/<int:pid>/review", write_review, ["GET", "POST"]),
    ("/cart", cart, ["GET"]),
    ("/cart/add", cart_add, ["GET", "POST"]),
    ("/cart/update", cart_update, ["POST"]),
    ("/checkout", checkout, ["GET", "POST"]),
    ("/orders", orders, ["GET"]),
    ("/orders/<number>", order, ["GET"]),
    ("/orders/<number>/cancel", cancel_order, ["POST"]),
    ("/wishlist", wishlist, ["GET"]),
    ("/wishlist/add", wishlist_add, ["POST"]),
    ("/wishlist/remove", wishlist_remove, ["POST"]),
    ("/account", account, ["GET"]),
    ("/account/edit", account_edit, ["GET", "POST"]),
    ("/account/reviews", my_reviews, ["GET"]),
]


def create_app() -> Flask:
    app = create_site_app("shop", "One Stop Shop", Path(__file__).parent / "templates")
    app.jinja_env.filters["money"] = money
    app.jinja_env.globals.update(SORTS=SORTS, SHIPPING=SHIPPING, rating_text=rating_text)
    app.context_processor(notice_and_cart)
    for rule, view, methods in ROUTES:
        app.add_url_rule(rule, view_func=view, methods=methods)
    return app

"""Admin catalogue pages: the products grid, the product edit form and "Add product"."""

from __future__ import annotations

from flask import render_template, request

from webrl.sites.admin.data import PRODUCT_SORTS, parse_price
from webrl.sites.admin.web import (
    PER_PAGE,
    all_rows,
    choice_arg,
    form_text,
    go,
    like,
    one_row,
    text_arg,
)
from webrl.sites.common import db, get_or_404, login_required, paginate
from webrl.sites.shop.data import money

PRODUCT_SELECT = """
SELECT p.*, c.name AS category, c.slug, COALESCE(s.enabled, 1) AS enabled
FROM products p JOIN categories c ON c.id = p.category_id
LEFT JOIN product_status s ON s.product_id = p.id
"""
MAX_STOCK = 100_000
MAX_DESCRIPTION = 1000


def categories() -> list:
    return all_rows("SELECT * FROM categories ORDER BY name")


@login_required
def products():
    f = {
        "q": text_arg("q"),
        "category": choice_arg("category", {c["slug"] for c in categories()}),
        "sort": choice_arg("sort", PRODUCT_SORTS, "name"),
    }
    where, params = ["1 = 1"], []
    if f["q"]:  # part of the name, or of the SKU
        where.append("(p.name LIKE ? ESCAPE '\\' OR p.sku LIKE ? ESCAPE '\\')")
        params += [like(f["q"]), like(f["q"])]
    if f["category"]:
        where.append("c.slug = ?")
        params.append(f["category"])
    sql_where = " AND ".join(where)
    total = one_row(
        f"SELECT COUNT(*) FROM products p JOIN categories c ON c.id = p.category_id WHERE {sql_where}",
        tuple(params),
    )[0]
    page = paginate(total, PER_PAGE)
    rows = all_rows(
        f"{PRODUCT_SELECT} WHERE {sql_where} ORDER BY {PRODUCT_SORTS[f['sort']][1]} LIMIT ? OFFSET ?",
        (*params, PER_PAGE, page.offset),
    )
    return render_template("products.html", products=rows, page=page, f=f, categories=categories())


def _product_form() -> tuple[dict, str, dict]:
    """The posted product fields, an error message ("" if valid), and the parsed values."""
    form = {k: form_text(k) for k in ("name", "sku", "category", "price", "stock", "status")}
    form["description"] = form_text("description", MAX_DESCRIPTION)
    price = parse_price(form["price"])
    try:
        stock = int(form["stock"])
    except ValueError:
        stock = -1
    parsed = {"price": price, "stock": stock, "enabled": int(form["status"] != "disabled")}
    if not form["name"]:
        return form, "Enter the product name.", parsed
    if price is None or price <= 0:
        return form, "Enter a price such as 19.99.", parsed
    if not 0 <= stock <= MAX_STOCK:
        return form, f"Enter a stock quantity from 0 to {MAX_STOCK:,}.", parsed
    return form, "", parsed


@login_required
def edit_product(pid: int):
    p = get_or_404(f"{PRODUCT_SELECT} WHERE p.id = ?", (pid,))
    form = {"name": p["name"], "price": money(p["price_cents"]).lstrip("$").replace(",", ""),
            "stock": str(p["stock"]), "status": "enabled" if p["enabled"] else "disabled",
            "description": p["description"]}  # fmt: skip
    error = ""
    if request.method == "POST":
        form, error, v = _product_form()
        if not error and one_row(
            "SELECT 1 FROM products WHERE name = ? AND id != ?", (form["name"], pid)
        ):
            error = "Another product already has that name."
        if not error:
            db().execute(
                "UPDATE products SET name = ?, price_cents = ?, stock = ?, description = ? WHERE id = ?",
                (form["name"], v["price"], v["stock"], form["description"], pid),
            )
            _set_enabled(pid, v["enabled"])
            db().commit()
            return go("edit_product", f"Saved {form['name']}.", pid=pid)
    return render_template("product_form.html", p=p, form=form, error=error, categories=None)


@login_required
def new_product():
    form = {"name": "", "sku": "", "category": "", "price": "", "stock": "0", "status": "enabled",
            "description": ""}  # fmt: skip
    error = ""
    if request.method == "POST":
        form, error, v = _product_form()
        cat = one_row("SELECT id FROM categories WHERE slug = ?", (form["category"],))
        if not error and not form["sku"]:
            error = "Enter the SKU."
        elif not error and cat is None:
            error = "Choose a category."
        elif not error and one_row("SELECT 1 FROM products WHERE name = ?", (form["name"],)):
            error = "A product with that name already exists."
        elif not error and one_row("SELECT 1 FROM products WHERE sku = ?", (form["sku"],)):
            error = "A product with that SKU already exists."
        if not error:
            cur = db().execute(
                "INSERT INTO products (category_id, name, sku, price_cents, description, stock, featured)"
                " VALUES (?, ?, ?, ?, ?, ?, 0)",
                (cat["id"], form["name"], form["sku"], v["price"], form["description"], v["stock"]),
            )
            _set_enabled(cur.lastrowid, v["enabled"])
            db().commit()
            return go("edit_product", f"Added {form['name']}.", pid=cur.lastrowid)
    return render_template(
        "product_form.html", p=None, form=form, error=error, categories=categories()
    )


def _set_enabled(pid: int, enabled: int) -> None:
    db().execute(
        "INSERT INTO product_status (product_id, enabled) VALUES (?, ?)"
        " ON CONFLICT(product_id) DO UPDATE SET enabled = excluded.enabled",
        (pid, enabled),
    )

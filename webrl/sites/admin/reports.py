"""Admin reports: best sellers over a period, sales by month, low stock.

Sales figures count every order except canceled ones; revenue is what the
customers paid (order totals, shipping included).
"""

from __future__ import annotations

from flask import render_template

from webrl.sites.admin.catalog import MAX_STOCK, categories
from webrl.sites.admin.data import LOW_STOCK, month_label
from webrl.sites.admin.web import all_rows, choice_arg, date_arg, form_text, go, one_row
from webrl.sites.common import db, form_int, get_or_404, int_arg, login_required, paginate
from webrl.sites.shop.data import TODAY

TOP_N = 10
LOW_STOCK_PER_PAGE = 8  # rows carry a restock form each


@login_required
def reports():
    return render_template("reports.html")


@login_required
def bestsellers():
    start, end = date_arg("from"), date_arg("to")
    where, params = ["o.status != 'canceled'"], []
    if start:
        where.append("o.created >= ?")
        params.append(start)
    if end:
        where.append("o.created <= ?")
        params.append(end)
    rows = all_rows(
        "SELECT p.id, p.name, p.sku, SUM(i.qty) AS qty, SUM(i.qty * i.price_cents) AS revenue"
        " FROM order_items i JOIN orders o ON o.id = i.order_id JOIN products p ON p.id = i.product_id"
        f" WHERE {' AND '.join(where)} GROUP BY p.id ORDER BY qty DESC, revenue DESC, p.name LIMIT ?",
        (*params, TOP_N),
    )
    return render_template("bestsellers.html", rows=rows, start=start, end=end)


@login_required
def sales():
    years = [r[0] for r in all_rows("SELECT DISTINCT substr(created, 1, 4) FROM orders ORDER BY 1")]
    year = choice_arg("year", years, TODAY[:4])
    found = {
        r["month"]: r
        for r in all_rows(
            "SELECT substr(o.created, 1, 7) AS month, COUNT(*) AS orders, SUM(o.total_cents) AS revenue,"
            " SUM((SELECT SUM(qty) FROM order_items i WHERE i.order_id = o.id)) AS items"
            " FROM orders o WHERE o.status != 'canceled' AND substr(o.created, 1, 4) = ? GROUP BY month",
            (year,),
        )
    }
    months = [f"{year}-{m:02d}" for m in range(1, 13) if f"{year}-{m:02d}" <= TODAY[:7]]
    rows = [
        {"month": month_label(m), "orders": found[m]["orders"] if m in found else 0,
         "items": found[m]["items"] if m in found else 0, "revenue": found[m]["revenue"] if m in found else 0}
        for m in months
    ]  # fmt: skip
    totals = {k: sum(r[k] for r in rows) for k in ("orders", "items", "revenue")}
    return render_template("sales.html", rows=rows, totals=totals, years=years, year=year)


@login_required
def low_stock():
    threshold = int_arg("threshold", LOW_STOCK, lo=0, hi=1000)
    category = choice_arg("category", {c["slug"] for c in categories()})
    where, params = "p.stock <= ?", (threshold,)
    if category:
        where += " AND c.slug = ?"
        params += (category,)
    base = f"FROM products p JOIN categories c ON c.id = p.category_id WHERE {where}"
    page = paginate(one_row(f"SELECT COUNT(*) {base}", params)[0], LOW_STOCK_PER_PAGE)
    rows = all_rows(
        f"SELECT p.id, p.name, p.stock {base} ORDER BY p.stock, p.name LIMIT ? OFFSET ?",
        params + (LOW_STOCK_PER_PAGE, page.offset),
    )
    return render_template(
        "lowstock.html", rows=rows, page=page, threshold=threshold, category=category,
        categories=categories(),
    )  # fmt: skip


@login_required
def restock(pid: int):
    """Set one product's stock from its low-stock report row, then show the same report."""
    p = get_or_404("SELECT id, name FROM products WHERE id = ?", (pid,))
    back = {k: form_text(k) for k in ("threshold", "category", "page")}
    stock = form_int("stock")
    if stock is None or not 0 <= stock <= MAX_STOCK:
        return go("low_stock", f"Enter a stock quantity from 0 to {MAX_STOCK:,}.", **back)
    db().execute("UPDATE products SET stock = ? WHERE id = ?", (stock, pid))
    db().commit()
    return go("low_stock", f"{p['name']} now has {stock} units in stock.", **back)

"""The admin panel's app: the dashboard, and every page wired to its URL.

Plain server-rendered forms and links, no JavaScript; every page needs a staff
login. Every POST redirects (PRG) to a page that shows its outcome through the
`msg` query argument. The views live by subject in `orders`, `catalog`,
`reviews`, `customers`, `reports` and `promotions`.
"""

from __future__ import annotations

from pathlib import Path

from flask import Flask, render_template, request

from webrl.sites.admin import catalog, customers, orders, promotions, reports, reviews
from webrl.sites.admin.data import (
    LOW_STOCK,
    ORDER_STATUSES,
    PRODUCT_SORTS,
    REVIEW_STATUSES,
    promotion_state,
)
from webrl.sites.admin.web import all_rows, one_row
from webrl.sites.common import create_site_app, login_required
from webrl.sites.shop.data import TODAY, money

RECENT_ORDERS = 5


@login_required
def index():
    """The dashboard: store counts and the latest orders."""
    count = lambda sql, params=(): one_row(sql, params)[0]  # noqa: E731
    stats = {
        "orders": count("SELECT COUNT(*) FROM orders"),
        "pending": count("SELECT COUNT(*) FROM orders WHERE status = 'pending'"),
        "products": count("SELECT COUNT(*) FROM products"),
        "customers": count("SELECT COUNT(*) FROM users"),
        "reviews": count("SELECT COUNT(*) FROM review_submissions WHERE status = 'pending'"),
        "low_stock": count("SELECT COUNT(*) FROM products WHERE stock <= ?", (LOW_STOCK,)),
    }
    recent = all_rows(
        f"{orders.ORDER_SELECT} ORDER BY o.created DESC, o.id DESC LIMIT ?", (RECENT_ORDERS,)
    )
    return render_template("dashboard.html", stats=stats, recent=recent)


def notice() -> dict:
    """Template variables on every page: the PRG notice."""
    return {"message": request.args.get("msg", "")}


ROUTES = [  # (rule, view, methods); the endpoint is the view's name
    ("/", index, ["GET"]),
    ("/orders", orders.orders, ["GET"]),
    ("/orders/<number>", orders.order, ["GET"]),
    ("/orders/<number>/update", orders.update_order, ["POST"]),
    ("/products", catalog.products, ["GET"]),
    ("/products/new", catalog.new_product, ["GET", "POST"]),
    ("/products/<int:pid>", catalog.edit_product, ["GET", "POST"]),
    ("/customers", customers.customers, ["GET"]),
    ("/customers/<int:uid>", customers.customer, ["GET"]),
    ("/reviews", reviews.reviews, ["GET"]),
    ("/reviews/<status>/<int:rid>", reviews.moderate, ["POST"]),
    ("/reports", reports.reports, ["GET"]),
    ("/reports/bestsellers", reports.bestsellers, ["GET"]),
    ("/reports/sales", reports.sales, ["GET"]),
    ("/reports/low-stock", reports.low_stock, ["GET"]),
    ("/reports/low-stock/<int:pid>", reports.restock, ["POST"]),
    ("/promotions", promotions.promotions, ["GET"]),
    ("/promotions/new", promotions.new_promotion, ["GET", "POST"]),
    ("/promotions/<code>/delete", promotions.delete_promotion, ["POST"]),
]


def create_app() -> Flask:
    app = create_site_app(
        "admin",
        "Admin Panel",
        Path(__file__).parent / "templates",
        database="shop",
        users_table="admin_users",
        sessions_table="admin_sessions",
    )
    app.jinja_env.filters["money"] = money
    app.jinja_env.globals.update(
        ORDER_STATUSES=ORDER_STATUSES, PRODUCT_SORTS=PRODUCT_SORTS, REVIEW_STATUSES=REVIEW_STATUSES,
        promotion_state=promotion_state, TODAY=TODAY,
    )  # fmt: skip
    app.context_processor(notice)
    for rule, view, methods in ROUTES:
        app.add_url_rule(rule, endpoint=view.__name__, view_func=view, methods=methods)
    return app

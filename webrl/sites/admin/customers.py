"""Admin customer pages: the customers grid and one customer with their orders."""

from __future__ import annotations

from flask import render_template

from webrl.sites.admin.web import PER_PAGE, all_rows, like, one_row, text_arg
from webrl.sites.common import get_or_404, login_required, paginate


@login_required
def customers():
    q = text_arg("q")
    where, params = "1 = 1", ()
    if q:  # part of the name or the email address
        where = "(u.full_name LIKE ? ESCAPE '\\' OR u.email LIKE ? ESCAPE '\\')"
        params = (like(q), like(q))
    page = paginate(one_row(f"SELECT COUNT(*) FROM users u WHERE {where}", params)[0], PER_PAGE)
    rows = all_rows(
        "SELECT u.id, u.full_name, u.email, u.city, u.state,"
        " (SELECT COUNT(*) FROM orders o WHERE o.user_id = u.id) AS n_orders"
        f" FROM users u WHERE {where} ORDER BY u.full_name, u.id LIMIT ? OFFSET ?",
        params + (PER_PAGE, page.offset),
    )
    return render_template("customers.html", customers=rows, page=page, q=q)


@login_required
def customer(uid: int):
    c = get_or_404("SELECT * FROM users WHERE id = ?", (uid,))
    n = one_row("SELECT COUNT(*) FROM orders WHERE user_id = ?", (uid,))[0]
    page = paginate(n, PER_PAGE)
    orders = all_rows(
        "SELECT * FROM orders WHERE user_id = ? ORDER BY created DESC, id DESC LIMIT ? OFFSET ?",
        (uid, PER_PAGE, page.offset),
    )
    return render_template("customer.html", c=c, orders=orders, page=page)

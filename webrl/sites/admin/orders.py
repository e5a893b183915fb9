"""Admin order pages: the filterable orders grid, one order, status changes and comments."""

from __future__ import annotations

from flask import render_template, request

from webrl.sites.admin.data import ORDER_ACTIONS, ORDER_STATUSES
from webrl.sites.admin.web import (
    PER_PAGE,
    all_rows,
    choice_arg,
    date_arg,
    form_text,
    go,
    like,
    one_row,
    staff_name,
    text_arg,
)
from webrl.sites.common import db, get_or_404, login_required, paginate
from webrl.sites.shop.data import TODAY

ORDER_SELECT = """
SELECT o.id, o.number, o.created, o.status, o.total_cents, u.id AS customer_id, u.full_name AS customer
FROM orders o JOIN users u ON u.id = o.user_id
"""
MAX_COMMENT = 500


def order_filters() -> tuple[dict[str, str], str, tuple]:
    """The grid's filters from the query string, and the SQL WHERE clause they make."""
    f = {
        "q": text_arg("q"),
        "status": choice_arg("status", ORDER_STATUSES),
        "from": date_arg("from"),
        "to": date_arg("to"),
    }
    where, params = ["1 = 1"], []
    if f["q"]:  # an order number or part of the customer's name
        where.append("(o.number LIKE ? ESCAPE '\\' OR u.full_name LIKE ? ESCAPE '\\')")
        params += [like(f["q"].lstrip("#")), like(f["q"])]
    if f["status"]:
        where.append("o.status = ?")
        params.append(f["status"])
    if f["from"]:
        where.append("o.created >= ?")
        params.append(f["from"])
    if f["to"]:
        where.append("o.created <= ?")
        params.append(f["to"])
    return f, " AND ".join(where), tuple(params)


@login_required
def orders():
    f, where, params = order_filters()
    total = one_row(
        f"SELECT COUNT(*) FROM orders o JOIN users u ON u.id = o.user_id WHERE {where}", params
    )[0]
    page = paginate(total, PER_PAGE)
    rows = all_rows(
        f"{ORDER_SELECT} WHERE {where} ORDER BY o.created DESC, o.id DESC LIMIT ? OFFSET ?",
        params + (PER_PAGE, page.offset),
    )
    return render_template("orders.html", orders=rows, page=page, f=f)


def _order(number: str):
    return get_or_404(
        "SELECT o.*, u.full_name AS customer, u.email FROM orders o JOIN users u ON u.id = o.user_id"
        " WHERE o.number = ?",
        (number,),
    )


@login_required
def order(number: str):
    o = _order(number)
    items = all_rows(
        "SELECT i.*, p.sku FROM order_items i LEFT JOIN products p ON p.id = i.product_id"
        " WHERE i.order_id = ? ORDER BY i.id",
        (o["id"],),
    )
    history = all_rows(
        "SELECT * FROM order_history WHERE order_id = ? ORDER BY id DESC LIMIT 10", (o["id"],)
    )
    actions = [(k, a[0]) for k, a in ORDER_ACTIONS.items() if o["status"] in a[1]]
    return render_template("order.html", o=o, items=items, history=history, actions=actions)


@login_required
def update_order(number: str):
    """Apply the pressed button: a status change (with an optional comment) or a comment alone."""
    o = _order(number)
    action, comment = request.form.get("action", ""), form_text("comment", MAX_COMMENT)
    status = o["status"]
    if action == "comment":
        if not comment:
            return go("order", "Write a comment first.", number=number)
        msg = "Comment added."
    elif action in ORDER_ACTIONS and status in ORDER_ACTIONS[action][1]:
        status = ORDER_ACTIONS[action][2] or _status_before_hold(o["id"])
        _set_status(o["id"], o["status"], status)
        msg = f"Order #{number} is now {ORDER_STATUSES[status].lower()}."
    else:
        return go("order", f"Order #{number} cannot be changed that way.", number=number)
    db().execute(
        "INSERT INTO order_history (order_id, created, author, status, prev_status, comment)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        (o["id"], TODAY, staff_name(), status, o["status"], comment),
    )
    db().commit()
    return go("order", msg, number=number)


def _status_before_hold(order_id: int) -> str:
    row = one_row(
        "SELECT prev_status FROM order_history WHERE order_id = ? AND status = 'on hold'"
        " ORDER BY id DESC LIMIT 1",
        (order_id,),
    )
    return row["prev_status"] if row else "pending"


def _set_status(order_id: int, old: str, new: str) -> None:
    db().execute("UPDATE orders SET status = ? WHERE id = ?", (new, order_id))
    if new == "canceled" and old != "canceled":  # the items go back on the shelf
        for it in all_rows(
            "SELECT product_id, qty FROM order_items WHERE order_id = ?", (order_id,)
        ):
            db().execute(
                "UPDATE products SET stock = stock + ? WHERE id = ?", (it["qty"], it["product_id"])
            )

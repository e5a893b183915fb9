"""Review moderation: pending and rejected submissions, and the published (approved) reviews.

Published reviews live in the shop's `reviews` table (the storefront shows
them); submissions wait in `review_submissions`. Approving copies a
submission into `reviews`; rejecting a published review moves it back out.
"""

from __future__ import annotations

from flask import render_template, request

from webrl.sites.admin.data import REVIEW_STATUSES
from webrl.sites.admin.web import (
    all_rows,
    choice_arg,
    form_text,
    go,
    like,
    one_row,
    text_arg,
)
from webrl.sites.common import db, get_or_404, login_required, paginate

PER_PAGE_REVIEWS = 8  # each row carries its moderation buttons
# status -> (FROM clause, extra WHERE, parameters); every source has the same columns
SOURCES = {
    "pending": ("review_submissions r", "r.status = ?", ("pending",)),
    "rejected": ("review_submissions r", "r.status = ?", ("rejected",)),
    "approved": ("reviews r", "1 = 1", ()),
}
OPS = {  # what each tab's buttons do
    "pending": ("approve", "reject", "delete"),
    "rejected": ("approve", "delete"),
    "approved": ("reject", "delete"),
}


def _query(status: str, product: str) -> tuple[str, tuple]:
    table, where, params = SOURCES[status]
    sql = f"FROM {table} JOIN products p ON p.id = r.product_id WHERE {where}"
    if product:
        sql += " AND p.name LIKE ? ESCAPE '\\'"
        params += (like(product),)
    return sql, params


@login_required
def reviews():
    status = choice_arg("status", REVIEW_STATUSES, "pending")
    product = text_arg("product")
    sql, params = _query(status, product)
    page = paginate(one_row(f"SELECT COUNT(*) {sql}", params)[0], PER_PAGE_REVIEWS)
    rows = all_rows(
        "SELECT r.id, r.product_id, p.name AS product, r.author, r.rating, r.title, r.body, r.created "
        f"{sql} ORDER BY r.created DESC, r.id DESC LIMIT ? OFFSET ?",
        params + (PER_PAGE_REVIEWS, page.offset),
    )
    n_pending = one_row("SELECT COUNT(*) FROM review_submissions WHERE status = 'pending'")[0]
    return render_template(
        "reviews.html", rows=rows, page=page, status=status, product=product, ops=OPS[status],
        n_pending=n_pending,
    )  # fmt: skip


@login_required
def moderate(status: str, rid: int):
    """Approve, reject or delete one review, then return to the same listing."""
    if status not in OPS:
        return go("reviews")
    op = request.form.get("op", "")
    back = {"status": status, "product": form_text("product"), "page": form_text("page") or "1"}
    if op not in OPS[status]:
        return go("reviews", "That review cannot be changed that way.", **back)
    conn = db()
    if status == "approved":
        r = get_or_404("SELECT * FROM reviews WHERE id = ?", (rid,))
        if op == "reject":
            conn.execute(
                "INSERT INTO review_submissions (product_id, author, rating, title, body, created, status)"
                " VALUES (?, ?, ?, ?, ?, ?, 'rejected')",
                (r["product_id"], r["author"], r["rating"], r["title"], r["body"], r["created"]),
            )
        conn.execute("DELETE FROM reviews WHERE id = ?", (rid,))
    else:
        r = get_or_404(
            "SELECT * FROM review_submissions WHERE id = ? AND status = ?", (rid, status)
        )
        if op == "approve":
            conn.execute(
                "INSERT INTO reviews (product_id, user_id, author, rating, title, body, created)"
                " VALUES (?, NULL, ?, ?, ?, ?, ?)",
                (r["product_id"], r["author"], r["rating"], r["title"], r["body"], r["created"]),
            )
            conn.execute("DELETE FROM review_submissions WHERE id = ?", (rid,))
        elif op == "reject":
            conn.execute("UPDATE review_submissions SET status = 'rejected' WHERE id = ?", (rid,))
        else:
            conn.execute("DELETE FROM review_submissions WHERE id = ?", (rid,))
    conn.commit()
    done = {"approve": "approved", "reject": "rejected", "delete": "deleted"}[op]
    return go("reviews", f"The review by {r['author']} was {done}.", **back)

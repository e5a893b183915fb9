"""Promotions: coupon codes giving a percentage off between two dates."""

from __future__ import annotations

from flask import render_template, request

from webrl.sites.admin.data import CODE_RE, PERCENT_RE, parse_date
from webrl.sites.admin.web import PER_PAGE, all_rows, form_text, go, like, one_row, text_arg
from webrl.sites.common import db, login_required, paginate


@login_required
def promotions():
    q = text_arg("q")
    where, params = "1 = 1", ()
    if q:
        where, params = "code LIKE ? ESCAPE '\\'", (like(q),)
    page = paginate(one_row(f"SELECT COUNT(*) FROM promotions WHERE {where}", params)[0], PER_PAGE)
    rows = all_rows(
        f"SELECT * FROM promotions WHERE {where} ORDER BY starts DESC, id DESC LIMIT ? OFFSET ?",
        params + (PER_PAGE, page.offset),
    )
    return render_template("promotions.html", rows=rows, page=page, q=q)


def _validate(form: dict) -> str:
    """An error message for the posted promotion, or "" if it can be saved."""
    if not CODE_RE.match(form["code"]):
        return "The code must be 3 to 20 letters, digits or dashes."
    if one_row("SELECT 1 FROM promotions WHERE code = ?", (form["code"],)):
        return f"The code {form['code']} is already in use."
    if not PERCENT_RE.match(form["percent"]) or not 1 <= int(form["percent"]) <= 90:
        return "The discount must be a whole percentage from 1 to 90."
    starts, ends = parse_date(form["starts"]), parse_date(form["ends"])
    if starts is None or ends is None:
        return "Enter the start and end dates as YYYY-MM-DD."
    if ends < starts:
        return "The end date must not be before the start date."
    return ""


@login_required
def new_promotion():
    form = {"code": "", "description": "", "percent": "", "starts": "", "ends": ""}
    error = ""
    if request.method == "POST":
        form = {k: form_text(k) for k in form}
        form["code"] = form["code"].upper()
        form["percent"] = form["percent"].rstrip("%").strip()
        error = _validate(form)
        if not error:
            db().execute(
                "INSERT INTO promotions (code, description, percent, starts, ends) VALUES (?, ?, ?, ?, ?)",
                (form["code"], form["description"], int(form["percent"]),
                 parse_date(form["starts"]), parse_date(form["ends"])),
            )  # fmt: skip
            db().commit()
            return go("promotions", f"Promotion {form['code']} was saved.", q=form["code"])
    return render_template("promotion_form.html", form=form, error=error)


@login_required
def delete_promotion(code: str):
    cur = db().execute("DELETE FROM promotions WHERE code = ?", (code,))
    db().commit()
    return go(
        "promotions", f"Promotion {code} was deleted." if cur.rowcount else "No such promotion."
    )

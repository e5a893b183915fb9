"""Request plumbing shared by the admin's views: queries, arguments, PRG redirects."""

from __future__ import annotations

import sqlite3

from flask import redirect, request, url_for

from webrl.sites.admin.data import parse_date
from webrl.sites.common import current_user, db

PER_PAGE = 10


def all_rows(sql: str, params: tuple = ()) -> list[sqlite3.Row]:
    return db().execute(sql, params).fetchall()


def one_row(sql: str, params: tuple = ()) -> sqlite3.Row | None:
    return db().execute(sql, params).fetchone()


def go(endpoint: str, msg: str = "", **values):
    """Redirect (PRG) to `endpoint`, carrying a notice for the next page."""
    if msg:
        values["msg"] = msg
    return redirect(url_for(endpoint, **values))


def text_arg(name: str) -> str:
    return " ".join(request.args.get(name, "").split())[:100]


def form_text(name: str, limit: int = 200) -> str:
    return " ".join(request.form.get(name, "").split())[:limit]


def date_arg(name: str) -> str:
    """A YYYY-MM-DD query argument, or "" when missing or malformed."""
    return parse_date(request.args.get(name, "")) or ""


def like(term: str) -> str:
    """A LIKE pattern matching `term` literally anywhere."""
    escaped = term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def choice_arg(name: str, choices, default: str = "") -> str:
    value = request.args.get(name, default)
    return value if value in choices else default


def staff_name() -> str:
    """The signed-in staff member (recorded in order histories)."""
    return current_user()["username"]

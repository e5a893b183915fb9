"""Shared plumbing for the site apps: per-episode DB access, login, pagination.

Every request carries its episode's `WorldState` in `environ["webrl.world"]`
(set by `webrl.sites.world.WorldApp`); a site reads and writes only that copy,
so episodes never see each other. All SQL is parameterised; all templates
autoescape.
"""

from __future__ import annotations

import functools
import hashlib
import math
import secrets
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from flask import Flask, abort, current_app, g, redirect, render_template, request, url_for
from jinja2 import ChoiceLoader, FileSystemLoader

SHARED_TEMPLATES = Path(__file__).parent / "templates"

AUTH_SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    token TEXT PRIMARY KEY,
    user_id INTEGER NOT NULL REFERENCES users(id)
);
"""


def local_path(url: str) -> bool:
    """True for a path on this server ("/forum/f/1"), False for anything a browser would take off
    it: absolute URLs, scheme-relative "//host/..." and "/\\host/..." (browsers read "\\" as "/")."""
    return url.startswith("/") and not url.startswith("//") and "\\" not in url and not any(ord(c) < 32 for c in url)


def hash_password(password: str) -> str:
    return hashlib.sha256(("webrl-salt:" + password).encode()).hexdigest()


def db() -> sqlite3.Connection:
    """This request's episode-private connection to the current site's database."""
    return request.environ["webrl.world"].db(current_app.config["SITE_DB"])


def cookie_name() -> str:
    return current_app.config["SITE_NAME"] + "_session"


def current_user() -> sqlite3.Row | None:
    if "user" not in g:
        token = request.cookies.get(cookie_name())
        g.user = None
        if token:
            users, sessions = current_app.config["USERS_TABLE"], current_app.config["SESSIONS_TABLE"]
            g.user = db().execute(  # table names come from the site's config, never from requests
                f"SELECT u.* FROM {sessions} s JOIN {users} u ON u.id = s.user_id WHERE s.token = ?",
                (token,),
            ).fetchone()
    return g.user


def login_required(view: Callable) -> Callable:
    @functools.wraps(view)
    def wrapped(*args, **kwargs):
        if current_user() is None:
            return redirect(url_for("login", next=request.script_root + request.full_path.rstrip("?")))
        return view(*args, **kwargs)

    return wrapped


def int_arg(name: str, default: int = 1, lo: int = 1, hi: int = 10_000) -> int:
    """An integer query argument, clamped; junk falls back to `default`."""
    try:
        value = int(request.args.get(name, default))
    except (TypeError, ValueError):
        return default
    return max(lo, min(hi, value))


def form_int(name: str, default: int | None = None) -> int | None:
    """A form field as an int, else `default` (one past SQLite's 64 bits: the OverflowError handler)."""
    try:
        return int(request.form.get(name, ""))
    except ValueError:
        return default


@dataclass(frozen=True)
class Page:
    """One page of a paginated listing."""

    number: int
    per_page: int
    total: int

    @property
    def pages(self) -> int:
        return max(1, math.ceil(self.total / self.per_page))

    @property
    def offset(self) -> int:
        return (self.number - 1) * self.per_page

    @property
    def has_prev(self) -> bool:
        return self.number > 1

    @property
    def has_next(self) -> bool:
        return self.number < self.pages


def paginate(total: int, per_page: int, arg: str = "page") -> Page:
    number = int_arg(arg, 1)
    page = Page(number, per_page, total)
    if number > page.pages:
        page = Page(page.pages, per_page, total)
    return page


def page_url(number: int) -> str:
    """The current URL with `page` replaced (for pager links in templates). Query parameters that
    `url_for` would take as its own arguments (`endpoint`, `_external`, `_anchor`…) or that clash
    with the route's parts (`?name=` on /forum/f/<name>) are dropped, not passed on: they used to
    fail the page (500) or rewrite the link."""
    route = request.view_args or {}
    args = {k: v for k, v in request.args.items() if k != "endpoint" and not k.startswith("_") and k not in route}
    args["page"] = str(number)
    return url_for(request.endpoint, **route, **args)


def create_site_app(
    name: str,
    title: str,
    template_dir: Path,
    database: str = "",
    users_table: str = "users",
    sessions_table: str = "sessions",
) -> Flask:
    """A Flask app for one site, with login/logout and shared templates wired in.

    `database` names another site's database to use (the admin uses the shop's);
    `users_table`/`sessions_table` name the login tables in it.
    """
    app = Flask(f"webrl.sites.{name}", template_folder=None)
    app.config.update(
        SITE_NAME=name,
        SITE_TITLE=title,
        SITE_DB=database or name,
        USERS_TABLE=users_table,
        SESSIONS_TABLE=sessions_table,
    )
    app.jinja_loader = ChoiceLoader(
        [FileSystemLoader(str(template_dir)), FileSystemLoader(str(SHARED_TEMPLATES))]
    )
    app.jinja_env.globals.update(current_user=current_user, page_url=page_url)

    @app.route("/login", methods=["GET", "POST"])
    def login():
        error = None
        next_url = request.values.get("next") or url_for("index")
        if not local_path(next_url):
            next_url = url_for("index")  # no open redirects
        if request.method == "POST":
            row = db().execute(
                f"SELECT id, password_hash FROM {users_table} WHERE username = ?",
                (request.form.get("username", ""),),
            ).fetchone()
            if row and row["password_hash"] == hash_password(request.form.get("password", "")):
                token = secrets.token_hex(16)
                db().execute(
                    f"INSERT INTO {sessions_table} (token, user_id) VALUES (?, ?)", (token, row["id"])
                )
                db().commit()
                resp = redirect(next_url)
                resp.set_cookie(cookie_name(), token, path=request.script_root or "/", httponly=True)
                return resp
            error = "Invalid username or password."
        return render_template("login.html", error=error, next=next_url)

    @app.route("/logout", methods=["POST", "GET"])
    def logout():
        resp = redirect(url_for("index"))
        resp.delete_cookie(cookie_name(), path=request.script_root or "/")
        return resp

    @app.errorhandler(404)
    def not_found(_e):
        return render_template("error.html", error_message="Page not found."), 404

    @app.errorhandler(OverflowError)  # an id (URL or form) past SQLite's 64 bits: no such row
    def id_out_of_range(_e):
        return render_template("error.html", error_message="Page not found."), 404

    return app


def get_or_404(sql: str, params: tuple) -> sqlite3.Row:
    row = db().execute(sql, params).fetchone()
    if row is None:
        abort(404)
    return row

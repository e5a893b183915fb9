"""Larkport Map: the map site's pages (search, places, nearby, directions, my places).

Server-rendered forms and links, no JavaScript. Place names typed into the
search's "near" box or the directions form are matched case-insensitively,
exactly first, then as a unique part of one name. A resolved directions query
redirects to its canonical URL (exact names, explicit mode), so the same route
always has the same address. Every POST redirects (PRG) with a `msg` notice.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from flask import Flask, redirect, render_template, request, url_for

from webrl.sites.common import (
    create_site_app,
    current_user,
    db,
    get_or_404,
    int_arg,
    login_required,
    paginate,
)
from webrl.sites.map.data import CATEGORIES, TODAY, address, category_label, category_plural
from webrl.sites.map.geo import (
    DEFAULT_RADIUS,
    MODES,
    RADII,
    ROAD_TYPES,
    WEEKDAYS,
    format_coords,
    format_distance,
    format_minutes,
    straight_m,
)
from webrl.sites.map.routing import RoadGraph, plan_route

PER_PAGE = 10
STEPS_PER_PAGE = 6
MAX_NOTE = 200
SORTS = {"name": "Name", "distance": "Distance"}


# --- helpers -------------------------------------------------------------------------------


def _all(sql: str, params: tuple = ()) -> list[sqlite3.Row]:
    return db().execute(sql, params).fetchall()


def _text_arg(name: str) -> str:
    return " ".join(request.args.get(name, "").split())[:100]


def _like(term: str) -> str:
    escaped = term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def _go(endpoint: str, msg: str = "", **values):
    if msg:
        values["msg"] = msg
    return redirect(url_for(endpoint, **values))


def find_place(text: str) -> tuple[sqlite3.Row | None, list[str]]:
    """(the place `text` names, or None with up to 5 suggested names)."""
    if not text:
        return None, []
    exact = _all("SELECT * FROM places WHERE name = ? COLLATE NOCASE", (text,))
    if exact:
        return exact[0], []
    rows = _all("SELECT * FROM places WHERE name LIKE ? ESCAPE '\\' ORDER BY name", (_like(text),))
    if len(rows) == 1:
        return rows[0], []
    return None, [r["name"] for r in rows[:5]]


def _saved_row(pid: int) -> sqlite3.Row | None:
    user = current_user()
    if user is None:
        return None
    return (
        db()
        .execute("SELECT * FROM saved WHERE user_id = ? AND place_id = ?", (user["id"], pid))
        .fetchone()
    )


def _page_of(rows: list, per_page: int = PER_PAGE):
    page = paginate(len(rows), per_page)
    return page, rows[page.offset : page.offset + per_page]


def notice() -> dict:
    return {"message": request.args.get("msg", "")}


# --- browsing ------------------------------------------------------------------------------


def index():
    counts = dict(_all("SELECT category, COUNT(*) FROM places GROUP BY category"))
    cats = [(slug, label, counts.get(slug, 0)) for slug, label, *_ in CATEGORIES]
    return render_template("index.html", categories=cats)


def search():
    """Places by name or category; sorted by name, or by distance from a `near` place."""
    q, category, near_text = _text_arg("q"), _text_arg("category"), _text_arg("near")
    if category not in {c[0] for c in CATEGORIES}:
        category = ""
    near, suggestions = find_place(near_text)
    sort = request.args.get("sort", "distance" if near else "name")
    if sort not in SORTS or (sort == "distance" and near is None):
        sort = "name"
    where, params = ["1 = 1"], []
    if q:
        slugs = [c[0] for c in CATEGORIES if q.lower() in c[1].lower() or q.lower() in c[2].lower()]
        marks = ", ".join("?" * len(slugs)) or "NULL"
        where.append(f"(name LIKE ? ESCAPE '\\' OR category IN ({marks}))")
        params += [_like(q), *slugs]
    if category:
        where.append("category = ?")
        params.append(category)
    sql = f"SELECT * FROM places WHERE {' AND '.join(where)} ORDER BY name"  # fixed fragments only
    rows = [dict(r) for r in _all(sql, tuple(params))]
    if near is not None:
        rows = [r for r in rows if r["id"] != near["id"]]
        for r in rows:
            r["distance"] = straight_m(near, r)
        if sort == "distance":
            rows.sort(key=lambda r: (r["distance"], r["name"]))
    page, shown = _page_of(rows)
    return render_template(
        "search.html", q=q, category=category, near_text=near_text, near=near, suggestions=suggestions,
        sort=sort, page=page, places=shown, searched=bool(q or category),
    )  # fmt: skip


def place(pid: int):
    p = get_or_404("SELECT * FROM places WHERE id = ?", (pid,))
    hours = [
        (WEEKDAYS[r["day"]], r["spec"])
        for r in _all("SELECT * FROM hours WHERE place_id = ? ORDER BY day", (pid,))
    ]
    return render_template("place.html", p=p, hours=hours, saved=_saved_row(pid))


def nearby(pid: int):
    p = get_or_404("SELECT * FROM places WHERE id = ?", (pid,))
    radius = int_arg("radius", DEFAULT_RADIUS, lo=0, hi=100_000)
    radius = radius if radius in RADII else DEFAULT_RADIUS
    category = _text_arg("category")
    if category not in {c[0] for c in CATEGORIES}:
        category = ""
    rows = []
    for r in _all("SELECT * FROM places WHERE id != ? ORDER BY name", (pid,)):
        d = straight_m(p, r)
        if d <= radius and (not category or r["category"] == category):
            rows.append({**dict(r), "distance": d})
    rows.sort(key=lambda r: (r["distance"], r["name"]))
    page, shown = _page_of(rows)
    return render_template(
        "nearby.html", p=p, radius=radius, category=category, page=page, places=shown
    )


def directions():
    """The directions form; with both ends resolved, the route (canonical URL)."""
    from_text, to_text = _text_arg("from"), _text_arg("to")
    mode = request.args.get("mode", "")
    start, start_alts = find_place(from_text)
    end, end_alts = find_place(to_text)
    route, errors = None, []
    if start is not None and end is not None:
        canonical = {
            "from": start["name"],
            "to": end["name"],
            "mode": mode if mode in MODES else "drive",
        }
        if (from_text, to_text, mode) != tuple(canonical.values()):
            return redirect(url_for("directions", **canonical))
        if start["id"] == end["id"]:
            errors.append("The start and the destination are the same place.")
        else:
            route = plan_route(RoadGraph(db()), start, end, mode)
            if route is None:
                errors.append(f"No {MODES[mode][0].lower()} route connects these places.")
    for text, found, alts, which in (
        (from_text, start, start_alts, "start"),
        (to_text, end, end_alts, "destination"),
    ):
        if text and found is None:
            hint = f" Did you mean: {'; '.join(alts)}?" if alts else ""
            errors.append(f'No single place named "{text}" for the {which}.{hint}')
    error = " ".join(errors)
    page, steps = _page_of(list(route.steps) if route else [], STEPS_PER_PAGE)
    return render_template(
        "directions.html", from_text=from_text, to_text=to_text, mode=mode if mode in MODES else "drive",
        start=start, end=end, route=route, error=error, page=page, steps=steps,
    )  # fmt: skip


# --- my places -----------------------------------------------------------------------------------


@login_required
def saved():
    rows = _all(
        "SELECT p.*, s.note, s.saved_on FROM saved s JOIN places p ON p.id = s.place_id"
        " WHERE s.user_id = ? ORDER BY s.saved_on, s.id",
        (current_user()["id"],),
    )
    page, shown = _page_of(rows)
    return render_template("saved.html", places=shown, page=page)


def _back(pid: int, msg: str):
    if request.form.get("back") == "saved":
        return _go("saved", msg)
    return _go("place", msg, pid=pid)


@login_required
def save(pid: int):
    p = get_or_404("SELECT * FROM places WHERE id = ?", (pid,))
    if request.method == "GET":  # e.g. back from signing in: show the place, change nothing
        return _go("place", pid=pid)
    cur = db().execute(
        "INSERT OR IGNORE INTO saved (user_id, place_id, note, saved_on) VALUES (?, ?, '', ?)",
        (current_user()["id"], pid, TODAY),
    )
    db().commit()
    return _back(
        pid, f"Saved {p['name']} to my places." if cur.rowcount else "Already in my places."
    )


@login_required
def unsave(pid: int):
    p = get_or_404("SELECT * FROM places WHERE id = ?", (pid,))
    if request.method == "GET":
        return _go("place", pid=pid)
    db().execute(
        "DELETE FROM saved WHERE user_id = ? AND place_id = ?", (current_user()["id"], pid)
    )
    db().commit()
    return _back(pid, f"Removed {p['name']} from my places.")


@login_required
def note(pid: int):
    get_or_404("SELECT id FROM places WHERE id = ?", (pid,))
    if request.method == "GET":
        return _go("place", pid=pid)
    if _saved_row(pid) is None:
        return _go("place", "Save the place first to add a note.", pid=pid)
    text = " ".join(request.form.get("note", "").split())[:MAX_NOTE]
    db().execute(
        "UPDATE saved SET note = ? WHERE user_id = ? AND place_id = ?",
        (text, current_user()["id"], pid),
    )
    db().commit()
    return _back(pid, "Note saved." if text else "Note cleared.")


ROUTES = [
    ("/", index, ["GET"]),
    ("/search", search, ["GET"]),
    ("/place/<int:pid>", place, ["GET"]),
    ("/place/<int:pid>/nearby", nearby, ["GET"]),
    ("/directions", directions, ["GET"]),
    ("/saved", saved, ["GET"]),
    ("/place/<int:pid>/save", save, ["GET", "POST"]),
    ("/place/<int:pid>/unsave", unsave, ["GET", "POST"]),
    ("/place/<int:pid>/note", note, ["GET", "POST"]),
]


def create_app() -> Flask:
    app = create_site_app("map", "Larkport Map", Path(__file__).parent / "templates")
    app.jinja_env.filters.update(distance=format_distance, minutes=format_minutes)
    app.jinja_env.globals.update(
        CATEGORIES=CATEGORIES, MODES=MODES, RADII=RADII, ROAD_TYPES=ROAD_TYPES, SORTS=SORTS,
        address=address, category_label=category_label, category_plural=category_plural,
        format_coords=format_coords,
    )  # fmt: skip
    app.context_processor(notice)
    for rule, view, methods in ROUTES:
        app.add_url_rule(rule, view_func=view, methods=methods)
    return app

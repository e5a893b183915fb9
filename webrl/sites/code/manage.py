"""Project management: the members page (add, change role, remove) and the
settings page (description, visibility, topics, rename). Changes need the
Maintainer role (403 otherwise); only an Owner may grant or change Owner."""

from __future__ import annotations

import re
import sqlite3

from flask import render_template, request

from webrl.sites.code.access import (
    at_least,
    form_text,
    go,
    load_project,
    members,
    require,
    role_in,
    text_arg,
    user_by_name,
)
from webrl.sites.code.content import ROLES
from webrl.sites.code.data import NOW
from webrl.sites.common import db, login_required, paginate

MEMBERS_PER_PAGE = 10
VISIBILITY = {"private": "Private", "internal": "Internal", "public": "Public"}
NAME_RE = re.compile(r"[a-z0-9][a-z0-9._-]{1,49}")


def member_list(ns: str, name: str):
    p = load_project(ns, name)
    role = role_in(p["id"])
    rows = members(p["id"])
    search = text_arg("search")
    if search:
        low = search.lower()
        rows = [m for m in rows if low in m["username"].lower() or low in m["name"].lower()]
    page = paginate(len(rows), MEMBERS_PER_PAGE)
    manager = at_least(role, "Maintainer")
    return render_template(
        "members.html", project=p, members=rows[page.offset : page.offset + MEMBERS_PER_PAGE], page=page,
        search=search, manager=manager, is_owner=role == "Owner", ROLES=ROLES, total=len(rows),
    )  # fmt: skip


@login_required
def add_member(ns: str, name: str):
    p = load_project(ns, name)
    mine = require(p, "Maintainer")
    username, role = form_text("username", 100).lstrip("@"), request.form.get("access_level", "")
    if role not in ROLES:
        role = "Guest"
    user = user_by_name(username)
    if user is None:
        return go("members", "no_user", ns=ns, name=name)
    if (
        db()
        .execute(
            "SELECT 1 FROM members WHERE project_id = ? AND user_id = ?", (p["id"], user["id"])
        )
        .fetchone()
    ):
        return go("members", "already_member", ns=ns, name=name)
    if role == "Owner" and mine != "Owner":  # only owners hand out the Owner role
        return go("members", "owner_only", ns=ns, name=name)
    db().execute("INSERT INTO members VALUES (?, ?, ?)", (p["id"], user["id"], role))
    db().commit()
    return go("members", "member_added", ns=ns, name=name, search=username)


@login_required
def change_member(ns: str, name: str, username: str):
    """Change a member's role (field `role`), or remove them (button `remove`)."""
    p = load_project(ns, name)
    mine = require(p, "Maintainer")
    target = next((m for m in members(p["id"]) if m["username"] == username), None)
    if target is None:
        return go("members", "no_user", ns=ns, name=name)
    remove = request.form.get("remove") is not None
    new_role = request.form.get("role", "")
    if not remove and new_role not in ROLES:
        return go("members", ns=ns, name=name)
    touches_owner = target["role"] == "Owner" or (not remove and new_role == "Owner")
    if touches_owner and mine != "Owner":
        return go("members", "owner_only", ns=ns, name=name)
    owners = [m for m in members(p["id"]) if m["role"] == "Owner"]
    if target["role"] == "Owner" and len(owners) == 1 and (remove or new_role != "Owner"):
        return go("members", "last_owner", ns=ns, name=name)
    if remove:
        db().execute(
            "DELETE FROM members WHERE project_id = ? AND user_id = ?", (p["id"], target["id"])
        )
    else:
        db().execute(
            "UPDATE members SET role = ? WHERE project_id = ? AND user_id = ?",
            (new_role, p["id"], target["id"]),
        )
    db().commit()
    return go("members", "member_removed" if remove else "member_updated", ns=ns, name=name,
              **({} if remove else {"search": username}))  # fmt: skip


def _settings_page(p: sqlite3.Row, form: dict, error: str = ""):
    return render_template(
        "settings.html", project=p, form=form, error=error, VISIBILITY=VISIBILITY
    )


@login_required
def settings(ns: str, name: str):
    p = load_project(ns, name)
    require(p, "Maintainer")
    form = {"description": p["description"], "visibility": p["visibility"], "topics": p["topics"]}
    if request.method == "POST":
        form = {
            "description": form_text("description", 300),
            "visibility": request.form.get("visibility", ""),
            "topics": ", ".join(
                t for t in (x.strip().lower() for x in form_text("topics").split(",")) if t
            ),
        }
        if form["visibility"] not in VISIBILITY:
            return _settings_page(p, form, "Choose a visibility level.")
        db().execute(
            "UPDATE projects SET description = ?, visibility = ?, topics = ?, updated = ? WHERE id = ?",
            (form["description"], form["visibility"], form["topics"], NOW, p["id"]),
        )
        db().commit()
        return go("settings", "saved", ns=ns, name=name)
    return _settings_page(p, form)


@login_required
def rename(ns: str, name: str):
    p = load_project(ns, name)
    require(p, "Maintainer")
    new = form_text("new_name", 60)
    if not NAME_RE.fullmatch(new):
        return go("settings", "bad_name", ns=ns, name=name)
    if (
        new != name
        and db()
        .execute("SELECT 1 FROM projects WHERE namespace = ? AND name = ?", (ns, new))
        .fetchone()
    ):
        return go("settings", "name_taken", ns=ns, name=name)
    db().execute("UPDATE projects SET name = ?, updated = ? WHERE id = ?", (new, NOW, p["id"]))
    db().commit()
    return go("settings", "renamed", ns=ns, name=new)

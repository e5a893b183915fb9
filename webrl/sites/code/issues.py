"""Issues and merge requests of a project: lists with filters, detail pages,
new/edit forms, close/reopen, merge, and comments (notes)."""

from __future__ import annotations

import sqlite3

from flask import abort, render_template, request

from webrl.sites.code.access import (
    at_least,
    form_text,
    go,
    like,
    load_project,
    members,
    role_in,
    text_arg,
)
from webrl.sites.code.data import NOW
from webrl.sites.common import current_user, db, get_or_404, login_required, paginate

PER_PAGE = 10
MAX_TITLE = 200
MAX_TEXT = 2000
ISSUE_STATES = {"opened": "Open", "closed": "Closed", "all": "All"}
MR_STATES = {"opened": "Open", "merged": "Merged", "closed": "Closed", "all": "All"}
ISSUE_SORTS = {  # key -> (label, ORDER BY)
    "created_desc": ("Newest", "i.created DESC, i.iid DESC"),
    "created_asc": ("Oldest", "i.created, i.iid"),
    "updated_desc": ("Recently updated", "i.updated DESC, i.iid DESC"),
    "title": ("Title", "i.title COLLATE NOCASE, i.iid"),
}
ISSUE_SELECT = """
SELECT i.*, a.username AS author, a.name AS author_name, s.username AS assignee, s.name AS assignee_name,
       (SELECT group_concat(name, ', ') FROM (SELECT l.name FROM issue_labels il JOIN labels l ON l.id = il.label_id
        WHERE il.issue_id = i.id ORDER BY l.name)) AS labels
FROM issues i JOIN users a ON a.id = i.author_id LEFT JOIN users s ON s.id = i.assignee_id
"""


def _choice(name: str, choices, default: str) -> str:
    value = request.args.get(name, default)
    return value if value in choices else default


def labels_of(project_id: int) -> list[str]:
    return [
        r["name"]
        for r in db().execute(
            "SELECT name FROM labels WHERE project_id = ? ORDER BY name", (project_id,)
        )
    ]


def issue_list(ns: str, name: str):
    p = load_project(ns, name)
    state = _choice("state", ISSUE_STATES, "opened")
    sort = _choice("sort", ISSUE_SORTS, "created_desc")
    label, assignee, search = text_arg("label"), text_arg("assignee"), text_arg("search")
    where, params = "i.project_id = ?", [p["id"]]
    if label:
        where += (" AND EXISTS (SELECT 1 FROM issue_labels il JOIN labels l ON l.id = il.label_id"
                  " WHERE il.issue_id = i.id AND l.name = ?)")  # fmt: skip
        params.append(label)
    if assignee == "none":
        where += " AND i.assignee_id IS NULL"
    elif assignee:
        where += " AND i.assignee_id = (SELECT id FROM users WHERE username = ?)"
        params.append(assignee)
    if search:
        where += " AND (i.title LIKE ? ESCAPE '\\' OR i.description LIKE ? ESCAPE '\\')"
        params += [like(search), like(search)]
    counts = dict.fromkeys(("opened", "closed"), 0)
    for r in db().execute(
        f"SELECT i.state, COUNT(*) FROM issues i WHERE {where} GROUP BY i.state", params
    ):
        counts[r[0]] = r[1]
    counts["all"] = counts["opened"] + counts["closed"]
    if state != "all":
        where += " AND i.state = ?"
        params.append(state)
    page = paginate(counts[state], PER_PAGE)
    rows = (
        db()
        .execute(
            f"{ISSUE_SELECT} WHERE {where} ORDER BY {ISSUE_SORTS[sort][1]} LIMIT ? OFFSET ?",
            (*params, PER_PAGE, page.offset),
        )
        .fetchall()
    )
    return render_template(
        "issues.html", project=p, issues=rows, page=page, state=state, sort=sort, label=label,
        assignee=assignee, search=search, counts=counts, labels=labels_of(p["id"]),
        members=members(p["id"]), STATES=ISSUE_STATES, SORTS=ISSUE_SORTS,
        keep={k: v for k, v in (("label", label), ("assignee", assignee), ("search", search)) if v},
    )  # fmt: skip


def _issue(p: sqlite3.Row, iid: int) -> sqlite3.Row:
    return get_or_404(f"{ISSUE_SELECT} WHERE i.project_id = ? AND i.iid = ?", (p["id"], iid))


def _notes(column: str, parent: int) -> list[sqlite3.Row]:
    return (
        db()
        .execute(
            f"SELECT n.body, n.created, u.username, u.name FROM notes n JOIN users u ON u.id = n.author_id"
            f" WHERE n.{column} = ? ORDER BY n.created, n.id",
            (parent,),
        )
        .fetchall()
    )


def _can_manage(p: sqlite3.Row, i: sqlite3.Row) -> bool:
    """Reporters and above manage any issue; authors manage their own."""
    user = current_user()
    return user is not None and (
        at_least(role_in(p["id"]), "Reporter") or i["author_id"] == user["id"]
    )


def issue(ns: str, name: str, iid: int):
    p = load_project(ns, name)
    i = _issue(p, iid)
    return render_template("issue.html", project=p, issue=i, notes=_notes("issue_id", i["id"]),
                           can_manage=_can_manage(p, i))  # fmt: skip


def _issue_form(p: sqlite3.Row) -> tuple[dict, str]:
    """The posted issue fields, validated: (fields, error)."""
    known = labels_of(p["id"])
    names = {m["username"] for m in members(p["id"])}
    form = {
        "title": form_text("title", MAX_TITLE),
        "description": request.form.get("description", "").strip()[:MAX_TEXT],
        "labels": [lab for lab in request.form.getlist("labels") if lab in known],
        "assignee": request.form.get("assignee", ""),
    }
    if form["assignee"] not in names:
        form["assignee"] = ""
    return form, "" if form["title"] else "The title cannot be empty."


def _save_labels(issue_id: int, project_id: int, names: list[str]) -> None:
    db().execute("DELETE FROM issue_labels WHERE issue_id = ?", (issue_id,))
    for lab in names:
        db().execute(
            "INSERT OR IGNORE INTO issue_labels SELECT ?, id FROM labels WHERE project_id = ? AND name = ?",
            (issue_id, project_id, lab),
        )


def _assignee_id(username: str) -> int | None:
    row = db().execute("SELECT id FROM users WHERE username = ?", (username,)).fetchone()
    return row["id"] if row else None


@login_required
def new_issue(ns: str, name: str):
    p = load_project(ns, name)
    form, error = {"title": "", "description": "", "labels": [], "assignee": ""}, ""
    if request.method == "POST":
        form, error = _issue_form(p)
        if not error:
            c = db()
            iid = c.execute(
                "SELECT COALESCE(MAX(iid), 0) + 1 FROM issues WHERE project_id = ?", (p["id"],)
            ).fetchone()[0]
            new = c.execute(
                "INSERT INTO issues (project_id, iid, title, description, author_id, assignee_id, state, created, updated)"
                " VALUES (?, ?, ?, ?, ?, ?, 'opened', ?, ?)",
                (p["id"], iid, form["title"], form["description"], current_user()["id"],
                 _assignee_id(form["assignee"]), NOW, NOW),
            ).lastrowid  # fmt: skip
            _save_labels(new, p["id"], form["labels"])
            c.execute("UPDATE projects SET updated = ? WHERE id = ?", (NOW, p["id"]))
            c.commit()
            return go("issue", "issue_created", ns=ns, name=name, iid=iid)
    return render_template("issue_form.html", project=p, form=form, error=error, labels=labels_of(p["id"]),
                           members=members(p["id"]), issue=None)  # fmt: skip


@login_required
def edit_issue(ns: str, name: str, iid: int):
    p = load_project(ns, name)
    i = _issue(p, iid)
    if not _can_manage(p, i):
        abort(403)
    form = {"title": i["title"], "description": i["description"], "assignee": i["assignee"] or "",
            "labels": (i["labels"] or "").split(", ") if i["labels"] else []}  # fmt: skip
    error = ""
    if request.method == "POST":
        form, error = _issue_form(p)
        if not error:
            db().execute(
                "UPDATE issues SET title = ?, description = ?, assignee_id = ?, updated = ? WHERE id = ?",
                (form["title"], form["description"], _assignee_id(form["assignee"]), NOW, i["id"]),
            )
            _save_labels(i["id"], p["id"], form["labels"])
            db().commit()
            return go("issue", "issue_updated", ns=ns, name=name, iid=iid)
    return render_template("issue_form.html", project=p, form=form, error=error, labels=labels_of(p["id"]),
                           members=members(p["id"]), issue=i)  # fmt: skip


@login_required
def issue_state(ns: str, name: str, iid: int):
    p = load_project(ns, name)
    i = _issue(p, iid)
    if not _can_manage(p, i):
        abort(403)
    close = request.form.get("action") == "close"
    db().execute(
        "UPDATE issues SET state = ?, updated = ? WHERE id = ?",
        ("closed" if close else "opened", NOW, i["id"]),
    )
    db().commit()
    return go("issue", "closed" if close else "reopened", ns=ns, name=name, iid=iid)


def _add_note(column: str, parent: int, endpoint: str, ns: str, name: str, iid: int):
    body = request.form.get("body", "").strip()[:MAX_TEXT]
    if not body:
        return go(endpoint, "empty", ns=ns, name=name, iid=iid)
    db().execute(
        f"INSERT INTO notes ({column}, author_id, body, created) VALUES (?, ?, ?, ?)",
        (parent, current_user()["id"], body, NOW),
    )
    db().commit()
    return go(endpoint, "commented", ns=ns, name=name, iid=iid)


@login_required
def issue_note(ns: str, name: str, iid: int):
    i = _issue(load_project(ns, name), iid)
    return _add_note("issue_id", i["id"], "issue", ns, name, iid)


# --- merge requests -------------------------------------------------------------------------

MR_SELECT = """
SELECT m.*, a.username AS author, a.name AS author_name
FROM merge_requests m JOIN users a ON a.id = m.author_id
"""


def mr_list(ns: str, name: str):
    p = load_project(ns, name)
    state = _choice("state", MR_STATES, "opened")
    counts = dict.fromkeys(MR_STATES, 0)
    for r in db().execute(
        "SELECT state, COUNT(*) FROM merge_requests WHERE project_id = ? GROUP BY state", (p["id"],)
    ):
        counts[r[0]] = r[1]
    counts["all"] = sum(counts.values())
    where, params = "m.project_id = ?", [p["id"]]
    if state != "all":
        where += " AND m.state = ?"
        params.append(state)
    page = paginate(counts[state], PER_PAGE)
    rows = (
        db()
        .execute(
            f"{MR_SELECT} WHERE {where} ORDER BY m.created DESC, m.iid DESC LIMIT ? OFFSET ?",
            (*params, PER_PAGE, page.offset),
        )
        .fetchall()
    )
    return render_template(
        "mrs.html", project=p, mrs=rows, page=page, state=state, counts=counts, STATES=MR_STATES
    )


def _mr(p: sqlite3.Row, iid: int) -> sqlite3.Row:
    return get_or_404(f"{MR_SELECT} WHERE m.project_id = ? AND m.iid = ?", (p["id"], iid))


def mr(ns: str, name: str, iid: int):
    p = load_project(ns, name)
    m = _mr(p, iid)
    can_merge = m["state"] == "opened" and at_least(role_in(p["id"]), "Developer")
    return render_template(
        "mr.html", project=p, mr=m, notes=_notes("mr_id", m["id"]), can_merge=can_merge
    )


@login_required
def mr_state(ns: str, name: str, iid: int):
    p = load_project(ns, name)
    m = _mr(p, iid)
    if m["state"] != "opened" or not at_least(role_in(p["id"]), "Developer"):
        abort(403)
    merge = request.form.get("action") == "merge"
    db().execute(
        "UPDATE merge_requests SET state = ?, updated = ? WHERE id = ?",
        ("merged" if merge else "closed", NOW, m["id"]),
    )
    db().commit()
    return go("mr", "mr_merged" if merge else "mr_closed", ns=ns, name=name, iid=iid)


@login_required
def mr_note(ns: str, name: str, iid: int):
    m = _mr(load_project(ns, name), iid)
    return _add_note("mr_id", m["id"], "mr", ns, name, iid)

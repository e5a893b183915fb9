"""GitLab-like code site: project lists, user profiles, the project page,
stars and forks; `create_app` wires these and the views of `repo`, `issues`
and `manage` to their URLs.

Project pages live under `/<namespace>/<name>`, their sub-pages under
`/<namespace>/<name>/-/...` as in GitLab. Plain server-rendered forms and
links, no JavaScript; every POST redirects (PRG) to a page showing its outcome.
"""

from __future__ import annotations

from pathlib import Path

from flask import Flask, render_template, request

from webrl.sites.code import issues, manage, repo
from webrl.sites.code.access import (
    PROJECT_SQL,
    at_least,
    go,
    like,
    load_project,
    notice,
    role_in,
    text_arg,
    visible_where,
)
from webrl.sites.code.data import NOW
from webrl.sites.common import (
    create_site_app,
    current_user,
    db,
    get_or_404,
    login_required,
    paginate,
)

PER_PAGE = 10
USERS_PER_PAGE = 20
ACTIVITY = 6  # events on a profile
SCOPES = {"yours": "Your projects", "starred": "Starred projects", "all": "Explore projects"}
SORTS = {  # key -> (label, ORDER BY)
    "updated": ("Last updated", "p.updated DESC, p.id"),
    "name": ("Name", "p.name, p.namespace"),
    "stars": ("Most stars", "p.stars DESC, p.name"),
}


# --- project lists, users, profiles --------------------------------------------------------


def projects():
    """Your / starred / all visible projects, searched by name, sorted, paginated."""
    user = current_user()
    scope = request.args.get("scope", "yours" if user else "all")
    if scope not in SCOPES:
        scope = "all"
    if scope != "all" and user is None:
        return go("login", next=request.script_root + request.full_path.rstrip("?"))
    sort = request.args.get("sort", "updated")
    sort = sort if sort in SORTS else "updated"
    q = text_arg("q")
    where, params = visible_where()
    if scope == "yours":
        where += " AND EXISTS (SELECT 1 FROM members m WHERE m.project_id = p.id AND m.user_id = ?)"
        params += (user["id"],)
    elif scope == "starred":
        where += " AND EXISTS (SELECT 1 FROM stars s WHERE s.project_id = p.id AND s.user_id = ?)"
        params += (user["id"],)
    if q:
        where += " AND (p.namespace || '/' || p.name) LIKE ? ESCAPE '\\'"
        params += (like(q),)
    total = db().execute(f"SELECT COUNT(*) FROM projects p WHERE {where}", params).fetchone()[0]
    page = paginate(total, PER_PAGE)
    rows = (
        db()
        .execute(
            f"{PROJECT_SQL} WHERE {where} ORDER BY {SORTS[sort][1]} LIMIT ? OFFSET ?",
            (*params, PER_PAGE, page.offset),
        )
        .fetchall()
    )
    return render_template("projects.html", projects=rows, page=page, scope=scope, sort=sort, q=q,
                           SCOPES=SCOPES, SORTS=SORTS)  # fmt: skip


def users():
    q = text_arg("q")
    where, params = "1 = 1", ()
    if q:
        where = "(username LIKE ? ESCAPE '\\' OR name LIKE ? ESCAPE '\\')"
        params = (like(q), like(q))
    total = db().execute(f"SELECT COUNT(*) FROM users WHERE {where}", params).fetchone()[0]
    page = paginate(total, USERS_PER_PAGE)
    rows = (
        db()
        .execute(
            f"SELECT username, name FROM users WHERE {where} ORDER BY name LIMIT ? OFFSET ?",
            (*params, USERS_PER_PAGE, page.offset),
        )
        .fetchall()
    )
    return render_template("users.html", users=rows, page=page, q=q)


ACTIVITY_SQL = """
SELECT * FROM (
  SELECT c.created, 'pushed "' || c.message || '" to' AS what, p.namespace, p.name, '' AS ref
    FROM commits c JOIN projects p ON p.id = c.project_id WHERE c.author_id = :uid AND {vis}
  UNION ALL
  SELECT i.created, 'opened issue "' || i.title || '" in', p.namespace, p.name, 'issue' || i.iid
    FROM issues i JOIN projects p ON p.id = i.project_id WHERE i.author_id = :uid AND {vis}
  UNION ALL
  SELECT n.created, 'commented on issue #' || i.iid || ' in', p.namespace, p.name, 'issue' || i.iid
    FROM notes n JOIN issues i ON i.id = n.issue_id JOIN projects p ON p.id = i.project_id
    WHERE n.author_id = :uid AND {vis}
  UNION ALL
  SELECT m.created, 'opened merge request "' || m.title || '" in', p.namespace, p.name, 'mr' || m.iid
    FROM merge_requests m JOIN projects p ON p.id = m.project_id WHERE m.author_id = :uid AND {vis}
) ORDER BY created DESC LIMIT :n
"""


def profile(username: str):
    u = get_or_404("SELECT * FROM users WHERE username = ?", (username,))
    where, params = visible_where()
    mine = "EXISTS (SELECT 1 FROM members m WHERE m.project_id = p.id AND m.user_id = ?)"
    total = (
        db()
        .execute(f"SELECT COUNT(*) FROM projects p WHERE {mine} AND {where}", (u["id"], *params))
        .fetchone()[0]
    )
    page = paginate(total, PER_PAGE)
    rows = (
        db()
        .execute(
            f"SELECT p.namespace, p.name, (SELECT role FROM members WHERE project_id = p.id AND user_id = ?) AS role"
            f" FROM projects p WHERE {mine} AND {where} ORDER BY p.namespace, p.name LIMIT ? OFFSET ?",
            (u["id"], u["id"], *params, PER_PAGE, page.offset),
        )
        .fetchall()
    )
    vis, viewer = visible_where(mark=":viewer")
    args = {"uid": u["id"], "n": ACTIVITY, **({"viewer": viewer[0]} if viewer else {})}
    events = db().execute(ACTIVITY_SQL.format(vis=vis), args).fetchall()
    return render_template("user.html", user=u, projects=rows, page=page, events=events)


# --- the project page, stars and forks --------------------------------------------------------


def project(ns: str, name: str):
    p = load_project(ns, name)
    c = db()
    counts = {
        "commits": c.execute("SELECT COUNT(*) FROM commits WHERE project_id = ?", (p["id"],)).fetchone()[0],
        "issues": c.execute("SELECT COUNT(*) FROM issues WHERE project_id = ? AND state = 'opened'", (p["id"],)).fetchone()[0],
        "mrs": c.execute("SELECT COUNT(*) FROM merge_requests WHERE project_id = ? AND state = 'opened'", (p["id"],)).fetchone()[0],
    }  # fmt: skip
    last = c.execute(
        "SELECT c.sha, c.message, c.created, u.username, u.name FROM commits c JOIN users u ON u.id = c.author_id"
        " WHERE c.project_id = ? ORDER BY c.created DESC, c.id DESC LIMIT 1",
        (p["id"],),
    ).fetchone()
    readme = c.execute(
        "SELECT content FROM files WHERE project_id = ? AND path = 'README.md'", (p["id"],)
    ).fetchone()
    user = current_user()
    starred = user is not None and c.execute(
        "SELECT 1 FROM stars WHERE user_id = ? AND project_id = ?", (user["id"], p["id"])
    ).fetchone() is not None  # fmt: skip
    return render_template("project.html", project=p, role=role_in(p["id"]), counts=counts, last=last,
                           readme=repo.markdown_blocks(readme["content"]) if readme else [], starred=starred)  # fmt: skip


@login_required
def star(ns: str, name: str):
    p = load_project(ns, name)
    c, uid = db(), current_user()["id"]
    have = c.execute(
        "SELECT 1 FROM stars WHERE user_id = ? AND project_id = ?", (uid, p["id"])
    ).fetchone()
    want = request.form.get("action", "star") == "star"
    if want and not have:
        c.execute("INSERT INTO stars VALUES (?, ?)", (uid, p["id"]))
        c.execute("UPDATE projects SET stars = stars + 1 WHERE id = ?", (p["id"],))
    elif not want and have:
        c.execute("DELETE FROM stars WHERE user_id = ? AND project_id = ?", (uid, p["id"]))
        c.execute("UPDATE projects SET stars = stars - 1 WHERE id = ?", (p["id"],))
    c.commit()
    return go("project", "starred" if want else "unstarred", ns=ns, name=name)


@login_required
def fork(ns: str, name: str):
    """Copy the project (files and history, not issues) into the user's namespace."""
    p = load_project(ns, name)
    c, user = db(), current_user()
    if c.execute(
        "SELECT 1 FROM projects WHERE namespace = ? AND name = ?", (user["username"], name)
    ).fetchone():
        return go("project", "fork_exists", ns=ns, name=name)
    new = c.execute(
        "INSERT INTO projects (namespace, name, description, visibility, language, topics, default_branch,"
        " stars, forks, created, updated, forked_from) VALUES (?, ?, ?, ?, ?, ?, ?, 0, 0, ?, ?, ?)",
        (user["username"], name, p["description"], p["visibility"], p["language"], p["topics"],
         p["default_branch"], NOW, NOW, p["id"]),
    ).lastrowid  # fmt: skip
    c.execute("INSERT INTO members VALUES (?, ?, 'Owner')", (new, user["id"]))
    for table, cols in (("files", "path, content"), ("commits", "sha, message, author_id, created, changed"),
                        ("labels", "name")):  # fmt: skip
        c.execute(f"INSERT INTO {table} (project_id, {cols}) SELECT ?, {cols} FROM {table} WHERE project_id = ?"
                  " ORDER BY id", (new, p["id"]))  # fmt: skip
    c.execute("UPDATE projects SET forks = forks + 1 WHERE id = ?", (p["id"],))
    c.commit()
    return go("project", "forked", ns=user["username"], name=name)


P = "/<ns>/<name>"
ROUTES = [  # (rule, endpoint, view, methods)
    ("/", "index", projects, ["GET"]),
    ("/projects", "projects", projects, ["GET"]),
    ("/users", "users", users, ["GET"]),
    ("/u/<username>", "profile", profile, ["GET"]),
    (P, "project", project, ["GET"]),
    (P + "/star", "star", star, ["POST"]),
    (P + "/fork", "fork", fork, ["POST"]),
    (P + "/-/tree/", "tree", repo.tree, ["GET"]),
    (P + "/-/tree/<path:path>", "tree", repo.tree, ["GET"]),
    (P + "/-/blob/<path:path>", "blob", repo.blob, ["GET"]),
    (P + "/-/commits", "commits", repo.commits, ["GET"]),
    (P + "/-/commit/<sha>", "commit", repo.commit, ["GET"]),
    (P + "/-/graphs", "contributors", repo.contributors, ["GET"]),
    (P + "/-/issues", "issues", issues.issue_list, ["GET"]),
    (P + "/-/issues/new", "new_issue", issues.new_issue, ["GET", "POST"]),
    (P + "/-/issues/<int:iid>", "issue", issues.issue, ["GET"]),
    (P + "/-/issues/<int:iid>/edit", "edit_issue", issues.edit_issue, ["GET", "POST"]),
    (P + "/-/issues/<int:iid>/state", "issue_state", issues.issue_state, ["POST"]),
    (P + "/-/issues/<int:iid>/notes", "issue_note", issues.issue_note, ["POST"]),
    (P + "/-/merge_requests", "mrs", issues.mr_list, ["GET"]),
    (P + "/-/merge_requests/<int:iid>", "mr", issues.mr, ["GET"]),
    (P + "/-/merge_requests/<int:iid>/state", "mr_state", issues.mr_state, ["POST"]),
    (P + "/-/merge_requests/<int:iid>/notes", "mr_note", issues.mr_note, ["POST"]),
    (P + "/-/project_members", "members", manage.member_list, ["GET"]),
    (P + "/-/project_members/add", "add_member", manage.add_member, ["POST"]),
    (P + "/-/project_members/<username>", "change_member", manage.change_member, ["POST"]),
    (P + "/-/settings", "settings", manage.settings, ["GET", "POST"]),
    (P + "/-/settings/rename", "rename", manage.rename, ["POST"]),
]


def forbidden(_e):
    return render_template("error.html", error_message="You are not allowed to do that."), 403


def create_app() -> Flask:
    app = create_site_app("code", "GitLab", Path(__file__).parent / "templates")
    app.context_processor(notice)
    app.jinja_env.globals.update(role_in=role_in, at_least=at_least)
    app.register_error_handler(403, forbidden)
    for rule, endpoint, view, methods in ROUTES:
        app.add_url_rule(rule, endpoint=endpoint, view_func=view, methods=methods)
    return app

"""Who may see and do what on the code site, and small request helpers.

Visibility (as in GitLab): public projects are seen by everyone, internal ones
by any signed-in user, private ones by their members only (others get 404).
Roles rank Guest < Reporter < Developer < Maintainer < Owner; managing issues
needs Reporter (or authorship), merging needs Developer, members and settings
need Maintainer (403 otherwise), and only an Owner may grant or change Owner.
"""

from __future__ import annotations

import sqlite3

from flask import abort, redirect, request, url_for

from webrl.sites.code.content import ROLE_LEVEL
from webrl.sites.common import current_user, db, get_or_404

MESSAGES = {
    "starred": "You starred this project.",
    "unstarred": "You unstarred this project.",
    "forked": "The project was forked.",
    "fork_exists": "You already have a project with this name.",
    "issue_created": "The issue was created.",
    "issue_updated": "The issue was updated.",
    "closed": "The issue was closed.",
    "reopened": "The issue was reopened.",
    "commented": "Your comment was added.",
    "empty": "A comment cannot be empty.",
    "mr_merged": "The merge request was merged.",
    "mr_closed": "The merge request was closed.",
    "member_added": "The member was added to the project.",
    "member_updated": "The member's role was changed.",
    "member_removed": "The member was removed from the project.",
    "no_user": "There is no user with that username.",
    "already_member": "That user is already a member of this project.",
    "owner_only": "Only an owner can grant or change the Owner role.",
    "last_owner": "A project needs at least one owner.",
    "saved": "The project settings were saved.",
    "renamed": "The project was renamed.",
    "bad_name": "Use 2-50 lowercase letters, digits, dots, dashes or underscores.",
    "name_taken": "A project with that name already exists in this namespace.",
}

PROJECT_SQL = """
SELECT p.*, p.namespace || '/' || p.name AS path,
       EXISTS (SELECT 1 FROM users u WHERE u.username = p.namespace) AS personal,
       (SELECT f.namespace || '/' || f.name FROM projects f WHERE f.id = p.forked_from) AS fork_source
FROM projects p
"""


def notice() -> dict:
    """Template variables on every page: the PRG notice."""
    return {"message": MESSAGES.get(request.args.get("msg", ""))}


def go(endpoint: str, msg: str = "", **values):
    """Redirect (PRG) to `endpoint`, with a notice code for the next page."""
    if msg:
        values["msg"] = msg
    return redirect(url_for(endpoint, **values))


def text_arg(name: str, limit: int = 100) -> str:
    return " ".join(request.args.get(name, "").split())[:limit]


def form_text(name: str, limit: int = 200) -> str:
    return " ".join(request.form.get(name, "").split())[:limit]


def like(term: str) -> str:
    """A LIKE pattern matching `term` literally anywhere (use with ESCAPE '\\')."""
    return "%" + term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def visible_where(alias: str = "p", mark: str = "?") -> tuple[str, tuple]:
    """SQL condition (and params) selecting the projects the current user may see;
    `mark` is the parameter placeholder (e.g. ":viewer" for named parameters)."""
    user = current_user()
    if user is None:
        return f"{alias}.visibility = 'public'", ()
    return (
        f"({alias}.visibility != 'private' OR EXISTS (SELECT 1 FROM members vm"
        f" WHERE vm.project_id = {alias}.id AND vm.user_id = {mark}))",
        (user["id"],),
    )


def role_in(project_id: int) -> str | None:
    user = current_user()
    if user is None:
        return None
    row = (
        db()
        .execute(
            "SELECT role FROM members WHERE project_id = ? AND user_id = ?",
            (project_id, user["id"]),
        )
        .fetchone()
    )
    return row["role"] if row else None


def at_least(role: str | None, needed: str) -> bool:
    return role is not None and ROLE_LEVEL[role] >= ROLE_LEVEL[needed]


def load_project(ns: str, name: str) -> sqlite3.Row:
    """The project at ns/name if the current user may see it, else 404."""
    where, params = visible_where()
    return get_or_404(
        f"{PROJECT_SQL} WHERE p.namespace = ? AND p.name = ? AND {where}", (ns, name, *params)
    )


def require(project: sqlite3.Row, needed: str) -> str:
    """The current user's role, or 403 if it is below `needed`."""
    role = role_in(project["id"])
    if not at_least(role, needed):
        abort(403)
    return role


def members(project_id: int) -> list[sqlite3.Row]:
    """A project's members, highest role first, then by name."""
    rows = (
        db()
        .execute(
            "SELECT u.id, u.username, u.name, m.role FROM members m JOIN users u ON u.id = m.user_id"
            " WHERE m.project_id = ?",
            (project_id,),
        )
        .fetchall()
    )
    return sorted(rows, key=lambda r: (-ROLE_LEVEL[r["role"]], r["name"]))


def user_by_name(username: str) -> sqlite3.Row | None:
    return db().execute("SELECT * FROM users WHERE username = ?", (username,)).fetchone()

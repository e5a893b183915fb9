"""Repository pages of a project: file tree, file view, commit history, one
commit, and the contributors list (commits per author)."""

from __future__ import annotations

from flask import abort, render_template

from webrl.sites.code.access import load_project
from webrl.sites.common import db, get_or_404, paginate

COMMITS_PER_PAGE = 10
MAX_FILE_CHARS = 1200


def markdown_blocks(text: str) -> list[tuple[str, str | list[str]]]:
    """A tiny Markdown reader: ("h", text), ("ul", [items]) and ("p", text) blocks.

    Templates render the blocks (autoescaped), so no HTML is ever built from text.
    """
    blocks: list[tuple[str, str | list[str]]] = []
    para: list[str] = []

    def end_para():
        if para:
            blocks.append(("p", " ".join(para)))
            para.clear()

    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            end_para()
        elif line.startswith("#"):
            end_para()
            blocks.append(("h", line.lstrip("#").strip()))
        elif line.startswith(("- ", "* ")):
            end_para()
            item = line[2:].replace("`", "")
            if blocks and blocks[-1][0] == "ul":
                blocks[-1][1].append(item)
            else:
                blocks.append(("ul", [item]))
        else:
            para.append(line.replace("`", ""))
    end_para()
    return blocks


def _crumbs(path: str) -> list[tuple[str, str]]:
    """(name, path so far) for each directory of `path`."""
    parts = [x for x in path.split("/") if x]
    return [(part, "/".join(parts[: i + 1])) for i, part in enumerate(parts)]


def tree(ns: str, name: str, path: str = ""):
    p = load_project(ns, name)
    path = path.strip("/")
    prefix = path + "/" if path else ""
    rows = (
        db()
        .execute(
            "SELECT path FROM files WHERE project_id = ? AND substr(path, 1, ?) = ? ORDER BY path",
            (p["id"], len(prefix), prefix),
        )
        .fetchall()
    )
    if path and not rows:
        abort(404)
    dirs, files = set(), []
    for r in rows:
        rest = r["path"][len(prefix) :]
        if "/" in rest:
            dirs.add(rest.split("/", 1)[0])
        else:
            files.append(rest)
    return render_template("tree.html", project=p, path=path, prefix=prefix, dirs=sorted(dirs),
                           files=files, crumbs=_crumbs(path))  # fmt: skip


def blob(ns: str, name: str, path: str):
    p = load_project(ns, name)
    f = get_or_404("SELECT * FROM files WHERE project_id = ? AND path = ?", (p["id"], path))
    content = f["content"]
    clipped = len(content) > MAX_FILE_CHARS
    return render_template("blob.html", project=p, path=path, content=content[:MAX_FILE_CHARS],
                           clipped=clipped, lines=content.count("\n"), crumbs=_crumbs(path))  # fmt: skip


def commits(ns: str, name: str):
    p = load_project(ns, name)
    total = (
        db().execute("SELECT COUNT(*) FROM commits WHERE project_id = ?", (p["id"],)).fetchone()[0]
    )
    page = paginate(total, COMMITS_PER_PAGE)
    rows = (
        db()
        .execute(
            "SELECT c.sha, c.message, c.created, u.username, u.name FROM commits c JOIN users u ON u.id = c.author_id"
            " WHERE c.project_id = ? ORDER BY c.created DESC, c.id DESC LIMIT ? OFFSET ?",
            (p["id"], COMMITS_PER_PAGE, page.offset),
        )
        .fetchall()
    )
    return render_template("commits.html", project=p, commits=rows, page=page, total=total)


def commit(ns: str, name: str, sha: str):
    p = load_project(ns, name)
    c = get_or_404(
        "SELECT c.*, u.username, u.name FROM commits c JOIN users u ON u.id = c.author_id"
        " WHERE c.project_id = ? AND c.sha = ?",
        (p["id"], sha),
    )
    parent = (
        db()
        .execute(
            "SELECT sha FROM commits WHERE project_id = ? AND (created < ? OR (created = ? AND id < ?))"
            " ORDER BY created DESC, id DESC LIMIT 1",
            (p["id"], c["created"], c["created"], c["id"]),
        )
        .fetchone()
    )
    existing = {
        r["path"] for r in db().execute("SELECT path FROM files WHERE project_id = ?", (p["id"],))
    }
    changed = [(f, f in existing) for f in c["changed"].split(",") if f]
    return render_template("commit.html", project=p, c=c, parent=parent, changed=changed)


def contributors(ns: str, name: str):
    p = load_project(ns, name)
    rows = (
        db()
        .execute(
            "SELECT u.username, u.name, COUNT(*) AS n FROM commits c JOIN users u ON u.id = c.author_id"
            " WHERE c.project_id = ? GROUP BY u.id ORDER BY n DESC, u.name",
            (p["id"],),
        )
        .fetchall()
    )
    return render_template("contributors.html", project=p, rows=rows)

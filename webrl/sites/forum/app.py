"""The forum site (Reddit-like, after WebArena's Postmill): forums, posts,
nested comments, votes, subscriptions, profiles and search, without JavaScript.

Every write is a POST that redirects (PRG) to a page showing the outcome, with
a short notice chosen by the `msg` query argument.
"""

from __future__ import annotations

import math
import sqlite3
from datetime import datetime, timedelta
from pathlib import Path

from flask import abort, redirect, render_template, request, url_for

from webrl.sites.common import (
    create_site_app,
    current_user,
    db,
    form_int,
    get_or_404,
    login_required,
    paginate,
)

TEMPLATES = Path(__file__).parent / "templates"
POSTS_PER_PAGE = 10
THREADS_PER_PAGE = 4  # top-level comments (with their replies) per post page
USERS_PER_PAGE = 20
FORUMS_PER_PAGE = 10
COMMENTS_PER_PAGE = 8  # on a user's comment list
SITE_NOW = datetime(2024, 1, 1)  # the site's clock for "hot" ranking
MAX_TITLE = 200
MAX_BODY = 5000

MESSAGES = {
    "voted": "Your vote was saved.",
    "subscribed": "You are now subscribed.",
    "unsubscribed": "You have unsubscribed.",
    "posted": "Your post was submitted.",
    "commented": "Your comment was posted.",
    "replied": "Your reply was posted.",
    "edited": "Your post was updated.",
    "empty": "A comment cannot be empty.",
}

POST_SORTS = {
    "hot": "hot(p.score, p.created) DESC, p.id DESC",
    "new": "p.created DESC, p.id DESC",
    "top": "p.score DESC, p.id DESC",
}
COMMENT_SORTS = ("top", "new", "old")

POST_SELECT = """
SELECT p.id, p.title, p.body, p.url, p.created, p.score, p.edited, p.user_id,
       f.name AS forum, u.username AS author,
       (SELECT COUNT(*) FROM comments c WHERE c.post_id = p.id) AS n_comments
FROM posts p JOIN forums f ON f.id = p.forum_id JOIN users u ON u.id = p.user_id
"""


def hot(score: int, created: str) -> float:
    """Reddit-like "hot": score damped by age in days (against the site clock)."""
    age = max(0.0, (SITE_NOW - datetime.fromisoformat(created)).total_seconds() / 86400)
    return (score + 1) / math.pow(age + 2, 0.8)


def conn() -> sqlite3.Connection:
    c = db()
    c.create_function("hot", 2, hot, deterministic=True)
    return c


def next_timestamp() -> str:
    """A deterministic "now" for new content: one minute after the newest item."""
    row = (
        conn()
        .execute(
            "SELECT MAX(t) FROM (SELECT MAX(created) AS t FROM posts UNION ALL SELECT MAX(created) FROM comments)"
        )
        .fetchone()
    )
    latest = datetime.fromisoformat(row[0]) if row[0] else SITE_NOW
    return (latest + timedelta(minutes=1)).strftime("%Y-%m-%d %H:%M:%S")


def sort_arg(choices, default: str) -> str:
    value = request.args.get("sort", default)
    return value if value in choices else default


def list_posts(where: str, params: tuple, sort: str, per_page: int = POSTS_PER_PAGE):
    """One page of posts matching `where`, in `sort` order, plus the `Page`."""
    c = conn()
    total = c.execute(
        f"SELECT COUNT(*) FROM posts p JOIN forums f ON f.id = p.forum_id WHERE {where}", params
    ).fetchone()[0]
    page = paginate(total, per_page)
    rows = c.execute(
        f"{POST_SELECT} WHERE {where} ORDER BY {POST_SORTS[sort]} LIMIT ? OFFSET ?",
        (*params, page.per_page, page.offset),
    ).fetchall()
    return rows, page


def load_post(forum: str, post_id: int) -> sqlite3.Row:
    return get_or_404(f"{POST_SELECT} WHERE p.id = ? AND f.name = ?", (post_id, forum))


def comment_tree(post_id: int, sort: str) -> list[dict]:
    """All comments of a post as nested dicts (`children`), siblings in `sort` order."""
    rows = (
        conn()
        .execute(
            "SELECT c.id, c.parent_id, c.body, c.created, c.score, u.username AS author "
            "FROM comments c JOIN users u ON u.id = c.user_id WHERE c.post_id = ?",
            (post_id,),
        )
        .fetchall()
    )
    nodes = {r["id"]: {**dict(r), "children": [], "parent_author": None} for r in rows}
    roots = []
    for node in nodes.values():
        parent = nodes.get(node["parent_id"])
        if parent is None:
            roots.append(node)
        else:
            parent["children"].append(node)
            node["parent_author"] = parent["author"]

    def key(n):
        return (-n["score"], n["created"], n["id"]) if sort == "top" else (n["created"], n["id"])

    def order(items):
        items.sort(key=key, reverse=sort == "new")
        for n in items:
            order(n["children"])

    order(roots)
    return roots


def create_app():
    app = create_site_app("forum", "Postmill", TEMPLATES)

    @app.context_processor
    def notice():
        return {"message": MESSAGES.get(request.args.get("msg", ""))}

    @app.errorhandler(403)
    def forbidden(_e):
        return render_template("error.html", error_message="You are not allowed to do that."), 403

    @app.route("/")
    def index():
        sort = sort_arg(POST_SORTS, "hot")
        posts, page = list_posts("1 = 1", (), sort)
        return render_template("index.html", posts=posts, page=page, sort=sort)

    @app.route("/forums")
    def forums():
        c = conn()
        page = paginate(c.execute("SELECT COUNT(*) FROM forums").fetchone()[0], FORUMS_PER_PAGE)
        rows = c.execute(
            "SELECT * FROM forums ORDER BY name LIMIT ? OFFSET ?", (page.per_page, page.offset)
        ).fetchall()
        return render_template("forums.html", forums=rows, page=page)

    @app.route("/f/<name>")
    def forum(name: str):
        f = get_or_404("SELECT * FROM forums WHERE name = ?", (name,))
        sort = sort_arg(POST_SORTS, "hot")
        posts, page = list_posts("p.forum_id = ?", (f["id"],), sort)
        user = current_user()
        subscribed = (
            user is not None
            and conn()
            .execute(
                "SELECT 1 FROM subscriptions WHERE user_id = ? AND forum_id = ?",
                (user["id"], f["id"]),
            )
            .fetchone()
            is not None
        )
        return render_template(
            "forum.html", forum=f, posts=posts, page=page, sort=sort, subscribed=subscribed
        )

    @app.route("/f/<name>/subscribe", methods=["POST"])
    @login_required
    def subscribe(name: str):
        f = get_or_404("SELECT * FROM forums WHERE name = ?", (name,))
        c, uid = conn(), current_user()["id"]
        exists = c.execute(
            "SELECT 1 FROM subscriptions WHERE user_id = ? AND forum_id = ?", (uid, f["id"])
        ).fetchone()
        want = request.form.get("action") == "subscribe"
        if want and not exists:
            c.execute("INSERT INTO subscriptions VALUES (?, ?)", (uid, f["id"]))
            c.execute("UPDATE forums SET subscribers = subscribers + 1 WHERE id = ?", (f["id"],))
        elif not want and exists:
            c.execute(
                "DELETE FROM subscriptions WHERE user_id = ? AND forum_id = ?", (uid, f["id"])
            )
            c.execute("UPDATE forums SET subscribers = subscribers - 1 WHERE id = ?", (f["id"],))
        c.commit()
        return redirect(url_for("forum", name=name, msg="subscribed" if want else "unsubscribed"))

    @app.route("/f/<forum>/<int:post_id>")
    def post(forum: str, post_id: int):
        p = load_post(forum, post_id)
        sort = sort_arg(COMMENT_SORTS, "top")
        roots = comment_tree(post_id, sort)
        page = paginate(len(roots), THREADS_PER_PAGE)
        user = current_user()
        vote = 0
        if user is not None:
            row = (
                conn()
                .execute(
                    "SELECT value FROM post_votes WHERE user_id = ? AND post_id = ?",
                    (user["id"], post_id),
                )
                .fetchone()
            )
            vote = row["value"] if row else 0
        return render_template(
            "post.html",
            post=p,
            threads=roots[page.offset : page.offset + page.per_page],
            page=page,
            sort=sort,
            vote=vote,
            is_author=user is not None and user["id"] == p["user_id"],
        )

    @app.route("/f/<forum>/<int:post_id>/vote", methods=["POST"])
    @login_required
    def vote(forum: str, post_id: int):
        p = load_post(forum, post_id)
        value = form_int("vote", 0)
        if value not in (-1, 0, 1):
            abort(400)
        c, uid = conn(), current_user()["id"]
        row = c.execute(
            "SELECT value FROM post_votes WHERE user_id = ? AND post_id = ?", (uid, post_id)
        ).fetchone()
        delta = value - (row["value"] if row else 0)
        c.execute("DELETE FROM post_votes WHERE user_id = ? AND post_id = ?", (uid, post_id))
        if value:
            c.execute("INSERT INTO post_votes VALUES (?, ?, ?)", (uid, post_id, value))
        c.execute("UPDATE posts SET score = score + ? WHERE id = ?", (delta, post_id))
        c.execute("UPDATE users SET karma = karma + ? WHERE id = ?", (delta, p["user_id"]))
        c.commit()
        return redirect(url_for("post", forum=forum, post_id=post_id, msg="voted"))

    @app.route("/f/<forum>/<int:post_id>/comment", methods=["POST"])
    @login_required
    def add_comment(forum: str, post_id: int):
        load_post(forum, post_id)
        parent = form_int("parent")
        if parent is not None:
            get_or_404("SELECT id FROM comments WHERE id = ? AND post_id = ?", (parent, post_id))
        body = request.form.get("body", "").strip()[:MAX_BODY]
        if not body:
            if parent is not None:
                return redirect(
                    url_for("comment", forum=forum, post_id=post_id, comment_id=parent, msg="empty")
                )
            return redirect(url_for("post", forum=forum, post_id=post_id, msg="empty"))
        c = conn()
        c.execute(
            "INSERT INTO comments (post_id, parent_id, user_id, body, created, score) VALUES (?, ?, ?, ?, ?, 1)",
            (post_id, parent, current_user()["id"], body, next_timestamp()),
        )
        c.execute("UPDATE users SET karma = karma + 1 WHERE id = ?", (current_user()["id"],))
        c.commit()
        if parent is not None:
            return redirect(
                url_for("comment", forum=forum, post_id=post_id, comment_id=parent, msg="replied")
            )
        return redirect(url_for("post", forum=forum, post_id=post_id, sort="new", msg="commented"))

    @app.route("/f/<forum>/<int:post_id>/comment/<int:comment_id>")
    def comment(forum: str, post_id: int, comment_id: int):
        p = load_post(forum, post_id)
        get_or_404("SELECT id FROM comments WHERE id = ? AND post_id = ?", (comment_id, post_id))
        found = _find(comment_tree(post_id, "old"), comment_id)
        return render_template("comment.html", post=p, thread=found)

    @app.route("/f/<forum>/<int:post_id>/edit", methods=["GET", "POST"])
    @login_required
    def edit_post(forum: str, post_id: int):
        p = load_post(forum, post_id)
        if p["user_id"] != current_user()["id"]:
            abort(403)
        error = None
        if request.method == "POST":
            title = request.form.get("title", "").strip()[:MAX_TITLE]
            body = request.form.get("body", "").strip()[:MAX_BODY]
            if title:
                c = conn()
                c.execute(
                    "UPDATE posts SET title = ?, body = ?, edited = 1 WHERE id = ?",
                    (title, body, post_id),
                )
                c.commit()
                return redirect(url_for("post", forum=forum, post_id=post_id, msg="edited"))
            error = "The title cannot be empty."
        return render_template("edit.html", post=p, error=error)

    @app.route("/submit", methods=["GET", "POST"])
    @login_required
    def submit():
        c = conn()
        names = [r["name"] for r in c.execute("SELECT name FROM forums ORDER BY name")]
        chosen = request.values.get("forum", "")
        title = request.form.get("title", "").strip()[:MAX_TITLE]
        body = request.form.get("body", "").strip()[:MAX_BODY]
        error = None
        if request.method == "POST":
            if chosen not in names:
                error = "Choose a forum."
            elif not title:
                error = "The title cannot be empty."
            else:
                fid = c.execute("SELECT id FROM forums WHERE name = ?", (chosen,)).fetchone()["id"]
                uid = current_user()["id"]
                cur = c.execute(
                    "INSERT INTO posts (forum_id, user_id, title, body, created, score) VALUES (?, ?, ?, ?, ?, 1)",
                    (fid, uid, title, body, next_timestamp()),
                )
                c.execute(
                    "INSERT OR REPLACE INTO post_votes VALUES (?, ?, 1)", (uid, cur.lastrowid)
                )
                c.execute("UPDATE users SET karma = karma + 1 WHERE id = ?", (uid,))
                c.commit()
                return redirect(url_for("post", forum=chosen, post_id=cur.lastrowid, msg="posted"))
        return render_template(
            "submit.html", forums=names, chosen=chosen, title=title, body=body, error=error
        )

    @app.route("/user/<name>")
    def user(name: str):
        u = _load_user(name)
        posts, page = list_posts("p.user_id = ?", (u["id"],), "new")
        return render_template("user.html", user=u, posts=posts, page=page, **_user_counts(u["id"]))

    @app.route("/user/<name>/comments")
    def user_comments(name: str):
        u = _load_user(name)
        counts = _user_counts(u["id"])
        page = paginate(counts["n_comments"], COMMENTS_PER_PAGE)
        rows = (
            conn()
            .execute(
                "SELECT c.id, c.body, c.created, c.score, c.post_id, p.title, f.name AS forum, "
                "pu.username AS parent_author FROM comments c JOIN posts p ON p.id = c.post_id "
                "JOIN forums f ON f.id = p.forum_id LEFT JOIN comments pc ON pc.id = c.parent_id "
                "LEFT JOIN users pu ON pu.id = pc.user_id WHERE c.user_id = ? "
                "ORDER BY c.created DESC, c.id DESC LIMIT ? OFFSET ?",
                (u["id"], page.per_page, page.offset),
            )
            .fetchall()
        )
        return render_template("user_comments.html", user=u, comments=rows, page=page, **counts)

    @app.route("/users")
    def users():
        c = conn()
        page = paginate(c.execute("SELECT COUNT(*) FROM users").fetchone()[0], USERS_PER_PAGE)
        rows = c.execute(
            "SELECT username, joined FROM users ORDER BY username COLLATE NOCASE LIMIT ? OFFSET ?",
            (page.per_page, page.offset),
        ).fetchall()
        return render_template("users.html", users=rows, page=page)

    @app.route("/search")
    def search():
        q = request.args.get("q", "").strip()[:MAX_TITLE]
        posts, page = [], None
        if q:
            like = "%" + q.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
            posts, page = list_posts(
                "(p.title LIKE ? ESCAPE '\\' OR p.body LIKE ? ESCAPE '\\')", (like, like), "top"
            )
        return render_template("search.html", q=q, posts=posts, page=page)

    return app


def _find(nodes: list[dict], comment_id: int) -> dict | None:
    for n in nodes:
        if n["id"] == comment_id:
            return n
        found = _find(n["children"], comment_id)
        if found is not None:
            return found
    return None


def _load_user(name: str) -> sqlite3.Row:
    return get_or_404("SELECT * FROM users WHERE username = ?", (name,))


def _user_counts(user_id: int) -> dict[str, int]:
    c = conn()
    return {
        "n_posts": c.execute("SELECT COUNT(*) FROM posts WHERE user_id = ?", (user_id,)).fetchone()[
            0
        ],
        "n_comments": c.execute(
            "SELECT COUNT(*) FROM comments WHERE user_id = ?", (user_id,)
        ).fetchone()[0],
    }

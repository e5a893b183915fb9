"""Shared pieces of the forum task families: seed-data queries, oracle building
blocks (generators of actions that read the current `PageView`), content the
agent is asked to write, the `ForumFamily` base class and shared state checks.
"""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Iterator
from typing import TYPE_CHECKING, ClassVar
from urllib.parse import quote_plus

from webrl.sites.forum.app import FORUMS_PER_PAGE, USERS_PER_PAGE
from webrl.sites.forum.data import DEFAULT_USER, FORUMS, capitalize
from webrl.tasks.family import InfeasibleSlots, SeedDB, TaskFamily, page_has
from webrl.tasks.schema import Task

if TYPE_CHECKING:
    from webrl.env.page_view import PageView

ME = DEFAULT_USER[0]

# Content the agent is asked to write: disjoint from the seed's sentences, so a
# state check can only pass through the agent's own post or comment.
NEW_TITLE_TEMPLATES = [
    "Weekly discussion thread: {x}", "Anyone else obsessed with {x}?", "My honest opinion on {x}",
    "Looking for advice about {x}", "A quick PSA about {x}", "Three things I learned from {x}",
    "Recommend me something like {x}", "Am I the only one who dislikes {x}?",
]  # fmt: skip
NEW_BODIES = [
    "Curious to hear how others approach this.", "I put together a few notes and would like feedback.",
    "Please share your favourite resources below.", "Let me know if I missed anything obvious.",
    "Posting this after a long week of research.", "Go easy on me, this is my first post here.",
    "Thanks in advance for any pointers.", "Happy to compare notes with anyone nearby.",
]  # fmt: skip
NEW_COMMENTS = [
    "Thanks for posting this, very helpful!", "I respectfully disagree with the main point.",
    "Bookmarking this for the weekend.", "Has anyone tried this on a smaller budget?",
    "This thread convinced me to give it a go.", "Great write-up, looking forward to the follow-up.",
    "Could you add a few photos?", "I learned something new today, thank you.",
    "Where did you find that information?", "This is exactly what I needed to read today.",
    "Totally agree with you.", "Good point, I had not thought of that.",
    "Could you explain what you mean?", "I had the opposite experience, to be honest.",
    "Do you have a link for that?", "Seconding this, well said.",
]  # fmt: skip
NEW_EDITS = [
    "Update: I ended up going with the second option and it works great.",
    "Edit: solved, thanks everyone for the helpful replies!",
    "Update: a month later and I am still happy with the result.",
    "Edit: several people asked, so here are more details in the comments.",
    "Update: I changed my mind after reading your replies.",
    "Edit: fixed a typo in the title and added a summary.",
]
MISSING_FORUMS = [
    "astronomy", "cats", "tea", "writing", "television", "boardgames", "woodworking", "running",
    "coffee", "anime", "chess", "knitting", "poetry", "cycling", "linux", "birding", "climbing",
    "fishing", "sewing", "podcasts", "football", "investing", "parenting", "politics",
]  # fmt: skip

POST_SQL = """
SELECT p.id, p.title, p.body, p.url, p.created, p.score, p.user_id, f.name AS forum,
       u.username AS author, u.joined AS author_joined,
       (SELECT COUNT(*) FROM comments c WHERE c.post_id = p.id) AS n_comments,
       (SELECT COUNT(*) FROM comments c WHERE c.post_id = p.id AND c.parent_id IS NULL) AS n_top
FROM posts p JOIN forums f ON f.id = p.forum_id JOIN users u ON u.id = p.user_id
"""


# --- seed-data queries ----------------------------------------------------------------


def posts(db: SeedDB, where: str = "1 = 1", params: tuple = ()) -> list[sqlite3.Row]:
    return db["forum"].execute(f"{POST_SQL} WHERE {where} ORDER BY p.id", params).fetchall()


def post_by_title(db: SeedDB, title: str) -> sqlite3.Row:
    rows = posts(db, "p.title = ?", (title,))
    if not rows:
        raise InfeasibleSlots(f"no forum post titled {title!r}")
    return rows[0]


def post_url(p: sqlite3.Row) -> str:
    return f"__FORUM__/f/{p['forum']}/{p['id']}"


def forums(db: SeedDB) -> list[sqlite3.Row]:
    return db["forum"].execute("SELECT * FROM forums ORDER BY name").fetchall()


def forum_row(db: SeedDB, name: str) -> sqlite3.Row:
    row = db["forum"].execute("SELECT * FROM forums WHERE name = ?", (name,)).fetchone()
    if row is None:
        raise InfeasibleSlots(f"no forum f/{name}")
    return row


def user_row(db: SeedDB, name: str) -> sqlite3.Row:
    row = (
        db["forum"]
        .execute(
            "SELECT u.*, (SELECT COUNT(*) FROM posts WHERE user_id = u.id) AS n_posts,"
            " (SELECT COUNT(*) FROM comments WHERE user_id = u.id) AS n_comments"
            " FROM users u WHERE username = ?",
            (name,),
        )
        .fetchone()
    )
    if row is None:
        raise InfeasibleSlots(f"no forum user {name!r}")
    return row


def my_id(db: SeedDB) -> int:
    return db["forum"].execute("SELECT id FROM users WHERE username = ?", (ME,)).fetchone()["id"]


def subscribed(db: SeedDB) -> set[str]:
    rows = db["forum"].execute(
        "SELECT f.name FROM subscriptions s JOIN forums f ON f.id = s.forum_id WHERE s.user_id = ?",
        (my_id(db),),
    )
    return {r["name"] for r in rows}


def my_vote(db: SeedDB, post_id: int) -> int:
    row = (
        db["forum"]
        .execute(
            "SELECT value FROM post_votes WHERE user_id = ? AND post_id = ?", (my_id(db), post_id)
        )
        .fetchone()
    )
    return row["value"] if row else 0


def forum_posts(db: SeedDB, forum: str, order: str) -> list[sqlite3.Row]:
    """A forum's posts in the site's "new" or "top" order."""
    key = {"new": "p.created DESC, p.id DESC", "top": "p.score DESC, p.id DESC"}[order]
    return db["forum"].execute(f"{POST_SQL} WHERE f.name = ? ORDER BY {key}", (forum,)).fetchall()


def comments_of(db: SeedDB, post_id: int) -> list[sqlite3.Row]:
    return (
        db["forum"]
        .execute(
            "SELECT c.*, u.username AS author FROM comments c JOIN users u ON u.id = c.user_id"
            " WHERE c.post_id = ? ORDER BY c.created, c.id",
            (post_id,),
        )
        .fetchall()
    )


def top_comment(db: SeedDB, post_id: int) -> tuple[sqlite3.Row, sqlite3.Row] | None:
    """(most upvoted comment, runner-up) when the winner is unique and by another author."""
    rows = sorted(comments_of(db, post_id), key=lambda c: -c["score"])
    if (
        len(rows) < 3
        or rows[0]["score"] == rows[1]["score"]
        or rows[0]["author"] == rows[1]["author"]
    ):
        return None
    return rows[0], rows[1]


def forum_hops(db: SeedDB, forum: str) -> int:
    names = [f["name"] for f in forums(db)]
    return 2 + names.index(forum) // FORUMS_PER_PAGE if forum in names else 2


def user_hops(db: SeedDB, user: str) -> int:
    names = [
        r[0]
        for r in db["forum"].execute("SELECT username FROM users ORDER BY username COLLATE NOCASE")
    ]
    return 2 + names.index(user) // USERS_PER_PAGE if user in names else 2


def new_titles(db: SeedDB) -> list[tuple[str, str]]:
    """(forum, title) candidates for posts the agent creates; none exists in the seed."""
    taken = {p["title"].lower() for p in posts(db)}
    out = []
    for name, _t, _d, subjects, _templates in FORUMS:
        for s in subjects:
            for t in NEW_TITLE_TEMPLATES:
                title = capitalize(t.format(x=s))
                if title.lower() not in taken:
                    out.append((name, title))
    return out


def two_sentences(rng: random.Random, pool: list[str]) -> str:
    a, b = rng.sample(pool, 2)
    return f"{a} {b}"


# --- oracle building blocks (generators of actions) ----------------------------------------


def expect(ok: bool, what: str) -> None:
    if not ok:
        raise LookupError(f"oracle expectation failed: {what}")


def open_post(page: PageView, title: str) -> Iterator[str]:
    """Search for the post by its title and open it."""
    yield from page.search(title, name="q")
    yield from page.click(title, tag="a", exact=True)


def open_forum(page: PageView, forum: str) -> Iterator[str]:
    """Open f/<forum>: directly if linked here, else through the paginated forum list."""
    label = f"f/{forum}"
    if not page.has(label, tag="a", exact=True):
        yield from page.click("Forums", tag="a", exact=True)
        while not page.has(label, tag="a", exact=True):
            yield from page.click("Next page", tag="a", exact=True)
    yield from page.click(label, tag="a", exact=True)


def open_user(page: PageView, user: str) -> Iterator[str]:
    """Open a user's profile: directly if linked here, else through the user directory."""
    if not page.has(user, tag="a", exact=True):
        yield from page.click("Users", tag="a", exact=True)
        while not page.has(user, tag="a", exact=True):
            yield from page.click("Next page", tag="a", exact=True)
    yield from page.click(user, tag="a", exact=True)


def scan_list(page: PageView, nav_link: str, label: str) -> Iterator[str]:
    """Walk every page of a paginated directory looking for a link `label`."""
    yield from page.click(nav_link, tag="a", exact=True)
    while not page.has(label, tag="a", exact=True) and page.has("Next page", tag="a", exact=True):
        yield from page.click("Next page", tag="a", exact=True)


def click_href(page: PageView, href: str) -> Iterator[str]:
    """Click the link whose href ends with `href` (substring filters would match /12 in /123)."""
    cands = [e.attrs.get("href", "") for e in page.elements if href in e.attrs.get("href", "")]
    exact = [i for i, h in enumerate(cands) if h.endswith(href)]
    expect(bool(exact), f"a link to {href} on {page.url}")
    yield from page.click(href=href, nth=exact[0])


def open_comment(page: PageView, comment_path: str) -> Iterator[str]:
    """On a post page, page through the comments to the comment's Reply link and follow it."""
    while not any(e.attrs.get("href", "").endswith(comment_path) for e in page.elements):
        yield from page.click("Next page", tag="a", exact=True)
    yield from click_href(page, comment_path)


def submit_post(page: PageView, title: str, body: str) -> Iterator[str]:
    yield from page.type(title, name="title")
    yield from page.type(body, name="body")
    yield from page.click("Submit", tag="button", exact=True)


# --- the family base class and shared checks ----------------------------------------------


class ForumFamily(TaskFamily):
    """A forum task family; `held_out` names the slot whose values never cross the split."""

    sites: ClassVar[tuple[str, ...]] = ("forum",)
    start_url: ClassVar[str] = "__FORUM__/"
    require_login: ClassVar[bool] = False
    held_out: ClassVar[tuple[str, ...]] = ("title",)

    def answer(self, task: Task) -> str:
        return task.extra["answer"]


def create_post_checks(forum: str, title: str, body: str) -> list[dict]:
    """The new post is listed in f/<forum> and found by searching its exact text."""
    return [
        page_has(f"__FORUM__/f/{forum}?sort=new", [title], locator="ul.posts"),
        page_has(f"__FORUM__/search?q={quote_plus(body)}", [title], locator="ul.posts"),
    ]


def reply_check(p: sqlite3.Row, comment_id: int, reply: str) -> dict:
    """The reply is a direct reply to the comment (not deeper in its subtree)."""
    url = f"{post_url(p)}/comment/{comment_id}"
    direct = f"#comment-{comment_id} > ul.replies > li.comment > p.comment-line > .comment-body"
    return page_has(url, [reply], locator=direct)

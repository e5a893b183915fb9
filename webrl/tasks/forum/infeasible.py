"""Forum task families. Infeasible tasks: the thing asked about does not exist; the right answer is "N/A"."""

from __future__ import annotations

from webrl.sites.forum.data import FORUMS, NAME_A, NAME_B, capitalize
from webrl.tasks.family import InfeasibleSlots, answer_fuzzy, pick
from webrl.tasks.forum.base import (
    FORUMS_PER_PAGE,
    ME,
    MISSING_FORUMS,
    USERS_PER_PAGE,
    ForumFamily,
    expect,
    forums,
    posts,
    scan_list,
)


class MissingForumSubscribers(ForumFamily):
    name = "forum.missing_forum_subscribers"
    template = "How many subscribers does f/{forum} have?"
    template_id = 260
    kind = "infeasible"
    held_out = ("forum",)

    def sample(self, db, rng, split):
        existing = {f["name"] for f in forums(db)}
        return {
            "forum": pick(
                rng, [n for n in MISSING_FORUMS if n not in existing], split, key=lambda n: n
            )
        }

    def build(self, db, slots):
        if db["forum"].execute("SELECT 1 FROM forums WHERE name = ?", (slots["forum"],)).fetchone():
            raise InfeasibleSlots(f"f/{slots['forum']} exists")
        return {"eval": answer_fuzzy("N/A"), "difficulty": 2 + len(forums(db)) // FORUMS_PER_PAGE,
                "extra": {"answer": "N/A"}}  # fmt: skip

    def oracle(self, task, page):
        forum = task.instantiation_dict["forum"]
        yield from scan_list(page, "Forums", f"f/{forum}")
        expect(not page.has(f"f/{forum}", tag="a", exact=True), "forum is absent")
        yield page.exit("N/A")

    def wrong_ending(self, task, page):
        yield from page.click("Forums", tag="a", exact=True)
        yield page.exit("0")


class MissingUserKarma(ForumFamily):
    name = "forum.missing_user_karma"
    template = "What is the karma of the forum user {user}?"
    template_id = 261
    kind = "infeasible"
    held_out = ("user",)

    def sample(self, db, rng, split):
        existing = {r[0].lower() for r in db["forum"].execute("SELECT username FROM users")}
        names = [f"{a}_{b}" for a in NAME_A for b in NAME_B if f"{a}_{b}" not in existing]
        return {"user": pick(rng, names, split, key=lambda n: n)}

    def build(self, db, slots):
        if (
            db["forum"]
            .execute("SELECT 1 FROM users WHERE username = ?", (slots["user"],))
            .fetchone()
        ):
            raise InfeasibleSlots(f"user {slots['user']} exists")
        n = db["forum"].execute("SELECT COUNT(*) FROM users").fetchone()[0]
        return {"eval": answer_fuzzy("N/A"), "difficulty": 2 + n // USERS_PER_PAGE,
                "extra": {"answer": "N/A"}}  # fmt: skip

    def oracle(self, task, page):
        user = task.instantiation_dict["user"]
        yield from scan_list(page, "Users", user)
        expect(not page.has(user, tag="a", exact=True), "user is absent")
        yield page.exit("N/A")

    def wrong_ending(self, task, page):
        yield from page.click("Users", tag="a", exact=True)
        yield page.exit("0")


class MissingPostAuthor(ForumFamily):
    name = "forum.missing_post_author"
    template = 'Who posted "{title}" on the forum?'
    template_id = 262
    kind = "infeasible"

    def sample(self, db, rng, split):
        taken = {p["title"].lower() for p in posts(db)}
        titles = [capitalize(t.format(x=s)) for _n, _t, _d, subjects, templates in FORUMS
                  for s in subjects for t in templates]  # fmt: skip
        ok = [t for t in titles if t.lower() not in taken]
        return {"title": pick(rng, ok, split, key=lambda t: t)}

    def build(self, db, slots):
        like = f"%{slots['title']}%"
        if (
            db["forum"]
            .execute("SELECT 1 FROM posts WHERE title LIKE ? OR body LIKE ?", (like, like))
            .fetchone()
        ):
            raise InfeasibleSlots(f"a post matches {slots['title']!r}")
        return {"eval": answer_fuzzy("N/A"), "difficulty": 2, "extra": {"answer": "N/A"}}

    def oracle(self, task, page):
        yield from page.search(task.instantiation_dict["title"], name="q")
        expect("0 results" in page.text, "search finds nothing")
        yield page.exit("N/A")

    def wrong_ending(self, task, page):
        yield from page.search(task.instantiation_dict["title"], name="q")
        yield page.exit(ME)

"""Forum task families. Navigation: the episode must end on the right page (url_match)."""

from __future__ import annotations

from webrl.tasks.family import pick, url_is
from webrl.tasks.forum.base import (
    ForumFamily,
    forum_hops,
    forum_row,
    forums,
    open_forum,
    open_post,
    open_user,
    post_by_title,
    posts,
    user_hops,
    user_row,
)


class ForumSortNav(ForumFamily):
    name = "forum.forum_sorted"
    template = "Open f/{forum} with its posts sorted by {sort}."
    template_id = 210
    kind = "nav"
    held_out = ("forum",)

    def sample(self, db, rng, split):
        forum = pick(rng, forums(db), split, key=lambda f: f["name"])["name"]
        return {"forum": forum, "sort": rng.choice(["new", "top"])}

    def build(self, db, slots):
        forum_row(db, slots["forum"])
        return {"eval": url_is(f"__FORUM__/f/{slots['forum']}?sort={slots['sort']}"),
                "difficulty": forum_hops(db, slots["forum"]) + 1}  # fmt: skip

    def oracle(self, task, page):
        yield from open_forum(page, task.instantiation_dict["forum"])
        yield from page.click(task.instantiation_dict["sort"].capitalize(), tag="a", exact=True)
        yield page.exit("Done")

    def wrong_ending(self, task, page):
        other = "Top" if task.instantiation_dict["sort"] == "new" else "New"
        yield from open_forum(page, task.instantiation_dict["forum"])
        yield from page.click(other, tag="a", exact=True)
        yield page.exit("Done")


class OpenForum(ForumFamily):
    name = "forum.open_forum"
    template = "Go to f/{forum}."
    template_id = 213
    kind = "nav"
    start_url = "__FORUM__/forums"
    held_out = ("forum",)

    def sample(self, db, rng, split):
        return {"forum": pick(rng, forums(db), split, key=lambda f: f["name"])["name"]}

    def build(self, db, slots):
        forum = forum_row(db, slots["forum"])["name"]
        return {"eval": url_is(f"__FORUM__/f/{forum}"), "difficulty": forum_hops(db, forum) - 1}

    def oracle(self, task, page):
        forum = task.instantiation_dict["forum"]
        while not page.has(f"f/{forum}", tag="a", exact=True):
            yield from page.click("Next page", tag="a", exact=True)
        yield from page.click(f"f/{forum}", tag="a", exact=True)
        yield page.exit("Done")

    def wrong_ending(self, task, page):
        yield from page.click("Postmill", tag="a", exact=True)  # the front page instead
        yield page.exit("Done")


class AuthorProfileNav(ForumFamily):
    name = "forum.author_profile"
    template = 'Open the profile page of the user who posted "{title}".'
    template_id = 211
    kind = "nav"

    def sample(self, db, rng, split):
        return {"title": pick(rng, posts(db), split, key=lambda p: p["title"])["title"]}

    def build(self, db, slots):
        p = post_by_title(db, slots["title"])
        return {"eval": url_is(f"__FORUM__/user/{p['author']}"), "difficulty": 4,
                "extra": {"author": p["author"]}}  # fmt: skip

    def oracle(self, task, page):
        yield from open_post(page, task.instantiation_dict["title"])
        yield from page.click(task.extra["author"], tag="a", exact=True)
        yield page.exit("Done")

    def wrong_ending(self, task, page):
        yield from open_post(page, task.instantiation_dict["title"])
        yield page.exit("Done")


class UserCommentsNav(ForumFamily):
    name = "forum.user_comments"
    template = "Show me all the comments written by {user}."
    template_id = 212
    kind = "nav"
    held_out = ("user",)

    def sample(self, db, rng, split):
        rows = (
            db["forum"]
            .execute(
                "SELECT username FROM users u WHERE EXISTS (SELECT 1 FROM comments WHERE user_id = u.id)"
                " ORDER BY id"
            )
            .fetchall()
        )
        return {"user": pick(rng, rows, split, key=lambda u: u["username"])["username"]}

    def build(self, db, slots):
        u = user_row(db, slots["user"])
        return {"eval": url_is(f"__FORUM__/user/{u['username']}/comments"),
                "difficulty": user_hops(db, u["username"]) + 1}  # fmt: skip

    def oracle(self, task, page):
        user = task.instantiation_dict["user"]
        yield from open_user(page, user)
        yield from page.click(f"Comments by {user}", tag="a", exact=True)
        yield page.exit("Done")

    def wrong_ending(self, task, page):
        yield from open_user(page, task.instantiation_dict["user"])
        yield page.exit("Done")

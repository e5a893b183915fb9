"""Forum task families. Information retrieval: the answer goes in exit(message=...)."""

from __future__ import annotations

from webrl.tasks.family import InfeasibleSlots, answer_exact, pick
from webrl.tasks.forum.base import (
    ME,
    ForumFamily,
    comments_of,
    expect,
    forum_hops,
    forum_posts,
    forums,
    open_forum,
    open_post,
    open_user,
    post_by_title,
    posts,
    scan_list,
    top_comment,
    user_hops,
    user_row,
)


class PostAuthor(ForumFamily):
    name = "forum.post_author"
    template = 'Who posted "{title}" on the forum?'
    template_id = 200
    kind = "info"

    def sample(self, db, rng, split):
        return {"title": pick(rng, posts(db), split, key=lambda p: p["title"])["title"]}

    def build(self, db, slots):
        p = post_by_title(db, slots["title"])
        others = [c["author"] for c in comments_of(db, p["id"]) if c["author"] != p["author"]]
        wrong = others[0] if others else ("marvin" if p["author"] != ME else "rusty_otter")
        return {"eval": answer_exact(p["author"]), "difficulty": 3,
                "extra": {"answer": p["author"], "wrong": wrong}}  # fmt: skip

    def oracle(self, task, page):
        yield from open_post(page, task.instantiation_dict["title"])
        page.find(task.extra["answer"], tag="a", exact=True)
        yield page.exit(task.extra["answer"])

    def wrong_ending(self, task, page):
        yield from open_post(page, task.instantiation_dict["title"])
        yield page.exit(task.extra["wrong"])


class TopPostTitle(ForumFamily):
    name = "forum.top_post_title"
    template = "What is the title of the top post of all time in f/{forum}?"
    template_id = 201
    kind = "info"
    held_out = ("forum",)

    def sample(self, db, rng, split):
        ok = [
            f
            for f in forums(db)
            if len({p["score"] for p in forum_posts(db, f["name"], "top")[:2]}) == 2
        ]
        return {"forum": pick(rng, ok, split, key=lambda f: f["name"])["name"]}

    def build(self, db, slots):
        top = forum_posts(db, slots["forum"], "top")
        newest = forum_posts(db, slots["forum"], "new")
        wrong = newest[0] if newest[0]["id"] != top[0]["id"] else newest[1]
        return {"eval": answer_exact(top[0]["title"]), "difficulty": forum_hops(db, slots["forum"]) + 2,
                "extra": {"answer": top[0]["title"], "wrong": wrong["title"]}}  # fmt: skip

    def oracle(self, task, page):
        yield from open_forum(page, task.instantiation_dict["forum"])
        yield from page.click("Top", tag="a", exact=True)
        page.find(self.answer(task), tag="a", exact=True)
        yield page.exit(self.answer(task))

    def wrong_ending(self, task, page):
        yield from open_forum(page, task.instantiation_dict["forum"])
        yield from page.click("New", tag="a", exact=True)
        yield page.exit(task.extra["wrong"])


class CommentCount(ForumFamily):
    name = "forum.comment_count"
    template = 'How many comments does the post "{title}" have, replies included?'
    template_id = 202
    kind = "info"

    def sample(self, db, rng, split):
        rows = posts(db, "1 = 1")
        ok = [p for p in rows if p["n_comments"] > p["n_top"] > 0]
        return {"title": pick(rng, ok, split, key=lambda p: p["title"])["title"]}

    def build(self, db, slots):
        p = post_by_title(db, slots["title"])
        return {"eval": answer_exact(str(p["n_comments"])), "difficulty": 3,
                "extra": {"answer": str(p["n_comments"]), "wrong": str(p["n_top"])}}  # fmt: skip

    def oracle(self, task, page):
        yield from open_post(page, task.instantiation_dict["title"])
        expect(f"{self.answer(task)} comments" in page.text, "comment count shown")
        yield page.exit(self.answer(task))

    def wrong_ending(self, task, page):
        yield from open_post(page, task.instantiation_dict["title"])
        yield page.exit(task.extra["wrong"])


class UserKarma(ForumFamily):
    name = "forum.user_karma"
    template = "What is the karma of the forum user {user}?"
    template_id = 203
    kind = "info"
    held_out = ("user",)

    def sample(self, db, rng, split):
        rows = db["forum"].execute("SELECT username FROM users ORDER BY id").fetchall()
        return {"user": pick(rng, rows, split, key=lambda u: u["username"])["username"]}

    def build(self, db, slots):
        u = user_row(db, slots["user"])
        wrong = u["n_comments"] if u["n_comments"] != u["karma"] else u["karma"] + 1
        return {"eval": answer_exact(str(u["karma"])), "difficulty": user_hops(db, u["username"]) + 1,
                "extra": {"answer": str(u["karma"]), "wrong": str(wrong)}}  # fmt: skip

    def oracle(self, task, page):
        yield from open_user(page, task.instantiation_dict["user"])
        expect(f"Karma: {self.answer(task)}" in page.text, "karma shown on the profile")
        yield page.exit(self.answer(task))

    def wrong_ending(self, task, page):
        yield from open_user(page, task.instantiation_dict["user"])
        yield page.exit(task.extra["wrong"])


class AuthorJoinDate(ForumFamily):
    name = "forum.author_join_date"
    template = 'When did the author of the post "{title}" join the forum? Answer as YYYY-MM-DD.'
    template_id = 204
    kind = "info"

    def sample(self, db, rng, split):
        return {"title": pick(rng, posts(db), split, key=lambda p: p["title"])["title"]}

    def build(self, db, slots):
        p = post_by_title(db, slots["title"])
        return {"eval": answer_exact(p["author_joined"]), "difficulty": 4,
                "extra": {"answer": p["author_joined"], "author": p["author"],
                          "wrong": p["created"][:10]}}  # fmt: skip

    def oracle(self, task, page):
        yield from open_post(page, task.instantiation_dict["title"])
        yield from page.click(task.extra["author"], tag="a", exact=True)
        expect(f"Joined {self.answer(task)}" in page.text, "join date on the profile")
        yield page.exit(self.answer(task))

    def wrong_ending(self, task, page):
        yield from open_post(page, task.instantiation_dict["title"])
        yield page.exit(task.extra["wrong"])


class TopCommentAuthor(ForumFamily):
    name = "forum.top_comment_author"
    template = 'Who wrote the most upvoted comment on the post "{title}"?'
    template_id = 205
    kind = "info"

    def sample(self, db, rng, split):
        ok = [p for p in posts(db, "1 = 1") if p["n_comments"] >= 3 and top_comment(db, p["id"])]
        return {"title": pick(rng, ok, split, key=lambda p: p["title"])["title"]}

    def build(self, db, slots):
        p = post_by_title(db, slots["title"])
        found = top_comment(db, p["id"])
        if found is None:
            raise InfeasibleSlots(f"no unique most upvoted comment on {slots['title']!r}")
        best, runner_up = found
        path = f"/f/{p['forum']}/{p['id']}/comment/{best['id']}"
        return {"eval": answer_exact(best["author"]), "difficulty": 3,
                "extra": {"answer": best["author"], "wrong": runner_up["author"], "comment_path": path}}  # fmt: skip

    def oracle(self, task, page):
        yield from open_post(page, task.instantiation_dict["title"])
        while not any(
            e.attrs.get("href", "").endswith(task.extra["comment_path"]) for e in page.elements
        ):
            yield from page.click("Next page", tag="a", exact=True)
        yield page.exit(self.answer(task))

    def wrong_ending(self, task, page):
        yield from open_post(page, task.instantiation_dict["title"])
        yield page.exit(task.extra["wrong"])


class ForumSubscribers(ForumFamily):
    name = "forum.forum_subscribers"
    template = "How many subscribers does f/{forum} have?"
    template_id = 206
    kind = "info"
    held_out = ("forum",)

    def sample(self, db, rng, split):
        return {"forum": pick(rng, forums(db), split, key=lambda f: f["name"])["name"]}

    def build(self, db, slots):
        rows = forums(db)
        i = [f["name"] for f in rows].index(slots["forum"])
        n, wrong = rows[i]["subscribers"], rows[(i + 1) % len(rows)]["subscribers"]
        return {"eval": answer_exact(str(n)), "difficulty": forum_hops(db, slots["forum"]),
                "extra": {"answer": str(n), "wrong": str(wrong)}}  # fmt: skip

    def oracle(self, task, page):
        yield from scan_list(page, "Forums", f"f/{task.instantiation_dict['forum']}")
        expect(f"{self.answer(task)} subscribers" in page.text, "subscriber count listed")
        yield page.exit(self.answer(task))

    def wrong_ending(self, task, page):
        yield from page.click("Forums", tag="a", exact=True)
        yield page.exit(task.extra["wrong"])


class NewestPostAuthor(ForumFamily):
    name = "forum.newest_post_author"
    template = "Who wrote the most recent post in f/{forum}?"
    template_id = 207
    kind = "info"
    held_out = ("forum",)

    def sample(self, db, rng, split):
        return {"forum": pick(rng, forums(db), split, key=lambda f: f["name"])["name"]}

    def build(self, db, slots):
        newest = forum_posts(db, slots["forum"], "new")
        top = forum_posts(db, slots["forum"], "top")
        answer = newest[0]["author"]
        wrong = next((p["author"] for p in top + newest if p["author"] != answer), "marvin")
        return {"eval": answer_exact(answer), "difficulty": forum_hops(db, slots["forum"]) + 2,
                "extra": {"answer": answer, "wrong": wrong}}  # fmt: skip

    def oracle(self, task, page):
        yield from open_forum(page, task.instantiation_dict["forum"])
        yield from page.click("New", tag="a", exact=True)
        page.find(self.answer(task), tag="a", exact=True)
        yield page.exit(self.answer(task))

    def wrong_ending(self, task, page):
        yield from open_forum(page, task.instantiation_dict["forum"])
        yield from page.click("Top", tag="a", exact=True)
        yield page.exit(task.extra["wrong"])

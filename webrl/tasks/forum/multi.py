"""Forum task families. Multi-requirement tasks: several changes, all checked."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, ClassVar

from webrl.tasks.family import InfeasibleSlots, page_has, pick, state_check
from webrl.tasks.forum.base import (
    ME,
    NEW_BODIES,
    NEW_COMMENTS,
    ForumFamily,
    create_post_checks,
    forum_hops,
    forum_posts,
    forum_row,
    forums,
    my_vote,
    new_titles,
    open_comment,
    open_forum,
    open_post,
    post_by_title,
    post_url,
    posts,
    reply_check,
    submit_post,
    subscribed,
    top_comment,
    two_sentences,
)

if TYPE_CHECKING:
    from webrl.env.page_view import PageView


class UpvoteNewestAndSubscribe(ForumFamily):
    name = "forum.upvote_newest_and_subscribe"
    template = "Upvote the newest post in f/{forum}, and subscribe to f/{forum}."
    template_id = 240
    kind = "multi"
    require_login = True
    held_out = ("forum",)

    def sample(self, db, rng, split):
        mine = subscribed(db)
        ok = [f["name"] for f in forums(db) if f["name"] not in mine
              and my_vote(db, forum_posts(db, f["name"], "new")[0]["id"]) == 0]  # fmt: skip
        return {"forum": pick(rng, ok, split, key=lambda name: name)}

    def build(self, db, slots):
        forum = forum_row(db, slots["forum"])["name"]
        newest, top = forum_posts(db, forum, "new")[0], forum_posts(db, forum, "top")[0]
        if newest["id"] == top["id"]:
            raise InfeasibleSlots(f"the newest post of f/{forum} is also its top post")
        spec = state_check(
            page_has(post_url(newest), ["You upvoted this"], locator="#vote-state"),
            page_has(f"__FORUM__/f/{forum}", ["You are subscribed"], locator="#subscription-state"),
        )
        return {"eval": spec, "difficulty": forum_hops(db, forum) + 5,
                "extra": {"newest": newest["title"], "top": top["title"]}}  # fmt: skip

    def oracle(self, task, page):
        yield from open_forum(page, task.instantiation_dict["forum"])
        yield from page.click("Subscribe", tag="button", exact=True)
        yield from page.click("New", tag="a", exact=True)
        yield from page.click(task.extra["newest"], tag="a", exact=True)
        yield from page.click("Upvote", tag="button", exact=True)
        yield page.exit("Done")

    def wrong_ending(self, task, page):
        yield from open_forum(page, task.instantiation_dict["forum"])
        yield from page.click("Subscribe", tag="button", exact=True)
        yield from page.click("Top", tag="a", exact=True)
        yield from page.click(task.extra["top"], tag="a", exact=True)
        yield from page.click("Upvote", tag="button", exact=True)
        yield page.exit("Done")


class UpvoteNewestPosts(ForumFamily):
    name = "forum.upvote_newest_posts"
    template = "Upvote the {count} newest posts in f/{forum}."
    template_id = 243
    kind = "multi"
    require_login = True
    held_out = ("forum",)
    COUNTS: ClassVar[dict[str, int]] = {"three": 3, "four": 4, "five": 5}

    def sample(self, db, rng, split):
        count = rng.choice(list(self.COUNTS))
        n = self.COUNTS[count]
        ok = [f["name"] for f in forums(db)
              if all(my_vote(db, p["id"]) == 0 for p in forum_posts(db, f["name"], "new")[:n])]  # fmt: skip
        return {"count": count, "forum": pick(rng, ok, split, key=lambda name: name)}

    def build(self, db, slots):
        forum = forum_row(db, slots["forum"])["name"]
        newest = forum_posts(db, forum, "new")[: self.COUNTS[slots["count"]]]
        checks = [
            page_has(post_url(p), ["You upvoted this"], locator="#vote-state") for p in newest
        ]
        return {"eval": state_check(*checks), "difficulty": forum_hops(db, forum) + 4 * len(newest),
                "extra": {"titles": [p["title"] for p in newest]}}  # fmt: skip

    def upvote_all(self, page: PageView, forum: str, titles: list[str]) -> Iterator[str]:
        yield from open_forum(page, forum)
        yield from page.click("New", tag="a", exact=True)
        for i, title in enumerate(titles):
            yield from page.click(title, tag="a", exact=True)
            yield from page.click("Upvote", tag="button", exact=True)
            if i + 1 < len(titles):  # back to the forum's newest posts
                yield from page.click(f"f/{forum}", tag="a", exact=True)
                yield from page.click("New", tag="a", exact=True)
        yield page.exit("Done")

    def oracle(self, task, page):
        yield from self.upvote_all(page, task.instantiation_dict["forum"], task.extra["titles"])

    def wrong_ending(self, task, page):  # stops one post short
        yield from self.upvote_all(
            page, task.instantiation_dict["forum"], task.extra["titles"][:-1]
        )


class PostAndComment(ForumFamily):
    name = "forum.post_and_comment"
    template = ('Create a post in f/{forum} titled "{title}" with the text "{body}", '
                'then comment "{comment}" on your new post.')  # fmt: skip
    template_id = 241
    kind = "multi"
    require_login = True

    def sample(self, db, rng, split):
        forum, title = pick(rng, new_titles(db), split, key=lambda c: c[1])
        return {"forum": forum, "title": title, "body": two_sentences(rng, NEW_BODIES),
                "comment": rng.choice(NEW_COMMENTS)}  # fmt: skip

    def build(self, db, slots):
        forum = forum_row(db, slots["forum"])["name"]
        newest_comment = page_has(
            f"__FORUM__/user/{ME}/comments", [slots["comment"], slots["title"]],
            locator="li.comment-item:first-child",
        )  # fmt: skip
        spec = state_check(
            *create_post_checks(forum, slots["title"], slots["body"]), newest_comment
        )
        return {"eval": spec, "difficulty": forum_hops(db, forum) + 8}

    def oracle(self, task, page):
        d = task.instantiation_dict
        yield from open_forum(page, d["forum"])
        yield from page.click("Submit a post", tag="a", exact=True)
        yield from submit_post(page, d["title"], d["body"])
        yield from page.type(d["comment"], name="body")
        yield from page.click("Post comment", tag="button", exact=True)
        yield page.exit("Done")

    def wrong_ending(self, task, page):
        d = task.instantiation_dict  # posts, but forgets the comment
        yield from open_forum(page, d["forum"])
        yield from page.click("Submit a post", tag="a", exact=True)
        yield from submit_post(page, d["title"], d["body"])
        yield page.exit("Done")


class ReplyToTopComment(ForumFamily):
    name = "forum.reply_to_top_comment"
    template = 'Find the most upvoted comment on the post "{title}" and reply "{reply}" to it.'
    template_id = 242
    kind = "multi"
    require_login = True

    def sample(self, db, rng, split):
        ok = [p for p in posts(db, "1 = 1") if p["n_comments"] >= 3 and top_comment(db, p["id"])]
        title = pick(rng, ok, split, key=lambda p: p["title"])["title"]
        return {"title": title, "reply": rng.choice(NEW_COMMENTS)}

    def build(self, db, slots):
        p = post_by_title(db, slots["title"])
        found = top_comment(db, p["id"])
        if found is None:
            raise InfeasibleSlots(f"no unique most upvoted comment on {slots['title']!r}")
        best, runner_up = found
        base = f"/f/{p['forum']}/{p['id']}/comment/"
        return {"eval": state_check(reply_check(p, best["id"], slots["reply"])), "difficulty": 7,
                "extra": {"comment_path": base + str(best["id"]), "wrong_path": base + str(runner_up["id"])}}  # fmt: skip

    def oracle(self, task, page):
        d = task.instantiation_dict
        yield from open_post(page, d["title"])
        yield from open_comment(page, task.extra["comment_path"])
        yield from page.type(d["reply"], name="body")
        yield from page.click("Post reply", tag="button", exact=True)
        yield page.exit("Done")

    def wrong_ending(self, task, page):
        d = task.instantiation_dict  # replies to the runner-up
        yield from open_post(page, d["title"])
        yield from open_comment(page, task.extra["wrong_path"])
        yield from page.type(d["reply"], name="body")
        yield from page.click("Post reply", tag="button", exact=True)
        yield page.exit("Done")

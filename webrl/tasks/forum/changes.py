"""Forum task families. State changes: vote, subscribe, post, comment, reply, edit (program_html checks)."""

from __future__ import annotations

from typing import ClassVar

from webrl.tasks.family import InfeasibleSlots, SeedDB, page_has, pick, state_check
from webrl.tasks.forum.base import (
    ME,
    NEW_BODIES,
    NEW_COMMENTS,
    NEW_EDITS,
    ForumFamily,
    comments_of,
    create_post_checks,
    forum_hops,
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
    two_sentences,
)


class VotePost(ForumFamily):
    """Upvote (or downvote) a post the default user has not voted on."""

    kind = "state"
    require_login = True
    direction: ClassVar[int] = 1

    def sample(self, db, rng, split):
        ok = [p for p in posts(db) if my_vote(db, p["id"]) == 0]
        return {"title": pick(rng, ok, split, key=lambda p: p["title"])["title"]}

    def build(self, db, slots):
        p = post_by_title(db, slots["title"])
        state = "You upvoted this" if self.direction > 0 else "You downvoted this"
        return {"eval": state_check(page_has(post_url(p), [state], locator="#vote-state")),
                "difficulty": 4}  # fmt: skip

    def oracle(self, task, page):
        yield from open_post(page, task.instantiation_dict["title"])
        yield from page.click(
            "Upvote" if self.direction > 0 else "Downvote", tag="button", exact=True
        )
        yield page.exit("Done")

    def wrong_ending(self, task, page):
        yield from open_post(page, task.instantiation_dict["title"])
        yield from page.click(
            "Downvote" if self.direction > 0 else "Upvote", tag="button", exact=True
        )
        yield page.exit("Done")


class UpvotePost(VotePost):
    name = "forum.upvote_post"
    template = 'Upvote the post "{title}".'
    template_id = 220
    direction = 1


class DownvotePost(VotePost):
    name = "forum.downvote_post"
    template = 'Downvote the post "{title}".'
    template_id = 221
    direction = -1


class Subscription(ForumFamily):
    """Subscribe to (or unsubscribe from) a forum."""

    kind = "state"
    require_login = True
    held_out = ("forum",)
    subscribe: ClassVar[bool] = True

    def candidates(self, db: SeedDB) -> list[str]:
        mine = subscribed(db)
        return [f["name"] for f in forums(db) if (f["name"] in mine) != self.subscribe]

    def sample(self, db, rng, split):
        return {"forum": pick(rng, self.candidates(db), split, key=lambda name: name)}

    def build(self, db, slots):
        forum = forum_row(db, slots["forum"])["name"]
        others = [f for f in self.candidates(db) if f != forum]
        state = "You are subscribed" if self.subscribe else "You are not subscribed"
        return {"eval": state_check(page_has(f"__FORUM__/f/{forum}", [state], locator="#subscription-state")),
                "difficulty": forum_hops(db, forum) + 2, "extra": {"wrong_forum": others[0]}}  # fmt: skip

    def button(self) -> str:
        return "Subscribe" if self.subscribe else "Unsubscribe"

    def oracle(self, task, page):
        yield from open_forum(page, task.instantiation_dict["forum"])
        yield from page.click(self.button(), tag="button", exact=True)
        yield page.exit("Done")

    def wrong_ending(self, task, page):
        yield from open_forum(page, task.extra["wrong_forum"])
        yield from page.click(self.button(), tag="button", exact=True)
        yield page.exit("Done")


class SubscribeForum(Subscription):
    name = "forum.subscribe"
    template = "Subscribe to f/{forum}."
    template_id = 222
    subscribe = True


class UnsubscribeForum(Subscription):
    name = "forum.unsubscribe"
    template = "Unsubscribe from f/{forum}."
    template_id = 223
    subscribe = False


class CreatePost(ForumFamily):
    name = "forum.create_post"
    template = 'Create a post in f/{forum} titled "{title}" with the text "{body}".'
    template_id = 224
    kind = "state"
    require_login = True

    def sample(self, db, rng, split):
        forum, title = pick(rng, new_titles(db), split, key=lambda c: c[1])
        return {"forum": forum, "title": title, "body": two_sentences(rng, NEW_BODIES)}

    def build(self, db, slots):
        forum = forum_row(db, slots["forum"])["name"]
        others = [f["name"] for f in forums(db) if f["name"] != forum]
        return {"eval": state_check(*create_post_checks(forum, slots["title"], slots["body"])),
                "difficulty": forum_hops(db, forum) + 5, "extra": {"wrong_forum": others[0]}}  # fmt: skip

    def oracle(self, task, page):
        d = task.instantiation_dict
        yield from open_forum(page, d["forum"])
        yield from page.click("Submit a post", tag="a", exact=True)
        yield from submit_post(page, d["title"], d["body"])
        yield page.exit("Done")

    def wrong_ending(self, task, page):
        d = task.instantiation_dict
        yield from page.click("Submit", tag="a", exact=True)
        yield from page.select(f"f/{task.extra['wrong_forum']}", name="forum")
        yield from submit_post(page, d["title"], d["body"])
        yield page.exit("Done")


class CommentOnPost(ForumFamily):
    name = "forum.comment_on_post"
    template = 'Comment "{comment}" on the post "{title}".'
    template_id = 225
    kind = "state"
    require_login = True

    def sample(self, db, rng, split):
        title = pick(rng, posts(db), split, key=lambda p: p["title"])["title"]
        return {"title": title, "comment": rng.choice(NEW_COMMENTS)}

    def build(self, db, slots):
        p = post_by_title(db, slots["title"])
        check = page_has(post_url(p) + "?sort=new", [slots["comment"]], locator="#comments")
        return {"eval": state_check(check), "difficulty": 5}

    def oracle(self, task, page):
        d = task.instantiation_dict
        yield from open_post(page, d["title"])
        yield from page.type(d["comment"], name="body")
        yield from page.click("Post comment", tag="button", exact=True)
        yield page.exit("Done")

    def wrong_ending(self, task, page):
        d = task.instantiation_dict
        yield from open_post(page, d["title"])
        yield from page.type(d["comment"], name="body")  # typed but never posted
        yield page.exit("Done")


class ReplyToComment(ForumFamily):
    name = "forum.reply_to_comment"
    template = 'Reply "{reply}" to the comment by {user} on the post "{title}".'
    template_id = 226
    kind = "state"
    require_login = True

    def sample(self, db, rng, split):
        rows = (
            db["forum"]
            .execute(
                "SELECT p.title, u.username FROM comments c JOIN posts p ON p.id = c.post_id"
                " JOIN users u ON u.id = c.user_id WHERE u.username != ? GROUP BY c.post_id, c.user_id"
                " HAVING COUNT(*) = 1 ORDER BY MIN(c.id)",
                (ME,),
            )
            .fetchall()
        )
        row = pick(rng, rows, split, key=lambda r: r["title"])
        return {"title": row["title"], "user": row["username"], "reply": rng.choice(NEW_COMMENTS)}

    def build(self, db, slots):
        p = post_by_title(db, slots["title"])
        mine = [c for c in comments_of(db, p["id"]) if c["author"] == slots["user"]]
        if len(mine) != 1:
            raise InfeasibleSlots(f"{slots['user']} has {len(mine)} comments on {slots['title']!r}")
        cid = mine[0]["id"]
        return {"eval": state_check(reply_check(p, cid, slots["reply"])), "difficulty": 7,
                "extra": {"comment_path": f"/f/{p['forum']}/{p['id']}/comment/{cid}"}}  # fmt: skip

    def oracle(self, task, page):
        d = task.instantiation_dict
        yield from open_post(page, d["title"])
        yield from open_comment(page, task.extra["comment_path"])
        yield from page.type(d["reply"], name="body")
        yield from page.click("Post reply", tag="button", exact=True)
        yield page.exit("Done")

    def wrong_ending(self, task, page):
        d = task.instantiation_dict  # posts a top-level comment instead of a reply
        yield from open_post(page, d["title"])
        yield from page.type(d["reply"], name="body")
        yield from page.click("Post comment", tag="button", exact=True)
        yield page.exit("Done")


class EditMyPost(ForumFamily):
    name = "forum.edit_my_post"
    template = 'Edit my post "{title}" so that its text reads "{body}".'
    template_id = 227
    kind = "state"
    require_login = True

    def sample(self, db, rng, split):
        mine = posts(db, "u.username = ? AND p.url = ''", (ME,))
        title = pick(rng, mine, split, key=lambda p: p["title"])["title"]
        return {"title": title, "body": rng.choice(NEW_EDITS)}

    def build(self, db, slots):
        p = post_by_title(db, slots["title"])
        if p["author"] != ME:
            raise InfeasibleSlots(f"{slots['title']!r} is not a post by {ME}")
        check = page_has(post_url(p), [], locator="#post-body", exact=slots["body"])
        return {"eval": state_check(check), "difficulty": 6, "extra": {"old_body": p["body"]}}

    def oracle(self, task, page):
        d = task.instantiation_dict
        yield from open_post(page, d["title"])
        yield from page.click("Edit post", tag="a", exact=True)
        yield from page.type(d["body"], name="body")
        yield from page.click("Save", tag="button", exact=True)
        yield page.exit("Done")

    def wrong_ending(self, task, page):
        d = task.instantiation_dict  # appends instead of replacing
        yield from open_post(page, d["title"])
        yield from page.click("Edit post", tag="a", exact=True)
        yield from page.type(f"{task.extra['old_body']} {d['body']}", name="body")
        yield from page.click("Save", tag="button", exact=True)
        yield page.exit("Done")

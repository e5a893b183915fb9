"""Map -> forum and admin -> forum: look a fact up on one site, publish it on the forum."""

from __future__ import annotations

from urllib.parse import quote_plus

from webrl.sites.map.data import address
from webrl.tasks.admin.base import best_seller_report, best_sellers, clear_best_sellers, same_noun
from webrl.tasks.cross.base import CrossFamily, switch_site
from webrl.tasks.family import page_has, pick, state_check
from webrl.tasks.forum.base import (
    forum_row,
    forums,
    open_forum,
    open_post,
    post_url,
    posts,
    submit_post,
)
from webrl.tasks.map.base import expect, open_place, place_row, places

FORUM_TITLE = "Postmill"


class AddressToComment(CrossFamily):
    name = "cross.address_to_comment"
    sites = ("map", "forum")
    template = (
        'On the forum post "{title}", comment "{place} is at X", '
        "with X the address of {place} as the map shows it."
    )
    template_id = 602
    held_out = ("place",)
    start_url = "__MAP__/"

    def sample(self, db, rng, split):
        place = pick(rng, places(db), split, key=lambda p: p["name"])
        return {"title": rng.choice(posts(db))["title"], "place": place["name"]}

    def build(self, db, slots):
        p = place_row(db, slots["place"])
        post = next(x for x in posts(db) if x["title"] == slots["title"])
        comment = f"{p['name']} is at {address(p)}"
        check = page_has(post_url(post) + "?sort=new", [f"{p['name']} is at {p['number']} {p['street']}"],
                         locator="#comments")  # fmt: skip
        others = [q for q in places(db) if q["street"] != p["street"]]
        wrong = f"{p['name']} is at {address(others[0])}"
        return {"eval": state_check(check), "difficulty": 10,
                "extra": {"comment": comment, "address": address(p), "wrong": wrong}}  # fmt: skip

    def oracle(self, task, page):
        d = task.instantiation_dict
        yield from open_place(page, d["place"])
        expect(page, task.extra["address"])
        yield from switch_site(page, FORUM_TITLE)
        yield from open_post(page, d["title"])
        yield from page.type(task.extra["comment"], name="body")
        yield from page.click("Post comment", tag="button", exact=True)
        yield page.exit("Done")

    def wrong_ending(self, task, page):  # an address from another street
        yield from switch_site(page, FORUM_TITLE)
        yield from open_post(page, task.instantiation_dict["title"])
        yield from page.type(task.extra["wrong"], name="body")
        yield from page.click("Post comment", tag="button", exact=True)
        yield page.exit("Done")


class BestSellerToForum(CrossFamily):
    name = "cross.best_seller_to_forum"
    sites = ("admin", "forum")
    template = (
        'Find the best-selling product of {period} in the admin panel and post it in f/{forum}: '
        'title "Best seller of {period}", text: the product\'s name.'
    )
    template_id = 603
    held_out = ("period",)
    start_url = "__ADMIN__/"

    def sample(self, db, rng, split):
        period = pick(rng, sorted(clear_best_sellers(db)), split, key=lambda p: p)
        return {"period": period, "forum": rng.choice(forums(db))["name"]}

    def build(self, db, slots):
        start, end = clear_best_sellers(db)[slots["period"]]
        ranked = best_sellers(db, start, end)
        forum = forum_row(db, slots["forum"])["name"]
        title = f"Best seller of {slots['period']}"
        checks = [
            page_has(f"__FORUM__/f/{forum}?sort=new", [title], locator="ul.posts"),
            page_has(f"__FORUM__/search?q={quote_plus(title)}", [title], locator="ul.posts"),
            page_has("last", [ranked[0]["name"]], locator="#post-body"),
        ]
        return {"eval": state_check(*checks), "difficulty": 14,
                "extra": {"answer": ranked[0]["name"], "runner_up": same_noun(db, ranked[0]["name"]),
                          "range": [start, end], "title": title}}  # fmt: skip

    def _post(self, task, page, text):
        yield from switch_site(page, FORUM_TITLE)
        yield from open_forum(page, task.instantiation_dict["forum"])
        yield from page.click("Submit a post", tag="a", exact=True)
        yield from submit_post(page, task.extra["title"], text)
        yield page.exit("Done")

    def oracle(self, task, page):
        yield from best_seller_report(page, *task.extra["range"])
        expect(page, task.extra["answer"])
        yield from self._post(task, page, task.extra["answer"])

    def wrong_ending(self, task, page):  # a similar product instead of the best seller
        yield from best_seller_report(page, *task.extra["range"])
        yield from self._post(task, page, task.extra["runner_up"])

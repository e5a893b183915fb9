"""Shop <-> forum: carry a fact from the store into a forum post or comment."""

from __future__ import annotations

from urllib.parse import quote_plus

from webrl.sites.shop.data import money, rating_text
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
from webrl.tasks.shop.base import expect, open_product, products

FORUM_TITLE = "Postmill"
SHOP_TITLE = "One Stop Shop"


class ShopPriceToForum(CrossFamily):
    name = "cross.shop_price_to_forum"
    sites = ("shop", "forum")
    template = 'Find the price of {product} in the shop and post it in f/{forum}: title "Price check: {product}", text: the price.'
    template_id = 600
    held_out = ("product",)
    start_url = "__SHOP__/"

    def sample(self, db, rng, split):
        p = pick(rng, products(db), split, key=lambda p: p["name"])
        return {"product": p["name"], "forum": rng.choice(forums(db))["name"]}

    def build(self, db, slots):
        p = next(p for p in products(db) if p["name"] == slots["product"])
        forum = forum_row(db, slots["forum"])["name"]
        title = f"Price check: {p['name']}"
        price = money(p["price_cents"])
        checks = [
            page_has(f"__FORUM__/f/{forum}?sort=new", [title], locator="ul.posts"),
            page_has(f"__FORUM__/search?q={quote_plus(title)}", [title], locator="ul.posts"),
            page_has("last", [price], locator="#post-body"),
        ]
        return {"eval": state_check(*checks), "difficulty": 12, "extra": {"price": price}}

    def oracle(self, task, page):
        d = task.instantiation_dict
        yield from open_product(page, d["product"])
        expect(page, task.extra["price"])
        yield from switch_site(page, FORUM_TITLE)
        yield from open_forum(page, d["forum"])
        yield from page.click("Submit a post", tag="a", exact=True)
        yield from submit_post(page, f"Price check: {d['product']}", task.extra["price"])
        yield page.exit("Done")

    def wrong_ending(self, task, page):  # posts without looking the price up
        d = task.instantiation_dict
        yield from switch_site(page, FORUM_TITLE)
        yield from open_forum(page, d["forum"])
        yield from page.click("Submit a post", tag="a", exact=True)
        yield from submit_post(page, f"Price check: {d['product']}", "$10.00")
        yield page.exit("Done")


class RatingToComment(CrossFamily):
    name = "cross.rating_to_comment"
    sites = ("forum", "shop")
    template = (
        'On the forum post "{title}", comment "{product} is rated X out of 5 in the shop", '
        "with X the product's average star rating in the shop."
    )
    template_id = 601
    held_out = ("product",)
    start_url = "__FORUM__/"

    def sample(self, db, rng, split):
        p = pick(rng, [p for p in products(db) if p["n_reviews"] > 0], split, key=lambda p: p["name"])
        post = rng.choice(posts(db))
        return {"title": post["title"], "product": p["name"]}

    def build(self, db, slots):
        p = next(p for p in products(db) if p["name"] == slots["product"])
        post = next(x for x in posts(db) if x["title"] == slots["title"])
        rating = rating_text(p["rating_total"], p["n_reviews"])
        comment = f"{p['name']} is rated {rating} out of 5 in the shop"
        check = page_has(post_url(post) + "?sort=new", [comment], locator="#comments")
        return {"eval": state_check(check), "difficulty": 9, "extra": {"comment": comment, "rating": rating}}

    def oracle(self, task, page):
        d = task.instantiation_dict
        yield from switch_site(page, SHOP_TITLE)
        yield from open_product(page, d["product"])
        expect(page, task.extra["rating"])
        yield from switch_site(page, FORUM_TITLE)
        yield from open_post(page, d["title"])
        yield from page.type(task.extra["comment"], name="body")
        yield from page.click("Post comment", tag="button", exact=True)
        yield page.exit("Done")

    def wrong_ending(self, task, page):  # a guessed rating instead of the shop's
        d = task.instantiation_dict
        yield from open_post(page, d["title"])
        guess = "5.0" if task.extra["rating"] != "5.0" else "4.0"
        yield from page.type(f"{d['product']} is rated {guess} out of 5 in the shop", name="body")
        yield from page.click("Post comment", tag="button", exact=True)
        yield page.exit("Done")

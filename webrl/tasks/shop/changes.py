"""State-changing shop tasks: judged by pages fetched after the episode."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from webrl.sites.shop.data import CANCELABLE, SHIPPING, money
from webrl.tasks.family import page_has, pick, state_check
from webrl.tasks.schema import Task
from webrl.tasks.shop.base import (
    REVIEW_TEXTS,
    ShopFamily,
    add_to_cart,
    address_text,
    addresses,
    checkout,
    my_orders,
    next_order_number,
    open_order,
    open_product,
    ordered_lines,
    phones,
    product_row,
    products,
    same_noun,
    wishlist_names,
)

if TYPE_CHECKING:
    from webrl.env.page_view import PageView


class AddToCart(ShopFamily):
    name = "shop.add_to_cart"
    template = "Add {qty} units of {product} to my cart."
    template_id = 114
    kind = "state"

    def sample(self, db, rng, split):
        rows = [p for p in products(db) if p["stock"] >= 5]
        return {
            "product": pick(rng, rows, split, key=lambda p: p["name"])["name"],
            "qty": rng.randint(2, 4),
        }

    def build(self, db, slots):
        p = product_row(db, slots["product"])
        line = money(p["price_cents"] * slots["qty"])
        return {"eval": state_check(page_has("__SHOP__/cart", [p["name"], line], locator=f"#line-{p['id']}")),
                "difficulty": 5}  # fmt: skip

    def oracle(self, task, page):
        slots = task.instantiation_dict
        yield from add_to_cart(page, slots["product"], slots["qty"])
        yield page.exit("Done")

    def wrong_ending(self, task, page):
        slots = task.instantiation_dict
        yield from add_to_cart(page, slots["product"], slots["qty"] - 1)
        yield page.exit("Done")


class AddToWishlist(ShopFamily):
    name = "shop.add_to_wishlist"
    template = "Add {product} to my wish list."
    template_id = 115
    kind = "state"

    def sample(self, db, rng, split):
        have = wishlist_names(db)
        rows = [p for p in products(db) if p["name"] not in have]
        return {"product": pick(rng, rows, split, key=lambda p: p["name"])["name"]}

    def build(self, db, slots):
        return {"eval": state_check(page_has("__SHOP__/wishlist", [slots["product"]], locator="#wishlist")),
                "difficulty": 4, "extra": {"wrong_product": same_noun(db, slots["product"])}}  # fmt: skip

    def oracle(self, task, page):
        yield from open_product(page, task.instantiation_dict["product"])
        yield from page.click("Add to wish list", tag="button")
        yield page.exit("Done")

    def wrong_ending(self, task, page):
        yield from open_product(page, task.extra["wrong_product"])
        yield from page.click("Add to wish list", tag="button")
        yield page.exit("Done")


class WriteReview(ShopFamily):
    name = "shop.write_review"
    template = 'Write a {rating}-star review of {product} titled "{title}" that says "{text}"'
    template_id = 116
    kind = "state"

    def sample(self, db, rng, split):
        p = pick(rng, products(db), split, key=lambda p: p["name"])
        title, text = rng.choice(REVIEW_TEXTS)
        return {"rating": rng.randint(1, 5), "product": p["name"], "title": title, "text": text}

    def build(self, db, slots):
        need = [
            slots["product"],
            f"{slots['rating']} out of 5 stars",
            slots["title"],
            slots["text"],
        ]
        return {"eval": state_check(page_has("__SHOP__/account/reviews", need, locator="#my-reviews")),
                "difficulty": 8}  # fmt: skip

    def _write(self, task: Task, page: PageView, rating: int) -> Iterator[str]:
        slots = task.instantiation_dict
        yield from open_product(page, slots["product"])
        yield from page.click("Write a review", tag="a")
        yield from page.select(f"{rating} star{'s' if rating != 1 else ''}", name="rating")
        yield from page.type(slots["title"], name="title")
        yield from page.type(slots["text"], name="body")
        yield from page.click("Submit review", tag="button")
        yield page.exit("Done")

    def oracle(self, task, page):
        yield from self._write(task, page, task.instantiation_dict["rating"])

    def wrong_ending(self, task, page):
        rating = task.instantiation_dict["rating"]
        yield from self._write(task, page, rating - 1 if rating > 1 else 2)


class UpdatePhone(ShopFamily):
    name = "shop.update_phone"
    template = "Change the phone number on my account to {phone}."
    template_id = 117
    kind = "state"
    held_out = ("phone",)

    def sample(self, db, rng, split):
        return {"phone": pick(rng, phones(), split, key=lambda p: p)}

    def build(self, db, slots):
        return {"eval": state_check(page_has("__SHOP__/account", [], locator="#phone", exact=slots["phone"])),
                "difficulty": 5}  # fmt: skip

    def _edit(self, page: PageView, phone: str) -> Iterator[str]:
        yield from page.click("My account", tag="a", exact=True)
        yield from page.click("Edit account", tag="a")
        yield from page.type(phone, name="phone")

    def oracle(self, task, page):
        yield from self._edit(page, task.instantiation_dict["phone"])
        yield from page.click("Save", tag="button", exact=True)
        yield page.exit("Done")

    def wrong_ending(self, task, page):  # types the number but leaves without saving
        yield from self._edit(page, task.instantiation_dict["phone"])
        yield from page.click("My account", tag="a", exact=True)
        yield page.exit("Done")


class UpdateAddress(ShopFamily):
    name = "shop.update_address"
    template = "Update the shipping address on my account to {address}."
    template_id = 118
    kind = "state"
    held_out = ("address",)

    def sample(self, db, rng, split):
        return {"address": address_text(pick(rng, addresses(), split, key=address_text))}

    def build(self, db, slots):
        a = next(a for a in addresses() if address_text(a) == slots["address"])
        check = page_has("__SHOP__/account", [], locator="#address", exact=slots["address"])
        return {"eval": state_check(check), "difficulty": 8, "extra": {"fields": a}}

    def _edit(self, page: PageView, fields: dict[str, str]) -> Iterator[str]:
        yield from page.click("My account", tag="a", exact=True)
        yield from page.click("Edit account", tag="a")
        for name, value in fields.items():
            yield from page.type(value, name=name)
        yield from page.click("Save", tag="button", exact=True)
        yield page.exit("Done")

    def oracle(self, task, page):
        yield from self._edit(page, task.extra["fields"])

    def wrong_ending(self, task, page):  # forgets the ZIP code
        yield from self._edit(page, {k: v for k, v in task.extra["fields"].items() if k != "zip"})


class CancelOrder(ShopFamily):
    name = "shop.cancel_order"
    template = "Cancel my order #{number}."
    template_id = 119
    kind = "state"
    held_out = ("number",)

    def sample(self, db, rng, split):
        rows = [o for o in my_orders(db) if o["status"] in CANCELABLE]
        return {"number": pick(rng, rows, split, key=lambda o: o["number"])["number"]}

    def build(self, db, slots):
        others = [
            o["number"]
            for o in my_orders(db)
            if o["status"] in CANCELABLE and o["number"] != slots["number"]
        ]
        check = page_has(
            f"__SHOP__/orders/{slots['number']}", ["Canceled"], locator="#order-status"
        )
        return {"eval": state_check(check), "difficulty": 4, "extra": {"wrong_number": others[0]}}

    def oracle(self, task, page):
        yield from open_order(page, task.instantiation_dict["number"])
        yield from page.click("Cancel order", tag="button")
        yield page.exit("Done")

    def wrong_ending(self, task, page):
        yield from open_order(page, task.extra["wrong_number"])
        yield from page.click("Cancel order", tag="button")
        yield page.exit("Done")


class PlaceOrder(ShopFamily):
    name = "shop.place_order"
    template = "Buy {qty} units of {product} with {method} shipping."
    template_id = 120
    kind = "state"

    def sample(self, db, rng, split):
        rows = [p for p in products(db) if p["stock"] >= 5]
        return {"product": pick(rng, rows, split, key=lambda p: p["name"])["name"], "qty": rng.randint(2, 3),
                "method": rng.choice(["express", "overnight"])}  # fmt: skip

    def build(self, db, slots):
        p = product_row(db, slots["product"])
        url = f"__SHOP__/orders/{next_order_number(db)}"
        check = state_check(
            *ordered_lines(url, [(p, slots["qty"])]),
            page_has(url, [SHIPPING[slots["method"]][0]], locator="#order-shipping"),
        )
        return {"eval": check, "difficulty": 8}

    def oracle(self, task, page):
        slots = task.instantiation_dict
        yield from add_to_cart(page, slots["product"], slots["qty"])
        yield from checkout(page, slots["method"])
        yield page.exit("Done")

    def wrong_ending(self, task, page):  # keeps the default (standard) shipping
        slots = task.instantiation_dict
        yield from add_to_cart(page, slots["product"], slots["qty"])
        yield from checkout(page)
        yield page.exit("Done")

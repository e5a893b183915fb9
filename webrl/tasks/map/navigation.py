"""Navigation map tasks: judged by the final page's URL."""

from __future__ import annotations

from urllib.parse import quote_plus

from webrl.sites.map.data import category_plural
from webrl.sites.map.geo import straight_m
from webrl.tasks.family import pick, url_is
from webrl.tasks.map.base import (
    HOW,
    MapFamily,
    category_slugs,
    directions_url,
    get_directions,
    open_nearby,
    open_place,
    place_row,
    places,
)


class DirectionsNav(MapFamily):
    name = "map.directions"
    template = "Show directions from {a} to {b} {how}."
    template_id = 510
    kind = "nav"
    held_out = ("a", "b")

    def sample(self, db, rng, split):
        rows = places(db)
        a = pick(rng, rows, split, key=lambda p: p["name"])
        b = pick(rng, [p for p in rows if p["id"] != a["id"]], split, key=lambda p: p["name"])
        return {"a": a["name"], "b": b["name"], "how": rng.choice(list(HOW))}

    def build(self, db, slots):
        a, b = place_row(db, slots["a"]), place_row(db, slots["b"])
        mode = HOW[slots["how"]]
        return {"eval": url_is(directions_url(a["name"], b["name"], mode)), "difficulty": 5 if mode == "drive" else 6,
                "extra": {"mode": mode, "wrong_mode": "walk" if mode == "drive" else "drive"}}  # fmt: skip

    def oracle(self, task, page):
        d = task.instantiation_dict
        yield from get_directions(page, d["a"], d["b"], task.extra["mode"])
        yield page.exit("")

    def wrong_ending(self, task, page):
        d = task.instantiation_dict
        yield from get_directions(page, d["a"], d["b"], task.extra["wrong_mode"])
        yield page.exit("")


class OpenPlace(MapFamily):
    name = "map.open_place"
    template = "Open the page of {place}."
    template_id = 511
    kind = "nav"

    def sample(self, db, rng, split):
        return {"place": pick(rng, places(db), split, key=lambda p: p["name"])["name"]}

    def build(self, db, slots):
        p = place_row(db, slots["place"])
        others = [q for q in places(db) if q["category"] == p["category"] and q["id"] != p["id"]]
        wrong = min(others, key=lambda q: straight_m(p, q))["name"]
        return {
            "eval": url_is(f"__MAP__/place/{p['id']}"),
            "difficulty": 2,
            "extra": {"wrong": wrong},
        }

    def oracle(self, task, page):
        yield from open_place(page, task.instantiation_dict["place"])
        yield page.exit("")

    def wrong_ending(self, task, page):
        yield from open_place(page, task.extra["wrong"])
        yield page.exit("")


class NearbyCategoryNav(MapFamily):
    name = "map.nearby_category"
    template = "Show {plural} near {place}."
    template_id = 512
    kind = "nav"

    def sample(self, db, rng, split):
        p = pick(rng, places(db), split, key=lambda p: p["name"])
        return {"plural": category_plural(rng.choice(category_slugs())), "place": p["name"]}

    def build(self, db, slots):
        p = place_row(db, slots["place"])
        slug = next(s for s in category_slugs() if category_plural(s) == slots["plural"])
        near = f"__MAP__/place/{p['id']}/nearby?category={slug}"
        listed = f"__MAP__/search?category={slug}&near={quote_plus(p['name'])}&sort=distance"
        return {"eval": url_is(f"{near} |OR| {listed}"), "difficulty": 5, "extra": {"slug": slug}}

    def oracle(self, task, page):
        yield from open_nearby(page, task.instantiation_dict["place"], task.extra["slug"])
        yield page.exit("")

    def wrong_ending(self, task, page):  # every category
        yield from open_nearby(page, task.instantiation_dict["place"])
        yield page.exit("")


class CategoryByDistanceNav(MapFamily):
    name = "map.category_by_distance"
    template = "List all {plural} sorted by distance from {place}."
    template_id = 513
    kind = "nav"

    def sample(self, db, rng, split):
        p = pick(rng, places(db), split, key=lambda p: p["name"])
        return {"plural": category_plural(rng.choice(category_slugs())), "place": p["name"]}

    def build(self, db, slots):
        p = place_row(db, slots["place"])
        slug = next(s for s in category_slugs() if category_plural(s) == slots["plural"])
        url = f"__MAP__/search?category={slug}&near={quote_plus(p['name'])}&sort=distance"
        return {"eval": url_is(url), "difficulty": 5, "extra": {"slug": slug}}

    def _list(self, task, page, sort: str):
        slug = task.extra["slug"]
        yield from page.click(category_plural(slug).capitalize(), tag="a", exact=True)
        yield from page.type(task.instantiation_dict["place"], name="near")
        yield from page.select(sort, name="sort")
        yield from page.click("Update results", tag="button", exact=True)
        yield page.exit("")

    def oracle(self, task, page):
        yield from self._list(task, page, "Distance")

    def wrong_ending(self, task, page):
        yield from self._list(task, page, "Name")

"""Infeasible map tasks, phrased like feasible ones: the right answer is "N/A"."""

from __future__ import annotations

from webrl.sites.map.data import CATEGORIES, GIVEN, SURNAMES, TOPICS, WORDS, address
from webrl.sites.map.geo import straight_m
from webrl.tasks.family import answer_exact, pick
from webrl.tasks.map.base import (
    NA,
    MapFamily,
    get_directions,
    open_nearby,
    open_place,
    place_row,
    places,
    route,
)

UNSUPPORTED_MODES = ["by bus", "by boat", "by public transit", "by tram", "by ferry", "by subway"]
UNKNOWN_FACTS = ["email address", "website", "star rating", "entrance fee", "Wi-Fi password",
                 "number of parking spaces", "owner's name"]  # fmt: skip
MISSING_CATEGORIES = ["petrol station", "zoo", "bowling alley", "car wash", "nightclub", "swimming pool",
                      "dentist", "hair salon", "laundromat", "bookshop"]  # fmt: skip


def fake_names(db) -> list[tuple[str, str]]:
    """(category, name) pairs built like the seed's names, none of them a real place
    or part of a real name, so searching for one finds nothing."""
    real = "\n".join(p["name"].lower() for p in places(db))
    slots = {"w": WORDS, "s": SURNAMES, "g": GIVEN, "t": TOPICS}
    out = []
    for slug, *_rest, patterns in CATEGORIES:
        for pat in patterns:
            key = pat[pat.index("{") + 1 : pat.index("}")]
            for value in slots.get(key, []):
                name = pat.format(**{key: value})
                if name.lower() not in real:
                    out.append((slug, name))
    return out


class MissingPlaceAddress(MapFamily):
    """Same wording as PlaceAddress, for a place the map does not know."""

    name = "map.missing_place_address"
    template = "What is the address of {place}?"
    template_id = 540
    kind = "infeasible"

    def sample(self, db, rng, split):
        return {"place": pick(rng, fake_names(db), split, key=lambda f: f[1])[1]}

    def build(self, db, slots):
        slug = next(s for s, name in fake_names(db) if name == slots["place"])
        near = next(p for p in places(db) if p["category"] == slug)
        return {
            "eval": answer_exact(NA),
            "difficulty": 2,
            "extra": {"answer": NA, "wrong": address(near)},
        }

    def oracle(self, task, page):
        yield from page.search(task.instantiation_dict["place"], name="q")
        if page.has(task.instantiation_dict["place"], tag="a", exact=True):
            raise LookupError("the missing place exists")
        yield page.exit(NA)

    def wrong_ending(self, task, page):
        yield from page.search(task.instantiation_dict["place"], name="q")
        yield page.exit(task.extra["wrong"])


class UnsupportedMode(MapFamily):
    """Same wording as TravelTime, for a mode of transport the map does not route."""

    name = "map.unsupported_mode"
    template = "How long does it take to get from {a} to {b} {how}?"
    template_id = 541
    kind = "infeasible"
    held_out = ("a", "b")

    def sample(self, db, rng, split):
        rows = places(db)
        a = pick(rng, rows, split, key=lambda p: p["name"])
        far = [p for p in rows if p["node_id"] != a["node_id"] and straight_m(a, p) >= 500]
        b = pick(rng, far, split, key=lambda p: p["name"])
        return {"a": a["name"], "b": b["name"], "how": rng.choice(UNSUPPORTED_MODES)}

    def build(self, db, slots):
        drive = route(db, slots["a"], slots["b"], "drive").minutes
        return {
            "eval": answer_exact(NA),
            "difficulty": 5,
            "extra": {"answer": NA, "wrong": f"{drive} min"},
        }

    def oracle(self, task, page):
        yield from page.click("Directions", tag="a", exact=True)
        options = page.find(name="mode").options
        if any(task.instantiation_dict["how"].split()[-1] in o.lower() for o in options):
            raise LookupError("the mode is offered after all")
        yield page.exit(NA)

    def wrong_ending(self, task, page):  # answers with the driving time instead
        d = task.instantiation_dict
        yield from get_directions(page, d["a"], d["b"], "drive")
        yield page.exit(task.extra["wrong"])


class UnknownFact(MapFamily):
    """Same wording as PlacePhone, for a fact the map does not record."""

    name = "map.unknown_fact"
    template = "What is the {fact} of {place}?"
    template_id = 542
    kind = "infeasible"

    def sample(self, db, rng, split):
        p = pick(rng, places(db), split, key=lambda p: p["name"])
        return {"fact": rng.choice(UNKNOWN_FACTS), "place": p["name"]}

    def build(self, db, slots):
        p = place_row(db, slots["place"])
        return {
            "eval": answer_exact(NA),
            "difficulty": 3,
            "extra": {"answer": NA, "wrong": p["phone"]},
        }

    def oracle(self, task, page):
        yield from open_place(page, task.instantiation_dict["place"])
        yield page.exit(NA)

    def wrong_ending(self, task, page):
        yield from open_place(page, task.instantiation_dict["place"])
        yield page.exit(task.extra["wrong"])


class MissingCategory(MapFamily):
    """Same wording as ClosestOfCategory, for a kind of place the map does not list."""

    name = "map.missing_category"
    template = "What is the closest {category} to {place}?"
    template_id = 543
    kind = "infeasible"

    def sample(self, db, rng, split):
        p = pick(rng, places(db), split, key=lambda p: p["name"])
        return {"category": rng.choice(MISSING_CATEGORIES), "place": p["name"]}

    def build(self, db, slots):
        p = place_row(db, slots["place"])
        nearest = min((q for q in places(db) if q["id"] != p["id"]), key=lambda q: straight_m(p, q))
        return {
            "eval": answer_exact(NA),
            "difficulty": 4,
            "extra": {"answer": NA, "wrong": nearest["name"]},
        }

    def oracle(self, task, page):
        yield from open_nearby(page, task.instantiation_dict["place"])
        options = [o.lower() for o in page.find(name="category").options]
        if task.instantiation_dict["category"] in options:
            raise LookupError("the category exists after all")
        yield page.exit(NA)

    def wrong_ending(self, task, page):  # names the nearest place of any kind
        yield from open_nearby(page, task.instantiation_dict["place"])
        yield page.exit(task.extra["wrong"])

"""Information-retrieval map tasks: the agent answers with exit(message=...)."""

from __future__ import annotations

import sqlite3
from typing import ClassVar

from webrl.sites.map.data import address, category_plural
from webrl.sites.map.geo import RADII, WEEKDAYS, format_coords, format_distance, straight_m
from webrl.tasks.family import SeedDB, answer_exact, answer_fuzzy, answer_includes, pick
from webrl.tasks.map.base import (
    HOW,
    MapFamily,
    category_slugs,
    category_word,
    ensure_wrong,
    expect,
    get_directions,
    map_db,
    nearby,
    nearest_two,
    open_nearby,
    open_place,
    place_row,
    places,
    route,
)


class PlaceFact(MapFamily):
    """Read one fact off a place's page: the oracle searches, opens it and answers."""

    kind = "info"
    difficulty: ClassVar[int] = 3

    def answer(self, p: sqlite3.Row) -> str:
        raise NotImplementedError

    def spec(self, p: sqlite3.Row) -> dict:
        raise NotImplementedError

    def sample(self, db, rng, split):
        return {"place": pick(rng, places(db), split, key=lambda p: p["name"])["name"]}

    def build(self, db, slots):
        p = place_row(db, slots["place"])
        spec = self.spec(p)
        others = [q for q in places(db) if q["category"] == p["category"] and q["id"] != p["id"]]
        wrong = ensure_wrong(spec, self.answer(min(others, key=lambda q: straight_m(p, q))))
        return {"eval": spec, "difficulty": self.difficulty,
                "extra": {"answer": self.answer(p), "wrong": wrong}}  # fmt: skip

    def oracle(self, task, page):
        yield from open_place(page, task.instantiation_dict["place"])
        expect(page, task.extra["answer"])
        yield page.exit(task.extra["answer"])

    def wrong_ending(self, task, page):
        yield from open_place(page, task.instantiation_dict["place"])
        yield page.exit(task.extra["wrong"])


class PlaceAddress(PlaceFact):
    name = "map.place_address"
    template = "What is the address of {place}?"
    template_id = 500

    def answer(self, p):
        return address(p)

    def spec(self, p):
        return answer_includes(f"{p['number']} {p['street']}")


class PlaceCoordinates(PlaceFact):
    name = "map.place_coordinates"
    template = "What are the coordinates of {place}?"
    template_id = 506

    def answer(self, p):
        return format_coords(p["lat"], p["lon"])

    def spec(self, p):
        return answer_includes(f"{p['lat']:.5f}", f"{p['lon']:.5f}")


class PlacePhone(PlaceFact):
    name = "map.place_phone"
    template = "What is the phone number of {place}?"
    template_id = 507
    difficulty = 2

    def answer(self, p):
        return p["phone"]

    def spec(self, p):
        return answer_includes(p["phone"].split()[-1])  # the local number, "555-1234"


def hours_spec(spec: str) -> dict:
    """What an answer must contain for one day's opening hours."""
    if spec == "Closed":
        return answer_includes("closed")
    if spec == "Open 24 hours":
        return answer_includes("24 hours")
    return answer_includes(*spec.split("–"))


class OpeningHours(MapFamily):
    name = "map.opening_hours"
    template = "What are the opening hours of {place} on {day}?"
    template_id = 501
    kind = "info"

    def _week(self, db: SeedDB, pid: int) -> list[str]:
        rows = map_db(db).execute("SELECT spec FROM hours WHERE place_id = ? ORDER BY day", (pid,))
        return [r[0] for r in rows]

    def sample(self, db, rng, split):
        ok = [p for p in places(db) if len(set(self._week(db, p["id"]))) > 1]
        p = pick(rng, ok, split, key=lambda p: p["name"])
        return {"place": p["name"], "day": rng.choice(WEEKDAYS)}

    def build(self, db, slots):
        week = self._week(db, place_row(db, slots["place"])["id"])
        answer = week[WEEKDAYS.index(slots["day"])]
        spec = hours_spec(answer)
        wrong = ensure_wrong(spec, next(s for s in week if s != answer))
        return {"eval": spec, "difficulty": 3, "extra": {"answer": answer, "wrong": wrong}}

    def oracle(self, task, page):
        yield from open_place(page, task.instantiation_dict["place"])
        expect(page, f"{task.instantiation_dict['day']} | {task.extra['answer']}")
        yield page.exit(task.extra["answer"])

    def wrong_ending(self, task, page):
        yield from open_place(page, task.instantiation_dict["place"])
        yield page.exit(task.extra["wrong"])


class RouteFact(MapFamily):
    """A fact of the route between two places, read off the directions page."""

    kind = "info"
    held_out = ("a", "b")

    def sample(self, db, rng, split):
        rows = places(db)
        a = pick(rng, rows, split, key=lambda p: p["name"])
        far = [p for p in rows if p["node_id"] != a["node_id"] and straight_m(a, p) >= 500]
        b = pick(rng, far, split, key=lambda p: p["name"])
        return {"a": a["name"], "b": b["name"], **self.more_slots(rng)}

    def more_slots(self, rng) -> dict:
        return {}


class TravelTime(RouteFact):
    name = "map.travel_time"
    template = "How long does it take to get from {a} to {b} {how}?"
    template_id = 502

    def more_slots(self, rng):
        return {"how": rng.choice(list(HOW))}

    def build(self, db, slots):
        mode = HOW[slots["how"]]
        minutes = {m: route(db, slots["a"], slots["b"], m).minutes for m in HOW.values()}
        spec = answer_fuzzy(str(minutes[mode]))  # the number as a token: "5" never matches "15 min"
        other = next(m for m in ("walk", "bike", "drive") if minutes[m] != minutes[mode])
        wrong = ensure_wrong(spec, f"{minutes[other]} min")
        return {"eval": spec, "difficulty": 6,
                "extra": {"mode": mode, "answer": f"{minutes[mode]} min", "wrong": wrong}}  # fmt: skip

    def oracle(self, task, page):
        d = task.instantiation_dict
        yield from get_directions(page, d["a"], d["b"], task.extra["mode"])
        expect(page, f"Time: {task.extra['answer']}")
        yield page.exit(task.extra["answer"])

    def wrong_ending(self, task, page):  # forgets to choose the mode
        d = task.instantiation_dict
        yield from get_directions(page, d["a"], d["b"], "drive")
        yield page.exit(task.extra["wrong"])


class DrivingDistance(RouteFact):
    name = "map.driving_distance"
    template = "What is the driving distance from {a} to {b}?"
    template_id = 503

    def build(self, db, slots):
        shown = {
            m: format_distance(route(db, slots["a"], slots["b"], m).metres)
            for m in ("drive", "walk", "bike")
        }
        spec = answer_includes(shown["drive"])
        other = next((m for m in ("walk", "bike") if shown[m] != shown["drive"]), "walk")
        return {"eval": spec, "difficulty": 5,
                "extra": {"answer": shown["drive"], "wrong_mode": other, "wrong": ensure_wrong(spec, shown[other])}}  # fmt: skip

    def oracle(self, task, page):
        d = task.instantiation_dict
        yield from get_directions(page, d["a"], d["b"], "drive")
        expect(page, f"Distance: {task.extra['answer']}")
        yield page.exit(task.extra["answer"])

    def wrong_ending(self, task, page):  # the walking (or cycling) route's distance
        d = task.instantiation_dict
        yield from get_directions(page, d["a"], d["b"], task.extra["wrong_mode"])
        yield page.exit(task.extra["wrong"])


class ClosestOfCategory(MapFamily):
    name = "map.closest_of_category"
    template = "What is the closest {category} to {place}?"
    template_id = 504
    kind = "info"

    def sample(self, db, rng, split):
        p = pick(rng, places(db), split, key=lambda p: p["name"])
        return {"place": p["name"], "category": category_word(rng.choice(category_slugs()))}

    def build(self, db, slots):
        slug = next(s for s in category_slugs() if category_word(s) == slots["category"])
        best, second, radius = nearest_two(db, place_row(db, slots["place"]), slug)
        return {"eval": answer_includes(best["name"]), "difficulty": 6 if radius == 1000 else 7,
                "extra": {"slug": slug, "radius": radius, "answer": best["name"], "wrong": second["name"]}}  # fmt: skip

    def oracle(self, task, page):
        x = task.extra
        yield from open_nearby(page, task.instantiation_dict["place"], x["slug"], x["radius"])
        links = [e.text for e in page.find_all(tag="a")]
        expect(page, x["answer"])
        if links.index(x["answer"]) > links.index(x["wrong"]):
            raise LookupError("the nearest place is not listed first")
        yield page.exit(x["answer"])

    def wrong_ending(self, task, page):
        x = task.extra
        yield from open_nearby(page, task.instantiation_dict["place"], x["slug"], x["radius"])
        yield page.exit(x["wrong"])


class CountWithin(MapFamily):
    name = "map.count_within"
    template = "How many {plural} are within {radius} of {place}?"
    template_id = 505
    kind = "info"

    def sample(self, db, rng, split):
        p = pick(rng, places(db), split, key=lambda p: p["name"])
        slug = rng.choice(category_slugs())
        return {
            "plural": category_plural(slug),
            "radius": rng.choice(list(RADII.values())),
            "place": p["name"],
        }

    def build(self, db, slots):
        slug = next(s for s in category_slugs() if category_plural(s) == slots["plural"])
        radius = next(m for m, label in RADII.items() if label == slots["radius"])
        p = place_row(db, slots["place"])
        counts = {m: len(nearby(db, p, m, slug)) for m in RADII}
        wrong_radius = (
            next(m for m in (1000, 2000, 500) if counts[m] != counts[radius])
            if len(set(counts.values())) > 1
            else None
        )
        spec = answer_exact(str(counts[radius]))
        wrong = ensure_wrong(
            spec, str(counts[wrong_radius] if wrong_radius else counts[radius] + 1)
        )
        return {"eval": spec, "difficulty": 6,
                "extra": {"slug": slug, "radius_m": radius, "answer": str(counts[radius]), "wrong": wrong}}  # fmt: skip

    def oracle(self, task, page):
        x = task.extra
        yield from open_nearby(page, task.instantiation_dict["place"], x["slug"], x["radius_m"])
        noun = category_word(x["slug"]) if x["answer"] == "1" else category_plural(x["slug"])
        expect(page, f"{x['answer']} {noun} within {RADII[x['radius_m']]}")
        yield page.exit(x["answer"])

    def wrong_ending(self, task, page):  # keeps the default radius (or miscounts)
        yield from open_nearby(page, task.instantiation_dict["place"], task.extra["slug"])
        yield page.exit(task.extra["wrong"])

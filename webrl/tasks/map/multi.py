"""Multi-requirement map tasks: find-then-act, compare two routes, save and annotate.

"Nearest" always means the first place on the nearby list (straight-line
distance), the order the site itself shows.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, ClassVar

from webrl.sites.map.data import category_plural
from webrl.tasks.family import (
    InfeasibleSlots,
    answer_fuzzy,
    answer_includes,
    pick,
    state_check,
    url_is,
)
from webrl.tasks.map.base import (
    HOW,
    NEW_NOTES,
    MapFamily,
    category_slugs,
    category_word,
    directions_url,
    ensure_wrong,
    expect,
    fill_directions,
    get_directions,
    nearby,
    nearest_two,
    open_nearby,
    open_place,
    place_row,
    places,
    route,
    saved_places,
    unsaved_places,
)
from webrl.tasks.map.changes import SAVED, note_is, saved_state
from webrl.tasks.schema import Task

if TYPE_CHECKING:
    from webrl.env.page_view import PageView


class NearestFamily(MapFamily):
    """Tasks about the nearest place of a category to a held-out place."""

    kind = "multi"

    def sample(self, db, rng, split):
        p = pick(rng, places(db), split, key=lambda p: p["name"])
        return {
            "place": p["name"],
            "category": category_word(rng.choice(category_slugs())),
            **self.more_slots(rng),
        }

    def more_slots(self, rng) -> dict:
        return {}

    def nearest(self, db, slots) -> tuple:
        slug = next(s for s in category_slugs() if category_word(s) == slots["category"])
        best, second, radius = nearest_two(db, place_row(db, slots["place"]), slug)
        return slug, best, second, radius

    def to_target(self, task: Task, page: PageView, target: str) -> Iterator[str]:
        """Open the nearby list of the category and follow `target`'s link."""
        x = task.extra
        yield from open_nearby(page, task.instantiation_dict["place"], x["slug"], x["radius"])
        yield from page.click(target, tag="a", exact=True)


class SaveNearest(NearestFamily):
    name = "map.save_nearest"
    template = "Find the nearest {category} to {place} and save it to my places."
    template_id = 530
    require_login = True

    def build(self, db, slots):
        slug, best, second, radius = self.nearest(db, slots)
        free = {p["id"] for p in unsaved_places(db)}
        if best["id"] not in free or second["id"] not in free:
            raise InfeasibleSlots("the nearest places are already saved")
        return {"eval": state_check(saved_state(best["id"], SAVED)), "difficulty": 8,
                "extra": {"slug": slug, "radius": radius, "answer": best["name"], "wrong": second["name"]}}  # fmt: skip

    def oracle(self, task, page):
        yield from self.to_target(task, page, task.extra["answer"])
        yield from page.click("Save to my places", tag="button", exact=True)
        yield page.exit("Done")

    def wrong_ending(self, task, page):
        yield from self.to_target(task, page, task.extra["wrong"])
        yield from page.click("Save to my places", tag="button", exact=True)
        yield page.exit("Done")


class RouteToNearest(NearestFamily):
    name = "map.route_to_nearest"
    template = "Show directions from {place} to the nearest {category} {how}."
    template_id = 533

    def more_slots(self, rng):
        return {"how": rng.choice(list(HOW))}

    def build(self, db, slots):
        slug, best, second, radius = self.nearest(db, slots)
        mode = HOW[slots["how"]]
        return {"eval": url_is(directions_url(slots["place"], best["name"], mode)), "difficulty": 11,
                "extra": {"slug": slug, "radius": radius, "mode": mode, "answer": best["name"],
                          "wrong": second["name"]}}  # fmt: skip

    def _route(self, task: Task, page: PageView, target: str) -> Iterator[str]:
        yield from self.to_target(task, page, target)
        yield from page.click("Directions to here", tag="a", exact=True)
        yield from fill_directions(page, task.instantiation_dict["place"], None, task.extra["mode"])
        yield page.exit("")

    def oracle(self, task, page):
        yield from self._route(task, page, task.extra["answer"])

    def wrong_ending(self, task, page):
        yield from self._route(task, page, task.extra["wrong"])


class NearestTravelTime(RouteToNearest):
    name = "map.nearest_travel_time"
    template = "How long does it take to get from {place} to the nearest {category} {how}?"
    template_id = 534

    def build(self, db, slots):
        slug, best, second, radius = self.nearest(db, slots)
        mode = HOW[slots["how"]]
        minutes = route(db, slots["place"], best["name"], mode).minutes
        spec = answer_fuzzy(str(minutes))
        wrong = ensure_wrong(spec, f"{route(db, slots['place'], second['name'], mode).minutes} min")
        return {"eval": spec, "difficulty": 12,
                "extra": {"slug": slug, "radius": radius, "mode": mode, "answer": f"{minutes} min",
                          "target": best["name"], "decoy": second["name"], "wrong": wrong}}  # fmt: skip

    def _time(self, task: Task, page: PageView, target: str, answer: str) -> Iterator[str]:
        yield from self.to_target(task, page, target)
        yield from page.click("Directions to here", tag="a", exact=True)
        yield from fill_directions(page, task.instantiation_dict["place"], None, task.extra["mode"])
        yield page.exit(answer)

    def oracle(self, task, page):
        x = task.extra
        yield from self._time(task, page, x["target"], x["answer"])

    def wrong_ending(self, task, page):
        x = task.extra
        yield from self._time(task, page, x["decoy"], x["wrong"])


class SaveNearestN(MapFamily):
    name = "map.save_nearest_n"
    template = "Save the {count} {plural} nearest to {place} to my places."
    template_id = 535
    kind = "multi"
    require_login = True
    COUNTS: ClassVar[dict[str, int]] = {"two": 2, "three": 3}

    def sample(self, db, rng, split):
        p = pick(rng, places(db), split, key=lambda p: p["name"])
        slug = rng.choice(category_slugs())
        return {
            "count": rng.choice(list(self.COUNTS)),
            "plural": category_plural(slug),
            "place": p["name"],
        }

    def build(self, db, slots):
        n = self.COUNTS[slots["count"]]
        slug = next(s for s in category_slugs() if category_plural(s) == slots["plural"])
        rows = nearby(db, place_row(db, slots["place"]), 2000, slug)
        free = {p["id"] for p in unsaved_places(db)}
        if (
            len(rows) <= n
            or rows[n][0] - rows[n - 1][0] < 30
            or any(r["id"] not in free for _d, r in rows[:n])
        ):
            raise InfeasibleSlots("no clear set of nearest unsaved places")
        radius = min(r for r in (500, 1000, 2000) if r >= rows[n - 1][0])
        targets = [r for _d, r in rows[:n]]
        return {"eval": state_check(*(saved_state(r["id"], SAVED) for r in targets)), "difficulty": 5 + 4 * n,
                "extra": {"slug": slug, "radius": radius, "targets": [r["name"] for r in targets]}}  # fmt: skip

    def _save_all(self, task: Task, page: PageView, names: list[str]) -> Iterator[str]:
        x = task.extra
        yield from open_nearby(page, task.instantiation_dict["place"], x["slug"], x["radius"])
        for name in names:
            yield from page.click(name, tag="a", exact=True)
            yield from page.click("Save to my places", tag="button", exact=True)
            yield page.go_back()  # the place page before saving
            yield page.go_back()  # the nearby list
        yield page.exit("Done")

    def oracle(self, task, page):
        yield from self._save_all(task, page, task.extra["targets"])

    def wrong_ending(self, task, page):  # stops one short
        yield from self._save_all(task, page, task.extra["targets"][:-1])


class CloserByWalking(MapFamily):
    name = "map.closer_by_walking"
    template = "Which is closer to {a} by walking: {b} or {c}?"
    template_id = 531
    kind = "multi"
    held_out = ("a", "b", "c")

    def sample(self, db, rng, split):
        rows = places(db)
        a = pick(rng, rows, split, key=lambda p: p["name"])
        b = pick(rng, [p for p in rows if p["id"] != a["id"]], split, key=lambda p: p["name"])
        c = pick(
            rng,
            [p for p in rows if p["id"] not in (a["id"], b["id"])],
            split,
            key=lambda p: p["name"],
        )
        return {"a": a["name"], "b": b["name"], "c": c["name"]}

    def build(self, db, slots):
        far = {k: route(db, slots["a"], slots[k], "walk").metres for k in ("b", "c")}
        if abs(far["b"] - far["c"]) < 150:
            raise InfeasibleSlots("the two walks are too close to call")
        near, other = ("b", "c") if far["b"] < far["c"] else ("c", "b")
        answer, wrong = slots[near], slots[other]
        return {"eval": answer_includes(answer), "difficulty": 9,
                "extra": {"answer": answer, "wrong": wrong}}  # fmt: skip

    def _compare(self, task: Task, page: PageView, answer: str) -> Iterator[str]:
        d = task.instantiation_dict
        yield from get_directions(page, d["a"], d["b"], "walk")
        yield from page.type(d["c"], name="to")
        yield from page.click("Get directions", tag="button", exact=True)
        page.find(d["c"], tag="a", exact=True)  # the second route is shown
        expect(page, "Distance:")
        yield page.exit(answer)

    def oracle(self, task, page):
        yield from self._compare(task, page, task.extra["answer"])

    def wrong_ending(self, task, page):
        yield from self._compare(task, page, task.extra["wrong"])


class SaveWithNote(MapFamily):
    name = "map.save_with_note"
    template = 'Save {place} to my places with the note "{note}".'
    template_id = 532
    kind = "multi"
    require_login = True

    def sample(self, db, rng, split):
        p = pick(rng, unsaved_places(db), split, key=lambda p: p["name"])
        return {"place": p["name"], "note": rng.choice(NEW_NOTES)}

    def build(self, db, slots):
        p = place_row(db, slots["place"])
        if p["id"] in {q["id"] for q in saved_places(db)}:
            raise InfeasibleSlots("already saved")
        return {"eval": state_check(saved_state(p["id"], SAVED), note_is(p["id"], slots["note"])),
                "difficulty": 5}  # fmt: skip

    def _save(self, task: Task, page: PageView, with_note: bool) -> Iterator[str]:
        d = task.instantiation_dict
        yield from open_place(page, d["place"])
        yield from page.click("Save to my places", tag="button", exact=True)
        if with_note:
            yield from page.type(d["note"], name="note")
            yield from page.click("Save note", tag="button", exact=True)
        yield page.exit("Done")

    def oracle(self, task, page):
        yield from self._save(task, page, with_note=True)

    def wrong_ending(self, task, page):  # saves, but forgets the note
        yield from self._save(task, page, with_note=False)

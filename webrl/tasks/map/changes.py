"""State-changing map tasks (My places): judged by pages fetched after the episode."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from webrl.sites.map.geo import straight_m
from webrl.tasks.family import page_has, pick, state_check
from webrl.tasks.map.base import (
    NEW_NOTES,
    MapFamily,
    open_place,
    open_saved_place,
    place_row,
    saved_page,
    saved_places,
    unsaved_places,
)
from webrl.tasks.schema import Task

if TYPE_CHECKING:
    from webrl.env.page_view import PageView

SAVED, NOT_SAVED = "Saved to my places", "Not saved"


def saved_state(pid: int, state: str) -> dict:
    """program_html: the place page says whether the place is in my places."""
    return page_has(f"__MAP__/place/{pid}", [], locator="#saved-state", exact=state)


def note_is(pid: int, note: str) -> dict:
    return page_has(f"__MAP__/place/{pid}", [], locator="#saved-note", exact=note)


class SavePlace(MapFamily):
    name = "map.save_place"
    template = "Save {place} to my places."
    template_id = 520
    kind = "state"
    require_login = True

    def sample(self, db, rng, split):
        return {"place": pick(rng, unsaved_places(db), split, key=lambda p: p["name"])["name"]}

    def build(self, db, slots):
        p = place_row(db, slots["place"])
        others = [
            q for q in unsaved_places(db) if q["category"] == p["category"] and q["id"] != p["id"]
        ]
        wrong = min(others, key=lambda q: straight_m(p, q))["name"]
        return {
            "eval": state_check(saved_state(p["id"], SAVED)),
            "difficulty": 3,
            "extra": {"wrong": wrong},
        }

    def oracle(self, task, page):
        yield from open_place(page, task.instantiation_dict["place"])
        yield from page.click("Save to my places", tag="button", exact=True)
        yield page.exit("Done")

    def wrong_ending(self, task, page):  # saves the nearest place of the same kind
        yield from open_place(page, task.extra["wrong"])
        yield from page.click("Save to my places", tag="button", exact=True)
        yield page.exit("Done")


class AddNote(MapFamily):
    name = "map.add_note"
    template = 'Add the note "{note}" to my saved place {place}.'
    template_id = 521
    kind = "state"
    require_login = True

    def sample(self, db, rng, split):
        p = pick(rng, saved_places(db), split, key=lambda p: p["name"])
        return {"note": rng.choice(NEW_NOTES), "place": p["name"]}

    def build(self, db, slots):
        p = place_row(db, slots["place"])
        return {"eval": state_check(note_is(p["id"], slots["note"])),
                "difficulty": 4 + saved_page(db, p["name"])}  # fmt: skip

    def _write(self, task: Task, page: PageView, save: bool) -> Iterator[str]:
        d = task.instantiation_dict
        yield from open_saved_place(page, d["place"])
        yield from page.type(d["note"], name="note")
        if save:
            yield from page.click("Save note", tag="button", exact=True)
        yield page.exit("Done")

    def oracle(self, task, page):
        yield from self._write(task, page, save=True)

    def wrong_ending(self, task, page):  # types the note but never saves it
        yield from self._write(task, page, save=False)


class UnsavePlace(MapFamily):
    name = "map.unsave_place"
    template = "Remove {place} from my places."
    template_id = 522
    kind = "state"
    require_login = True

    def sample(self, db, rng, split):
        return {"place": pick(rng, saved_places(db), split, key=lambda p: p["name"])["name"]}

    def build(self, db, slots):
        p = place_row(db, slots["place"])
        wrong = next(q["name"] for q in saved_places(db) if q["id"] != p["id"])
        return {"eval": state_check(saved_state(p["id"], NOT_SAVED)),
                "difficulty": 2 + saved_page(db, p["name"]), "extra": {"wrong": wrong}}  # fmt: skip

    def oracle(self, task, page):
        yield from open_saved_place(page, task.instantiation_dict["place"])
        yield from page.click("Remove from my places", tag="button", exact=True)
        yield page.exit("Done")

    def wrong_ending(self, task, page):  # removes another saved place
        yield from open_saved_place(page, task.extra["wrong"])
        yield from page.click("Remove from my places", tag="button", exact=True)
        yield page.exit("Done")

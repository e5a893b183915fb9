"""Shared pieces of the map's task families: seed-data queries (places, routes,
nearby lists, my places), oracle moves, notes the agent is asked to write, and
the `MapFamily` base. Answers are computed with the site's own geo/routing
functions over the seed database, so they match what the pages show.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from typing import TYPE_CHECKING, ClassVar
from urllib.parse import quote_plus

from webrl.sites.map.app import PER_PAGE
from webrl.sites.map.data import CATEGORIES, DEFAULT_USER, category_label
from webrl.sites.map.geo import MODES, RADII, straight_m
from webrl.sites.map.routing import RoadGraph, Route, plan_route
from webrl.tasks.evaluators import string_score
from webrl.tasks.family import InfeasibleSlots, SeedDB, TaskFamily
from webrl.tasks.family import expect as expect  # re-exported for the site's families

if TYPE_CHECKING:
    from webrl.env.page_view import PageView

NA = "N/A"
ME = DEFAULT_USER[0]
HOW = {"by car": "drive", "by bike": "bike", "on foot": "walk"}  # how an instruction names a mode
# Notes the agent is asked to write: none occurs in the seed (see data.SEED_NOTES).
NEW_NOTES = [
    "Try the lemon cake next time", "Meet Jo by the main entrance", "Open late on Fridays",
    "Good spot for a quick lunch", "Ask about the student discount", "Bring a reusable bag",
    "Wheelchair ramp at the side door", "Free wifi, password at the counter", "Visit again in spring",
    "Nice view from the top floor", "Recommended by Alex", "Park the bike out front",
]  # fmt: skip


# --- seed-data queries ------------------------------------------------------------------


def map_db(db: SeedDB) -> sqlite3.Connection:
    return db["map"]


def places(db: SeedDB) -> list[sqlite3.Row]:
    return map_db(db).execute("SELECT * FROM places ORDER BY id").fetchall()


def place_row(db: SeedDB, name: str) -> sqlite3.Row:
    row = map_db(db).execute("SELECT * FROM places WHERE name = ?", (name,)).fetchone()
    if row is None:
        raise InfeasibleSlots(f"no place named {name!r}")
    return row


def route(db: SeedDB, a: str, b: str, mode: str) -> Route:
    found = plan_route(RoadGraph(map_db(db)), place_row(db, a), place_row(db, b), mode)
    if found is None:
        raise InfeasibleSlots(f"no {mode} route from {a!r} to {b!r}")
    return found


def nearby(
    db: SeedDB, place: sqlite3.Row, radius: int, category: str = ""
) -> list[tuple[int, sqlite3.Row]]:
    """(metres, place) within `radius` of `place`, in the nearby page's order."""
    rows = [(straight_m(place, r), r) for r in places(db) if r["id"] != place["id"]]
    rows = [(d, r) for d, r in rows if d <= radius and (not category or r["category"] == category)]
    return sorted(rows, key=lambda x: (x[0], x[1]["name"]))


def nearest_two(
    db: SeedDB, place: sqlite3.Row, category: str
) -> tuple[sqlite3.Row, sqlite3.Row, int]:
    """(nearest, runner-up, radius that shows both) of a category; unambiguous only."""
    rows = nearby(db, place, max(RADII), category)
    if len(rows) < 2 or rows[1][0] - rows[0][0] < 30:
        raise InfeasibleSlots(f"no clear nearest {category} to {place['name']!r}")
    radius = min(r for r in RADII if r >= rows[1][0])
    return rows[0][1], rows[1][1], radius


def saved_places(db: SeedDB) -> list[sqlite3.Row]:
    """The default user's saved places in the My places order (with `note`)."""
    return (
        map_db(db)
        .execute(
            "SELECT p.*, s.note FROM saved s JOIN places p ON p.id = s.place_id"
            " JOIN users u ON u.id = s.user_id WHERE u.username = ? ORDER BY s.saved_on, s.id",
            (ME,),
        )
        .fetchall()
    )


def unsaved_places(db: SeedDB) -> list[sqlite3.Row]:
    mine = {p["id"] for p in saved_places(db)}
    return [p for p in places(db) if p["id"] not in mine]


def saved_page(db: SeedDB, name: str) -> int:
    names = [p["name"] for p in saved_places(db)]
    return names.index(name) // PER_PAGE + 1 if name in names else 1


def category_word(slug: str) -> str:
    """How an instruction names one place of a category ("post office")."""
    return category_label(slug).lower()


def category_slugs() -> list[str]:
    return [c[0] for c in CATEGORIES]


def directions_url(a: str, b: str, mode: str) -> str:
    return f"__MAP__/directions?from={quote_plus(a)}&to={quote_plus(b)}&mode={mode}"


def ensure_wrong(reference: dict, wrong: str) -> str:
    """`wrong` if the string evaluator scores it 0 against `reference`, else no task."""
    if string_score(reference["reference_answers"], wrong) != 0:
        raise InfeasibleSlots(f"wrong answer {wrong!r} would pass")
    return wrong


# --- oracle building blocks -------------------------------------------------------------


def open_place(page: PageView, name: str) -> Iterator[str]:
    yield from page.search(name, name="q")
    yield from page.click(name, tag="a", exact=True)


def open_nearby(page: PageView, name: str, category: str = "", radius: int = 1000) -> Iterator[str]:
    """From anywhere: the place's nearby list, filtered and with the radius set."""
    yield from open_place(page, name)
    yield from page.click("Nearby places", tag="a", exact=True)
    if radius != 1000:
        yield from page.select(RADII[radius], name="radius")
    if category:
        yield from page.select(category_label(category), name="category")
    yield from page.click("Show", tag="button", exact=True)


def fill_directions(page: PageView, a: str | None, b: str | None, mode: str) -> Iterator[str]:
    """On the directions form: type the ends given (None keeps the field), choose the mode, submit."""
    if a is not None:
        yield from page.type(a, name="from")
    if b is not None:
        yield from page.type(b, name="to")
    if mode != "drive":
        yield from page.select(MODES[mode][0], name="mode")
    yield from page.click("Get directions", tag="button", exact=True)


def get_directions(page: PageView, a: str, b: str, mode: str) -> Iterator[str]:
    yield from page.click("Directions", tag="a", exact=True)
    yield from fill_directions(page, a, b, mode)


def open_saved_place(page: PageView, name: str) -> Iterator[str]:
    """Through My places (paging as needed) to a saved place's page."""
    yield from page.click("My places", tag="a", exact=True)
    for _ in range(10):
        if page.has(name, tag="a", exact=True):
            break
        yield from page.click("Next page", tag="a", exact=True)
    yield from page.click(name, tag="a", exact=True)


# --- family base ------------------------------------------------------------------------


class MapFamily(TaskFamily):
    sites: ClassVar[tuple[str, ...]] = ("map",)
    start_url: ClassVar[str] = "__MAP__/"
    require_login: ClassVar[bool] = False
    held_out: ClassVar[tuple[str, ...]] = ("place",)  # slots whose values never cross splits

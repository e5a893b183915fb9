"""The map site through WSGI: seed data, routing, search, nearby, directions, my places, isolation."""

from __future__ import annotations

import re
import sqlite3
from urllib.parse import parse_qs, urlsplit

import pytest
from lxml import html as lxml_html
from werkzeug.test import Client

from webrl.sites import map as map_site
from webrl.sites.map.app import STEPS_PER_PAGE
from webrl.sites.map.data import build_db
from webrl.sites.map.geo import ROAD_TYPES, format_distance, haversine_m, travel_minutes
from webrl.sites.map.routing import RoadGraph, plan_route
from webrl.sites.world import WorldApp


@pytest.fixture(scope="module")
def world() -> WorldApp:
    return WorldApp({"map": map_site.SPEC})


@pytest.fixture(scope="module")
def seed(world) -> sqlite3.Connection:
    return world.store.snapshot("map")


class Browser:
    """A werkzeug client bound to one episode state (and its own cookies)."""

    def __init__(self, world: WorldApp, state=None):
        self.state = state or world.new_state()
        self.client = Client(world)
        self.last_url = ""

    def get(self, url: str, follow_redirects: bool = False):
        resp = self.client.get(url, environ_base={"webrl.world": self.state})
        return self._follow(resp) if follow_redirects else resp

    def post(self, url: str, data: dict, follow_redirects: bool = False):
        resp = self.client.post(url, data=data, environ_base={"webrl.world": self.state})
        return self._follow(resp) if follow_redirects else resp

    def _follow(self, resp):
        # werkzeug's own redirect following drops environ_base (our episode state)
        while resp.status_code in (301, 302, 303):
            self.last_url = resp.headers["Location"]
            resp = self.client.get(self.last_url, environ_base={"webrl.world": self.state})
        return resp

    def html(self, url: str) -> str:
        resp = self.get(url, follow_redirects=True)
        assert resp.status_code == 200, (url, resp.status_code)
        return resp.get_data(as_text=True)

    def text(self, url: str) -> str:
        return page_text(self.html(url))

    def login(self) -> Browser:
        resp = self.post("/map/login", {"username": "walker", "password": "walker-pass"})
        assert resp.status_code == 302
        return self


def page_text(body: str) -> str:
    root = lxml_html.document_fromstring(body)
    for bad in root.iter("script", "style", "head"):
        bad.drop_tree()
    return re.sub(r"\s+", " ", root.text_content()).strip()


def select(body: str, css: str) -> list[str]:
    root = lxml_html.document_fromstring(body)
    return [re.sub(r"\s+", " ", n.text_content()).strip() for n in root.cssselect(css)]


def listed(body: str) -> list[str]:
    return select(body, "ul.places li > a")


def distances(body: str) -> list[int]:
    out = []
    for d in select(body, "ul.places .distance"):
        value, unit = d.split()
        out.append(round(float(value) * 1000) if unit == "km" else int(value))
    return out


def place(seed, name: str) -> sqlite3.Row:
    return seed.execute("SELECT * FROM places WHERE name = ?", (name,)).fetchone()


@pytest.fixture
def browser(world) -> Browser:
    return Browser(world)


# --- seed data and geometry -----------------------------------------------------------------


def test_seed_data_is_realistic_and_deterministic(seed):
    count = lambda sql: seed.execute(sql).fetchone()[0]  # noqa: E731
    assert 280 <= count("SELECT COUNT(*) FROM places") <= 320
    assert count("SELECT COUNT(DISTINCT category) FROM places") == 15
    assert count("SELECT MIN(n) FROM (SELECT COUNT(*) AS n FROM places GROUP BY category)") >= 5
    assert count("SELECT COUNT(*) FROM hours") == 7 * count("SELECT COUNT(*) FROM places")
    assert count("SELECT COUNT(DISTINCT street || number) FROM places") == count(
        "SELECT COUNT(*) FROM places"
    )
    types = {r[0] for r in seed.execute("SELECT DISTINCT road_type FROM edges")}
    assert types == set(ROAD_TYPES)
    names = [r[0].lower() for r in seed.execute("SELECT name FROM places")]
    for a in names:  # a name is never part of another, so looking one up finds exactly it
        assert sum(a in b for b in names) == 1, a
    for lat, lon in seed.execute("SELECT lat, lon FROM places"):
        assert round(lat, 5) == lat and round(lon, 5) == lon
    other = sqlite3.connect(":memory:")
    build_db(other)
    dump = lambda c: "\n".join(c.iterdump())  # noqa: E731
    assert dump(other) == dump(seed)


def test_every_place_is_reachable_in_every_mode(seed):
    graph = RoadGraph(seed)
    rows = seed.execute("SELECT * FROM places ORDER BY id").fetchall()
    hub = rows[0]
    for mode in ("drive", "bike", "walk"):
        for p in rows[1::7]:
            r = plan_route(graph, hub, p, mode)
            assert r is not None and r.metres >= hub["access_m"] + p["access_m"]
            assert r.minutes == travel_minutes(r.metres, mode)


def test_formats_and_speeds_are_hand_checkable():
    assert format_distance(850) == "850 m" and format_distance(999) == "999 m"
    assert format_distance(1000) == "1.0 km" and format_distance(2349) == "2.3 km"
    assert format_distance(2350) == "2.4 km"
    assert travel_minutes(5000, "walk") == 60 and travel_minutes(15000, "bike") == 60
    assert travel_minutes(1000, "drive") == 2  # 1.5 min rounds half up
    assert travel_minutes(10, "drive") == 1  # never 0
    assert round(haversine_m(0, 0, 1, 0)) == 111195  # one degree of latitude


def tiny_graph() -> sqlite3.Connection:
    """A square A-B-C-D with a footpath A-C across it and an expressway B-D."""
    c = sqlite3.connect(":memory:")
    c.row_factory = sqlite3.Row
    c.executescript(
        "CREATE TABLE nodes (id INTEGER PRIMARY KEY, name TEXT, lat REAL, lon REAL);"
        "CREATE TABLE edges (id INTEGER PRIMARY KEY, a INT, b INT, street TEXT, road_type TEXT, length_m INT);"
    )
    c.executemany(
        "INSERT INTO nodes VALUES (?, ?, 0, 0)", [(i, n) for i, n in enumerate("ABCD", 1)]
    )
    c.executemany(
        "INSERT INTO edges (a, b, street, road_type, length_m) VALUES (?, ?, ?, ?, ?)",
        [(1, 2, "North St", "residential", 100), (2, 3, "East St", "residential", 100),
         (3, 4, "South St", "residential", 100), (4, 1, "West St", "residential", 100),
         (1, 3, "Diagonal Path", "footway", 141), (2, 4, "Expressway", "motorway", 90)],
    )  # fmt: skip
    return c


def test_dijkstra_uses_only_the_roads_of_the_mode():
    g = RoadGraph(tiny_graph())
    assert g.shortest(1, 3, "walk") == (141, [("Diagonal Path", "footway", 141)])
    drive_m, legs = g.shortest(1, 3, "drive")
    assert drive_m == 200 and all(kind == "residential" for _s, kind, _m in legs)
    assert g.shortest(2, 4, "drive")[0] == 90
    assert g.shortest(2, 4, "bike")[0] == 200  # neither the expressway nor the footpath


def test_routes_differ_by_mode_somewhere(seed):
    graph = RoadGraph(seed)
    rows = seed.execute("SELECT * FROM places ORDER BY id").fetchall()
    walk_shorter = drive_shorter = 0
    for a, b in zip(rows[:60], rows[60:120], strict=True):
        walk, drive = plan_route(graph, a, b, "walk"), plan_route(graph, a, b, "drive")
        walk_shorter += walk.metres < drive.metres
        drive_shorter += drive.metres < walk.metres
    assert walk_shorter > 5 and drive_shorter > 0  # footpaths and the expressway both matter


# --- pages ----------------------------------------------------------------------------------


def test_home_lists_categories(browser):
    text = browser.text("/map/")
    assert "Pharmacies (20)" in text and "Post offices (10)" in text


def test_search_by_name_and_by_category(browser, seed):
    name = seed.execute("SELECT name FROM places WHERE id = 7").fetchone()[0]
    assert listed(browser.html(f"/map/search?q={name}")) == [name]
    body = browser.html("/map/search?q=pharmacies")
    assert "20 places found" in page_text(body)
    first = listed(body)
    assert len(first) == 10 and first == sorted(first)
    second = listed(browser.html("/map/search?q=pharmacies&page=2"))
    assert len(second) == 10 and not set(first) & set(second) and first[-1] < second[0]
    assert "0 places found" in browser.text("/map/search?q=zzzz")


def test_search_near_sorts_by_distance(browser, seed):
    hub = seed.execute("SELECT * FROM places WHERE id = 1").fetchone()
    body = browser.html(f"/map/search?category=cafe&near={hub['name'].lower()}")
    ds = distances(body)
    assert len(ds) == 10 and ds == sorted(ds)
    nearest = place(seed, listed(body)[0])
    assert ds[0] == round(haversine_m(hub["lat"], hub["lon"], nearest["lat"], nearest["lon"]))
    by_name = listed(browser.html(f"/map/search?category=cafe&near={hub['name']}&sort=name"))
    assert by_name == sorted(by_name)
    assert "No single place named" in browser.text("/map/search?category=cafe&near=Nowhere+Special")


def test_place_page(browser, seed):
    p = seed.execute("SELECT * FROM places WHERE id = 1").fetchone()
    body = browser.html("/map/place/1")
    assert select(body, "#address") == [f"{p['number']} {p['street']}, {p['district']}"]
    assert select(body, "#coordinates") == [f"{p['lat']:.5f}, {p['lon']:.5f}"]
    assert len(select(body, "#hours tr")) == 8
    text = page_text(body)
    assert "Directions from here" in text and "Sign in to save this place" in text
    assert "Save to my places" not in text
    assert browser.get("/map/place/99999").status_code == 404


def test_nearby_filters_by_radius_and_category(browser, seed):
    body = browser.html("/map/place/1/nearby")
    ds = distances(body)
    assert ds == sorted(ds) and all(d <= 1000 for d in ds)
    total = int(select(body, "#nearby-count")[0].split()[0])
    wide = int(
        select(browser.html("/map/place/1/nearby?radius=2000"), "#nearby-count")[0].split()[0]
    )
    narrow = int(
        select(browser.html("/map/place/1/nearby?radius=500"), "#nearby-count")[0].split()[0]
    )
    assert narrow < total < wide
    cafes = browser.html("/map/place/1/nearby?radius=2000&category=cafe")
    assert all(place(seed, n)["category"] == "cafe" for n in listed(cafes))
    assert "cafes within 2 km" in select(cafes, "#nearby-count")[0]
    assert "Larkspur Grocers" not in listed(browser.html("/map/place/1/nearby?radius=2000"))


def test_directions_redirect_to_canonical_url_and_show_the_route(browser, seed):
    a, b = (seed.execute("SELECT * FROM places WHERE id = ?", (i,)).fetchone() for i in (1, 6))
    resp = browser.get(f"/map/directions?from={a['name'].upper()}&to={b['name'][2:-2]}")
    assert resp.status_code == 302
    query = parse_qs(urlsplit(resp.headers["Location"]).query)
    assert query == {"from": [a["name"]], "to": [b["name"]], "mode": ["drive"]}
    for mode in ("drive", "bike", "walk"):
        body = browser.html(f"/map/directions?from={a['name']}&to={b['name']}&mode={mode}")
        expected = plan_route(RoadGraph(seed), a, b, mode)
        assert select(body, "#route-distance") == [format_distance(expected.metres)]
        assert select(body, "#route-time") == [f"{expected.minutes} min"]
        assert select(body, "#route-steps li")[0].startswith(f"Leave {a['name']}")


def test_long_routes_paginate_their_steps(browser, seed):
    graph = RoadGraph(seed)
    rows = seed.execute("SELECT * FROM places ORDER BY id").fetchall()
    pairs = ((a, b) for a in rows[:40] for b in rows[40:])
    a, b = next(
        (a, b) for a, b in pairs if len(plan_route(graph, a, b, "walk").steps) > STEPS_PER_PAGE
    )
    url = f"/map/directions?from={a['name']}&to={b['name']}&mode=walk"
    first, second = browser.html(url), browser.html(url + "&page=2")
    assert len(select(first, "#route-steps li")) == STEPS_PER_PAGE and "Next page" in page_text(
        first
    )
    assert select(second, "#route-steps li")[-1].startswith(f"Arrive at {b['name']}")


def test_directions_errors(browser):
    text = browser.text("/map/directions?from=Lark&to=Nowhere+Special")
    assert 'No single place named "Lark" for the start. Did you mean:' in text
    assert 'No single place named "Nowhere Special"' in text
    assert "same place" in browser.text(
        "/map/directions?from=Larkspur+Grocers&to=Larkspur+Grocers&mode=walk"
    )


def test_user_input_is_escaped(browser):
    body = browser.html("/map/search?q=<script>alert(1)</script>")
    assert "<script>alert" not in body and "&lt;script&gt;" in body
    body = browser.html("/map/directions?from=<b>x</b>&to=y")
    assert "<b>x</b>" not in body


# --- my places ----------------------------------------------------------------------------------


def test_my_places_need_login(browser):
    resp = browser.get("/map/saved")
    assert resp.status_code == 302 and "/map/login" in resp.headers["Location"]
    resp = browser.post("/map/place/1/save", {})
    assert resp.status_code == 302 and "/map/login" in resp.headers["Location"]


def test_save_note_and_remove(world, seed):
    b = Browser(world).login()
    assert "18 saved places" in b.text("/map/saved")
    assert select(b.html("/map/place/1"), "#saved-state") == ["Not saved"]
    resp = b.post("/map/place/1/save", {})
    assert resp.status_code == 302  # PRG
    body = b.html(resp.headers["Location"])
    assert (
        select(body, "#saved-state") == ["Saved to my places"] and "Saved Larkspur Grocers" in body
    )
    b.post("/map/place/1/note", {"note": "  <i>Meet</i>   at noon "})
    body = b.html("/map/place/1")
    assert select(body, "#saved-note") == ["<i>Meet</i> at noon"] and "<i>Meet" not in body
    assert "19 saved places" in b.text("/map/saved")
    assert "Larkspur Grocers" in b.text("/map/saved?page=2")
    resp = b.post("/map/place/1/unsave", {"back": "saved"})
    assert resp.headers["Location"].startswith("/map/saved")
    assert select(b.html("/map/place/1"), "#saved-state") == ["Not saved"]
    assert "Save the place first" in b.text(
        b.post("/map/place/2/note", {"note": "x"}).headers["Location"]
    )


def test_states_are_isolated(world):
    a, b = Browser(world).login(), Browser(world).login()
    a.post("/map/place/3/save", {})
    assert select(a.html("/map/place/3"), "#saved-state") == ["Saved to my places"]
    assert select(b.html("/map/place/3"), "#saved-state") == ["Not saved"]
    assert (
        world.store.snapshot("map")
        .execute("SELECT COUNT(*) FROM saved WHERE place_id = 3")
        .fetchone()[0]
        == 0
    )

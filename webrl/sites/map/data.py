"""The map's schema and deterministic seed data: the city of Larkport.

A 12 x 14 street grid (east-west streets, north-south avenues) with jittered
intersections, a few missing blocks, a pedestrian zone in the Old Town,
diagonal footpaths and cycle paths, and a car-only expressway; about 300
named places over 15 categories, each attached to an intersection through a
short access leg. Everything comes from one `random.Random(SEED)`.
"""

from __future__ import annotations

import random
import sqlite3
from collections import deque

from webrl.sites.common import AUTH_SCHEMA, hash_password
from webrl.sites.map.geo import MODES, ROAD_TYPES, haversine_m

SEED = 20240521
TODAY = "2024-05-21"
CITY = "Larkport"
DEFAULT_USER = ("walker", "walker-pass")
ROWS, COLS = 12, 14
NW_LAT, NW_LON = 44.65200, -63.61800  # the north-west corner of the grid
DLAT, DLON = 0.00190, 0.00270  # about 210 m between intersections both ways

SCHEMA = """
CREATE TABLE users (
    id INTEGER PRIMARY KEY,
    username TEXT UNIQUE NOT NULL,
    password_hash TEXT NOT NULL,
    full_name TEXT NOT NULL
);
CREATE TABLE nodes (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    lat REAL NOT NULL,
    lon REAL NOT NULL
);
CREATE TABLE edges (
    id INTEGER PRIMARY KEY,
    a INTEGER NOT NULL REFERENCES nodes(id),
    b INTEGER NOT NULL REFERENCES nodes(id),
    street TEXT NOT NULL,
    road_type TEXT NOT NULL,
    length_m INTEGER NOT NULL
);
CREATE TABLE places (
    id INTEGER PRIMARY KEY,
    name TEXT UNIQUE NOT NULL,
    category TEXT NOT NULL,
    number INTEGER NOT NULL,
    street TEXT NOT NULL,
    district TEXT NOT NULL,
    lat REAL NOT NULL,
    lon REAL NOT NULL,
    phone TEXT UNIQUE NOT NULL,
    node_id INTEGER NOT NULL REFERENCES nodes(id),
    access_m INTEGER NOT NULL
);
CREATE INDEX places_category ON places(category);
CREATE TABLE hours (
    place_id INTEGER NOT NULL REFERENCES places(id),
    day INTEGER NOT NULL CHECK (day BETWEEN 0 AND 6),
    spec TEXT NOT NULL,
    PRIMARY KEY (place_id, day)
);
CREATE TABLE saved (
    id INTEGER PRIMARY KEY,
    user_id INTEGER NOT NULL REFERENCES users(id),
    place_id INTEGER NOT NULL REFERENCES places(id),
    note TEXT NOT NULL DEFAULT '',
    saved_on TEXT NOT NULL,
    UNIQUE (user_id, place_id)
);
"""

# fmt: off
ROW_STREETS = ["Quay Street", "Water Street", "Market Street", "Chapel Street", "King Street",
               "Queen Street", "Mill Street", "Church Street", "Bridge Street", "Union Street",
               "Garden Street", "Station Street"]
COL_STREETS = ["Alder Avenue", "Birch Avenue", "Cedar Avenue", "Dogwood Avenue", "Elm Avenue",
               "Fir Avenue", "Hawthorn Avenue", "Ivy Avenue", "Juniper Avenue", "Laurel Avenue",
               "Maple Avenue", "Oak Avenue", "Poplar Avenue", "Rowan Avenue"]
PRIMARY = ("King Street", "Elm Avenue", "Maple Avenue")
DISTRICTS = [["Northgate", "Castle Hill", "Eastbank"],
             ["Westfield", "Old Town", "Riverside"],
             ["Millbrook", "Harbourside", "Docklands"]]
FOOTPATHS = ["Linden Walk", "Canal Towpath", "Millrace Path", "Heron Trail", "Beacon Steps",
             "Ropewalk", "Chestnut Walk", "Ferry Path", "Quarry Trail", "Orchard Path",
             "Kingfisher Walk", "Bell Tower Steps", "Lantern Alley", "Saltmarsh Trail", "Mariners Walk",
             "Hollow Lane Path", "Cobbler's Alley", "Tannery Path", "Wren Walk", "Old Wall Path",
             "Fountain Walk", "Rampart Path", "Cloister Walk", "Sexton's Path", "Weaver's Walk"]
CYCLEWAYS = ["Greenway Cycle Track", "Harbour Cycleway", "Riverside Bike Path", "Northgate Bike Lane",
             "Eastbank Cycle Path", "Westfield Bike Path", "Docklands Cycleway", "Millbrook Cycle Track",
             "Castle Hill Bike Path", "Old Railway Cycle Path", "Dyke Road Cycleway", "Parkland Bike Path"]
EXPRESSWAY = "Harbour Expressway"
EXPRESSWAY_NODES = [(0, 0), (0, 4), (0, 9), (0, 13), (4, 13), (8, 13), (11, 13)]

WORDS = ["Bluebird", "Copper", "Lantern", "Velvet", "Saffron", "Sparrow", "Magnolia", "Ember",
         "Fennel", "Honeycomb", "Driftwood", "Willow", "Cobalt", "Marigold", "Pebble", "Thistle",
         "Clover", "Heron", "Kestrel", "Meadow", "Orchard", "Granite", "Amber", "Otter", "Raven",
         "Wren", "Hazel", "Rosemary", "Sorrel", "Tamarind", "Indigo", "Lighthouse", "Anchor",
         "Compass", "Windmill", "Tidewater", "Seabright", "Ironbridge", "Stonegate", "Greenhill",
         "Fairview", "Brookside", "Ashford", "Highfield", "Summerhill", "Kingsway", "Northcliff",
         "Westbrook", "Eastwood", "Foxglove", "Bramble", "Larkspur", "Moonstone", "Cinnamon",
         "Pinewood", "Silverbirch", "Goldcrest", "Starling", "Bellflower", "Oakridge"]
SURNAMES = ["Abbott", "Baxter", "Calloway", "Ellison", "Fairbanks", "Garrow", "Hollis", "Ingram",
            "Jessop", "Kettering", "Lockwood", "Merriman", "Norwood", "Pemberton", "Quinlan",
            "Radcliffe", "Sinclair", "Thackeray", "Underhill", "Whitaker", "Yardley", "Moreno",
            "Castillo", "Nakamura", "Lindqvist", "Okafor", "Petrov", "Haddad", "Kowalski", "Marchetti"]
GIVEN = ["Rosa", "Milo", "Lucia", "Bruno", "Ottavia", "Felix", "Ines", "Marco", "Noor", "Anya",
         "Teo", "Lena", "Pablo", "Yuki", "Sofia", "Dario", "Elsa", "Hugo", "Nadia", "Omar"]
TOPICS = ["Maritime History", "Modern Art", "Natural History", "Science and Industry", "Photography",
          "Childhood", "Textiles", "Railways", "Local History", "Ceramics", "Musical Instruments",
          "Clocks and Watches", "Archaeology", "Design", "Lighthouses", "Printing"]
SAINTS = ["Brigid", "Luke", "Agnes", "Columba", "Margaret", "Jude", "Cecilia", "Bartholomew"]

# slug, label, plural, how many, name patterns (one slot each: w, s, g, t or saint)
CATEGORIES = [
    ("cafe", "Cafe", "cafes", 36,
     ["{w} Coffee", "Cafe {g}", "{w} Espresso Bar", "{w} Tea Room", "{s}'s Coffee House"]),
    ("restaurant", "Restaurant", "restaurants", 54,
     ["{s}'s Kitchen", "Trattoria {g}", "The {w} Table", "{w} Bistro", "{w} Noodle House", "{w} Grill",
      "Taqueria {g}", "{w} Sushi Bar", "Chez {g}", "{w} Curry House"]),
    ("museum", "Museum", "museums", 14, ["Museum of {t}", "{w} Art Gallery", "{s} House Museum"]),
    ("park", "Park", "parks", 22, ["{w} Park", "{w} Gardens", "{w} Green", "{w} Playground"]),
    ("pharmacy", "Pharmacy", "pharmacies", 20, ["{w} Pharmacy", "{s} Chemist", "{w} Apothecary"]),
    ("hospital", "Hospital", "hospitals", 6,
     ["{w} General Hospital", "St. {saint}'s Hospital", "{w} Children's Hospital", "{w} Medical Center"]),
    ("library", "Library", "libraries", 12,
     ["{w} Branch Library", "{s} Memorial Library", "{w} Public Library"]),
    ("school", "School", "schools", 20,
     ["{w} Elementary School", "{w} High School", "{s} Academy", "{w} Middle School"]),
    ("hotel", "Hotel", "hotels", 22, ["Hotel {g}", "The {w} Inn", "{w} Suites", "{w} Grand Hotel", "{s} Lodge"]),
    ("station", "Station", "stations", 14, ["{w} Station", "{w} Junction"]),
    ("supermarket", "Supermarket", "supermarkets", 20,
     ["{w} Market", "{w} Grocers", "{w} Foods", "{s} Supermarket", "{w} Food Co-op"]),
    ("bank", "Bank", "banks", 16, ["{w} Savings Bank", "{w} Credit Union", "Bank of {w}", "{s} Trust"]),
    ("cinema", "Cinema", "cinemas", 9, ["{w} Cinema", "The {w} Picturehouse", "{w} Cineplex"]),
    ("gym", "Gym", "gyms", 20, ["{w} Fitness", "{w} Gym", "{w} Yoga Studio", "{w} Boxing Club", "{w} Climbing Wall"]),
    ("post-office", "Post office", "post offices", 10, ["{w} Post Office"]),
]
# slug -> (Monday-Friday choices, Saturday choices, Sunday choices); see _hours for the quirks
HOURS = {
    "cafe": (["07:00–18:00", "06:30–17:00", "08:00–19:00", "07:30–16:30"], ["08:00–17:00", "09:00–16:00"],
             ["09:00–15:00", "Closed", "10:00–16:00"]),
    "restaurant": (["11:30–22:00", "12:00–23:00", "17:00–22:30", "11:00–21:00"], ["12:00–23:30", "17:00–23:00"],
                   ["12:00–21:00", "Closed"]),
    "museum": (["10:00–17:00", "09:30–18:00"], ["10:00–18:00"], ["11:00–17:00", "12:00–16:00"]),
    "park": (["Open 24 hours", "06:00–22:00", "07:00–21:00"], [], []),
    "pharmacy": (["08:00–20:00", "09:00–18:00", "08:30–21:00"], ["09:00–18:00", "09:00–13:00"],
                 ["Closed", "10:00–16:00"]),
    "hospital": (["Open 24 hours"], [], []),
    "library": (["09:00–20:00", "10:00–18:00"], ["10:00–16:00", "10:00–14:00"], ["Closed", "12:00–16:00"]),
    "school": (["08:00–16:00", "07:45–15:30", "08:15–16:15"], ["Closed"], ["Closed"]),
    "hotel": (["Open 24 hours"], [], []),
    "station": (["05:00–01:00", "05:30–00:30", "06:00–00:00"], [], []),
    "supermarket": (["07:00–22:00", "08:00–21:00", "07:00–23:00"], ["08:00–22:00", "08:00–20:00"],
                    ["09:00–18:00", "10:00–17:00"]),
    "bank": (["09:00–17:00", "09:30–16:30"], ["Closed", "09:00–12:00"], ["Closed"]),
    "cinema": (["14:00–23:00", "16:00–23:30"], ["11:00–00:00", "12:00–23:30"], ["11:00–22:00"]),
    "gym": (["06:00–22:00", "05:30–23:00"], ["08:00–20:00", "07:00–19:00"], ["08:00–18:00", "09:00–17:00"]),
    "post-office": (["09:00–17:30", "08:30–18:00"], ["09:00–12:30", "Closed"], ["Closed"]),
}
USERS = [("walker", "Wendy Walker", 18), ("hiker", "Hal Hiker", 8), ("cyclist", "Cora Cyclist", 6)]
SEED_NOTES = ["Best flat white in town", "Closed on public holidays", "Ask for a table by the window",
              "Meet Sam here on Fridays", "Bring the library card", "Good place for a rainy day",
              "Parking is hard nearby", "Kids love the playground", "Cash only at the counter",
              "Book ahead on weekends", "Late opening on Thursdays", "Quiet corner upstairs"]
# fmt: on


def category_label(slug: str) -> str:
    return next(c[1] for c in CATEGORIES if c[0] == slug)


def category_plural(slug: str) -> str:
    return next(c[2] for c in CATEGORIES if c[0] == slug)


def address(place) -> str:
    """The one address format of pages and answers: "12 Market Street, Old Town"."""
    return f"{place['number']} {place['street']}, {place['district']}"


def node_id(r: int, c: int) -> int:
    return r * COLS + c + 1


def district_of(r: int, c: int) -> str:
    return DISTRICTS[min(r // 4, 2)][min(c // 5, 2)]


def build_db(conn: sqlite3.Connection) -> None:
    """Create the schema and fill it with the deterministic seed data."""
    conn.executescript(SCHEMA + AUTH_SCHEMA)
    rng = random.Random(SEED)
    coords = _nodes(conn, rng)
    _edges(conn, rng, coords)
    _places(conn, rng, coords)
    _users(conn, rng)


def _nodes(conn: sqlite3.Connection, rng: random.Random) -> dict[int, tuple[float, float]]:
    coords = {}
    for r in range(ROWS):
        for c in range(COLS):
            lat = round(NW_LAT - r * DLAT + rng.uniform(-0.0002, 0.0002), 5)
            lon = round(NW_LON + c * DLON + rng.uniform(-0.0003, 0.0003), 5)
            nid = node_id(r, c)
            coords[nid] = (lat, lon)
            conn.execute(
                "INSERT INTO nodes VALUES (?, ?, ?, ?)",
                (nid, f"{ROW_STREETS[r]} & {COL_STREETS[c]}", lat, lon),
            )
    return coords


def _length(coords, a: int, b: int, factor: float) -> int:
    return round(haversine_m(*coords[a], *coords[b]) * factor)


def _connected(edges: list[dict], mode: str) -> bool:
    """Can `mode` reach every intersection over `edges`?"""
    adj: dict[int, list[int]] = {}
    for e in edges:
        if mode in ROAD_TYPES[e["type"]][1]:
            adj.setdefault(e["a"], []).append(e["b"])
            adj.setdefault(e["b"], []).append(e["a"])
    seen, todo = {1}, deque([1])
    while todo:
        for n in adj.get(todo.popleft(), []):
            if n not in seen:
                seen.add(n)
                todo.append(n)
    return len(seen) == ROWS * COLS


def _edges(conn: sqlite3.Connection, rng: random.Random, coords) -> None:
    grid = []
    for r in range(ROWS):
        for c in range(COLS):
            for dr, dc, street in ((0, 1, ROW_STREETS[r]), (1, 0, COL_STREETS[c])):
                if r + dr < ROWS and c + dc < COLS:
                    a, b = node_id(r, c), node_id(r + dr, c + dc)
                    kind = "primary" if street in PRIMARY else "residential"
                    grid.append({"a": a, "b": b, "street": street, "type": kind,
                                 "length": _length(coords, a, b, rng.uniform(1.0, 1.18))})  # fmt: skip
    side_streets = [e for e in grid if e["type"] == "residential"]
    removed = 0
    for e in rng.sample(side_streets, len(side_streets)):  # missing blocks
        if removed == 18:
            break
        grid.remove(e)
        if all(_connected(grid, m) for m in MODES):
            removed += 1
        else:
            grid.append(e)
    old_town = [e for e in grid if e["type"] == "residential"
                and all(district_of(*divmod(n - 1, COLS)) == "Old Town" for n in (e["a"], e["b"]))]  # fmt: skip
    for e in rng.sample(old_town, 14):  # the pedestrian zone
        e["type"] = "pedestrian"
        if not _connected(grid, "drive"):
            e["type"] = "residential"
    cells = rng.sample(
        [(r, c) for r in range(ROWS - 1) for c in range(COLS - 1)], len(FOOTPATHS + CYCLEWAYS)
    )
    for (r, c), name in zip(cells, FOOTPATHS + CYCLEWAYS, strict=True):
        a, b = (
            (node_id(r, c), node_id(r + 1, c + 1))
            if rng.random() < 0.5
            else (node_id(r, c + 1), node_id(r + 1, c))
        )
        kind = "footway" if name in FOOTPATHS else "cycleway"
        grid.append(
            {"a": a, "b": b, "street": name, "type": kind, "length": _length(coords, a, b, 1.04)}
        )
    for (r1, c1), (r2, c2) in zip(EXPRESSWAY_NODES, EXPRESSWAY_NODES[1:], strict=False):
        a, b = node_id(r1, c1), node_id(r2, c2)
        grid.append(
            {
                "a": a,
                "b": b,
                "street": EXPRESSWAY,
                "type": "motorway",
                "length": _length(coords, a, b, 1.02),
            }
        )
    grid.sort(key=lambda e: (min(e["a"], e["b"]), max(e["a"], e["b"]), e["street"]))
    conn.executemany(
        "INSERT INTO edges (a, b, street, road_type, length_m) VALUES (:a, :b, :street, :type, :length)",
        grid,
    )


def _names(rng: random.Random) -> list[tuple[str, str]]:
    """(category, name) for every place: unique, and no name inside another."""
    slots = {"w": WORDS, "s": SURNAMES, "g": GIVEN, "t": TOPICS, "saint": SAINTS}
    taken: list[str] = []
    out = []
    for slug, _label, _plural, count, patterns in CATEGORIES:
        pools = []
        for pat in patterns:
            key = pat[pat.index("{") + 1 : pat.index("}")]
            pools.append([pat.format(**{key: v}) for v in rng.sample(slots[key], len(slots[key]))])
        have = 0
        while have < count:
            pool = pools[have % len(pools)] or next(p for p in pools if p)
            name = pool.pop()
            low = name.lower()
            if any(low in t or t in low for t in taken):
                continue
            taken.append(low)
            out.append((slug, name))
            have += 1
    rng.shuffle(out)
    return out


def _hours(rng: random.Random, slug: str) -> list[str]:
    week, sat, sun = HOURS[slug]
    days = [rng.choice(week)] * 5
    days += [rng.choice(sat) if sat else days[0], rng.choice(sun) if sun else days[0]]
    if slug == "museum":
        if rng.random() < 0.6:
            days[0] = "Closed"
        if rng.random() < 0.5:
            days[3] = "10:00–21:00"
    elif slug == "restaurant" and rng.random() < 0.35:
        days[0] = "Closed"
    elif slug in ("bank", "pharmacy") and rng.random() < 0.3:
        days[4] = "09:00–18:30"
    return days


def _places(conn: sqlite3.Connection, rng: random.Random, coords) -> None:
    used_numbers: set[tuple[str, int]] = set()
    phones = rng.sample(range(1000, 10000), 400)
    for pid, (slug, name) in enumerate(_names(rng), 1):
        r, c = rng.randrange(ROWS), rng.randrange(COLS)
        nid = node_id(r, c)
        street, block = (ROW_STREETS[r], c) if rng.random() < 0.5 else (COL_STREETS[c], r)
        while True:  # house numbers grow along the street, 20 per block
            number = block * 20 + rng.randint(1, 19)
            if (street, number) not in used_numbers:
                used_numbers.add((street, number))
                break
        lat = round(coords[nid][0] + rng.uniform(-0.00035, 0.00035), 5)
        lon = round(coords[nid][1] + rng.uniform(-0.00045, 0.00045), 5)
        access = max(15, round(haversine_m(lat, lon, *coords[nid]) * 1.15))
        conn.execute(
            "INSERT INTO places VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (pid, name, slug, number, street, district_of(r, c), lat, lon,
             f"(902) 555-{phones[pid]:04d}", nid, access),
        )  # fmt: skip
        conn.executemany(
            "INSERT INTO hours VALUES (?, ?, ?)",
            [(pid, d, s) for d, s in enumerate(_hours(rng, slug))],
        )


def _users(conn: sqlite3.Connection, rng: random.Random) -> None:
    n_places = conn.execute("SELECT COUNT(*) FROM places").fetchone()[0]
    for uid, (username, full_name, n_saved) in enumerate(USERS, 1):
        conn.execute(
            "INSERT INTO users VALUES (?, ?, ?, ?)",
            (uid, username, hash_password(f"{username}-pass"), full_name),
        )
        for k, pid in enumerate(rng.sample(range(1, n_places + 1), n_saved)):
            note = rng.choice(SEED_NOTES) if rng.random() < 0.5 else ""
            day = f"2024-0{1 + k * 4 // n_saved}-{10 + k:02d}"
            conn.execute(
                "INSERT INTO saved (user_id, place_id, note, saved_on) VALUES (?, ?, ?, ?)",
                (uid, pid, note, day),
            )

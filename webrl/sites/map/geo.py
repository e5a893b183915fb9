"""Distances, travel modes and their formats: the one place that defines them.

Pages and task families both format through these functions, so a reference
answer is always spelled the way the site shows it. All distances the site
shows are whole metres; straight-line distances are great-circle (haversine)
distances between the stored 5-decimal coordinates.
"""

from __future__ import annotations

import math

EARTH_RADIUS_M = 6_371_000

# mode -> (label in the mode select, speed in km/h)
MODES = {"drive": ("Drive", 40), "bike": ("Bike", 15), "walk": ("Walk", 5)}
# road type -> (label, modes allowed on it). Every road is two-way.
ROAD_TYPES = {
    "motorway": ("Expressway", ("drive",)),
    "primary": ("Main road", ("drive", "bike", "walk")),
    "residential": ("Street", ("drive", "bike", "walk")),
    "pedestrian": ("Pedestrian street", ("bike", "walk")),
    "footway": ("Footpath", ("walk",)),
    "cycleway": ("Cycle path", ("bike",)),
}
RADII = {500: "500 m", 1000: "1 km", 2000: "2 km"}  # nearby search radii
DEFAULT_RADIUS = 1000
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def haversine_m(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    """Great-circle distance in metres."""
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lon2 - lon1)
    a = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * EARTH_RADIUS_M * math.asin(math.sqrt(a))


def straight_m(a, b) -> int:
    """Whole-metre straight-line distance between two rows with `lat`/`lon`."""
    return round(haversine_m(a["lat"], a["lon"], b["lat"], b["lon"]))


def format_distance(metres: int) -> str:
    """Metres below a kilometre ("850 m"), else kilometres with one decimal ("2.3 km", half up)."""
    if metres < 1000:
        return f"{metres} m"
    tenths = (metres + 50) // 100
    return f"{tenths // 10}.{tenths % 10} km"


def travel_minutes(metres: int, mode: str) -> int:
    """Whole minutes (half up, at least 1) to cover `metres` at the mode's speed."""
    speed_m_per_h = MODES[mode][1] * 1000
    return max(1, (metres * 60 * 2 + speed_m_per_h) // (2 * speed_m_per_h))


def format_minutes(minutes: int) -> str:
    return f"{minutes} min"


def format_coords(lat: float, lon: float) -> str:
    return f"{lat:.5f}, {lon:.5f}"

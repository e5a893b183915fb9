"""Larkport Map: places, search, nearby and directions (WebArena's OpenStreetMap site)."""

from __future__ import annotations

from webrl.sites.map.app import create_app
from webrl.sites.map.data import DEFAULT_USER, build_db
from webrl.sites.state import SiteSpec

SPEC = SiteSpec(
    name="map",
    title="Larkport Map",
    build_db=build_db,
    create_app=create_app,
    default_user=DEFAULT_USER,
    description="a city map: places, search, nearby places, directions by car, bike or on foot",
)

__all__ = ["SPEC"]

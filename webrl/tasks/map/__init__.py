"""Task families on the map (Larkport Map), with oracle solvers. Template ids 500-599.

Spread like WebArena's map tasks: information retrieval answered with
exit(message=...) (`info`: addresses, hours, coordinates, travel times and
distances, nearest and counts), navigation judged by the final URL
(`navigation`: directions, place pages, nearby lists), state changes in My
places judged by pages fetched after the episode (`changes`), multi-requirement
tasks (`multi`), and infeasible ones whose right answer is "N/A"
(`infeasible`). Reference answers come from the seed database through the
site's own geo and routing functions; oracles act only through the page.
"""

from __future__ import annotations

from webrl.tasks.map.base import MapFamily
from webrl.tasks.map.changes import AddNote, SavePlace, UnsavePlace
from webrl.tasks.map.infeasible import (
    MissingCategory,
    MissingPlaceAddress,
    UnknownFact,
    UnsupportedMode,
)
from webrl.tasks.map.info import (
    ClosestOfCategory,
    CountWithin,
    DrivingDistance,
    OpeningHours,
    PlaceAddress,
    PlaceCoordinates,
    PlacePhone,
    TravelTime,
)
from webrl.tasks.map.multi import (
    CloserByWalking,
    NearestTravelTime,
    RouteToNearest,
    SaveNearest,
    SaveNearestN,
    SaveWithNote,
)
from webrl.tasks.map.navigation import (
    CategoryByDistanceNav,
    DirectionsNav,
    NearbyCategoryNav,
    OpenPlace,
)

# Interleaved by kind: the fixed test split takes one task per family in this
# order, so any prefix of the tuple mixes info, nav, state, multi and infeasible.
FAMILIES: tuple[MapFamily, ...] = (
    TravelTime(), DirectionsNav(), SavePlace(), SaveNearest(), MissingPlaceAddress(),
    PlaceAddress(), NearbyCategoryNav(), AddNote(), CloserByWalking(), UnsupportedMode(),
    ClosestOfCategory(), OpenPlace(), UnsavePlace(), RouteToNearest(), UnknownFact(),
    OpeningHours(), CategoryByDistanceNav(), SaveWithNote(), NearestTravelTime(), MissingCategory(),
    DrivingDistance(), CountWithin(), SaveNearestN(), PlaceCoordinates(), PlacePhone(),
)  # fmt: skip

__all__ = ["FAMILIES", "MapFamily"]

"""Routes over the road graph: Dijkstra restricted to the roads a mode may use.

A route from place A to place B is A's access leg to its intersection, the
shortest path (in metres) between the two intersections over the roads open
to the mode, and B's access leg. Travel time is the route's length at the
mode's speed (`geo.MODES`). Paths are chosen by length plus a small penalty
per turn (see `RoadGraph.shortest`), like a real route planner. Ties between equal-length paths break the same way
every time (adjacency lists in edge-id order, heap ordered by (metres, node)).
"""

from __future__ import annotations

import heapq
import sqlite3
from dataclasses import dataclass

from webrl.sites.map.geo import ROAD_TYPES, format_distance, travel_minutes

TURN_PENALTY_M = 80  # route choice only: a turn "costs" as much as 80 m of road


@dataclass(frozen=True)
class Route:
    mode: str
    metres: int
    minutes: int
    steps: tuple[str, ...]


class RoadGraph:
    """Intersections and two-way street segments, read from a map database."""

    def __init__(self, conn: sqlite3.Connection):
        self.node_names = {r[0]: r[1] for r in conn.execute("SELECT id, name FROM nodes")}
        self.adj: dict[int, list[tuple[int, int, str, str]]] = {n: [] for n in self.node_names}
        for _id, a, b, street, kind, length in conn.execute(
            "SELECT id, a, b, street, road_type, length_m FROM edges ORDER BY id"
        ):
            self.adj[a].append((b, length, street, kind))
            self.adj[b].append((a, length, street, kind))

    def shortest(
        self, src: int, dst: int, mode: str
    ) -> tuple[int, list[tuple[str, str, int]]] | None:
        """(metres, [(street, road type, metres) per segment]) of the best path, None if unreachable.

        "Best" is the shortest path plus TURN_PENALTY_M per change of street, so
        routes follow streets instead of zigzagging through equal-length blocks.
        """
        start = (src, "")
        best = {start: 0}
        prev: dict[tuple[int, str], tuple[tuple[int, str], str, int]] = {}
        heap = [(0, src, "")]
        goal = None
        while heap:
            cost, node, street = heapq.heappop(heap)
            if node == dst:
                goal = (node, street)
                break
            if cost > best[(node, street)]:
                continue
            for nxt, length, name, kind in self.adj[node]:
                if mode not in ROAD_TYPES[kind][1]:
                    continue
                turn = TURN_PENALTY_M if street and name != street else 0
                state, new_cost = (nxt, name), cost + length + turn
                if new_cost < best.get(state, new_cost + 1):
                    best[state] = new_cost
                    prev[state] = ((node, street), kind, length)
                    heapq.heappush(heap, (new_cost, nxt, name))
        if goal is None:
            return None
        legs, state = [], goal
        while state != start:
            before, kind, length = prev[state]
            legs.append((state[1], kind, length))
            state = before
        legs.reverse()
        return sum(leg[2] for leg in legs), legs


def plan_route(graph: RoadGraph, a: sqlite3.Row, b: sqlite3.Row, mode: str) -> Route | None:
    """The route from place `a` to place `b` (rows with name, node_id, access_m)."""
    found = graph.shortest(a["node_id"], b["node_id"], mode)
    if found is None:
        return None
    path_m, legs = found
    metres = a["access_m"] + path_m + b["access_m"]
    corner = graph.node_names[a["node_id"]]
    steps = [f"Leave {a['name']} for {corner} ({format_distance(a['access_m'])})"]
    groups: list[list] = []
    for street, kind, length in legs:  # consecutive segments of one street make one step
        if groups and groups[-1][0] == street:
            groups[-1][2] += length
            if groups[-1][1] != kind:  # a street that is only partly pedestrian: no label
                groups[-1][1] = "residential"
        else:
            groups.append([street, kind, length])
    for i, (street, kind, length) in enumerate(groups):
        verb = "Follow" if i == 0 else "Turn onto"
        what = "" if kind in ("primary", "residential") else f" ({ROAD_TYPES[kind][0].lower()})"
        steps.append(f"{verb} {street}{what} for {format_distance(length)}")
    steps.append(
        f"Arrive at {b['name']} ({format_distance(b['access_m'])} from {graph.node_names[b['node_id']]})"
    )
    return Route(mode, metres, travel_minutes(metres, mode), tuple(steps))

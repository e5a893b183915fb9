"""Per-episode site state: SQLite snapshots copied on first use.

Each site builds its seed database once per process (deterministic, in memory);
every episode gets its own copy through SQLite's online backup, made lazily the
first time the episode touches that site, so a reset costs nothing for sites the
task never visits.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class SiteSpec:
    """What the world needs to know about one site."""

    name: str  # URL prefix and key, e.g. "shop"
    title: str  # human title shown on the home page
    build_db: Callable[[sqlite3.Connection], None]  # create schema + deterministic seed data
    create_app: Callable[[], object]  # returns the site's WSGI (Flask) app
    default_user: tuple[str, str]  # (username, password) logged in when require_login
    description: str = ""


def _connect() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:", check_same_thread=False)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA foreign_keys = ON")
    return conn


class SnapshotStore:
    """Builds each site's seed database once and hands out copies."""

    def __init__(self, specs: dict[str, SiteSpec]):
        self.specs = specs
        self._snapshots: dict[str, sqlite3.Connection] = {}
        self._lock = threading.Lock()

    def snapshot(self, site: str) -> sqlite3.Connection:
        with self._lock:
            if site not in self._snapshots:
                if site not in self.specs:
                    raise KeyError(f"unknown site {site!r}; known: {sorted(self.specs)}")
                conn = _connect()
                self.specs[site].build_db(conn)
                conn.commit()
                self._snapshots[site] = conn
            return self._snapshots[site]

    def copy(self, site: str) -> sqlite3.Connection:
        """A fresh, independent connection holding the site's seed state."""
        src = self.snapshot(site)
        dst = _connect()
        with self._lock:  # backup reads the shared source; keep it single-file
            src.backup(dst)
        return dst


@dataclass
class WorldState:
    """One episode's private copy of every site it touches."""

    store: SnapshotStore
    _dbs: dict[str, sqlite3.Connection] = field(default_factory=dict)

    def db(self, site: str) -> sqlite3.Connection:
        if site not in self._dbs:
            self._dbs[site] = self.store.copy(site)
        return self._dbs[site]

    def close(self) -> None:
        for conn in self._dbs.values():
            conn.close()
        self._dbs.clear()

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
    database: str = ""  # whose database this site uses ("" = its own); admin uses "shop"
    users_table: str = "users"  # table with id, username, password_hash (login)
    sessions_table: str = "sessions"  # table with token, user_id (login sessions)

    @property
    def db_name(self) -> str:
        return self.database or self.name


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

    def snapshot(self, name: str) -> sqlite3.Connection:
        """The seed database `name` (a site's own, or one shared by several sites).

        Built by the owning site's `build_db`, then by every site that shares it
        (in spec order), e.g. the shop's catalogue plus the admin's staff tables.
        """
        with self._lock:
            if name not in self._snapshots:
                if name in self.specs and self.specs[name].database:
                    name = self.specs[name].db_name
                    if name in self._snapshots:
                        return self._snapshots[name]
                builders = [s for s in self.specs.values() if s.db_name == name]
                if not builders:
                    raise KeyError(f"unknown site or database {name!r}; known: {sorted(self.specs)}")
                conn = _connect()
                for spec in sorted(builders, key=lambda s: s.name != name):
                    spec.build_db(conn)
                conn.commit()
                self._snapshots[name] = conn
            return self._snapshots[name]

    def copy(self, name: str) -> sqlite3.Connection:
        """A fresh, independent connection holding database `name`'s seed state."""
        src = self.snapshot(name)
        dst = _connect()
        with self._lock:  # backup reads the shared source; keep it single-file
            src.backup(dst)
        return dst


@dataclass
class WorldState:
    """One episode's private copy of every site it touches."""

    store: SnapshotStore
    _dbs: dict[str, sqlite3.Connection] = field(default_factory=dict)

    def db(self, name: str) -> sqlite3.Connection:
        """This episode's copy of database `name` (made on first use)."""
        if name not in self._dbs:
            self._dbs[name] = self.store.copy(name)
        return self._dbs[name]

    def close(self) -> None:
        for conn in self._dbs.values():
            conn.close()
        self._dbs.clear()

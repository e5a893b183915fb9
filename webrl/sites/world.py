"""The world: every site mounted under one WSGI app, with per-episode state.

`/shop/...` goes to the shop app, `/forum/...` to the forum, `/` lists the sites.
In-process callers (the `http` backend) put their episode's `WorldState` in
`environ["webrl.world"]`; over real HTTP the `webrl_tenant` cookie picks the
tenant's state, so many browser contexts can share one server (`sites/server.py`'s
`ServedWorld` resolves the tenant itself and passes it in `environ["webrl.tenant"]`).
"""

from __future__ import annotations

import html
import importlib
import importlib.util
import secrets
import threading
from collections.abc import Iterable

from webrl.sites.state import SiteSpec, SnapshotStore, WorldState

TENANT_COOKIE = "webrl_tenant"


def tenant_from_cookie(header: str) -> str:
    """The `webrl_tenant` token in a Cookie header, or "" when absent or malformed.

    Parsed by hand, pair by pair: `http.cookies.SimpleCookie` drops the whole header when any
    one cookie in it is malformed (e.g. `a b=c`, which another app on localhost may have set,
    since cookies are not port-specific), which would give every request a fresh tenant."""
    for part in header.split(";"):
        name, eq, value = part.strip().partition("=")
        if eq and name == TENANT_COOKIE:
            value = value.strip().strip('"')
            return value if value.isalnum() and len(value) <= 64 else ""
    return ""


SITE_MODULES = ("shop", "admin", "code", "map", "forum")  # WebArena's five domains


def default_specs() -> dict[str, SiteSpec]:
    """The sites that ship with WebRL (those of SITE_MODULES present), by URL prefix."""
    specs = {}
    for name in SITE_MODULES:
        if importlib.util.find_spec(f"webrl.sites.{name}") is not None:
            spec = importlib.import_module(f"webrl.sites.{name}").SPEC
            specs[spec.name] = spec
    return specs


class WorldApp:
    """WSGI app dispatching to every site; one instance per process is enough."""

    def __init__(self, specs: dict[str, SiteSpec] | None = None):
        self.specs = specs if specs is not None else default_specs()
        self.store = SnapshotStore(self.specs)
        self._apps: dict[str, object] = {}
        self._tenants: dict[str, WorldState] = {}
        self._lock = threading.Lock()

    def new_state(self) -> WorldState:
        return WorldState(self.store)

    def site_app(self, name: str):
        if name not in self._apps:
            self._apps[name] = self.specs[name].create_app()
        return self._apps[name]

    # --- tenants (server mode) -------------------------------------------
    def tenant(self, token: str) -> WorldState:
        with self._lock:
            if token not in self._tenants:
                self._tenants[token] = self.new_state()
            return self._tenants[token]

    def reset_tenant(self, token: str) -> None:
        with self._lock:
            state = self._tenants.pop(token, None)
        if state is not None:
            state.close()

    # --- WSGI --------------------------------------------------------------
    def __call__(self, environ: dict, start_response) -> Iterable[bytes]:
        extra_headers: list[tuple[str, str]] = []
        if "webrl.world" not in environ:
            token = environ.get("webrl.tenant") or tenant_from_cookie(environ.get("HTTP_COOKIE", ""))
            if not token:
                token = secrets.token_hex(8)
                extra_headers.append(("Set-Cookie", f"{TENANT_COOKIE}={token}; Path=/"))
            environ["webrl.world"] = self.tenant(token)

        path = environ.get("PATH_INFO", "") or "/"
        head, _, rest = path.lstrip("/").partition("/")
        if head in self.specs:
            environ["SCRIPT_NAME"] = environ.get("SCRIPT_NAME", "") + "/" + head
            environ["PATH_INFO"] = "/" + rest

            def start(status, headers, exc_info=None):
                return start_response(status, headers + extra_headers, exc_info)

            return self.site_app(head)(environ, start)
        if path == "/":
            body = self._home().encode()
            start_response(
                "200 OK",
                [("Content-Type", "text/html; charset=utf-8"), ("Content-Length", str(len(body)))]
                + extra_headers,
            )
            return [body]
        body = b"<html><body><h1>Not found</h1></body></html>"
        start_response("404 Not Found", [("Content-Type", "text/html; charset=utf-8")])
        return [body]

    def _home(self) -> str:
        items = "".join(
            f'<li><a href="/{html.escape(s.name)}/">{html.escape(s.title)}</a> '
            f"{html.escape(s.description)}</li>"
            for s in self.specs.values()
        )
        return (
            "<!doctype html><html><head><title>WebRL sites</title></head><body>"
            f"<h1>WebRL sites</h1><ul>{items}</ul></body></html>"
        )

"""The world over real HTTP: a threaded WSGI server (waitress) on loopback.

`webrl sites serve` runs it in the foreground; the `chromium` backend starts
one in a background thread when none is running. `ServedWorld` wraps the
`WorldApp` with what real browsers need:

- a tenant per browser: the `webrl_tenant` cookie picks the episode's state;
  a request without one gets a fresh tenant (and the cookie). A browser
  context that sets a new token starts from the seed state, so an episode
  resets without restarting the server;
- `POST /_webrl/release` drops the caller's tenant (its state is freed), and
  at most `max_tenants` live at once (least recently used go first), so a
  long run's memory stays bounded;
- one request at a time per tenant (a tenant's SQLite copies are not shared
  between concurrent requests);
- `Cache-Control: no-store` on every page, so Back/Forward re-fetch the page
  from the episode's current state (as the `http` backend does) instead of
  showing a stale copy;
- `GET /_webrl/health` answers JSON, so a backend can tell our server from
  anything else listening on the port.
"""

from __future__ import annotations

import contextlib
import json
import logging
import secrets
import threading
import time
import urllib.error
import urllib.request
from collections import OrderedDict
from collections.abc import Iterable

from webrl.sites.world import TENANT_COOKIE, WorldApp, tenant_from_cookie

log = logging.getLogger(__name__)
CONTROL_PREFIX = "/_webrl/"
HEALTH_PATH = "/_webrl/health"
RELEASE_PATH = "/_webrl/release"
SERVER_ID = "webrl-sites"


_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # never through an http_proxy


def local_urlopen(req, timeout: float):
    """`urllib.request.urlopen` for the loopback site server, ignoring any proxy settings."""
    return _DIRECT.open(req, timeout=timeout)


def tenant_token() -> str:
    """A fresh tenant token (what a new episode's browser context sends)."""
    return secrets.token_hex(12)


def _token_of(environ: dict) -> str:
    return tenant_from_cookie(environ.get("HTTP_COOKIE", ""))


class ServedWorld:
    """WSGI middleware over a `WorldApp` for serving it to browsers (see module doc)."""

    def __init__(self, world: WorldApp, max_tenants: int = 256):
        if max_tenants < 1:
            raise ValueError(f"max_tenants must be >= 1, got {max_tenants}")
        self.world = world
        self.max_tenants = max_tenants
        self._tenants: OrderedDict[str, threading.Lock] = OrderedDict()  # LRU order
        self._lock = threading.Lock()

    @property
    def live_tenants(self) -> int:
        with self._lock:
            return len(self._tenants)

    def _tenant_lock(self, token: str) -> threading.Lock:
        evicted = []
        with self._lock:
            lock = self._tenants.get(token)
            if lock is None:
                lock = self._tenants[token] = threading.Lock()
            self._tenants.move_to_end(token)
            while len(self._tenants) > self.max_tenants:
                evicted.append(self._tenants.popitem(last=False))
        for old, old_lock in evicted:
            log.warning("sites: more than %d live tenants; the least recently used one is reset "
                        "(release finished episodes: POST %s)", self.max_tenants, RELEASE_PATH)
            with old_lock:  # never under a request of that tenant still in flight
                self.world.reset_tenant(old)
        return lock

    def release(self, token: str) -> None:
        """Forget a tenant and free its state (the next request starts fresh)."""
        with self._lock:
            lock = self._tenants.pop(token, None)
        with lock or contextlib.nullcontext():
            self.world.reset_tenant(token)

    def __call__(self, environ: dict, start_response) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "") or "/"
        token = _token_of(environ)
        if path.startswith(CONTROL_PREFIX):
            return self._control(path, environ, token, start_response)
        new_cookie = None
        if not token:  # a cookie-less client gets its own tenant, as WorldApp would give it
            token = tenant_token()
            new_cookie = f"{TENANT_COOKIE}={token}; Path=/"
        environ["webrl.tenant"] = token  # WorldApp serves this tenant, whatever the header holds

        def start(status, headers, exc_info=None):
            headers = [(k, v) for k, v in headers if k.lower() != "cache-control"]
            headers.append(("Cache-Control", "no-store"))
            if new_cookie:
                headers.append(("Set-Cookie", new_cookie))
            return start_response(status, headers, exc_info)

        with self._tenant_lock(token):  # the body is built inside: pages are small
            result = self.world(environ, start)
            try:
                body = b"".join(result)
            finally:
                if hasattr(result, "close"):
                    result.close()
        return [body]

    def _control(self, path: str, environ: dict, token: str, start_response) -> Iterable[bytes]:
        if path == HEALTH_PATH:
            body = json.dumps({"server": SERVER_ID, "sites": sorted(self.world.specs)}).encode()
            start_response("200 OK", [("Content-Type", "application/json"), ("Cache-Control", "no-store")])
            return [body]
        if path == RELEASE_PATH and environ.get("REQUEST_METHOD") == "POST":
            if token:
                self.release(token)
            start_response("204 No Content", [("Cache-Control", "no-store")])
            return [b""]
        start_response("404 Not Found", [("Content-Type", "text/plain")])
        return [b"not found"]


def server_is_up(base_url: str, timeout_s: float = 1.0) -> bool | None:
    """True if a WebRL site server answers at `base_url`, False if nothing listens,
    None if something else does (the port is taken by another program)."""
    url = base_url.rstrip("/") + HEALTH_PATH
    try:
        with local_urlopen(url, timeout_s) as resp:  # loopback only
            data = json.loads(resp.read().decode() or "{}")
        return True if data.get("server") == SERVER_ID else None
    except urllib.error.HTTPError:
        return None
    except (OSError, ValueError):
        return False


class SiteServer:
    """Serve a `WorldApp` on `host:port` (port 0 = any free port) with waitress.

        with SiteServer(world) as server:   # background thread
            print(server.url)

    or `SiteServer(world, port=7770).serve_forever()` in the foreground.
    """

    def __init__(
        self,
        world: WorldApp | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        threads: int = 8,
        max_tenants: int = 256,
    ):
        from waitress.server import create_server

        self.world = world or WorldApp()
        self.app = ServedWorld(self.world, max_tenants=max_tenants)
        # waitress logs every queue hiccup at WARNING; keep a quiet server quiet
        logging.getLogger("waitress.queue").setLevel(logging.ERROR)
        self._server = create_server(
            self.app, host=host, port=port, threads=threads, ident=SERVER_ID,
            channel_timeout=30, connection_limit=200, clear_untrusted_proxy_headers=True,
        )  # fmt: skip
        self.host = host
        self.port = int(self._server.effective_port)
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self) -> SiteServer:
        """Serve in a daemon thread; returns once the server answers."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="webrl-sites", daemon=True)
            self._thread.start()
            deadline = time.monotonic() + 10
            while server_is_up(self.url, timeout_s=0.5) is not True:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"the site server at {self.url} did not come up")
                time.sleep(0.01)
        return self

    def serve_forever(self) -> None:
        """Serve in this thread until interrupted (Ctrl-C)."""
        with contextlib.suppress(KeyboardInterrupt):
            self._run()

    def _run(self) -> None:
        from waitress import wasyncore

        server = self._server
        try:
            while not self._stopping.is_set() and server._map:
                wasyncore.loop(timeout=1.0, map=server._map, count=1)
        finally:  # waitress has no public shutdown; close everything from the loop's own thread
            server.task_dispatcher.shutdown(timeout=2)
            for channel in list(server._map.values()):
                channel.close()

    def stop(self) -> None:
        """Stop serving (from another thread) and wait for the loop to close its sockets."""
        if self._thread is None:
            return
        self._stopping.set()
        self._server.pull_trigger()  # wake the poll loop
        self._thread.join(timeout=10)
        self._thread = None

    def __enter__(self) -> SiteServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

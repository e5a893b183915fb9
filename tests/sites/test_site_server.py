"""The real HTTP server: tenants by cookie, release, a cap on live tenants, no-store,
health, and `webrl sites serve`."""

from __future__ import annotations

import http.client
import socket
import subprocess
import sys
import threading
import time
import urllib.request

import pytest
from support import NOTES

from webrl.sites.server import SiteServer, server_is_up
from webrl.sites.world import TENANT_COOKIE, WorldApp


@pytest.fixture
def server():
    s = SiteServer(WorldApp({"notes": NOTES}), max_tenants=3).start()
    yield s
    s.stop()


def get(url: str, token: str | None = None, data: bytes | None = None) -> tuple[str, dict]:
    headers = {"Cookie": f"{TENANT_COOKIE}={token}"} if token else {}
    with urllib.request.urlopen(urllib.request.Request(url, data=data, headers=headers), timeout=10) as r:
        return r.read().decode(), dict(r.headers)


def login_and_add(base: str, token: str, title: str) -> None:
    """Sign in as the tenant `token` and add a note (raw HTTP, cookies by hand)."""
    host, port = base.removeprefix("http://").split(":")
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    conn = http.client.HTTPConnection(host, int(port), timeout=10)
    conn.request("POST", "/notes/login", "username=ann&password=pw", {**form, "Cookie": f"{TENANT_COOKIE}={token}"})
    resp = conn.getresponse()
    resp.read()
    session = resp.getheader("Set-Cookie").split(";")[0]
    cookie = f"{TENANT_COOKIE}={token}; {session}"
    conn.request("POST", "/notes/add", f"title={title}&body=b&color=r", {**form, "Cookie": cookie})
    assert conn.getresponse().status == 302
    conn.close()


def test_tenants_are_isolated_and_released(server):
    base = server.url
    login_and_add(base, "aaa1", "Only+in+A")
    assert "Only in A" in get(f"{base}/notes/", "aaa1")[0]
    assert "Only in A" not in get(f"{base}/notes/", "bbb2")[0]
    get(f"{base}/_webrl/release", "aaa1", data=b"")
    assert "Only in A" not in get(f"{base}/notes/", "aaa1")[0]  # same token, fresh seed state


def test_live_tenants_are_capped(server):
    base = server.url
    login_and_add(base, "first", "Kept+for+a+while")
    for token in ("t2", "t3", "t4"):  # the cap is 3: "first" is the least recently used
        get(f"{base}/notes/", token)
    assert server.app.live_tenants == 3
    assert "Kept for a while" not in get(f"{base}/notes/", "first")[0]


def test_a_malformed_cookie_beside_the_tenant_keeps_the_tenant(server):
    # SimpleCookie drops a whole header over one bad pair (e.g. set by another app on localhost):
    # the tenant must survive it, and no second tenant may appear behind the server's back
    base = server.url
    login_and_add(base, "keep1", "Still+here")
    for header in (f"a b=c; {TENANT_COOKIE}=keep1", f'{TENANT_COOKIE}=keep1; x=[1]; y="unterminated'):
        req = urllib.request.Request(f"{base}/notes/", headers={"Cookie": header})
        with urllib.request.urlopen(req, timeout=10) as r:
            assert "Still here" in r.read().decode(), header
            assert r.headers.get("Set-Cookie") is None
    assert server.app.live_tenants == 1 and len(server.app.world._tenants) == 1


def test_eviction_waits_for_the_evicted_tenants_request(server):
    get(f"{server.url}/notes/", "busy")  # a tenant with live state
    app = server.app
    lock = app._tenant_lock("busy")
    lock.acquire()  # as if a request of "busy" were in flight
    done = threading.Event()
    threading.Thread(target=lambda: [app._tenant_lock(t) for t in ("n1", "n2", "n3")] and done.set(), daemon=True).start()
    time.sleep(0.3)
    assert not done.is_set() and "busy" in app.world._tenants  # the reset waits for the request
    lock.release()
    assert done.wait(5) and "busy" not in app.world._tenants


def test_pages_are_not_cached_and_cookieless_clients_get_a_tenant(server):
    body, headers = get(f"{server.url}/notes/")
    assert headers["Cache-Control"] == "no-store"
    assert headers["Set-Cookie"].startswith(f"{TENANT_COOKIE}=")
    assert server_is_up(server.url) is True


def test_server_is_up_tells_ours_from_others():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    assert server_is_up(f"http://127.0.0.1:{port}") is False  # nothing listens
    other = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        deadline = time.monotonic() + 10
        while server_is_up(f"http://127.0.0.1:{port}") is False and time.monotonic() < deadline:
            time.sleep(0.1)
        assert server_is_up(f"http://127.0.0.1:{port}") is None  # someone else's server
    finally:
        other.kill()
        other.wait()


def test_cli_sites_serve():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "webrl.cli.main", "sites", "serve", "--port", str(port)],
                            stdout=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert "serving" in proc.stdout.readline()
        body, _ = get(f"http://127.0.0.1:{port}/shop/")
        assert "One Stop Shop" in body
    finally:
        proc.terminate()
        proc.wait(10)

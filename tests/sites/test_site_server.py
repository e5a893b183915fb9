"""The real HTTP server: tenants by cookie, release, a cap on live tenants, no-store,
health, and `webrl sites serve`."""

from __future__ import annotations

import http.client
import socket
import subprocess
import sys
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

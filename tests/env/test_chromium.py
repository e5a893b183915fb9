"""The `chromium` backend on the tiny notes site: every action kind against the
`http` backend (same text after every step), isolation, parallel episodes,
screenshots, crash/hang recovery, and no browser left behind."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
import urllib.request
from pathlib import Path

import pytest
from support import notes_task

from webrl.env.chromium_engine import browser_pids, chromium_available, find_chromium
from webrl.env.http_backend import ActionError
from webrl.env.page_view import PageView
from webrl.env.web_env import EnvConfig, WebEnv

pytestmark = pytest.mark.skipif(
    not chromium_available(), reason="needs Chromium (apt-get install chromium) and playwright; `make test` installs both"
)


@pytest.fixture(scope="module")
def backend(notes_world):
    from webrl.env.chromium_backend import ChromiumBackend

    b = ChromiumBackend(notes_world, base_url="http://127.0.0.1:0")
    yield b
    b.close()


@pytest.fixture
def pair(notes_world, backend):
    """(http env, chromium env) over the same site, showing the same base URL."""
    config = EnvConfig(base_url=backend.base_url)
    http, chromium = WebEnv(config, world=notes_world), WebEnv(config, world=notes_world, backend=backend)
    yield http, chromium
    http.close()
    chromium.session and chromium.session.close()


def eid(info, **match) -> int:
    return PageView("", info).find(**match).id


def lockstep(http: WebEnv, chromium: WebEnv, actions) -> list[dict]:
    """Play `actions` (strings, or callables of the http info) on both; assert equal views."""
    obs, info = http.reset(options={"task": notes_task()})
    cobs, cinfo = chromium.reset(options={"task": notes_task()})
    assert cobs == obs and cinfo["elements"] == info["elements"]
    infos = []
    for a in actions:
        a = a(info) if callable(a) else a
        obs, r, term, trunc, info = http.step(a)
        cobs, cr, cterm, ctrunc, cinfo = chromium.step(a)
        assert cobs == obs, f"after {a}:\nhttp:\n{obs}\n\nchromium:\n{cobs}"
        assert cinfo["elements"] == info["elements"] and (cr, cterm, ctrunc) == (r, term, trunc)
        assert cinfo["url"] == info["url"] and cinfo["status"] == info["status"]
        infos.append(cinfo)
        if term or trunc:
            break
    return infos


def test_every_action_kind_matches_http(pair):
    http, chromium = pair
    infos = lockstep(http, chromium, [
        lambda i: f'do(action="Click", element="{eid(i, text="Does nothing")}")',
        'do(action="Press Enter")',
        lambda i: f'do(action="Type", argument="Groceries", element="{eid(i, name="title")}")',
        lambda i: f'do(action="Type", argument="hello milk", element="{eid(i, name="body")}")',
        lambda i: f'do(action="Select Dropdown Option", argument="Green", element="{eid(i, name="color")}")',
        lambda i: f'do(action="Select Dropdown Option", argument="Purple", element="{eid(i, name="color")}")',
        lambda i: f'do(action="Click", element="{eid(i, name="pin")}")',
        lambda i: f'do(action="Type", argument="x", element="{eid(i, name="pin")}")',
        'do(action="Go Forward")',
        lambda i: f'do(action="Click", element="{eid(i, text="Add note")}")',
        'do(action="Go Backward")',
        'do(action="Go Forward")',
        'do(action="Go Backward")',
        lambda i: f'do(action="Search", argument="Note 3", element="{eid(i, name="q")}")',
        lambda i: f'do(action="Click", element="{eid(i, text="Long page")}")',
        'do(action="Scroll Down")',
        'do(action="Scroll Down")',
        'do(action="Scroll Up")',
        lambda i: f'do(action="Type", argument="line one", element="{eid(i, name="body")}")',
        'do(action="Press Enter")',
        lambda i: f'do(action="Click", element="{eid(i, name="title")}")',
        'do(action="Press Enter")',
        'exit(message="done")',
    ])  # fmt: skip
    errors = [i["action_error"] for i in infos]
    assert errors[0] == "this button does nothing without JavaScript"
    assert errors[1].startswith("nothing is focused") and "no single option" in errors[5]
    assert errors[7].startswith("cannot type into") and errors[8] == "no page to go forward to"
    assert "/notes/note/6" in infos[9]["url"] and infos[13]["url"].endswith("?q=Note+3")
    assert infos[-2]["url"].endswith("/notes/note/7")  # Enter in a text field submitted the form


def test_tenants_isolated_and_reset(notes_world, backend):
    config = EnvConfig(base_url=backend.base_url)
    a, b = WebEnv(config, world=notes_world, backend=backend), WebEnv(config, world=notes_world, backend=backend)
    obs, info = a.reset(options={"task": notes_task()})
    b.reset(options={"task": notes_task()})
    a.step(f'do(action="Type", argument="Secret", element="{eid(info, name="title")}")')
    obs, *_, info = a.step(f'do(action="Click", element="{eid(info, text="Add note")}")')
    assert "Secret" in obs
    obs_b = b.session.fetch(backend.base_url + "/notes/")
    assert "Secret" not in obs_b and "Secret" in a.session.fetch(backend.base_url + "/notes/")
    obs, info = a.reset(options={"task": notes_task()})  # a new episode starts from the seed state
    assert "Secret" not in obs and "Note 4" in obs
    a.session.close()
    b.session.close()


def test_parallel_episodes_share_one_browser(notes_world):
    from webrl.env.chromium_backend import ChromiumBackend, ChromiumConfig

    backend = ChromiumBackend(notes_world, base_url="http://127.0.0.1:0", config=ChromiumConfig(max_sessions=2))
    config = EnvConfig(base_url=backend.base_url)
    results: dict[int, float] = {}

    def episode(k: int) -> None:
        env = WebEnv(config, world=notes_world, backend=backend)
        obs, info = env.reset(options={"task": notes_task()})
        env.step(f'do(action="Type", argument="hello {k}", element="{eid(info, name="body")}")')
        env.step(f'do(action="Click", element="{eid(info, text="Add note")}")')
        results[k] = env.step('exit(message="ok")')[1]
        env.session.close()

    try:
        threads = [threading.Thread(target=episode, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        assert results == dict.fromkeys(range(4), 1.0)
        assert backend.engine.launches == 1 and len(backend._idle) <= 2  # bounded: 2 contexts at most
        assert backend.server is not None and backend.server.app.live_tenants == 0  # all released
    finally:
        backend.close()


def test_screenshots_saved_per_observation(notes_world, tmp_path):
    from webrl.env.chromium_backend import ChromiumBackend, ChromiumConfig

    config = ChromiumConfig(screenshot_dir=str(tmp_path))
    with ChromiumBackend(notes_world, base_url="http://127.0.0.1:0", config=config) as backend:
        env = WebEnv(EnvConfig(base_url=backend.base_url), world=notes_world, backend=backend)
        obs, info = env.reset(options={"task": notes_task(start_url="__NOTES__/?long=80")})
        first = info["screenshot"]
        obs, *_, info = env.step('do(action="Scroll Down")')
        assert info["action_error"] is None and info["screenshot"] != first
        for shot in (first, info["screenshot"]):
            assert Path(shot).read_bytes()[:4] == b"\x89PNG"


def test_crash_and_hang_void_the_episode_then_recover(notes_world):
    from webrl.env.chromium_backend import ChromiumBackend, ChromiumConfig

    config = ChromiumConfig(action_timeout_s=1, page_timeout_s=2, call_timeout_s=4)
    with ChromiumBackend(notes_world, base_url="http://127.0.0.1:0", config=config) as backend:
        env = WebEnv(EnvConfig(base_url=backend.base_url), world=notes_world, backend=backend)
        for breakage in ("crash", "hang"):
            obs, info = env.reset(options={"task": notes_task()})
            session = env.session
            if breakage == "crash":
                with contextlib.suppress(Exception):
                    session.engine.run(lambda s=session: s._page.goto("chrome://crash"), 10)
            else:
                session.engine.run(lambda s=session: s._page.evaluate("setTimeout(() => { for (;;) {} }, 0)"), 10)
            t0 = time.monotonic()
            obs, reward, term, trunc, info = env.step(f'do(action="Click", element="{eid(info, text="Note 1")}")')
            assert time.monotonic() - t0 < 20
            assert info["backend_error"] and trunc and not term and reward == 0.0, breakage
            obs, info = env.reset(options={"task": notes_task()})  # recovers
            obs, *_, info = env.step(f'do(action="Click", element="{eid(info, text="Note 1")}")')
            assert "Body of note 1" in obs and "backend_error" not in info, breakage
        env.close()


LEFTOVER_SCRIPT = """
import signal, sys, time
signal.signal(signal.SIGINT, signal.default_int_handler)  # Ctrl-C as in a terminal, even if started with SIGINT ignored
sys.path.insert(0, {tests!r})
from support import NOTES, notes_task
from webrl.env.chromium_backend import ChromiumBackend
from webrl.env.chromium_engine import browser_pids
from webrl.env.web_env import EnvConfig, WebEnv
from webrl.sites.world import WorldApp
world = WorldApp({{"notes": NOTES}})
backend = ChromiumBackend(world, base_url="http://127.0.0.1:0")
env = WebEnv(EnvConfig(base_url=backend.base_url), world=world, backend=backend)
env.reset(options={{"task": notes_task()}})
print("PIDS", *browser_pids(), flush=True)
if sys.argv[1] == "close":
    env.close()
    print("CLOSED", *browser_pids(), flush=True)
else:
    time.sleep(120)
"""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z" or _parent(pid) != 1  # a zombie init has not reaped yet is not ours


def _parent(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except OSError:
        return 0


@pytest.mark.parametrize("how", ["close", "SIGINT", "SIGTERM", "SIGKILL"])
def test_no_browser_left_behind(how, tmp_path):
    script = tmp_path / "episode.py"
    script.write_text(textwrap.dedent(LEFTOVER_SCRIPT.format(tests=str(Path(__file__).parents[1]))))
    proc = subprocess.Popen(
        [sys.executable, str(script), how], stdout=subprocess.PIPE, text=True,
        cwd=Path(__file__).parents[2], env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])},
    )  # fmt: skip
    try:
        line = proc.stdout.readline()
        assert line.startswith("PIDS"), line
        pids = [int(p) for p in line.split()[1:]]
        assert pids, "no Chromium process was started"
        if how == "close":
            assert proc.stdout.readline().split() == ["CLOSED"]
        else:
            proc.send_signal(getattr(signal, how))
        proc.wait(timeout=30)
        deadline = time.monotonic() + 15
        while any(_alive(p) for p in pids) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not [p for p in pids if _alive(p)], f"Chromium left running after {how}"
    finally:
        if proc.poll() is None:
            proc.kill()


def test_find_chromium_explains_what_is_missing(monkeypatch, tmp_path):
    monkeypatch.setenv("WEBRL_CHROMIUM", str(tmp_path / "nope"))
    with pytest.raises(FileNotFoundError, match="does not exist"):
        find_chromium()
    monkeypatch.delenv("WEBRL_CHROMIUM")
    assert Path(find_chromium()).is_file()
    assert browser_pids(os.getpid()) == browser_pids()


def test_no_request_leaves_the_site_server(notes_world, backend):
    """A page that makes the browser request another server (an image on another loopback port,
    standing in for the internet) gets that request aborted: the other server sees nothing.
    (Redirects are followed inside Chromium, past this guard; the sites never redirect off-site.)"""
    import http.server

    hits = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            hits.append(self.path)
            self.send_response(200)
            self.end_headers()

        def log_message(self, *a):
            pass

    other = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=other.serve_forever, daemon=True).start()
    try:
        env = WebEnv(EnvConfig(base_url=backend.base_url), world=notes_world, backend=backend)
        env.reset(options={"task": notes_task()})
        target = f"http://127.0.0.1:{other.server_port}/pixel"
        env.session.goto(f"{backend.base_url}/notes/embed?src={target}")
        assert "Picture" in env.session.fetch(f"{backend.base_url}/notes/embed?src=x")
        time.sleep(0.5)
        assert hits == []
        with pytest.raises(ActionError, match="redirect outside the sites"):  # evaluators' fetches too
            env.session.fetch(f"{backend.base_url}/notes/away?to={target}")
        assert "Note 3" in env.session.fetch(f"{backend.base_url}/notes/away?to=/notes/")  # a local hop is followed
        assert hits == []
        urllib.request.urlopen(target, timeout=5).close()  # the server answers: only the browser was stopped
        assert hits == ["/pixel"]
        env.session.close()
    finally:
        other.shutdown()

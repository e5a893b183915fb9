"""The `chromium` backend: real Chromium (Playwright) on the sites served over loopback.

    backend = ChromiumBackend(world)                 # starts the site server if none runs
    env = WebEnv(EnvConfig(base_url=backend.base_url), world, backend=backend)

How it keeps the agent's view identical to the `http` backend's:

- Observation: after every action a script syncs each field's live state
  (typed values, checked boxes, selected options) into its attributes, stamps
  every candidate element with `data-webrl-id` in document order, and returns
  the DOM's HTML. The env parses it with lxml and runs the *same* extractor as
  for `http`, so ids and text match; the stamp is the locator an action uses.
- Actions follow the `http` backend's rules (shared helpers in
  `webrl.env.http_backend`: what a link or button does, which option a label
  names, what Enter submits) and are then carried out for real: Playwright
  clicks, fills, selects, key presses and history moves. An action that must
  navigate (a link, a submit) waits for that navigation's `load`; nothing
  sleeps for a fixed time.
- Pages as the server sends them: forms get `novalidate` (the server validates;
  a validation bubble is invisible in text), `target` attributes are dropped
  (one tab, as in `http`), and Back/Forward show the page afresh (the server
  sends `no-store`; Chromium's restored form values are reset).

Isolation: each session is a browser context whose `webrl_tenant` cookie is a
fresh token, so its site state starts from the seed snapshot on the shared
server; closing the session releases the tenant.

Robustness: every browser call has a hard timeout (`call_timeout_s`); a hung
or crashed page or browser raises `BackendError`, which the env reports as
`info["backend_error"]` (not the agent's failure); the next session relaunches
Chromium if it died. At most `max_sessions` contexts are open at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

from webrl.env.actions import Action
from webrl.env.backend import BackendError
from webrl.env.chromium_engine import Engine
from webrl.env.http_backend import (
    MAX_REDIRECTS,
    SUBMIT_TYPES,
    ActionError,
    check_typeable,
    default_submitter,
    form_of,
    link_target,
    match_option,
)
from webrl.env.observation import TEXT_INPUT_TYPES, parse_html
from webrl.sites.server import RELEASE_PATH, SiteServer, local_urlopen, server_is_up, tenant_token
from webrl.sites.world import TENANT_COOKIE, WorldApp

ID_ATTR = "data-webrl-id"

# Runs in the page after every action: see the module docstring.
SNAPSHOT_JS = r"""
({resetForms}) => {
  const fresh = !window.__webrlSeen;
  window.__webrlSeen = true;
  if (resetForms) for (const f of document.forms) f.reset();
  for (const f of document.forms) f.noValidate = true;
  for (const el of document.querySelectorAll('a[target], area[target], form[target]')) el.removeAttribute('target');
  const buttons = new Set(['submit', 'button', 'reset', 'image', 'file', 'hidden']);
  let n = 0;
  for (const el of document.querySelectorAll('a, input, button, select, textarea')) {
    el.setAttribute('data-webrl-id', String(++n));
    if (el.tagName === 'INPUT') {
      const type = (el.getAttribute('type') || 'text').toLowerCase();
      if (type === 'checkbox' || type === 'radio') {
        if (el.checked !== el.hasAttribute('checked')) {
          if (el.checked) el.setAttribute('checked', ''); else el.removeAttribute('checked');
        }
      } else if (!buttons.has(type) && el.value !== (el.getAttribute('value') ?? '')) {
        el.setAttribute('value', el.value);
      }
    } else if (el.tagName === 'TEXTAREA') {
      if (el.value !== el.textContent) el.textContent = el.value;
    } else if (el.tagName === 'SELECT') {
      for (const o of el.options) {
        if (o.selected !== o.hasAttribute('selected')) {
          if (o.selected) o.setAttribute('selected', ''); else o.removeAttribute('selected');
        }
      }
    }
  }
  return {html: document.documentElement.outerHTML, fresh};
}
"""
SCROLL_JS = "f => window.scrollTo(0, f * Math.max(0, document.documentElement.scrollHeight - innerHeight))"


@dataclass(frozen=True)
class ChromiumConfig:
    """Settings of the `chromium` backend."""

    executable: str | None = None  # Chromium binary (default: $WEBRL_CHROMIUM, then Debian's)
    headless: bool = True  # False shows the browser window (needs a display)
    action_timeout_s: float = 5.0  # wait this long for an element to be clickable/fillable
    page_timeout_s: float = 20.0  # one page load or navigation
    call_timeout_s: float = 40.0  # hard cap on any browser call; beyond it the page is hung
    max_sessions: int = 8  # browser contexts open at once (each ~65 MB); more wait for a slot
    screenshot_dir: str | None = None  # save a PNG per observation under this folder
    viewport: tuple[int, int] = (1280, 720)  # page size in CSS pixels (screenshots)

    def __post_init__(self):
        if self.max_sessions < 1:
            raise ValueError(f"ChromiumConfig.max_sessions must be >= 1, got {self.max_sessions}")
        if not 0 < self.action_timeout_s <= self.page_timeout_s < self.call_timeout_s:
            raise ValueError("ChromiumConfig needs 0 < action_timeout_s <= page_timeout_s < call_timeout_s")


@dataclass
class Tab:
    """A browser context with its one page; reused across episodes (new tenant each time)."""

    ctx: Any
    page: Any
    launch: int  # which Chromium launch it belongs to (Engine.launches)
    episodes: int = 0


RECYCLE_AFTER = 200  # episodes per tab before it is closed and made afresh (bounds leaks)


class ChromiumBackend:
    """Sessions are browser contexts of one Chromium, on the site server at `base_url`.

    If nothing serves `base_url`, the backend starts a `SiteServer` for `world`
    there (port 0: any free port; read `base_url` back) and stops it on close.
    """

    name = "chromium"

    def __init__(
        self,
        world: WorldApp | None = None,
        base_url: str = "http://127.0.0.1:7770",
        config: ChromiumConfig | None = None,
        engine: Engine | None = None,
    ):
        self.world = world or WorldApp()
        self.config = config or ChromiumConfig()
        self.server: SiteServer | None = None
        base = urlsplit(base_url)
        up = server_is_up(base_url) if base.port else False
        if up is None:
            raise RuntimeError(f"{base_url} is served by something other than `webrl sites serve`; pick another port")
        if not up:
            if base.hostname not in ("127.0.0.1", "localhost", "::1"):
                raise RuntimeError(f"no site server at {base_url}, and one is only started on loopback")
            self.server = SiteServer(self.world, host=base.hostname, port=base.port or 0).start()
            base_url = self.server.url
        self.base_url = base_url.rstrip("/")
        self._own_engine = engine is None
        self.engine = engine or Engine(self.config.executable, self.config.headless)
        self._slots = threading.BoundedSemaphore(self.config.max_sessions)
        self._open: set[ChromiumSession] = set()
        self._idle: list[Tab] = []  # warm tabs of finished episodes, reused by the next ones
        self._lock = threading.Lock()
        self._closed = False

    def new_session(self) -> ChromiumSession:
        if self._closed:
            raise RuntimeError("this ChromiumBackend is closed")
        if not self._slots.acquire(timeout=self.config.call_timeout_s * 3):
            raise BackendError(f"all {self.config.max_sessions} browser sessions stayed busy")
        try:
            browser = self.engine.browser()  # relaunches Chromium if it died
            with self._lock:  # tabs of an earlier (dead) Chromium went with it
                self._idle = [t for t in self._idle if t.launch == self.engine.launches]
                tab = self._idle.pop() if self._idle else None
            try:
                session = ChromiumSession(self, browser, tab)
            except BackendError:
                if tab is None:
                    raise
                with contextlib.suppress(Exception):  # the warm tab had died: close it, make a new one
                    self.engine.run(tab.ctx.close, 15, "closing a dead browser context")
                session = ChromiumSession(self, browser, None)
        except BaseException:
            self._slots.release()
            raise
        with self._lock:
            self._open.add(session)
        return session

    def _forget(self, session: ChromiumSession, tab: Tab | None) -> None:
        """A session ended; keep its tab warm for the next episode if it is healthy."""
        with self._lock:
            if session not in self._open:
                return
            self._open.discard(session)
            if tab is not None and not self._closed:
                self._idle.append(tab)
        self._slots.release()

    def close(self) -> None:
        """Close every session, then Chromium and the server (those this backend started)."""
        if self._closed:
            return
        self._closed = True
        for session in list(self._open):
            session.close()
        if self._own_engine:
            self.engine.close()
        else:
            for tab in self._idle:
                with contextlib.suppress(Exception):
                    self.engine.run(tab.ctx.close, 15, "closing a browser context")
        self._idle = []
        if self.server is not None:
            self.server.stop()
            self.server = None

    def __enter__(self) -> ChromiumBackend:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class ChromiumSession:
    """One episode: a browser context + page, its tenant, its history and focus."""

    def __init__(self, backend: ChromiumBackend, browser: Any, tab: Tab | None = None):
        self.backend = backend
        self.config = backend.config
        self.engine = backend.engine
        self.base_url = backend.base_url
        self._netloc = urlsplit(self.base_url).netloc
        self.token = tenant_token()
        self.url = "about:blank"
        self.status = 0
        self.tree = parse_html("")
        self.version = 0
        self.screenshot_path: str | None = None
        self._focus: str | None = None  # data-webrl-id of the field with keyboard focus
        self._hist_len = 0  # our history (the http backend's rules): entries and position
        self._hist_index = -1
        self._broken: str | None = None
        self._closed = False
        self._shots = 0
        self._nav_status = 0
        self._browser = browser
        self._tab: Tab | None = tab
        self._call(self._attach, "opening a browser context")

    # --- plumbing ---------------------------------------------------------------------
    def _call(self, fn, what: str):
        """Run coroutine `fn` on the engine; browser failures become BackendError."""
        if self._broken:
            raise BackendError(self._broken)
        try:
            return self.engine.run(fn, self.config.call_timeout_s, what)
        except (ActionError, BackendError) as e:
            if isinstance(e, BackendError):
                self._broken = str(e)
            raise
        except Exception as e:  # Playwright errors: target closed, crashed, protocol errors
            first = (str(e).strip().splitlines() or [""])[0][:200]
            self._broken = f"{what} failed: {type(e).__name__}: {first}"
            raise BackendError(self._broken) from e

    async def _attach(self) -> None:
        """Take the warm tab (cookies cleared) or open a new one; set this episode's tenant."""
        tab = self._tab
        if tab is None:
            w, h = self.config.viewport
            ctx = await self._browser.new_context(viewport={"width": w, "height": h}, service_workers="block")
            try:
                await ctx.route("**/*", self._guard)  # what the page requests stays on the site server
                ctx.set_default_timeout(self.config.action_timeout_s * 1000)
                ctx.set_default_navigation_timeout(self.config.page_timeout_s * 1000)
                page = await ctx.new_page()
            except BaseException:
                await ctx.close()
                raise
            tab = self._tab = Tab(ctx, page, self.engine.launches)
        else:
            await tab.ctx.clear_cookies()
        tab.episodes += 1
        await tab.ctx.add_cookies([{"name": TENANT_COOKIE, "value": self.token, "url": self.base_url}])
        tab.page.on("crash", self._on_crash)

    async def _detach(self) -> bool:
        """Unhook this episode from its tab; True if the tab can serve another episode."""
        tab = self._tab
        tab.page.remove_listener("crash", self._on_crash)
        if self._broken or tab.page.is_closed() or tab.episodes >= RECYCLE_AFTER:
            await tab.ctx.close()
            return False
        await tab.ctx.clear_cookies()  # the tenant and the site logins end with the episode
        return True

    @property
    def _ctx(self) -> Any:
        return self._tab.ctx

    @property
    def _page(self) -> Any:
        return self._tab.page

    def _on_crash(self, _page) -> None:
        self._broken = "the page crashed"

    def is_local(self, url: str) -> bool:
        p = urlsplit(url)
        return p.scheme in ("http", "https") and p.netloc == self._netloc

    async def _guard(self, route) -> None:
        """Every request of the episode's browser context: the site server's go on, the rest (links,
        forms, images to other hosts) are aborted, so a page cannot send traffic off the machine.
        Playwright routes only a redirect chain's first request: the sites never redirect off-site
        (`sites/common.py: local_path`)."""
        if self.is_local(route.request.url):
            await route.continue_()
        else:
            await route.abort("blockedbyclient")

    def _wid(self, node) -> str:
        wid = node.get(ID_ATTR) if node is not None else None
        if wid is None:
            raise ActionError("this element is no longer on the page")
        return wid

    def _node(self, wid: str | None):
        if wid is None:
            return None
        found = self.tree.xpath(f"//*[@{ID_ATTR}=$w]", w=wid)
        return found[0] if found else None

    # --- the Session protocol ---------------------------------------------------------
    def login(self, site: str, username: str, password: str) -> None:
        async def post():
            resp = await self._ctx.request.post(
                f"{self.base_url}/{site}/login", form={"username": username, "password": password},
                timeout=self.config.page_timeout_s * 1000,
            )  # fmt: skip
            await resp.dispose()

        self._call(post, f"signing in to {site}")

    def goto(self, url: str) -> None:
        if not self.is_local(url):
            raise ActionError(f"navigation outside the sites is blocked: {url[:100]}")
        self._run([("goto", url)], None)

    def fetch(self, url: str) -> str:
        if not self.is_local(url):
            raise ActionError(f"navigation outside the sites is blocked: {url[:100]}")

        async def get():  # redirects followed here, each hop held to the site server
            where = url
            for _ in range(MAX_REDIRECTS + 1):
                resp = await self._ctx.request.get(where, timeout=self.config.page_timeout_s * 1000, max_redirects=0)
                location = resp.headers.get("location") if resp.status in (301, 302, 303, 307, 308) else None
                if location is None:
                    text = await resp.text()
                    await resp.dispose()
                    return text
                await resp.dispose()
                where = urljoin(where, location)
                if not self.is_local(where):
                    raise ActionError(f"a redirect outside the sites is blocked: {where[:100]}")
            raise ActionError(f"more than {MAX_REDIRECTS} redirects fetching {url[:100]}")

        return self._call(get, "fetching a page")

    def act(self, action: Action, node) -> None:
        kind = action.kind
        if kind == "Click":
            steps, focus = self._plan_click(node)
        elif kind in ("Type", "Search"):
            check_typeable(node)
            steps, focus = [("fill", self._wid(node), action.argument or "")], self._wid(node)
            if kind == "Search":
                steps += self._plan_enter(node)
        elif kind == "Select Dropdown Option":
            option = match_option(node, action.argument or "")
            index = node.findall(".//option").index(option)
            steps, focus = [("select", self._wid(node), index)], self._wid(node)
        elif kind == "Press Enter":
            steps, focus = self._plan_enter(self._node(self._focus)), self._focus
        elif kind in ("Go Backward", "Go Forward"):
            delta = -1 if kind == "Go Backward" else 1
            if not 0 <= self._hist_index + delta < self._hist_len:
                raise ActionError("no page to go " + ("back to" if delta < 0 else "forward to"))
            steps, focus = [("history", delta)], None
        else:
            raise ActionError(f"{kind} is not a browser action")
        self._run(steps, focus)

    def scroll_to(self, fraction: float) -> None:
        """Scroll the viewport to match the env's text window (only screenshots see it)."""

        async def scroll():
            await self._page.evaluate(SCROLL_JS, fraction)
            await self._screenshot()

        self._call(scroll, "scrolling")

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        keep = False
        try:
            if self._tab is not None:
                keep = self.engine.run(self._detach, 15, "closing a browser context")
        except BackendError:  # closing hung: Chromium is unusable, start afresh next time
            self.engine.kill_browser()
        except Exception:  # already closed or crashed: nothing left to close
            pass
        finally:
            self._release_tenant()
            self.backend._forget(self, self._tab if keep else None)

    def _release_tenant(self) -> None:
        req = urllib.request.Request(
            self.base_url + RELEASE_PATH, method="POST", data=b"",
            headers={"Cookie": f"{TENANT_COOKIE}={self.token}"},
        )  # fmt: skip
        with contextlib.suppress(OSError):  # a server that is gone took its tenants along
            local_urlopen(req, 5).close()  # loopback only

    # --- planning: the http backend's rules, decided on our lxml copy of the page ---
    def _plan_click(self, node) -> tuple[list[tuple], str | None]:
        tag = node.tag
        kind = (node.get("type") or "").lower()
        wid = self._wid(node)
        if tag == "a":
            target = link_target(node, self.url)
            if target is None:
                return [], self._focus
            if not self.is_local(target):
                raise ActionError(f"navigation outside the sites is blocked: {target[:100]}")
            return [("click", wid, True)], None
        if tag == "button" or (tag == "input" and kind in SUBMIT_TYPES + ("button", "reset")):
            btype = kind or ("submit" if tag == "button" else "")
            if btype in ("button", "reset") or form_of(node) is None:
                raise ActionError("this button does nothing without JavaScript")
            return [("click", wid, True)], None
        if tag == "input" and kind in ("checkbox", "radio"):
            return [("click", wid, False)], self._focus
        return [("focus", wid)], wid  # clicking a field focuses it

    def _plan_enter(self, node) -> list[tuple]:
        if node is None:
            raise ActionError("nothing is focused; type into a field first")
        wid = self._wid(node)
        if node.tag == "textarea":
            return [("press", wid, False)]
        form = form_of(node)
        if form is None:
            raise ActionError("pressing Enter here does nothing")
        submitter = default_submitter(form)
        kind = (node.get("type") or "text").lower()
        if node.tag == "input" and kind in TEXT_INPUT_TYPES and submitter is not None:
            return [("press", wid, True)]  # a real Enter: implicit submission via that button
        if submitter is not None:
            return [("click", self._wid(submitter), True)]
        return [("submit", wid)]  # a form without buttons is still submitted, as in http

    # --- carrying out a plan, then reading the page back ---------------------------------------
    def _run(self, steps: list[tuple], focus: str | None) -> None:
        """Carry out `steps`, then re-read the page (also when a step was refused:
        the steps before it may have changed the page)."""
        history = next((s[1] for s in steps if s[0] == "history"), 0)

        async def run():
            refused = None
            try:
                for step in steps:
                    await self._step(step)
            except ActionError as e:
                refused = e
            return await self._settle(reset_forms=bool(history)), refused

        snap, refused = self._call(run, f"{steps[0][0] if steps else 'noop'} action")
        self.tree = parse_html(snap["html"])
        self.url = snap["url"]
        self.status = self._nav_status
        if snap["fresh"]:
            self.version += 1
            self._focus = None
            if history:
                self._hist_index += history
            else:
                self._hist_index += 1
                self._hist_len = self._hist_index + 1
        elif refused is None:
            self._focus = focus
        if refused is not None:
            raise refused

    async def _step(self, step: tuple) -> None:
        from playwright.async_api import Error as PlaywrightError

        page = self._page
        kind = step[0]
        if kind == "goto":
            self._loaded(await page.goto(step[1], wait_until="load"))
            return
        if kind == "history":
            move = page.go_back if step[1] < 0 else page.go_forward
            self._loaded(await move(wait_until="load"))
            return
        if kind == "submit":
            async with page.expect_navigation(wait_until="load") as nav:
                await page.evaluate("w => document.querySelector(`[data-webrl-id=\"${w}\"]`).closest('form').requestSubmit()", step[1])  # fmt: skip
            self._loaded(await nav.value)
            return
        loc = page.locator(f'[{ID_ATTR}="{step[1]}"]')
        navigates = kind in ("click", "press") and step[2]
        try:
            if navigates:
                async with page.expect_navigation(wait_until="load") as nav:
                    await self._input(loc, step)
                self._loaded(await nav.value)
            else:
                await self._input(loc, step)
        except PlaywrightError as e:
            await self._agent_error(e, step)

    def _loaded(self, response) -> None:
        """Note the HTTP status of the document a navigation loaded (after redirects)."""
        if response is not None:
            self._nav_status = response.status

    async def _input(self, loc, step: tuple) -> None:
        kind = step[0]
        if kind == "click":
            await loc.click()
        elif kind == "focus":
            await loc.focus()
        elif kind == "fill":
            await loc.fill(step[2])
        elif kind == "select":
            await loc.select_option(index=[step[2]])  # a list: Playwright drops a bare index 0
        elif kind == "press":
            await loc.press("Enter")

    async def _agent_error(self, e: Exception, step: tuple) -> None:
        """An element the page refuses (hidden, covered, not a number field...) is the
        agent's problem (ActionError); an unresponsive page is the backend's."""
        from playwright.async_api import TimeoutError as PlaywrightTimeout

        msg = str(e)
        if "Cannot type text into input[type=number]" in msg or "Malformed value" in msg:
            raise ActionError(f"{step[2][:60]!r} is not a valid value for this field") from None
        if isinstance(e, PlaywrightTimeout) and "waiting for navigation" not in msg.lower():
            try:
                await asyncio.wait_for(self._page.evaluate("1"), 2)
            except Exception:
                raise BackendError("the page stopped responding") from e
            raise ActionError("this element cannot be used right now (hidden, disabled or covered)") from None
        raise e

    async def _settle(self, reset_forms: bool = False) -> dict:
        """Snapshot the current document (see SNAPSHOT_JS), then screenshot it if asked."""
        from playwright.async_api import Error as PlaywrightError

        for attempt in range(3):  # navigations above waited for `load` already
            try:
                snap = await self._page.evaluate(SNAPSHOT_JS, {"resetForms": reset_forms})
                break
            except PlaywrightError as e:  # a navigation replaced the document mid-read
                if attempt == 2 or "context was destroyed" not in str(e):
                    raise
                await self._page.wait_for_load_state("load")
        snap["url"] = self._page.url
        await self._screenshot()
        return snap

    async def _screenshot(self) -> None:
        if not self.config.screenshot_dir:
            return
        folder = Path(self.config.screenshot_dir) / self.token
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{self._shots:03d}.png"
        self._shots += 1
        await self._page.screenshot(path=str(path))
        self.screenshot_path = str(path)

"""Debian's Chromium under Playwright, shared by many threads.

Playwright's sync API is bound to the thread that made it, so parallel
episodes would each need their own driver and browser. Instead the `Engine`
runs Playwright's *async* API on one event-loop thread and hands out results
to any caller thread: one browser, one browser context per episode, real
concurrency in Chromium, and a hard timeout on every call (a hung page cannot
hang the caller).

Chromium is found on the system, never downloaded by Playwright:
`$WEBRL_CHROMIUM`, then Debian's `/usr/lib/chromium/chromium`, then the
`chromium` wrappers on PATH. `apt-get install chromium` provides it.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import os
import shutil
import signal
import threading
import weakref
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

from webrl.env.backend import BackendError

T = TypeVar("T")

CHROMIUM_ENV = "WEBRL_CHROMIUM"
CHROMIUM_PATHS = ("/usr/lib/chromium/chromium", "/usr/bin/chromium", "/usr/bin/chromium-browser")
# Without the background-networking flags Chromium phones home at start-up and,
# on a machine without internet, loopback connections get refused in bulk.
CHROMIUM_ARGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
)


def find_chromium(explicit: str | None = None) -> str:
    """Path of a Chromium binary: `explicit`, `$WEBRL_CHROMIUM`, Debian's, or PATH's."""
    for cand in (explicit, os.environ.get(CHROMIUM_ENV)):
        if cand:
            if not (Path(cand).is_file() and os.access(cand, os.X_OK)):
                raise FileNotFoundError(f"Chromium binary {cand!r} does not exist or is not executable")
            return cand
    for cand in CHROMIUM_PATHS:
        if Path(cand).is_file() and os.access(cand, os.X_OK):
            return cand
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    raise FileNotFoundError(
        "no Chromium found; install Debian's (`apt-get install chromium`) or set "
        f"${CHROMIUM_ENV} to a Chromium binary (Playwright cannot download browsers here)"
    )


def chromium_available() -> bool:
    try:
        find_chromium()
        import playwright  # noqa: F401
    except (FileNotFoundError, ImportError):
        return False
    return True


class Engine:
    """An event-loop thread running Playwright (async API) and one Chromium.

    `run(fn, timeout_s)` runs the coroutine `fn()` on the loop and waits for it
    from the calling thread; past `timeout_s` the coroutine is cancelled and
    `BackendError` raised. `browser()` (re)launches Chromium when it is not
    connected, so a crash costs one episode, not the run.
    """

    def __init__(self, executable: str | None = None, headless: bool = True, launch_timeout_s: float = 60.0):
        self.executable = find_chromium(executable)
        self.headless = headless
        self.launch_timeout_s = launch_timeout_s
        self.launches = 0  # how many times Chromium was started (1 + restarts)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="webrl-chromium", daemon=True)
        self._thread.start()
        self._pw: Any = None
        self._browser: Any = None
        self.driver_pid: int | None = None  # Playwright's node driver (Chromium runs under it)
        self._lock = threading.Lock()
        self._closed = False
        _ENGINES.add(self)

    # --- running coroutines from any thread --------------------------------
    def run(self, fn: Callable[[], Awaitable[T]], timeout_s: float, what: str = "browser call") -> T:
        if self._closed:
            raise BackendError("the browser engine is closed")
        future = asyncio.run_coroutine_threadsafe(fn(), self._loop)
        try:
            return future.result(timeout_s)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise BackendError(f"{what} timed out after {timeout_s:g} s (page or browser hung)") from None
        except concurrent.futures.CancelledError:
            raise BackendError(f"{what} was cancelled (browser closing)") from None

    # --- the browser -----------------------------------------------------------
    def browser(self) -> Any:
        """The connected browser, launching (or relaunching) Chromium if needed."""
        with self._lock:
            if self._browser is None or not self.run(self._connected, 10, "browser check"):
                self.run(self._launch, self.launch_timeout_s, "launching Chromium")
            return self._browser

    async def _connected(self) -> bool:
        return self._browser is not None and self._browser.is_connected()

    async def _launch(self) -> None:
        from playwright.async_api import async_playwright

        if self._browser is not None:  # a dead or unresponsive one: make sure it is gone
            await _quietly(self._browser.close(), 5)
            self._browser = None
        if self._pw is None:
            self._pw = await async_playwright().start()
            self.driver_pid = _driver_pid(self._pw)
        flags = [f for f in CHROMIUM_ARGS if self.headless or f != "--headless"]
        self._browser = await self._pw.chromium.launch(
            executable_path=self.executable, headless=self.headless, args=flags,
            handle_sigint=False, handle_sigterm=False, handle_sighup=False,
        )  # fmt: skip
        self.launches += 1

    def kill_browser(self) -> None:
        """Hard-stop Chromium (when it no longer answers); the next `browser()` relaunches."""
        for pid in browser_pids(self.driver_pid):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        self._browser = None

    # --- shutdown ----------------------------------------------------------------
    def close(self) -> None:
        """Close Chromium and the Playwright driver; idempotent."""
        if self._closed:
            return
        try:
            self.run(self._shutdown, 20, "closing Chromium")
        except BackendError:
            self.kill_browser()
        self._closed = True
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)
        _ENGINES.discard(self)

    async def _shutdown(self) -> None:
        if self._browser is not None:
            await _quietly(self._browser.close(), 10)
            self._browser = None
        if self._pw is not None:
            await _quietly(self._pw.stop(), 10)
            self._pw = None


def _driver_pid(pw: Any) -> int | None:
    """Pid of Playwright's driver process (private attribute; None if it moves)."""
    try:
        return int(pw._impl_obj._connection._transport._proc.pid)
    except (AttributeError, TypeError, ValueError):
        return None


async def _quietly(awaitable: Awaitable, timeout_s: float) -> None:
    with contextlib.suppress(Exception):  # closing something already broken: nothing more to do
        await asyncio.wait_for(awaitable, timeout_s)


_ENGINES: weakref.WeakSet[Engine] = weakref.WeakSet()


@atexit.register
def _close_engines() -> None:  # no browser outlives the process (Ctrl-C, sys.exit, errors)
    for engine in list(_ENGINES):
        engine.close()


# --- processes (memory accounting, hard kills, tests for leftovers) ----------------------


def _children() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry.name}/stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        kids.setdefault(ppid, []).append(int(entry.name))
    return kids


def descendants(pid: int) -> list[int]:
    """Every process below `pid` (Linux /proc)."""
    kids = _children()
    out, todo = [], [pid]
    while todo:
        for child in kids.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def _is_chromium(pid: int) -> bool:
    try:
        return "chrom" in Path(f"/proc/{pid}/comm").read_text()
    except OSError:
        return False


def browser_pids(root: int | None = None) -> list[int]:
    """Chromium processes started from this process (or from `root`)."""
    return [p for p in descendants(os.getpid() if root is None else root) if _is_chromium(p)]


def browser_memory_mb(root: int | None = None) -> float:
    """Proportional set size (PSS) of this process's Chromium processes, in MB."""
    total_kb = 0
    for pid in browser_pids(root):
        try:
            for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total_kb += int(line.split()[1])
                    break
        except OSError:
            continue
    return total_kb / 1024

"""`WebEnv`: a Gymnasium-style environment over the sites.

    env = WebEnv()
    obs, info = env.reset(options={"task": task})
    obs, reward, terminated, truncated, info = env.step('do(action="Click", element="3")')

`terminated` on exit(...); `truncated` at `max_steps`, after `max_repeats`
consecutive invalid or identical actions (the WebArena-Lite harness rule), or
when the same action is sent on the same observation for the `max_revisits`-th
time with no new page reached in between (a loop; see webrl/env/early_stop.py).
The reward is the ground-truth evaluator's score, given once when the episode
ends. Model output never raises: a bad action is a no-op whose error shows in
the next observation.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass
from typing import Any

from webrl.env.actions import ELEMENT_ACTIONS, parse_action
from webrl.env.backend import Backend, BackendError, Session
from webrl.env.early_stop import NoProgress
from webrl.env.http_backend import ActionError, HttpBackend
from webrl.env.observation import PageText, Window, extract, make_window, render
from webrl.sites.world import WorldApp
from webrl.tasks.evaluators import evaluate
from webrl.tasks.schema import Task, canonical_site, expand_url, task_from_json


@dataclass(frozen=True)
class EnvConfig:
    """Settings of one environment."""

    max_steps: int = 30  # steps before the episode is truncated
    max_repeats: int = 5  # consecutive invalid-or-identical actions before truncation
    max_revisits: int = 3  # the same action on the same observation this many times, no new page between, truncates (0: off)
    window_chars: int = 2000  # characters of page text shown per scroll window
    base_url: str = "http://127.0.0.1:7770"  # where the sites live (for URLs shown to the agent)
    evaluate: bool = True  # score the episode with the task's evaluator when it ends

    def __post_init__(self):
        if self.max_steps < 1:
            raise ValueError(f"EnvConfig.max_steps must be >= 1, got {self.max_steps}")
        if self.max_repeats < 0 or self.max_revisits < 0:
            raise ValueError(f"EnvConfig.max_repeats and max_revisits must be >= 0 (0: off), got "
                             f"{self.max_repeats} and {self.max_revisits}")
        if self.window_chars < 200:
            raise ValueError(f"EnvConfig.window_chars must be >= 200, got {self.window_chars}")


class WebEnv:
    """One episode at a time over a backend (default: `http`, the sites in process)."""

    def __init__(
        self,
        config: EnvConfig | None = None,
        world: WorldApp | None = None,
        backend: Backend | None = None,
    ):
        self.config = config or EnvConfig()
        self.world = world or WorldApp()
        self.backend = backend or HttpBackend(self.world, self.config.base_url)
        self.session: Session | None = None
        self.task: Task | None = None
        self._page: PageText | None = None
        self._page_version = -1
        self._window_index = 0
        self._steps = 0
        self._guard = NoProgress(self.config.max_repeats, self.config.max_revisits)
        self._obs_text = ""
        self._done = True

    # --- Gymnasium API ---------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[str, dict]:
        """Start an episode on `options["task"]` (a Task or its JSON dict)."""
        task = (options or {}).get("task")
        if task is None:
            raise ValueError('WebEnv.reset needs options={"task": Task | dict}')
        if isinstance(task, dict):
            task = task_from_json(task)
        t0 = time.perf_counter()
        self._done = True
        if self.session is not None:
            self.session.close()
            self.session = None
        try:
            self._start(task)
        except BackendError:  # the browser failed to start the episode; the caller may retry
            if self.session is not None:
                with contextlib.suppress(Exception):
                    self.session.close()
                self.session = None
            raise
        reset_ms = (time.perf_counter() - t0) * 1000
        obs, info = self._observe(error=None)
        self._obs_text = obs
        info["timings"] = {"reset_ms": reset_ms}
        return obs, info

    def _start(self, task: Task) -> None:
        self.session = self.backend.new_session()
        self.task = task
        if task.require_login:
            for site in map(canonical_site, task.sites):
                if site in self.world.specs:
                    user, password = self.world.specs[site].default_user
                    self.session.login(site, user, password)
        self.session.goto(expand_url(task.start_url, self.config.base_url))
        self._steps = 0
        self._guard.reset()
        self._done = False
        self._window_index = 0

    def step(self, action_text: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        if self._done or self.session is None:
            raise RuntimeError("call reset() before step() (the episode has ended)")
        t0 = time.perf_counter()
        self._steps += 1
        parsed = parse_action(action_text)
        action, error = parsed.action, parsed.error
        answer = None
        terminated = False
        if action is not None:
            try:
                if action.kind == "exit":
                    answer = action.argument
                    terminated = True
                elif action.kind in ("Scroll Down", "Scroll Up"):
                    self._scroll(+1 if action.kind == "Scroll Down" else -1)
                else:
                    node = None
                    if action.kind in ELEMENT_ACTIONS:
                        node = self._element_node(action.element)
                    self.session.act(action, node)
            except ActionError as e:
                error = str(e)
            except BackendError as e:  # the browser failed, not the agent: void the episode
                return self._backend_failed(e, action)
            except Exception as e:  # a site bug must not kill the episode
                error = f"the page failed to respond ({type(e).__name__})"
        key = action.to_text() if action is not None else None
        invalid = error is not None
        no_progress = self._guard.update(self._obs_text, key, invalid)
        truncated = not terminated and (self._steps >= self.config.max_steps or no_progress)
        act_ms = (time.perf_counter() - t0) * 1000
        t1 = time.perf_counter()
        try:
            obs, info = self._observe(error)
        except BackendError as e:
            return self._backend_failed(e, action)
        self._obs_text = obs
        obs_ms = (time.perf_counter() - t1) * 1000
        reward = 0.0
        if terminated or truncated:
            self._done = True
            info["answer"] = answer
            if self.config.evaluate:
                try:
                    reward = self.score(answer)
                except BackendError as e:
                    return self._backend_failed(e, action)
        info.update(
            action=None if action is None else {"kind": action.kind, "element": action.element, "argument": action.argument},
            action_text=key,
            action_error=error,
            step=self._steps,
            repeats=self._guard.repeats,
            revisits=self._guard.revisits,
            timings={"act_ms": act_ms, "obs_ms": obs_ms},
        )  # fmt: skip
        return obs, reward, terminated, truncated, info

    def _backend_failed(self, e: BackendError, action) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """End the episode as void: `info["backend_error"]` says why; the next reset recovers."""
        self._done = True
        url = ""
        if self.session is not None:
            url = self.session.url
            with contextlib.suppress(Exception):  # already broken; the next reset starts afresh
                self.session.close()
            self.session = None
        info = {
            "backend_error": str(e), "url": url, "answer": None, "step": self._steps,
            "action_text": action.to_text() if action is not None else None,
            "action_error": None, "elements": [], "task_id": self.task.task_id if self.task else None,
        }  # fmt: skip
        return f"[Backend error: {e}]", 0.0, False, True, info

    def score(self, answer: str | None) -> float:
        """Ground-truth score of the current state and `answer` for the current task."""
        assert self.session is not None and self.task is not None
        return evaluate(self.task, answer, self.session.url, self.session.fetch, self.config.base_url)

    def close(self) -> None:
        if self.session is not None:
            self.session.close()
            self.session = None
        self.backend.close()

    # --- observation -------------------------------------------------------------------
    def page(self) -> PageText:
        """The current page's text (re-extracted when the DOM changes)."""
        assert self.session is not None
        self._page = extract(self.session.tree)
        if self.session.version != self._page_version:
            self._page_version = self.session.version
            self._window_index = 0
        return self._page

    def window(self) -> Window:
        assert self._page is not None
        return make_window(self._page.lines, self.config.window_chars, self._window_index)

    def _observe(self, error: str | None) -> tuple[str, dict[str, Any]]:
        assert self.session is not None
        page = self.page()
        win = self.window()
        obs = render(page, self.session.url, win, error)
        info = {
            "url": self.session.url,
            "status": self.session.status,
            "title": page.title,
            "elements": [e.to_json(win.start <= e.line < win.end) for e in page.elements],
            "viewport": {"index": win.index, "start": win.start, "end": win.end, "count": win.count},
            "task_id": self.task.task_id if self.task else None,
        }
        shot = getattr(self.session, "screenshot_path", None)  # browser backends, when asked
        if shot:
            info["screenshot"] = shot
        return obs, info

    def _scroll(self, delta: int) -> None:
        win = self.window()
        target = win.index + delta
        if not 0 <= target < win.count:
            raise ActionError("already at the " + ("bottom" if delta > 0 else "top") + " of the page")
        self._window_index = target
        scroll_to = getattr(self.session, "scroll_to", None)  # a real browser scrolls along
        if scroll_to is not None:
            scroll_to(make_window(self._page.lines, self.config.window_chars, target).start / max(1, win.total))

    def _element_node(self, eid: int | None):
        assert self._page is not None
        if eid is None or not 1 <= eid <= len(self._page.elements):
            raise ActionError(f"element {eid} does not exist on this page")
        return self._page.elements[eid - 1].node

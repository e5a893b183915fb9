"""BrowserGym, both ways: our tasks as BrowserGym tasks, our agents on BrowserGym envs.

BrowserGym (`pip install browsergym-core`) is the ecosystem's harness for
MiniWoB++, WebArena, WorkArena and more.

1. Our tasks in BrowserGym. `register_tasks(tasks, base_url)` registers each
   task as `browsergym/webrl.<task_id>`; its setup opens the start page in a
   fresh tenant of the site server at `base_url` (signed in if the task says
   so) and its validate scores the agent's message (`send_msg_to_user`) and
   the final state with our evaluator. Any BrowserGym agent can be scored on
   our world.
2. Our agents on BrowserGym. `BrowserGymEnv(bg_env)` gives any BrowserGym env
   our `WebEnv` interface: BrowserGym's DOM snapshot becomes our observation
   text (the same extractor, so the same ids and text as our backends on the
   same page) and our actions become BrowserGym's high-level actions
   (click/fill/select_option/press/go_back/go_forward/send_msg_to_user).
   Scrolling moves our text window only (no browser step).

Both BrowserGym browsers (the page and the chat window) run Debian's
Chromium after `use_debian_chromium()`, without slow motion; `make_env`
also turns off BrowserGym's 0.5 s pre-observation delay.

    server = SiteServer(port=0).start()
    use_debian_chromium()
    [env_id] = register_tasks([task], server.url)
    env = BrowserGymEnv(make_env(env_id))
    record = run_episode(env, OracleAgent(), task)      # webrl.rollout.runner
"""

from __future__ import annotations

import contextlib
import json
import time
import urllib.request
from typing import Any
from urllib.parse import urlsplit

from lxml import html as lxml_html

from webrl.env.actions import ELEMENT_ACTIONS, Action, parse_action
from webrl.env.chromium_engine import CHROMIUM_ARGS, find_chromium
from webrl.env.early_stop import NoProgress
from webrl.env.http_backend import ActionError, match_option
from webrl.env.observation import PageText, extract, make_window, norm, parse_html, render
from webrl.env.web_env import EnvConfig
from webrl.sites.server import RELEASE_PATH, local_urlopen, tenant_token
from webrl.sites.world import TENANT_COOKIE, default_specs
from webrl.tasks.evaluators import evaluate
from webrl.tasks.schema import Task, canonical_site, expand_url, task_from_json

BID_ATTR = "bid"  # BrowserGym's element id attribute
ENV_PREFIX = "webrl."  # our tasks register as browsergym/webrl.<task_id>


# --- Debian's Chromium for both of BrowserGym's browsers -------------------------------------


class _Launcher:
    """`playwright.chromium` with Debian's binary, our flags and (by default) no slow motion."""

    def __init__(self, browser_type: Any, executable: str, slow_mo: float | None):
        self._type = browser_type
        self._executable = executable
        self._slow_mo = slow_mo

    def launch(self, **kwargs: Any) -> Any:
        headless = kwargs.get("headless", True)
        flags = [f for f in CHROMIUM_ARGS if headless or f != "--headless"]
        kwargs["executable_path"] = self._executable
        kwargs["args"] = [*(kwargs.get("args") or []), *flags]
        if self._slow_mo is not None:
            kwargs["slow_mo"] = self._slow_mo
        return self._type.launch(**kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._type, name)


class _Playwright:
    """The global Playwright that BrowserGym uses, with `chromium` swapped for `_Launcher`."""

    def __init__(self, pw: Any, launcher: _Launcher):
        self._pw = pw
        self.chromium = launcher

    def __getattr__(self, name: str) -> Any:
        return getattr(self._pw, name)


def use_debian_chromium(executable: str | None = None, slow_mo: float | None = 0) -> None:
    """Make BrowserGym launch Debian's Chromium for its page *and* chat browsers.

    BrowserGym starts one global sync Playwright per process and launches the chat
    window's browser without `pw_chromium_kwargs`; wrapping that Playwright's
    `chromium.launch` covers both. `slow_mo=0` overrides the tasks' 1000 ms default
    (None keeps what each task asks for). Call it in the thread that runs the envs.
    """
    import browsergym.core as bgym_core

    current = bgym_core._get_global_playwright()
    pw = current._pw if isinstance(current, _Playwright) else current
    bgym_core._set_global_playwright(_Playwright(pw, _Launcher(pw.chromium, find_chromium(executable), slow_mo)))


# --- our tasks as BrowserGym tasks -----------------------------------------------------------


def _task_class():
    """Defined on first use, so importing this module does not need BrowserGym."""
    from browsergym.core.task import AbstractBrowserTask

    class WebRLTask(AbstractBrowserTask):
        """One WebRL task on the site server at `base_url`, in its own tenant."""

        @classmethod
        def get_task_id(cls) -> str:
            return "webrl"

        def __init__(self, seed: int, task: dict, base_url: str, timeout_ms: int = 10_000):
            super().__init__(seed)
            self.task = task_from_json(task)
            self.base_url = base_url.rstrip("/")
            self.slow_mo = 0
            self.timeout = timeout_ms
            self.token = tenant_token()

        def _local(self, url: str) -> bool:
            p = urlsplit(url)
            return p.scheme in ("http", "https") and p.netloc == urlsplit(self.base_url).netloc

        def _guard(self, route) -> None:  # what the page requests stays on the site server
            if self._local(route.request.url):
                route.continue_()
            else:
                route.abort("blockedbyclient")

        def setup(self, page) -> tuple[str, dict]:
            ctx = page.context
            ctx.route("**/*", self._guard)
            start = expand_url(self.task.start_url, self.base_url)
            if not self._local(start):
                raise ValueError(f"task {self.task.task_id}: start_url {start[:100]} is not on the site server {self.base_url}")
            ctx.add_cookies([{"name": TENANT_COOKIE, "value": self.token, "url": self.base_url}])
            if self.task.require_login:
                specs = default_specs()
                for site in map(canonical_site, self.task.sites):
                    if site in specs:
                        user, password = specs[site].default_user
                        ctx.request.post(
                            f"{self.base_url}/{site}/login", form={"username": user, "password": password}
                        ).dispose()
            page.goto(start, wait_until="load")
            return self.task.intent, {"task_id": self.task.task_id}

        def validate(self, page, chat_messages: list[dict]) -> tuple[float, bool, str, dict]:
            answer = agent_answer(chat_messages)
            if answer is None:
                return 0.0, False, "", {}

            def fetch(url: str) -> str:
                if not self._local(url):
                    return ""  # an evaluator's page off the site server: nothing to read, nothing sent
                resp = page.context.request.get(url)
                try:
                    return resp.text()
                finally:
                    resp.dispose()

            reward = evaluate(self.task, answer, page.url, fetch, self.base_url)
            return reward, True, "", {"answer": answer}

        def cheat(self, page, chat_messages: list[dict]) -> None:
            raise NotImplementedError("run OracleAgent through BrowserGymEnv instead")

        def teardown(self) -> None:
            req = urllib.request.Request(
                self.base_url + RELEASE_PATH, method="POST", data=b"",
                headers={"Cookie": f"{TENANT_COOKIE}={self.token}"},
            )  # fmt: skip
            with contextlib.suppress(OSError):  # the server is gone, and its tenants with it
                local_urlopen(req, 5).close()  # loopback only

    return WebRLTask


def agent_answer(chat_messages: list[dict]) -> str | None:
    """The agent's answer: its last message after the user's last one (None if none yet)."""
    answer = None
    for m in chat_messages:
        if m.get("role") == "user":
            answer = None
        elif m.get("role") in ("assistant", "infeasible"):
            answer = m.get("message", "")
    return answer


def env_id(task: Task) -> str:
    return f"browsergym/{ENV_PREFIX}{task.task_id}"


def register_tasks(tasks: list[Task], base_url: str) -> list[str]:
    """Register each task with gymnasium as `browsergym/webrl.<task_id>`; returns the ids.

    The sites must be served at `base_url` (`webrl sites serve`, or a `SiteServer`).
    """
    import gymnasium as gym
    from browsergym.core.registration import register_task

    cls = _task_class()
    ids = []
    for task in tasks:
        gid = env_id(task)
        if gid not in gym.registry:
            register_task(
                gid.removeprefix("browsergym/"), cls,
                task_kwargs={"task": task.to_json(), "base_url": base_url},
            )  # fmt: skip
        ids.append(gid)
    return ids


def patient_action_set() -> Any:
    """BrowserGym's high-level actions (chat, infeasible) plus our patient element and
    history actions (`webrl.env.browsergym_actions`), several per step allowed."""
    from browsergym.core.action.highlevel import HighLevelActionSet

    from webrl.env.browsergym_actions import PATIENT_ACTIONS

    return HighLevelActionSet(subsets=["chat", "infeas", "custom"], custom_actions=PATIENT_ACTIONS, multiaction=True)


def make_env(gym_id: str, **kwargs: Any) -> Any:
    """`gym.make` for a BrowserGym env, set up for speed: headless, no pre-observation
    delay, and patient actions (`patient_action_set`); each overridable through
    `kwargs`. Slow motion is set by `use_debian_chromium`."""
    import gymnasium as gym

    settings = {
        "headless": True, "pre_observation_delay": 0.0,
        "action_mapping": patient_action_set().to_python_code, **kwargs,
    }  # fmt: skip
    return gym.make(gym_id, **settings)


# --- BrowserGym observations as our observation text -----------------------------------------


def snapshot_to_tree(dom_snapshot: dict):
    """BrowserGym's DOM snapshot (CDP DOMSnapshot) as an lxml tree of the main document,
    with live field values written into attributes (as our backends do) and BrowserGym's
    element ids kept in `bid` attributes."""
    strings = dom_snapshot["strings"]
    doc = dom_snapshot["documents"][0]
    nodes = doc["nodes"]

    def rare_strings(key: str) -> dict[int, str]:
        data = nodes.get(key) or {"index": [], "value": []}
        return {i: strings[v] for i, v in zip(data["index"], data["value"], strict=False) if v >= 0}

    def rare_bools(key: str) -> set[int]:
        return set((nodes.get(key) or {"index": []})["index"])

    input_value, text_value = rare_strings("inputValue"), rare_strings("textValue")
    checked, selected = rare_bools("inputChecked"), rare_bools("optionSelected")
    pseudo = set((nodes.get("pseudoType") or {"index": []})["index"])
    elements: dict[int, Any] = {}
    root = None
    for i, parent in enumerate(nodes["parentIndex"]):
        kind = nodes["nodeType"][i]
        if i in pseudo:
            continue
        parent_el = elements.get(parent)
        if kind == 3 and parent_el is not None:  # text
            if parent_el.tag == "textarea":  # its live value was written in already
                continue
            value = strings[nodes["nodeValue"][i]] if nodes["nodeValue"][i] >= 0 else ""
            if len(parent_el):
                parent_el[-1].tail = (parent_el[-1].tail or "") + value
            else:
                parent_el.text = (parent_el.text or "") + value
            continue
        if kind == 11 and parent_el is not None:  # shadow root: its children hang on the host
            elements[i] = parent_el
            continue
        if kind != 1:
            continue
        tag = strings[nodes["nodeName"][i]].lower()
        if not tag.replace("-", "").isalnum():
            continue
        el = lxml_html.Element(tag)
        attrs = nodes["attributes"][i]
        for k in range(0, len(attrs), 2):
            name = strings[attrs[k]]
            try:
                el.set(name, strings[attrs[k + 1]] if attrs[k + 1] >= 0 else "")
            except ValueError:  # a name lxml cannot hold (e.g. Vue's @click)
                continue
        _sync_live_state(el, tag, input_value.get(i), text_value.get(i), i in checked, i in selected)
        if parent_el is None:
            if root is not None:
                continue  # a second top-level element (not part of the main document)
            root = el
        else:
            parent_el.append(el)
        elements[i] = el
    return root if root is not None else parse_html("")


def _sync_live_state(el, tag: str, value: str | None, text: str | None, checked: bool, selected: bool) -> None:
    kind = (el.get("type") or "text").lower()
    if tag == "input" and kind in ("checkbox", "radio"):
        if checked:
            el.set("checked", "")
        elif "checked" in el.attrib:
            del el.attrib["checked"]
    elif tag == "input" and value is not None:
        el.set("value", value)
    elif tag == "textarea":
        el.text = text if text is not None else el.get("value", "")
        el.attrib.pop("value", None)  # BrowserGym copies .value into an attribute; ours is the text
    elif tag == "option":
        if selected:
            el.set("selected", "")
        elif "selected" in el.attrib:
            del el.attrib["selected"]


# --- our agents on any BrowserGym env ---------------------------------------------------------


def to_browsergym(action: Action, bid: str | None, node=None, focused_bid: str | None = None) -> str:
    """Our action as BrowserGym high-level action code (one or two calls)."""
    def q(s) -> str:  # a Python string literal; ensure_ascii off keeps text outside the BMP whole
        return json.dumps(s, ensure_ascii=False)

    kind = action.kind
    if kind == "exit":
        return f"send_msg_to_user({q(action.argument or '')})"
    if kind == "Click":
        return f"click({q(bid)})"
    if kind == "Type":
        return f"fill({q(bid)}, {q(action.argument or '')})"
    if kind == "Search":
        return f"fill({q(bid)}, {q(action.argument or '')})\npress({q(bid)}, 'Enter')"
    if kind == "Select Dropdown Option":
        label = action.argument or ""
        if node is not None:  # our rule (exact text, value, or unique part) picks the option
            label = norm(match_option(node, label).text_content())
        return f"select_option({q(bid)}, {q(label)})"
    if kind == "Press Enter":
        if not focused_bid:
            raise ActionError("nothing is focused; type into a field first")
        return f"press({q(focused_bid)}, 'Enter')"
    if kind == "Go Backward":
        return "go_back()"
    if kind == "Go Forward":
        return "go_forward()"
    raise ActionError(f"{kind} has no BrowserGym counterpart")


class BrowserGymEnv:
    """Any BrowserGym env behind our `WebEnv` interface (observation text, action grammar).

    `reset(options={"task": task})` resets the wrapped env (the task only labels the
    episode: a BrowserGym env has its task built in); `step(text)` parses our action,
    runs it as BrowserGym actions and returns our observation text, BrowserGym's
    reward, and WebEnv's info keys (elements, viewport, url, action_text, ...).
    """

    def __init__(self, bg_env: Any, config: EnvConfig | None = None):
        self.bg_env = bg_env
        self.config = config or EnvConfig()
        self.task: Task | None = None
        self._obs: dict = {}
        self._page: PageText | None = None
        self._window_index = 0
        self._steps = 0
        self._guard = NoProgress(self.config.max_repeats, self.config.max_revisits)
        self._obs_text = ""
        self._done = True

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[str, dict]:
        task = (options or {}).get("task")
        self.task = task_from_json(task) if isinstance(task, dict) else task
        t0 = time.perf_counter()
        self._obs, bg_info = self.bg_env.reset(seed=seed)
        self._steps, self._done = 0, False
        self._guard.reset()
        self._window_index = 0
        self._fresh_document()
        obs, info = self._observe(None)
        self._obs_text = obs
        info["timings"] = {"reset_ms": (time.perf_counter() - t0) * 1000}
        info["browsergym"] = {"goal": self._obs.get("goal", "")}
        return obs, info

    def step(self, action_text: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        if self._done:
            raise RuntimeError("call reset() before step() (the episode has ended)")
        self._steps += 1
        parsed = parse_action(action_text)
        action, error = parsed.action, parsed.error
        reward, terminated, answer = 0.0, False, None
        if action is not None:
            try:
                if action.kind in ("Scroll Down", "Scroll Up"):
                    self._scroll(+1 if action.kind == "Scroll Down" else -1)
                else:
                    reward, terminated, error = self._bg_step(action)
                    answer = action.argument if action.kind == "exit" else None
            except ActionError as e:
                error = str(e)
        key = action.to_text() if action is not None else None
        no_progress = self._guard.update(self._obs_text, key, error is not None)
        terminated = terminated or (action is not None and action.kind == "exit")
        truncated = not terminated and (self._steps >= self.config.max_steps or no_progress)
        obs, info = self._observe(error)
        self._obs_text = obs
        if terminated or truncated:
            self._done = True
            info["answer"] = answer
        info.update(
            action=None if action is None else {"kind": action.kind, "element": action.element, "argument": action.argument},
            action_text=key, action_error=error, step=self._steps, repeats=self._guard.repeats,
            revisits=self._guard.revisits,
        )  # fmt: skip
        return obs, float(reward), terminated, truncated, info

    def close(self) -> None:
        self.bg_env.close()

    # --- internals ---------------------------------------------------------------------------
    def _bg_step(self, action: Action) -> tuple[float, bool, str | None]:
        node = bid = None
        if action.kind in ELEMENT_ACTIONS:
            assert self._page is not None
            eid = action.element
            if eid is None or not 1 <= eid <= len(self._page.elements):
                raise ActionError(f"element {eid} does not exist on this page")
            node = self._page.elements[eid - 1].node
            bid = node.get(BID_ATTR)
            if bid is None:
                raise ActionError(f"element {eid} cannot be targeted in this browser")
        code = to_browsergym(action, bid, node, self._obs.get("focused_element_bid") or None)
        self._obs, reward, terminated, _truncated, _info = self.bg_env.step(code)
        if self._fresh_document():
            self._window_index = 0
        error = (self._obs.get("last_action_error") or "").strip().splitlines()
        return reward, terminated, (error[0][:300] if error else None)

    def _fresh_document(self) -> bool:
        """Whether the page is a new document since we last looked (resets the text window)."""
        page = getattr(self.bg_env.unwrapped, "page", None)
        if page is None:
            return True
        try:
            return bool(page.evaluate("() => { const f = !window.__webrlSeen; window.__webrlSeen = true; return f; }"))
        except Exception:  # closed or navigating: treat as new
            return True

    def _observe(self, error: str | None) -> tuple[str, dict[str, Any]]:
        self._page = page = extract(snapshot_to_tree(self._obs["dom_object"]))
        win = make_window(page.lines, self.config.window_chars, self._window_index)
        self._window_index = win.index
        url = self._obs.get("url", "")
        obs = render(page, url, win, error)
        info = {
            "url": url, "status": 0, "title": page.title,
            "elements": [e.to_json(win.start <= e.line < win.end) for e in page.elements],
            "viewport": {"index": win.index, "start": win.start, "end": win.end, "count": win.count},
            "task_id": self.task.task_id if self.task else None,
        }  # fmt: skip
        return obs, info

    def _scroll(self, delta: int) -> None:
        assert self._page is not None
        win = make_window(self._page.lines, self.config.window_chars, self._window_index)
        target = win.index + delta
        if not 0 <= target < win.count:
            raise ActionError("already at the " + ("bottom" if delta > 0 else "top") + " of the page")
        self._window_index = target

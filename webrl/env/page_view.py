"""`PageView`: the current page as an oracle (scripted policy) reads it.

Oracles are generators of action strings; the runner refreshes the view with
each new observation. Element-targeting helpers first scroll the target into
the window, so demonstrations only act on what the agent could see.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from webrl.env.actions import Action, format_action
from webrl.env.observation import norm

MAX_SCROLLS = 50


class OracleError(LookupError):
    """The oracle could not find what it expected on the page (a bug to fix)."""


@dataclass
class Element:
    id: int
    tag: str
    text: str
    attrs: dict[str, str]
    options: list[str] = field(default_factory=list)
    visible: bool = True
    line: int = 0


class PageView:
    def __init__(self, obs: str = "", info: dict | None = None):
        self.obs = obs
        self.info: dict = {}
        self.elements: list[Element] = []
        self.update(obs, info or {})

    def update(self, obs: str, info: dict) -> None:
        self.obs = obs
        self.info = info
        self.elements = [
            Element(e["id"], e["tag"], e["text"], e["attrs"], e.get("options", []), e["visible"], e["line"])
            for e in info.get("elements", [])
        ]

    @property
    def url(self) -> str:
        return self.info.get("url", "")

    @property
    def text(self) -> str:
        return self.obs

    # --- finding elements ------------------------------------------------------
    def _matches(self, e: Element, text, tag, name, href, exact) -> bool:
        if tag is not None and e.tag != tag:
            return False
        if name is not None and e.attrs.get("name") != name:
            return False
        if href is not None and href not in e.attrs.get("href", ""):
            return False
        if text is not None:
            want = norm(text).lower()
            cands = [norm(e.text).lower(), norm(e.attrs.get("placeholder", "")).lower()]
            if exact:
                return want in cands
            return any(want in c for c in cands if c)
        return True

    def find_all(self, text=None, *, tag=None, name=None, href=None, exact=False) -> list[Element]:
        return [e for e in self.elements if self._matches(e, text, tag, name, href, exact)]

    def find(self, text=None, *, tag=None, name=None, href=None, exact=False, nth=0) -> Element:
        found = self.find_all(text, tag=tag, name=name, href=href, exact=exact)
        if len(found) <= nth:
            what = ", ".join(f"{k}={v!r}" for k, v in
                             dict(text=text, tag=tag, name=name, href=href).items() if v is not None)  # fmt: skip
            raise OracleError(f"no element ({what}) #{nth} on {self.url}")
        return found[nth]

    def has(self, text=None, *, tag=None, name=None, href=None, exact=False) -> bool:
        return bool(self.find_all(text, tag=tag, name=name, href=href, exact=exact))

    # --- actions ------------------------------------------------------------------------
    def _reveal(self, el: Element) -> Iterator[str]:
        for _ in range(MAX_SCROLLS):
            if el.visible:
                return
            vp = self.info.get("viewport", {})
            yield self.scroll_down() if el.line >= vp.get("end", 0) else self.scroll_up()
            el = next((e for e in self.elements if e.id == el.id), el)
        raise OracleError(f"could not scroll element {el.id} into view on {self.url}")

    def _target(self, filters: dict) -> Element:
        nth = filters.pop("nth", 0)
        return self.find(filters.pop("text", None), nth=nth, **filters)

    def click(self, text=None, **filters) -> Iterator[str]:
        el = self._target({"text": text, **filters})
        yield from self._reveal(el)
        yield format_action(Action("Click", el.id))

    def type(self, value: str, **filters) -> Iterator[str]:
        el = self._target(filters)
        yield from self._reveal(el)
        yield format_action(Action("Type", el.id, value))

    def search(self, value: str, **filters) -> Iterator[str]:
        el = self._target(filters)
        yield from self._reveal(el)
        yield format_action(Action("Search", el.id, value))

    def select(self, option: str, **filters) -> Iterator[str]:
        el = self._target(filters)
        yield from self._reveal(el)
        yield format_action(Action("Select Dropdown Option", el.id, option))

    @staticmethod
    def scroll_down() -> str:
        return format_action(Action("Scroll Down"))

    @staticmethod
    def scroll_up() -> str:
        return format_action(Action("Scroll Up"))

    @staticmethod
    def press_enter() -> str:
        return format_action(Action("Press Enter"))

    @staticmethod
    def go_back() -> str:
        return format_action(Action("Go Backward"))

    @staticmethod
    def go_forward() -> str:
        return format_action(Action("Go Forward"))

    @staticmethod
    def exit(message: str) -> str:
        return format_action(Action("exit", argument=str(message)))

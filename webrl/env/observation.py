"""Page HTML -> the agent's observation text, with integer ids on interactive elements.

A pure, deterministic function of the DOM, so any backend that can hand us the
page's current HTML (the in-process `http` backend, or a browser's live DOM)
produces the same text. Interactive elements (links, buttons, inputs, selects,
textareas) get ids 1, 2, 3, ... in document order and are rendered as compact
HTML tags; other text is kept as lines (headings as `#`, list items as `-`,
table cells joined by `|`); scripts, styles and hidden elements are dropped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from lxml import html as lxml_html

SKIP_TAGS = {"script", "style", "head", "noscript", "template", "svg", "iframe", "object"}
BLOCK_TAGS = {
    "p", "div", "section", "article", "header", "footer", "nav", "main", "aside", "form",
    "table", "thead", "tbody", "tfoot", "tr", "ul", "ol", "li", "dl", "dt", "dd", "pre",
    "blockquote", "fieldset", "legend", "figure", "figcaption", "hr", "br", "body", "html",
    "h1", "h2", "h3", "h4", "h5", "h6", "details", "summary", "label",
}  # fmt: skip
HEADINGS = {"h1": "#", "h2": "##", "h3": "###", "h4": "####", "h5": "####", "h6": "####"}
TEXT_INPUT_TYPES = {"text", "search", "email", "number", "password", "tel", "url", "date", ""}
MAX_TEXT = 300  # chars kept of one text run
MAX_LABEL = 100  # chars kept of an element's label
_WS = re.compile(r"\s+")


def norm(text: str | None) -> str:
    return _WS.sub(" ", text or "").strip()


def clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


@dataclass
class Element:
    """One interactive element as the agent sees it."""

    id: int
    tag: str
    text: str
    attrs: dict[str, str]
    options: list[str] = field(default_factory=list)
    line: int = 0
    node: object = field(default=None, repr=False, compare=False)  # backend handle (lxml node)

    def to_json(self, visible: bool) -> dict:
        return {
            "id": self.id, "tag": self.tag, "text": self.text, "attrs": self.attrs,
            "options": self.options, "line": self.line, "visible": visible,
        }  # fmt: skip


@dataclass
class PageText:
    """The page as lines of text plus its interactive elements."""

    title: str
    lines: list[str]
    elements: list[Element]


def is_hidden(node) -> bool:
    if node.get("hidden") is not None or node.get("aria-hidden") == "true":
        return True
    style = (node.get("style") or "").replace(" ", "").lower()
    return "display:none" in style or "visibility:hidden" in style


def is_interactive(node) -> bool:
    tag = node.tag
    if tag == "a":
        return node.get("href") is not None
    if tag == "input":
        return (node.get("type") or "text").lower() != "hidden"
    return tag in ("button", "select", "textarea")


def _attr(name: str, value: str) -> str:
    if re.fullmatch(r"[\w\-.:/]+", value):
        return f"{name}={value}"
    return f'{name}="{value}"'


def render_element(el: Element) -> str:
    """Compact tag for one element, e.g. `<a id=3>Blue Mug</a>`."""
    a = el.attrs
    if el.tag == "input":
        kind = a.get("type", "text")
        parts = [f"input id={el.id}"]
        if kind != "text":
            parts.append(_attr("type", kind))
        if a.get("name"):
            parts.append(_attr("name", a["name"]))
        if kind in ("checkbox", "radio"):
            if a.get("value") and a["value"] != "on":
                parts.append(_attr("value", a["value"]))
            if "checked" in a:
                parts.append("checked")
        elif kind in ("submit", "button", "reset", "image"):
            return f"<button id={el.id}>{el.text}</button>"
        else:
            if a.get("placeholder"):
                parts.append(_attr("placeholder", a["placeholder"]))
            parts.append(f'value="{el.text}"')
        return "<" + " ".join(parts) + ">"
    if el.tag == "select":
        name = f" {_attr('name', a['name'])}" if a.get("name") else ""
        return f'<select id={el.id}{name} selected="{el.text}">{"|".join(el.options)}</select>'
    if el.tag == "textarea":
        name = f" {_attr('name', a['name'])}" if a.get("name") else ""
        return f"<textarea id={el.id}{name}>{el.text}</textarea>"
    tag = "a" if el.tag == "a" else "button"
    return f"<{tag} id={el.id}>{el.text}</{tag}>"


def _element(node, eid: int) -> Element:
    tag = node.tag
    attrs = {}
    for key in ("name", "type", "href", "placeholder", "value"):
        v = node.get(key)
        if v is not None:
            attrs[key] = clip(norm(v), MAX_LABEL)
    options: list[str] = []
    if tag == "input":
        attrs["type"] = (node.get("type") or "text").lower()
        if node.get("checked") is not None:
            attrs["checked"] = ""
        text = clip(norm(node.get("value")), MAX_LABEL)
    elif tag == "select":
        opts = node.findall(".//option")
        options = [clip(norm(o.text_content()), MAX_LABEL) for o in opts]
        chosen = [o for o in opts if o.get("selected") is not None]
        text = clip(norm((chosen or opts or [None])[0].text_content()), MAX_LABEL) if opts else ""
    elif tag == "textarea":
        text = clip(norm(node.text_content()), MAX_TEXT)
    else:
        text = clip(norm(node.text_content()), MAX_LABEL)
        if not text:
            text = clip(norm(node.get("aria-label") or node.get("title") or node.get("value")), MAX_LABEL)
        if not text:
            img = node.find(".//img")
            text = clip(norm(img.get("alt")) if img is not None else "", MAX_LABEL)
    if tag == "button":
        attrs.setdefault("type", (node.get("type") or "submit").lower())
    return Element(eid, tag, text, attrs, options, node=node)


class _Builder:
    def __init__(self):
        self.lines: list[str] = []
        self.cur: list[str] = []
        self.prefix = ""
        self.elements: list[Element] = []

    def flush(self) -> None:
        if self.cur:
            self.lines.append(self.prefix + " ".join(self.cur))
        self.cur = []
        self.prefix = ""

    def text(self, s: str | None) -> None:
        s = norm(s)
        if s:
            self.cur.append(clip(s, MAX_TEXT))

    def walk(self, node) -> None:
        tag = node.tag if isinstance(node.tag, str) else None
        if tag is None:  # comment / processing instruction
            self.text(node.tail)
            return
        tag = tag.lower()
        if tag in SKIP_TAGS or is_hidden(node) or (tag == "input" and (node.get("type") or "").lower() == "hidden"):
            self.text(node.tail)
            return
        if is_interactive(node):
            el = _element(node, len(self.elements) + 1)
            el.line = len(self.lines)  # lines flushed so far = index of the current line
            self.elements.append(el)
            self.cur.append(render_element(el))
            self.text(node.tail)
            return
        block = tag in BLOCK_TAGS
        if block:
            self.flush()
            if tag in HEADINGS:
                self.prefix = HEADINGS[tag] + " "
            elif tag == "li":
                self.prefix = "- "
        if tag in ("td", "th") and self.cur:
            self.cur.append("|")
        if tag == "img" and node.get("alt"):
            self.text(f"[{node.get('alt')}]")
        self.text(node.text)
        for child in node:
            self.walk(child)
        if block:
            self.flush()
        self.text(node.tail)


def extract(root) -> PageText:
    """Turn an lxml HTML tree into `PageText` (deterministic)."""
    title_el = root.find(".//title")
    title = clip(norm(title_el.text_content()), MAX_LABEL) if title_el is not None else ""
    body = root.find(".//body")
    b = _Builder()
    b.walk(body if body is not None else root)
    b.flush()
    return PageText(title, b.lines, b.elements)


def parse_html(text: str | bytes):
    if not text or not str(text[:1000]).strip():
        text = "<html><body></body></html>"
    return lxml_html.document_fromstring(text)


def window_starts(lines: list[str], budget: int) -> list[int]:
    """Start line of each scroll window: consecutive lines up to `budget` chars."""
    starts = [0]
    size = 0
    for i, line in enumerate(lines):
        n = len(line) + 1
        if size and size + n > budget:
            starts.append(i)
            size = 0
        size += n
    return starts


@dataclass(frozen=True)
class Window:
    index: int  # which window of the page
    start: int  # first line shown
    end: int  # one past the last line shown
    total: int  # number of lines in the page
    count: int  # number of windows


def make_window(lines: list[str], budget: int, index: int) -> Window:
    starts = window_starts(lines, budget)
    index = max(0, min(index, len(starts) - 1))
    end = starts[index + 1] if index + 1 < len(starts) else len(lines)
    return Window(index, starts[index], end, len(lines), len(starts))


def render(page: PageText, url: str, window: Window, error: str | None = None) -> str:
    """The observation text the agent reads."""
    out = [f"URL: {url}", f"Title: {page.title}"]
    if error:
        out.append(f"[Error: {error}]")
    if window.index > 0:
        out.append(f"[{window.start} lines above; Scroll Up to see them]")
    out.extend(page.lines[window.start : window.end])
    if window.end < window.total:
        out.append(f"[{window.total - window.end} more lines below; Scroll Down to see them]")
    return "\n".join(out)

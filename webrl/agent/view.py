"""The compact page view a small model reads (a pure rewrite of the env's observation).

The env renders elements HTML-like with the id first (`<a id=12>Blue Mug</a>`).
A small model grounds by copying: it writes the element's label, then must
produce the id. With the id *after* the label, that is a plain forward copy
(find the label on the page, write what follows it), the easiest thing for a
transformer's induction heads. So the model's view puts every element as
`[label](id)`, followed by its state:

    <a id=12>Blue Mug</a>                                   [Blue Mug](12)
    <button id=3>Search</button>                            [Search](3)
    <input id=2 name=q placeholder="Find" value="">         [q](2) placeholder="Find" value=""
    <input id=7 type=checkbox name=agree checked>           [agree](7) checkbox checked
    <select id=10 name=sort selected="Name">Name|Price</select>
                                                            [sort](10) selected="Name" options: Name|Price
    <textarea id=5 name=body>hi</textarea>                  [body](5) text="hi"
    URL: http://127.0.0.1:7770/shop/cart                    URL: /shop/cart

Demonstrations copy the same bracket first (`# Element: [Blue Mug](12)`), so
`element_ref` (from the env's element records) and `compact_page` (from the
rendered text) must agree: both go through `_ref`.
"""

from __future__ import annotations

import re

_URL = re.compile(r"^URL: \w+://[^/\s]+", re.MULTILINE)
_ATTR = re.compile(r'(\w+)(?:=("[^"]*"|[^\s>"]+))?')
_TEXT_TAG = re.compile(r"<(a|button) id=(\d+)>(.*?)</\1>")
_INPUT = re.compile(r'<input id=(\d+)((?: (?:\w+=(?:"[^"]*"|[^\s>"]+)|\w+))*)>')
_SELECT = re.compile(r'<select id=(\d+)(?: name=("[^"]*"|[^\s>"]+))? selected="([^"]*)">(.*?)</select>')
_TEXTAREA = re.compile(r'<textarea id=(\d+)(?: name=("[^"]*"|[^\s>"]+))?>(.*?)</textarea>')
_BUTTON_TYPES = ("submit", "button", "reset", "image")


def _unquote(v: str | None) -> str:
    return v[1:-1] if v and v.startswith('"') and v.endswith('"') else (v or "")


def _q(v: str) -> str:
    return f'"{v}"'


def _ref(label: str, eid: int | str) -> str:
    return f"[{label}]({eid})"


def _input_label(attrs: dict[str, str]) -> str:
    kind = attrs.get("type", "text")
    label = attrs.get("name") or "input"
    if kind in ("checkbox", "radio") and attrs.get("value") and attrs["value"] != "on":
        label += f" {attrs['value']}"
    return label


def element_ref(el: dict) -> str:
    """`[label](id)` of an env element record (`info["elements"][i]`), as compact_page shows it."""
    attrs = el.get("attrs", {})
    tag = el["tag"]
    if tag == "input" and attrs.get("type", "text") not in _BUTTON_TYPES:
        return _ref(_input_label(attrs), el["id"])
    if tag in ("select", "textarea"):
        return _ref(attrs.get("name") or tag, el["id"])
    return _ref(el.get("text") or ("link" if tag == "a" else "button"), el["id"])


def _input(m: re.Match) -> str:
    eid, rest = m.group(1), m.group(2)
    attrs: dict[str, str] = {}
    for k, v in _ATTR.findall(rest):
        attrs[k] = _unquote(v) if v else ""
    kind = attrs.get("type", "text")
    out = [_ref(_input_label(attrs), eid)]
    if kind in ("checkbox", "radio"):
        out.append(kind + (" checked" if "checked" in attrs else ""))
        return " ".join(out)
    if kind != "text":
        out.append(kind)
    if attrs.get("placeholder"):
        out.append(f"placeholder={_q(attrs['placeholder'])}")
    out.append(f"value={_q(attrs.get('value', ''))}")
    return " ".join(out)


def _select(m: re.Match) -> str:
    eid, name, selected, options = m.groups()
    return f"{_ref(_unquote(name) or 'select', eid)} selected={_q(selected)} options: {options}"


def _textarea(m: re.Match) -> str:
    eid, name, text = m.groups()
    return f"{_ref(_unquote(name) or 'textarea', eid)} text={_q(text)}"


def _text_tag(m: re.Match) -> str:
    tag, eid, text = m.groups()
    return _ref(text or ("link" if tag == "a" else "button"), eid)


def compact_page(obs: str) -> str:
    """The model's view of an observation (see the module docstring)."""
    obs = _URL.sub("URL: ", obs)
    obs = _TEXT_TAG.sub(_text_tag, obs)
    obs = _INPUT.sub(_input, obs)
    obs = _SELECT.sub(_select, obs)
    return _TEXTAREA.sub(_textarea, obs)

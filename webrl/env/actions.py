"""The WebRL action grammar, parsed with `ast` and literal values only.

One action per response, optionally preceded by `# ...` comment lines:

    do(action="Click", element="7")
    do(action="Type", argument="text", element="3")
    do(action="Search", argument="text", element="3")     # type, then Enter
    do(action="Select Dropdown Option", argument="label", element="9")
    do(action="Scroll Down") | do(action="Scroll Up") | do(action="Press Enter")
    do(action="Go Backward") | do(action="Go Forward")
    exit(message="answer")

Model output is data: nothing here evaluates it. `parse_action` never raises.
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass

MAX_ACTION_CHARS = 4_000  # longer responses are rejected before parsing
MAX_ARGUMENT_CHARS = 2_000

ELEMENT_ACTIONS = ("Click", "Type", "Search", "Select Dropdown Option")
ARGUMENT_ACTIONS = ("Type", "Search", "Select Dropdown Option")
PLAIN_ACTIONS = ("Scroll Down", "Scroll Up", "Press Enter", "Go Backward", "Go Forward")
ACTIONS = ELEMENT_ACTIONS + PLAIN_ACTIONS


@dataclass(frozen=True)
class Action:
    """A parsed action. `kind` is one of ACTIONS or "exit"."""

    kind: str
    element: int | None = None
    argument: str | None = None

    def to_text(self) -> str:
        return format_action(self)


@dataclass(frozen=True)
class ParseResult:
    action: Action | None
    error: str | None  # set iff action is None


def _q(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)  # a valid Python string literal too


def format_action(a: Action) -> str:
    if a.kind == "exit":
        return f"exit(message={_q(a.argument or '')})"
    parts = [f"action={_q(a.kind)}"]
    if a.argument is not None:
        parts.append(f"argument={_q(a.argument)}")
    if a.element is not None:
        parts.append(f"element={_q(str(a.element))}")
    return f"do({', '.join(parts)})"


def _action_line(text: str) -> str | None:
    """The action part of a response: from the first line starting `do(`/`exit(`."""
    lines = text.strip().splitlines()
    for i, line in enumerate(lines):
        s = line.strip()
        if s.startswith(("do(", "exit(")):
            return "\n".join(lines[i:]).strip()
    return None


def parse_action(text: object) -> ParseResult:
    """Parse one model response into an Action, or explain why it is invalid."""
    if not isinstance(text, str):
        return ParseResult(None, f"response must be text, got {type(text).__name__}")
    if len(text) > MAX_ACTION_CHARS:
        return ParseResult(None, f"response too long ({len(text)} chars > {MAX_ACTION_CHARS})")
    src = _action_line(text)
    if src is None:
        return ParseResult(None, 'no action found; write do(action="...", ...) or exit(message="...")')
    try:
        tree = ast.parse(src, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return ParseResult(None, f"could not parse action: {src[:120]!r}")
    call = tree.body
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name):
        return ParseResult(None, "action must be a call: do(...) or exit(...)")
    if call.args:
        return ParseResult(None, "use keyword arguments only, e.g. do(action=\"Click\", element=\"3\")")
    kwargs: dict[str, object] = {}
    for kw in call.keywords:
        if kw.arg is None:
            return ParseResult(None, "**kwargs are not allowed in actions")
        if kw.arg in kwargs:  # Python itself refuses a repeated keyword; ast.parse does not
            return ParseResult(None, f"argument {kw.arg!r} is given twice")
        try:
            kwargs[kw.arg] = ast.literal_eval(kw.value)
        except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
            return ParseResult(None, f"argument {kw.arg!r} must be a literal value")
    return _build(call.func.id, kwargs)


def _build(func: str, kw: dict[str, object]) -> ParseResult:
    if func == "exit":
        if set(kw) - {"message"}:
            return ParseResult(None, f"exit() takes only message=, got {sorted(kw)}")
        msg = kw.get("message", "")
        if not isinstance(msg, str | int | float):
            return ParseResult(None, "exit message must be text")
        return ParseResult(Action("exit", argument=str(msg)[:MAX_ARGUMENT_CHARS]), None)
    if func != "do":
        return ParseResult(None, f"unknown function {func!r}; use do(...) or exit(...)")
    unknown = set(kw) - {"action", "element", "argument"}
    if unknown:
        return ParseResult(None, f"unknown argument(s) {sorted(unknown)} in do(...)")
    kind = kw.get("action")
    if not isinstance(kind, str) or kind not in ACTIONS:
        return ParseResult(None, f"unknown action {kind!r}; valid: {', '.join(ACTIONS)}")
    element = None
    if kind in ELEMENT_ACTIONS:
        raw = kw.get("element")
        try:
            element = int(str(raw).strip())
        except ValueError:
            return ParseResult(None, f'{kind} needs element="<id>", got {raw!r}')
        if element < 0:
            return ParseResult(None, f"element id must be >= 0, got {element}")
    argument = None
    if kind in ARGUMENT_ACTIONS:
        raw = kw.get("argument")
        if not isinstance(raw, str | int | float):
            return ParseResult(None, f'{kind} needs argument="<text>"')
        argument = str(raw)
        if len(argument) > MAX_ARGUMENT_CHARS:
            return ParseResult(None, f"argument too long ({len(argument)} > {MAX_ARGUMENT_CHARS} chars)")
    return ParseResult(Action(kind, element, argument), None)

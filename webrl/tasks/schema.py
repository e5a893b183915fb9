"""WebArena-compatible task records and their validating loader."""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

EVAL_TYPES = ("string_match", "url_match", "program_html")
ANSWER_KINDS = ("exact_match", "must_include", "fuzzy_match")

# URL placeholders (WebArena style) -> path prefix of the site on our server.
PLACEHOLDERS = {
    "__SHOP__": "/shop",
    "__SHOPPING__": "/shop",
    "__FORUM__": "/forum",
    "__REDDIT__": "/forum",
    "__ADMIN__": "/admin",
    "__SHOPPING_ADMIN__": "/admin",
    "__CODE__": "/code",
    "__GITLAB__": "/code",
    "__MAP__": "/map",
}


# WebArena site names -> ours.
SITES = ("shop", "admin", "code", "map", "forum")  # the default world's sites (webrl/sites; a world may add more)
SITE_ALIASES = {"shopping": "shop", "shopping_admin": "admin", "reddit": "forum", "gitlab": "code", "map": "map"}


def canonical_site(name: str) -> str:
    """Our name for a site (WebArena's `shopping` is our `shop`, ...)."""
    return SITE_ALIASES.get(name, name)


class TaskError(ValueError):
    """A task record is malformed; the message names the task and the field."""


@dataclass(frozen=True)
class Task:
    """One task, with WebArena's fields plus `family` (our template name)."""

    task_id: int | str
    sites: tuple[str, ...]
    start_url: str
    intent: str
    intent_template: str
    intent_template_id: int
    instantiation_dict: dict[str, Any]
    require_login: bool
    eval: dict[str, Any]
    family: str = ""
    difficulty: int = 1  # rough number of steps the oracle needs
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["sites"] = list(self.sites)
        return d

    @property
    def site(self) -> str:
        """The first site; cross-site tasks report "cross" as their site group."""
        return canonical_site(self.sites[0]) if len(self.sites) == 1 else "cross"


_PLACEHOLDER = re.compile(r"__([A-Z][A-Z_]*?)__")


def expand_url(url: str, base_url: str) -> str:
    """Replace WebArena-style placeholders (`__SHOP__/x`) by `base_url` + the site's path.

    Known WebArena names map through PLACEHOLDERS; any other `__NAME__` maps to `/name`.
    """
    base = base_url.rstrip("/")

    def sub(m: re.Match) -> str:
        return base + PLACEHOLDERS.get(m.group(0), "/" + m.group(1).lower())

    return _PLACEHOLDER.sub(sub, url)


def _need(d: dict, key: str, kind: type | tuple, where: str) -> Any:
    if key not in d:
        raise TaskError(f"{where}: missing field {key!r}")
    if not isinstance(d[key], kind):
        names = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
        raise TaskError(f"{where}: field {key!r} must be {names}, got {type(d[key]).__name__}")
    return d[key]


def validate_eval(ev: dict, where: str) -> None:
    """An evaluator spec: some of EVAL_TYPES with their fields, or `["orm"]` alone (a task without
    ground truth, e.g. written by the LLM curriculum generator: the ORM judges it)."""
    types = _need(ev, "eval_types", list, where)
    if not types:
        raise TaskError(f"{where}: field 'eval.eval_types' is empty; use some of {EVAL_TYPES}")
    if types == ["orm"]:
        return
    for t in types:
        if t not in EVAL_TYPES:
            raise TaskError(f"{where}: unknown eval type {t!r} in 'eval.eval_types'; use {EVAL_TYPES}")
    if "string_match" in types:
        ref = _need(ev, "reference_answers", dict, where)
        if not ref or any(k not in ANSWER_KINDS for k in ref):
            raise TaskError(f"{where}: 'eval.reference_answers' keys must be among {ANSWER_KINDS}")
    if "url_match" in types:
        _need(ev, "reference_url", str, where)
    if "program_html" in types:
        progs = _need(ev, "program_html", list, where)
        for i, p in enumerate(progs):
            for key in ("url", "locator", "required_contents"):
                if key not in p:
                    raise TaskError(f"{where}: 'eval.program_html[{i}]' lacks {key!r}")


def task_from_json(d: dict, where: str = "task") -> Task:
    if not isinstance(d, dict):
        raise TaskError(f"{where}: a task must be a JSON object, got {type(d).__name__}")
    tid = _need(d, "task_id", (int, str), where)
    where = f"{where} (task_id={tid})"
    sites = _need(d, "sites", list, where)
    if not sites or not all(isinstance(s, str) for s in sites):
        raise TaskError(f"{where}: field 'sites' must be a non-empty list of site names")
    ev = _need(d, "eval", dict, where)
    validate_eval(ev, where)
    start_url = _need(d, "start_url", str, where)
    host = urlsplit(start_url).hostname if start_url.startswith(("http://", "https://")) else None
    if host is not None and host not in ("127.0.0.1", "localhost"):
        raise TaskError(f"{where}: 'start_url' {start_url!r} is outside the sites; use a placeholder URL such as "
                        "__SHOPPING__/ (or a loopback one)")  # fmt: skip
    for key, kind in (("intent_template_id", int), ("difficulty", int), ("instantiation_dict", dict), ("extra", dict)):
        if d.get(key) is not None and (not isinstance(d[key], kind) or isinstance(d[key], bool)):
            raise TaskError(f"{where}: field {key!r} must be {kind.__name__}, got {type(d[key]).__name__}")
    known = {f for f in Task.__dataclass_fields__}
    extra = dict(d.get("extra") or {})
    extra.update({k: v for k, v in d.items() if k not in known})
    return Task(
        task_id=tid,
        sites=tuple(sites),
        start_url=start_url,
        intent=_need(d, "intent", str, where),
        intent_template=d.get("intent_template") or d["intent"],
        intent_template_id=int(d.get("intent_template_id", -1)),
        instantiation_dict=dict(d.get("instantiation_dict") or {}),
        require_login=bool(d.get("require_login", True)),
        eval=ev,
        family=str(d.get("family", "")),
        difficulty=int(d.get("difficulty", 1)),
        extra=extra,
    )


def load_tasks(path: str | Path) -> list[Task]:
    """Load a JSON list (or JSONL) of tasks; errors name the file, task and field."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as e:
        raise TaskError(f"{path}: cannot read task file ({e})") from e
    try:
        if path.suffix == ".jsonl":
            records = [json.loads(line) for line in text.splitlines() if line.strip()]
        else:
            records = json.loads(text)
    except json.JSONDecodeError as e:
        raise TaskError(f"{path}: not valid JSON ({e})") from e
    if isinstance(records, dict):
        records = [records]
    if not isinstance(records, list):
        raise TaskError(f"{path}: a task file holds a JSON list of task objects (or one per line in .jsonl), "
                        f"got {type(records).__name__}")  # fmt: skip
    return [task_from_json(r, where=f"{path}[{i}]") for i, r in enumerate(records)]


def save_tasks(tasks: list[Task], path: str | Path) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps([t.to_json() for t in tasks], indent=1) + "\n")

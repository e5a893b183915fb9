"""Ground-truth evaluators with WebArena semantics; scores multiply across types.

- string_match: `exact_match` (normalised equality), `must_include` (every
  phrase appears, case-insensitive), `fuzzy_match` (offline: every normalised
  token of some reference appears among the answer's tokens; "N/A" references
  need an answer that is exactly N/A). WebArena judges fuzzy_match with an
  LLM; this offline rule is stricter on paraphrases and never needs a network.
- url_match: same path, and every query parameter of the reference present
  with the same value in the final URL; alternatives separated by " |OR| ".
- program_html: fetch the URL in the episode's own state ("last" = the final
  page), select text with `locator` (a CSS selector, WebArena's
  `document.querySelector('sel').outerText` form, or "" for the whole page),
  and check `required_contents` (must_include list or exact_match).
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable
from urllib.parse import parse_qsl, unquote, urlsplit

from lxml import html as lxml_html

from webrl.tasks.schema import Task, expand_url

_WS = re.compile(r"\s+")
_QS = re.compile(r"""document\.querySelector(?:All)?\(\s*(['"])(.+?)\1\s*\)""")


class UnsupportedEval(ValueError):
    """This eval cannot be computed offline (e.g. a JS locator we cannot map)."""


def normalize(text: str | None) -> str:
    s = _WS.sub(" ", str(text or "")).strip().lower()
    s = s.strip("\"'`")
    return s.rstrip(".").strip()


def tokens(text: str) -> list[str]:
    s = normalize(text)
    s = "".join(" " if c in string.punctuation and c not in ".$" else c for c in s)
    return [t.strip(".") for t in s.split() if t.strip(".")]


def exact_match(ref: str, answer: str) -> float:
    return float(normalize(ref) == normalize(answer))


def must_include(ref: str, answer: str) -> float:
    return float(normalize(ref) in normalize(answer))


def fuzzy_match(refs: list[str] | str, answer: str) -> float:
    refs = [refs] if isinstance(refs, str) else refs
    if any(normalize(r) == "n/a" for r in refs):
        return float(normalize(answer) == "n/a")
    have = set(tokens(answer))
    return float(all(set(tokens(r)) <= have for r in refs))


def string_score(reference: dict, answer: str | None) -> float:
    if answer is None:
        return 0.0
    score = 1.0
    for kind, ref in reference.items():
        if kind == "exact_match":
            score *= exact_match(ref, answer)
        elif kind == "must_include":
            refs = ref if isinstance(ref, list) else [ref]
            for r in refs:  # every phrase; " |OR| " separates accepted alternatives
                score *= float(any(must_include(alt, answer) for alt in r.split(" |OR| ")))
        elif kind == "fuzzy_match":
            score *= fuzzy_match(ref, answer)
    return score


def _url_key(url: str) -> tuple[str, dict[str, list[str]]]:
    p = urlsplit(url)
    path = unquote(p.path).rstrip("/") or "/"
    query: dict[str, list[str]] = {}
    for k, v in parse_qsl(p.query, keep_blank_values=True):
        query.setdefault(k, []).append(v)
    return path, query


def url_score(reference: str, final_url: str, base_url: str) -> float:
    got_path, got_q = _url_key(expand_url(final_url, base_url))
    for alt in reference.split(" |OR| "):
        ref_path, ref_q = _url_key(expand_url(alt.strip(), base_url))
        if ref_path == got_path and all(
            set(v) <= set(got_q.get(k, [])) for k, v in ref_q.items()
        ):
            return 1.0
    return 0.0


def css_of_locator(locator: str) -> str:
    """Our locators are CSS; WebArena's `document.querySelector('x').outerText` maps to `x`."""
    locator = locator.strip()
    if not locator:
        return ""
    if "document." in locator or "(" in locator or locator.endswith(("innerText", "outerText")):
        m = _QS.search(locator)
        if not m:
            raise UnsupportedEval(f"cannot evaluate JavaScript locator offline: {locator[:120]}")
        return m.group(2)
    return locator


def select_text(page_html: str, locator: str) -> str:
    root = lxml_html.document_fromstring(page_html or "<html></html>")
    for bad in root.iter("script", "style", "head"):
        bad.drop_tree()
    css = css_of_locator(locator)
    try:
        nodes = root.cssselect(css) if css else [root]
    except Exception as e:  # cssselect raises several error types on bad selectors
        raise UnsupportedEval(f"invalid CSS locator {locator!r}: {e}") from e
    # text runs joined by spaces, like a browser's outerText separates cells and blocks
    return " ".join(_WS.sub(" ", " ".join(n.itertext())).strip() for n in nodes)


def offline_limits(task: Task, known_sites: set[str] | None = None) -> list[str]:
    """Why this task cannot be evaluated exactly offline (empty list = it can).

    Covers WebArena configs: `func:` URLs/locators (helper functions of the
    WebArena harness), JavaScript locators we cannot map to CSS, LLM-judged
    `fuzzy_match` (approximated here by token matching), and unknown sites.
    """
    limits = []
    ev = task.eval
    if "fuzzy_match" in (ev.get("reference_answers") or {}) and "string_match" in ev["eval_types"]:
        limits.append("fuzzy_match is LLM-judged in WebArena; offline it is approximated by token matching")
    if "program_html" in ev["eval_types"]:
        for i, prog in enumerate(ev.get("program_html", [])):
            if str(prog.get("url", "")).startswith("func:"):
                limits.append(f"program_html[{i}].url calls a WebArena helper ({prog['url'][:60]})")
            try:
                css_of_locator(str(prog.get("locator", "")))
            except UnsupportedEval as e:
                limits.append(f"program_html[{i}].locator: {e}")
    if known_sites is not None:
        unknown = [s for s in task.sites if s not in known_sites]
        if unknown:
            limits.append(f"sites not served here: {unknown}")
    return limits


def program_score(programs: list[dict], final_url: str, fetch: Callable[[str], str], base_url: str) -> float:
    score = 1.0
    for prog in programs:
        url = prog["url"]
        if url.startswith("func:"):
            raise UnsupportedEval(f"program_html url {url[:80]!r} needs the WebArena harness")
        target = final_url if url == "last" else expand_url(url, base_url)
        text = select_text(fetch(target), prog["locator"])
        req = prog["required_contents"]
        if "exact_match" in req:
            score *= exact_match(req["exact_match"], text)
        for phrase in req.get("must_include", []):
            alts = phrase.split(" |OR| ")
            score *= float(any(normalize(a) in normalize(text) for a in alts))
        if not score:
            return 0.0
    return score


def evaluate(
    task: Task, answer: str | None, final_url: str, fetch: Callable[[str], str], base_url: str
) -> float:
    """Score an ended episode in [0, 1] (1 = success). `fetch(url)` returns a page's
    HTML in the episode's own state. A task of eval type "orm" (an LLM-generated
    curriculum task) has no ground truth: it scores 0 here and the ORM judges it."""
    ev = task.eval
    if "orm" in ev["eval_types"]:
        return 0.0
    score = 1.0
    for kind in ev["eval_types"]:
        if kind == "string_match":
            score *= string_score(ev["reference_answers"], answer)
        elif kind == "url_match":
            score *= url_score(ev["reference_url"], final_url, base_url)
        elif kind == "program_html":
            score *= program_score(ev["program_html"], final_url, fetch, base_url)
        if score == 0:
            break
    return score

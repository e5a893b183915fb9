"""String checks between a task, an agent's final answer and the final page.

Pure functions over the trajectory's own text, shared by the encoder ORM (its
evidence lines, orm/encoder.py) and the ORM data builder (an agent that answers
from the page it is on, orm/data.py). Pages are compared in the compact view
(agent/view.py) without its element ids: whole words, case-insensitive.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlparse

from webrl.agent.view import compact_page
from webrl.env.actions import ARGUMENT_ACTIONS, parse_action

_ELEMENT_ID = re.compile(r"\]\(\d+\)")  # "[label](12)": the compact view's ids are not page text
_QUOTED = re.compile(r'"([^"]+)"|“([^”]+)”')
_NUMBERED = re.compile(r"#\w+")
_CAPITALISED = re.compile(r"\b[A-Z][\w'&.-]*(?:\s+(?:of\s+|the\s+|&\s+)?[A-Z0-9][\w'&.-]*)+")
_VALUE = re.compile(r"\$?\d[\d.,:%/-]*")
NO_ANSWER = ("", "done", "ok")


def words(text: str) -> list[str]:
    return [w.rstrip(".") for w in re.sub(r"[^\w$.#%/@-]+", " ", text.lower()).split() if w.rstrip(".")]


def contains(haystack: list[str], needle: str) -> bool:
    """Whether `needle`'s words occur in `haystack` (a `words` list) as a run."""
    n = words(needle)
    return bool(n) and any(haystack[i : i + len(n)] == n for i in range(len(haystack) - len(n) + 1))


def without_ids(view: str) -> str:
    """A compact view without its element ids: `[Blue Mug](12)` -> `[Blue Mug]`."""
    return _ELEMENT_ID.sub("]", view)


def page_words(obs: str) -> list[str]:
    return words(without_ids(compact_page(obs)))


def final_answer(responses: list[str]) -> str | None:
    """The exit message of the last response ("" for none), or None when the agent did not stop."""
    last = parse_action(responses[-1]).action if responses else None
    return (last.argument or "") if last is not None and last.kind == "exit" else None


def ending(responses: list[str]) -> str:
    """How a trajectory ends: a text answer, an exit with no answer ("Done"), "N/A", or no stop."""
    message = final_answer(responses)
    if message is None:
        return "no stop"
    if message.strip().lower() in NO_ANSWER:
        return "none"
    return "n/a" if message.strip().upper() == "N/A" else "text"


def answer_parts(message: str) -> list[str]:
    """An answer split into its parts on `,` `;` newlines and ` and `."""
    return [p.strip() for p in re.split(r"[,;\n]| and ", message) if p.strip()] or [message.strip()]


def on_page(message: str, obs: str) -> bool:
    """Whether every part of the answer `message` is shown on the page `obs`."""
    page = page_words(obs)
    return all(contains(page, p) for p in answer_parts(message))


def task_names(intent: str, lead_word: bool = False) -> list[str]:
    """The names a task quotes: quoted text, #numbers, then capitalised phrases. A phrase that
    opens a sentence loses its first word, the capitalised verb ("Save Willow Grill to my places"
    names "Willow Grill", "Add 4 units of ..." names "4"), unless `lead_word` (the behaviour
    before that fix, which encoder checkpoints trained with it keep)."""
    names = [a or b for a, b in _QUOTED.findall(intent)] + _NUMBERED.findall(intent)
    text = _QUOTED.sub(" ", intent)
    for m in _CAPITALISED.finditer(text):
        name = m.group(0)
        if not lead_word and (m.start() == 0 or text[: m.start()].rstrip().endswith((".", "?", "!"))):
            name = name.split(maxsplit=1)[1] if " " in name else ""
        if name and name not in names:
            names.append(name)
    return names


def echoes_task(message: str, intent: str, lead_word: bool = False) -> bool:
    """Whether the answer is one of the task's own names (or a text inside one): the answer
    a small policy gives when it copies the question instead of reading the page."""
    return any(contains(words(n), message) for n in task_names(intent, lead_word))


def answer_context(responses: list[str], final_obs: str, lines: int = 2, width: int = 90) -> str:
    """Where the final answer sits on the final page: up to `lines` page lines that contain its
    first part (whole words), each cut to `width` characters around it. A wrong value copied from
    the right page ("4" from "4.0 stars" for a stock count) shows up here as a mismatch with the
    question that the bare "on the page" check cannot see."""
    answer = final_answer(responses)
    if answer is None or answer.strip().lower() in (*NO_ANSWER, "n/a"):
        return "Answer context: -"
    part = answer_parts(answer)[0]
    want, found = words(part), []
    for line in without_ids(compact_page(final_obs)).splitlines():
        if want and contains(words(line), part):
            at = max(0, line.lower().find(part.lower()) - width // 2)
            found.append(line[at : at + width].strip())
            if len(found) == lines:
                break
    return "Answer context: " + (" | ".join(found) if found else "not on the page")


def evidence(intent: str, responses: list[str], final_obs: str, echo: bool = True, lead_word: bool = False) -> list[str]:
    """The encoder ORM's evidence lines: whether the final answer's parts are on the final page
    (and, with `echo`, whether the answer only repeats a name from the task), and how many of
    the task's names (`task_names`, with `lead_word`) the final page shows."""
    page = page_words(final_obs)
    message, kind = final_answer(responses), ending(responses)
    if kind == "no stop":
        answer = "Answer: the agent did not stop"
    elif kind == "none":
        answer = "Answer: none"
    elif kind == "n/a":
        answer = "Answer: N/A"
    else:
        parts = answer_parts(message)
        answer = f"Answer on final page: {sum(contains(page, p) for p in parts)} of {len(parts)}"
        if echo and echoes_task(message, intent, lead_word):
            answer += "; the answer repeats the task's words"
    names = task_names(intent, lead_word)
    shown = f"Task names on final page: {sum(contains(page, n) for n in names)} of {len(names)}"
    return [answer, shown]


# words a question shares with any page line; `answer_line` ignores them
_COMMON = frozenset(
    words(
        "a an and are as at be by did do does for from has have how i in is it its many me much my "
        "of on or that the there this to was what when where which who whose with"
    )
)


def task_values(intent: str) -> list[str]:
    """What a task asks the agent to enter: its quoted texts and its numbers ("3", "$20", "10%")."""
    quoted = [a or b for a, b in _QUOTED.findall(intent)]
    rest = _QUOTED.sub(" ", _NUMBERED.sub(" ", intent))
    return quoted + [v.rstrip(".,:-/") for v in _VALUE.findall(rest)]


def site_message(obs: str) -> str:
    """The confirmation a site put in the final page's URL after a change (`?msg=`), or ""."""
    url = re.search(r"^URL: (\S+)", obs, re.MULTILINE)
    return parse_qs(urlparse(url.group(1)).query).get("msg", [""])[0][:60] if url else ""


def page_title(obs: str) -> str:
    """The final page's title line and first heading: what the page is about."""
    title = re.search(r"^Title: (.*)$", obs, re.MULTILINE)
    heading = re.search(r"^# (.*)$", obs, re.MULTILINE)
    return " ".join(m.group(1) for m in (title, heading) if m)


def answer_line(responses: list[str], final_obs: str, intent: str) -> str:
    """Whether the page lines that hold a text answer also name what the question asks about (a
    word of the question other than the answer's own and common words): "4" next to "Stock" for a
    stock question, not next to "stars". "-" when there is no text answer on the page."""
    line = answer_context(responses, final_obs)[len("Answer context: ") :]
    if line in ("-", "not on the page"):
        return "-"
    asked = set(words(intent)) - _COMMON - set(words(final_answer(responses) or ""))
    return "yes" if asked & set(words(line)) else "no"


def missing_words(intent: str, final_obs: str, limit: int = 8) -> str:
    """The task's own words (besides common ones) that the final page does not show, in the task's
    order, at most `limit`: what an episode that changed the wrong thing leaves behind ("4" when the
    cart says 3, "overnight" when the order shipped standard, a street the address never got)."""
    page = set(page_words(final_obs))
    seen = list(dict.fromkeys(w for w in words(intent)
                              if (len(w) > 1 or w.isdigit()) and w not in _COMMON and w not in page))  # fmt: skip
    shown = ", ".join(seen[:limit]) + (", ..." if len(seen) > limit else "")
    return f"Task words not on final page: {shown or 'none'}"


def state_evidence(intent: str, responses: list[str], final_obs: str, lead_word: bool = False) -> list[str]:
    """Evidence lines about where the episode ended, for the tasks that change state or open a
    page (which end with no answer): the site's confirmation message, how many of the task's
    names (`task_names`) the page's title and heading show, how many of the task's values
    (`task_values`) the agent typed or selected, whether a text answer sits on a line about
    what was asked (`answer_line`), and the number of steps."""
    names, values = task_names(intent, lead_word), task_values(intent)
    title = words(page_title(final_obs))
    typed = [a.argument for a in (parse_action(r).action for r in responses)
             if a is not None and a.kind in ARGUMENT_ACTIONS and a.argument]  # fmt: skip
    entered = words(" ".join(typed))
    return [
        f"Site message: {site_message(final_obs) or 'none'}",
        f"Task names in page title: {sum(contains(title, n) for n in names)} of {len(names)}",
        f"Task values typed: {sum(contains(entered, v) for v in values)} of {len(values)}",
        f"Answer line about the question: {answer_line(responses, final_obs, intent)}",
        f"Steps: {len(responses)}",
    ]

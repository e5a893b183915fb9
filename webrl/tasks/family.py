"""Task families: a template, an instantiation rule over the seed data, an
evaluator spec, and an oracle solver that acts through the env's actions only.

A family never touches the env directly. Its oracle is a generator of action
strings that reads the *current* page through a `PageView` (see
`webrl.env.page_view`), which the runner refreshes after every step:

    def oracle(self, task, page):
        yield from page.search("Search", task.instantiation_dict["product"])
        yield from page.click(task.instantiation_dict["product"])
        yield page.exit(task.extra["answer"])
"""

from __future__ import annotations

import hashlib
import random
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from webrl.tasks.evaluators import normalize
from webrl.tasks.schema import Task

if TYPE_CHECKING:
    from webrl.env.page_view import PageView

T = TypeVar("T")

SPLITS = ("train", "test", "any")
TEST_SHARE = 5  # one slot value in TEST_SHARE is held out for the test split


class InfeasibleSlots(LookupError):
    """No slot values satisfy the family for this split/seed; try another seed."""


def holdout(value: object) -> str:
    """Which split a slot value belongs to: stable across runs and machines."""
    h = int(hashlib.sha1(str(value).strip().lower().encode()).hexdigest()[:8], 16)
    return "test" if h % TEST_SHARE == 0 else "train"


def pick(rng: random.Random, items: Sequence[T], split: str, key: Callable[[T], object]) -> T:
    """Choose an item whose held-out key falls in `split` ("any" disables the filter)."""
    pool = list(items) if split == "any" else [x for x in items if holdout(key(x)) == split]
    if not pool:
        raise InfeasibleSlots(f"no candidates for split {split!r}")
    return rng.choice(pool)


class SeedDB:
    """Read access to every site's seed database (for instantiating tasks)."""

    def __init__(self, snapshot: Callable[[str], sqlite3.Connection]):
        self._snapshot = snapshot

    def __getitem__(self, site: str) -> sqlite3.Connection:
        return self._snapshot(site)


def expect(page: PageView, text: str) -> None:
    """Oracle guard: fail loudly if the page does not show `text` (it read the wrong page)."""
    if normalize(text) not in normalize(page.text):
        raise LookupError(f"oracle expected {text!r} on {page.url}")


# --- eval spec builders (WebArena JSON) -------------------------------------


def answer_exact(answer: str) -> dict:
    return {"eval_types": ["string_match"], "reference_answers": {"exact_match": answer}}


def answer_includes(*phrases: str) -> dict:
    return {"eval_types": ["string_match"], "reference_answers": {"must_include": list(phrases)}}


def answer_fuzzy(*refs: str) -> dict:
    return {"eval_types": ["string_match"], "reference_answers": {"fuzzy_match": list(refs)}}


def url_is(url: str) -> dict:
    return {"eval_types": ["url_match"], "reference_url": url}


def page_has(url: str, required: Sequence[str], locator: str = "", exact: str | None = None) -> dict:
    """program_html check: the page at `url` ("last" = final page) contains `required`."""
    contents: dict[str, Any] = {"exact_match": exact} if exact is not None else {"must_include": list(required)}
    return {"url": url, "locator": locator, "required_contents": contents}


def state_check(*programs: dict) -> dict:
    return {"eval_types": ["program_html"], "program_html": list(programs)}


def combine(*specs: dict) -> dict:
    """Merge eval specs; the task scores the product of all of them."""
    out: dict[str, Any] = {"eval_types": []}
    for spec in specs:
        for t in spec["eval_types"]:
            if t not in out["eval_types"]:
                out["eval_types"].append(t)
        for key in ("reference_answers", "reference_url"):
            if key in spec:
                out[key] = spec[key]
        if "program_html" in spec:
            out.setdefault("program_html", []).extend(spec["program_html"])
    return out


KINDS = ("info", "nav", "state", "multi", "infeasible")  # TaskFamily.kind: answer, page, state change, several, "N/A"


class TaskFamily:
    """Base class of a task family. Subclasses set the class attributes and
    implement `sample`, `build` and `oracle` (and `wrong_ending` for tests)."""

    name: ClassVar[str]  # "shop.product_price"
    sites: ClassVar[tuple[str, ...]]
    template: ClassVar[str]  # "What is the price of {product}?"
    template_id: ClassVar[int]  # unique across all families
    kind: ClassVar[str]  # info | nav | state | multi | infeasible
    start_url: ClassVar[str]  # "__SHOP__/"
    require_login: ClassVar[bool] = True
    held_out: ClassVar[tuple[str, ...]] = ()  # slots whose values never cross the train/test split

    def sample(self, db: SeedDB, rng: random.Random, split: str) -> dict[str, Any]:
        """Slot values for the template (held-out values only for `split`)."""
        raise NotImplementedError

    def build(self, db: SeedDB, slots: dict[str, Any]) -> dict[str, Any]:
        """The task's evaluator spec and facts, as a dict with keys
        `eval` (required), `start_url`, `difficulty`, `extra` (optional)."""
        raise NotImplementedError

    def oracle(self, task: Task, page: PageView) -> Iterator[str]:
        """Yield actions that solve `task`, reading the current page from `page`."""
        raise NotImplementedError

    def wrong_ending(self, task: Task, page: PageView) -> Iterator[str]:
        """A plausible-but-wrong solution (the evaluator must score it 0)."""
        raise NotImplementedError

    def intent(self, slots: dict[str, Any]) -> str:
        return self.template.format(**slots)

    def make(self, db: SeedDB, seed: int, split: str = "any", task_id: int | str | None = None) -> Task:
        """Instantiate one task deterministically from `seed`."""
        if split not in SPLITS:
            raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
        rng = random.Random(f"{self.name}:{seed}")
        slots = self.sample(db, rng, split)
        built = self.build(db, slots)
        return Task(
            task_id=task_id if task_id is not None else f"{self.name}:{split}:{seed}",
            sites=self.sites,
            start_url=built.get("start_url", self.start_url),
            intent=self.intent(slots),
            intent_template=self.template,
            intent_template_id=self.template_id,
            instantiation_dict={k: v for k, v in slots.items() if not k.startswith("_")},
            require_login=self.require_login,
            eval=built["eval"],
            family=self.name,
            difficulty=int(built.get("difficulty", 1)),
            extra=dict(built.get("extra", {})),
        )

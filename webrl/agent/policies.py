"""Non-learning policies: the oracle (scripted solver) and a random baseline.

An agent is anything with `reset(task)` and `act(obs, info) -> str`.
"""

from __future__ import annotations

import random
from typing import Protocol

from webrl.env.actions import Action, format_action
from webrl.env.page_view import PageView
from webrl.tasks.registry import family
from webrl.tasks.schema import Task


class Agent(Protocol):
    def reset(self, task: Task) -> None: ...

    def act(self, obs: str, info: dict) -> str: ...


class OracleAgent:
    """Replays a family's scripted solution (or its plausible-wrong ending)."""

    def __init__(self, wrong: bool = False):
        self.wrong = wrong
        self._gen = None
        self._view = PageView()
        self._started = False

    def reset(self, task: Task) -> None:
        fam = family(task.family)
        self._view = PageView()
        solver = fam.wrong_ending if self.wrong else fam.oracle
        self._gen = solver(task, self._view)

    def act(self, obs: str, info: dict) -> str:
        self._view.update(obs, info)
        try:
            return next(self._gen)
        except StopIteration:
            return format_action(Action("exit", argument=""))


class RandomAgent:
    """Uniformly random actions over the page's elements (a floor baseline)."""

    WORDS = ("test", "hello", "blue", "order", "review", "N/A", "2", "yes")

    def __init__(self, seed: int = 0, exit_prob: float = 0.05):
        self.rng = random.Random(seed)
        self.exit_prob = exit_prob

    def reset(self, task: Task) -> None:
        pass

    def act(self, obs: str, info: dict) -> str:
        rng = self.rng
        if rng.random() < self.exit_prob:
            return format_action(Action("exit", argument=rng.choice(self.WORDS)))
        elements = [e for e in info.get("elements", []) if e["visible"]] or info.get("elements", [])
        if not elements or rng.random() < 0.1:
            kind = rng.choice(["Scroll Down", "Scroll Up", "Go Backward", "Press Enter"])
            return format_action(Action(kind))
        el = rng.choice(elements)
        if el["tag"] == "select" and el["options"]:
            return format_action(Action("Select Dropdown Option", el["id"], rng.choice(el["options"])))
        if el["tag"] in ("input", "textarea") and el["attrs"].get("type") not in ("checkbox", "radio", "submit"):
            return format_action(Action(rng.choice(["Type", "Search"]), el["id"], rng.choice(self.WORDS)))
        return format_action(Action("Click", el["id"]))

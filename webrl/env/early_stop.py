"""When an episode is cut off for making no progress (both envs share it).

Two rules, checked after every step; either one truncates the episode:

  repeats   `max_repeats` consecutive actions that are invalid or identical to the
            action before them (the WebArena-Lite harness rule).
  revisits  the same action sent on the same observation for the `max_revisits`-th
            time in the episode. A greedy agent that cycles between pages
            (A, B, A, B, ...) or retypes the same text into a form it keeps
            reloading never trips the first rule, yet it is looping: on the SFT
            actor's recorded test-split episodes such cycles ran to the 30-step cap
            and were half of all eval steps.

0 disables a rule.
"""

from __future__ import annotations

import hashlib
from collections import Counter


class NoProgress:
    """Counts repeated and revisited actions of one episode."""

    def __init__(self, max_repeats: int, max_revisits: int):
        self.max_repeats = max_repeats
        self.max_revisits = max_revisits
        self.reset()

    def reset(self) -> None:
        self.repeats = 0
        self.revisits = 0
        self._last: str | None = None
        self._seen: Counter[tuple[str, str]] = Counter()

    def update(self, obs_before: str, action: str | None, invalid: bool) -> bool:
        """Record one step (`action` = the parsed action's canonical text, None if unparsable;
        `obs_before` = the observation the agent acted on); True when the episode should stop."""
        same = action is not None and action == self._last
        self.repeats = self.repeats + 1 if (invalid or same) else 0
        self._last = action
        if self.max_revisits and action is not None:  # off (the default): no hashing on the env's hot path
            key = (hashlib.blake2b(obs_before.encode(), digest_size=16).hexdigest(), action)
            self._seen[key] += 1
            self.revisits = self._seen[key]
        return bool(
            (self.max_repeats and self.repeats >= self.max_repeats)
            or (self.max_revisits and self.revisits >= self.max_revisits)
        )

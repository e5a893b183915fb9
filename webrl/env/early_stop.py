"""When an episode is cut off for making no progress (both envs share it).

Two rules, checked after every step; either one truncates the episode:

  repeats   `max_repeats` consecutive actions that are invalid or identical to the
            action before them (the WebArena-Lite harness rule).
  revisits  the same action sent on the same observation for the `max_revisits`-th
            time since the episode last reached a page it had not seen before. A
            greedy agent that cycles between pages (A, B, A, B, ...) never trips
            the first rule, yet it is looping: on the SFT actor's recorded
            test-split episodes such cycles ran to the 30-step cap and were half
            of all eval steps. A new page resets the count, because walking a list
            (open item 1, back, open item 2, back, ...) repeats the same action on
            the same list page while making progress; an action whose effect the
            page does not show (upvoting a post already upvoted) leaves that list
            page unchanged, and the oracle itself was cut off there without the reset.

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
        self._pages: set[str] = set()

    def update(self, obs_before: str, action: str | None, invalid: bool) -> bool:
        """Record one step (`action` = the parsed action's canonical text, None if unparsable;
        `obs_before` = the observation the agent acted on); True when the episode should stop."""
        same = action is not None and action == self._last
        self.repeats = self.repeats + 1 if (invalid or same) else 0
        self._last = action
        if self.max_revisits and action is not None:  # off: no hashing on the env's hot path
            page = hashlib.blake2b(obs_before.encode(), digest_size=16).hexdigest()
            if page not in self._pages:  # progress: a page never seen before
                self._pages.add(page)
                self._seen.clear()
            key = (page, action)
            self._seen[key] += 1
            self.revisits = self._seen[key]
        return bool(
            (self.max_repeats and self.repeats >= self.max_repeats)
            or (self.max_revisits and self.revisits >= self.max_revisits)
        )

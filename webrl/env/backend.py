"""What WebEnv needs from a browser backend: one `Session` per episode.

A session holds an episode's page and browsing state. The env extracts the
observation from `session.tree` (an lxml HTML tree of the *current* DOM, field
values included) and acts through `session.act(action, node)`, where `node` is
the element of that same tree the action targets. Backends differ in how they
get the tree and carry out actions: `http` calls the site apps in process;
a browser backend reads the live DOM and drives real clicks and keys.
"""

from __future__ import annotations

from typing import Protocol

from webrl.env.actions import Action


class BackendError(RuntimeError):
    """The browser itself failed (crashed, hung, or lost its server).

    Not the agent's fault: the env ends the episode with `info["backend_error"]`
    set, and the backend recovers on the next `new_session()`.
    """


class Session(Protocol):
    url: str  # current page URL
    status: int  # HTTP status of the current page (0 if unknown)
    tree: object  # lxml tree of the current DOM, for observation extraction
    version: int  # bumps on every navigation (the env resets its scroll window)

    def login(self, site: str, username: str, password: str) -> None:
        """Sign the episode into `site` (not an agent step)."""

    def goto(self, url: str) -> None:
        """Navigate to `url` (used for the start page)."""

    def act(self, action: Action, node: object | None) -> None:
        """Carry out a browser action; raise ActionError if impossible here."""

    def fetch(self, url: str) -> str:
        """HTML of `url` in this episode's state, without moving the page."""

    def close(self) -> None: ...


class Backend(Protocol):
    name: str

    def new_session(self) -> Session:
        """A fresh episode: its own site state, cookies and history."""

    def close(self) -> None: ...

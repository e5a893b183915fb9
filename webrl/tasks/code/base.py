"""Shared pieces of the code-site task families: seed-data queries (seen as the
default user sees them), content the agent is asked to write, oracle building
blocks (generators of actions that read the current `PageView`), and the
`CodeFamily` base class.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from functools import lru_cache
from typing import TYPE_CHECKING, ClassVar
from urllib.parse import urlsplit

from webrl.sites.code.content import ROLE_LEVEL
from webrl.sites.code.data import DEFAULT_USER
from webrl.sites.code.issues import PER_PAGE as ISSUES_PER_PAGE
from webrl.sites.code.repo import COMMITS_PER_PAGE
from webrl.tasks.family import InfeasibleSlots, SeedDB, TaskFamily

if TYPE_CHECKING:
    from webrl.env.page_view import PageView

ME = DEFAULT_USER[0]
NA = "N/A"
PER_PAGE = ISSUES_PER_PAGE

# Content the agent is asked to write: none of it occurs in the seed data, so a
# state check can only pass through the agent's own issue, comment or edit.
NEW_ISSUE_TITLES = [
    "Add keyboard shortcuts for common actions", "Support exporting reports as PDF",
    "Error page shows a stack trace to users", "Improve the onboarding checklist",
    "Add a changelog to each release", "Nightly build fails on ARM runners",
    "Translate error messages into Spanish", "Provide a container image for local development",
    "Clarify the contribution guidelines", "Add retry logic for network timeouts",
    "Deprecate the legacy configuration format", "Show a warning before deleting data",
    "Write a migration guide for version 3", "Reduce memory usage of the test suite",
    "Add an option to disable telemetry", "Publish API documentation on the website",
    "Log requests with a correlation id", "Make the default port configurable",
    "Add screenshots to the README", "Set up automatic dependency updates",
    "Support single sign-on for the admin area", "Cache responses of the status endpoint",
    "Remove the deprecated sync command", "Add a code of conduct",
    "Warn about expiring access tokens", "Support proxies for outgoing requests",
    "Add a JSON output mode", "Add a health check endpoint", "Document the release process",
    "Add rate limiting to the public API", "Make log output machine readable",
]  # fmt: skip
NEW_DESCRIPTIONS = [
    "This would make day-to-day work noticeably faster.",
    "Two customers reported this during the last week.",
    "We agreed on this in the planning meeting.",
    "Needed before the public launch next month.",
    "The current behaviour confuses new contributors.",
    "A quick win that nobody has picked up yet.",
]
NEW_COMMENTS = [
    "I will take a look at this tomorrow.", "Could you attach the exact version you are using?",
    "This is blocking our next release.", "Pushed a fix to a branch, please review.",
    "Let us discuss this in the weekly sync.", "Adding this to the current sprint.",
    "I cannot reproduce this on the latest build.", "Nice catch, thank you for reporting!",
    "Please rebase on the default branch first.", "Approved from my side.",
    "Can someone from the docs team review this?", "Marking this as high priority.",
]  # fmt: skip
NEW_PROJECT_DESCRIPTIONS = [
    "Experimental playground for new ideas.", "Maintained by the platform team since 2024.",
    "Archived: development moved to a new repository.", "Internal tooling for release automation.",
    "Prototype, not ready for production use.", "Community edition with extra plugins.",
    "Reference implementation used in our workshops.", "Shared utilities for every team.",
    "Stable and feature complete; bug fixes only.", "Rewrite in progress, expect breaking changes.",
    "Mirror of the upstream project with local fixes.", "Work in progress: contributions welcome.",
    "Early alpha, APIs may change.", "Starter template for new services.", "Looking for new maintainers.",
]  # fmt: skip
MISSING_PROJECT_NAMES = [
    "quantum-ledger", "cloud-sentinel", "pixel-garden", "data-harbor", "storm-relay", "micro-vault",
    "echo-bridge", "forge-runner", "lumen-cache", "terra-notes", "nova-queue", "atlas-sync",
]  # fmt: skip

PROJECT_SQL = "SELECT p.*, p.namespace || '/' || p.name AS path FROM projects p"
ISSUE_SQL = """
SELECT i.*, p.namespace || '/' || p.name AS path, a.name AS author_name, s.username AS assignee,
       s.name AS assignee_name,
       (SELECT group_concat(name, ', ') FROM (SELECT l.name FROM issue_labels il JOIN labels l ON l.id = il.label_id
        WHERE il.issue_id = i.id ORDER BY l.name)) AS labels
FROM issues i JOIN projects p ON p.id = i.project_id JOIN users a ON a.id = i.author_id
LEFT JOIN users s ON s.id = i.assignee_id
"""


# --- seed-data queries ---------------------------------------------------------------------
# The seed database never changes, so lookups are cached per SeedDB (callers must not
# mutate the lists they get back).
cached = lru_cache(maxsize=4096)


def code_db(db: SeedDB) -> sqlite3.Connection:
    return db["code"]


@cached
def my_id(db: SeedDB) -> int:
    return code_db(db).execute("SELECT id FROM users WHERE username = ?", (ME,)).fetchone()["id"]


@cached
def projects(db: SeedDB) -> list[sqlite3.Row]:
    """Every project the default user can see, in id order."""
    return (
        code_db(db)
        .execute(
            f"{PROJECT_SQL} WHERE p.visibility != 'private' OR EXISTS"
            " (SELECT 1 FROM members m WHERE m.project_id = p.id AND m.user_id = ?) ORDER BY p.id",
            (my_id(db),),
        )
        .fetchall()
    )


def project_row(db: SeedDB, path: str) -> sqlite3.Row:
    row = next((p for p in projects(db) if p["path"] == path), None)
    if row is None:
        raise InfeasibleSlots(f"no visible project {path!r}")
    return row


@cached
def my_role(db: SeedDB, project_id: int) -> str | None:
    row = (
        code_db(db)
        .execute(
            "SELECT role FROM members WHERE project_id = ? AND user_id = ?", (project_id, my_id(db))
        )
        .fetchone()
    )
    return row["role"] if row else None


@cached
def managed(db: SeedDB, level: str) -> list[sqlite3.Row]:
    """Projects where the default user's role is at least `level`."""
    return [
        p
        for p in projects(db)
        if ROLE_LEVEL.get(my_role(db, p["id"]) or "", -1) >= ROLE_LEVEL[level]
    ]


@cached
def members_of(db: SeedDB, project_id: int) -> list[sqlite3.Row]:
    rows = (
        code_db(db)
        .execute(
            "SELECT u.username, u.name, m.role FROM members m JOIN users u ON u.id = m.user_id WHERE m.project_id = ?",
            (project_id,),
        )
        .fetchall()
    )
    return sorted(rows, key=lambda r: (-ROLE_LEVEL[r["role"]], r["name"]))


@cached
def users(db: SeedDB) -> list[sqlite3.Row]:
    return code_db(db).execute("SELECT * FROM users ORDER BY id").fetchall()


def user_row(db: SeedDB, username: str) -> sqlite3.Row:
    row = code_db(db).execute("SELECT * FROM users WHERE username = ?", (username,)).fetchone()
    if row is None:
        raise InfeasibleSlots(f"no user {username!r}")
    return row


@cached
def issues_of(db: SeedDB, project_id: int, state: str | None = None) -> list[sqlite3.Row]:
    """A project's issues, newest first (the issue list's default order)."""
    where, params = "i.project_id = ?", [project_id]
    if state:
        where += " AND i.state = ?"
        params.append(state)
    return (
        code_db(db)
        .execute(f"{ISSUE_SQL} WHERE {where} ORDER BY i.created DESC, i.iid DESC", params)
        .fetchall()
    )


def issue_by_title(db: SeedDB, path: str, title: str) -> sqlite3.Row:
    row = next((i for i in issues_of(db, project_row(db, path)["id"]) if i["title"] == title), None)
    if row is None:
        raise InfeasibleSlots(f"no issue {title!r} in {path}")
    return row


def all_issues(db: SeedDB, state: str | None = None) -> list[sqlite3.Row]:
    """Issues of every visible project, in id order."""
    out = [i for p in projects(db) for i in issues_of(db, p["id"], state)]
    return sorted(out, key=lambda i: i["id"])


@cached
def commits_of(db: SeedDB, project_id: int) -> list[sqlite3.Row]:
    """A project's commits, newest first (the commit list's order)."""
    return (
        code_db(db)
        .execute(
            "SELECT c.*, u.username, u.name FROM commits c JOIN users u ON u.id = c.author_id"
            " WHERE c.project_id = ? ORDER BY c.created DESC, c.id DESC",
            (project_id,),
        )
        .fetchall()
    )


@cached
def contributors(db: SeedDB, project_id: int) -> list[tuple[str, str, int]]:
    """(username, name, commits) per author, most commits first, ties by name."""
    counts: dict[tuple[str, str], int] = {}
    for c in commits_of(db, project_id):
        counts[(c["username"], c["name"])] = counts.get((c["username"], c["name"]), 0) + 1
    return sorted(((u, n, k) for (u, n), k in counts.items()), key=lambda r: (-r[2], r[1]))


@cached
def labels_of(db: SeedDB, project_id: int) -> list[str]:
    return [
        r["name"]
        for r in code_db(db).execute(
            "SELECT name FROM labels WHERE project_id = ? ORDER BY name", (project_id,)
        )
    ]


def who(name: str, username: str) -> str:
    """A must_include reference accepting a person's full name or username."""
    return f"{name} |OR| {username}"


# --- oracle building blocks (generators of actions) -----------------------------------------


def expect(ok: bool, what: str) -> None:
    if not ok:
        raise LookupError(f"oracle expectation failed: {what}")


def open_project(page: PageView, path: str) -> Iterator[str]:
    """Open a project's page: by its link if one is here, else through Explore's name filter."""
    if not page.has(path, tag="a", exact=True):
        yield from page.click("Explore", tag="a", exact=True)
        yield from page.search(path.split("/", 1)[1], name="q")
    yield from page.click(path, tag="a", exact=True)


def in_project(page: PageView, path: str) -> bool:
    """Whether the current page belongs to project `path` (its nav bar is on the page)."""
    where = urlsplit(page.url).path.rstrip("/")
    return where.endswith("/" + path) or f"/{path}/-/" in where


def project_tab(page: PageView, path: str, tab: str) -> Iterator[str]:
    """Open one of a project's pages (Files, Commits, Issues, ...) from anywhere."""
    if not in_project(page, path):
        yield from open_project(page, path)
    yield from page.click(tab, tag="a", exact=True)


def find_issue(page: PageView, path: str, title: str, closed: bool = False) -> Iterator[str]:
    """Open an issue by searching its title in the project's issue list."""
    yield from project_tab(page, path, "Issues")
    if closed:
        yield from page.click("All", tag="a", exact=True)
    yield from page.search(title, name="search")
    yield from page.click(title, tag="a", exact=True)


def next_page_until(page: PageView, found) -> Iterator[str]:
    """Follow "Next page" until `found(page)` holds (the oracle knows it will)."""
    while not found(page):
        yield from page.click("Next page", tag="a", exact=True)


def find_member(page: PageView, path: str, username: str) -> Iterator[str]:
    """The project's members page, filtered to one member."""
    yield from project_tab(page, path, "Members")
    yield from page.search(username, name="search")


def pages_to(index: int, per_page: int = COMMITS_PER_PAGE) -> int:
    """Extra "Next page" clicks to reach item `index` (0-based) of a listing."""
    return index // per_page


# --- the family base class ------------------------------------------------------------------


class CodeFamily(TaskFamily):
    """A code-site task family; `held_out` names the slot whose values never cross the split."""

    sites: ClassVar[tuple[str, ...]] = ("code",)
    start_url: ClassVar[str] = "__CODE__/"
    require_login: ClassVar[bool] = True  # GitLab tasks run signed in, as in WebArena
    held_out: ClassVar[tuple[str, ...]] = ("project",)

    def answer(self, task) -> str:
        return task.extra["answer"]

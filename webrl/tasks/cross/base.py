"""Shared pieces of cross-site families: moving between sites through the
sites home, and the `CrossFamily` base. Each family reuses the per-site
lookups and oracle moves of the sites it spans."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, ClassVar

from webrl.tasks.family import TaskFamily

if TYPE_CHECKING:
    from webrl.env.page_view import PageView


def switch_site(page: PageView, title: str) -> Iterator[str]:
    """Go to another site through the "All sites" home page (every page links it)."""
    yield from page.click("All sites", tag="a", exact=True)
    yield from page.click(title, tag="a", exact=True)


class CrossFamily(TaskFamily):
    """A task that needs two sites: read on one, act or answer with the other."""

    kind: ClassVar[str] = "multi"
    require_login: ClassVar[bool] = True

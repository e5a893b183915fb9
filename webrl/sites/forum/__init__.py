"""The forum site: a Reddit-like community (after WebArena's Postmill)."""

from __future__ import annotations

from webrl.sites.forum.app import create_app
from webrl.sites.forum.data import DEFAULT_USER, build_db
from webrl.sites.state import SiteSpec

SPEC = SiteSpec(
    name="forum",
    title="Postmill",
    build_db=build_db,
    create_app=create_app,
    default_user=DEFAULT_USER,
    description="a Reddit-like forum: forums, posts, nested comments, votes",
)

__all__ = ["SPEC"]

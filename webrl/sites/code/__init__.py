"""The code site: a GitLab-like forge (after WebArena's GitLab)."""

from __future__ import annotations

from webrl.sites.code.app import create_app
from webrl.sites.code.data import DEFAULT_USER, build_db
from webrl.sites.state import SiteSpec

SPEC = SiteSpec(
    name="code",
    title="GitLab",
    build_db=build_db,
    create_app=create_app,
    default_user=DEFAULT_USER,
    description="a GitLab-like forge: projects, files, commits, issues, merge requests, members",
)

__all__ = ["SPEC"]

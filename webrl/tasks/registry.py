"""Every task family that ships with WebRL, by name."""

from __future__ import annotations

import importlib
import importlib.util
from functools import cache

from webrl.tasks.family import TaskFamily

FAMILY_MODULES = ("shop", "admin", "code", "map", "forum", "cross")


@cache
def families() -> dict[str, TaskFamily]:
    """All families of the FAMILY_MODULES present (`webrl.tasks.<name>.FAMILIES`)."""
    out: dict[str, TaskFamily] = {}
    fams: list[TaskFamily] = []
    for name in FAMILY_MODULES:
        if importlib.util.find_spec(f"webrl.tasks.{name}") is not None:
            fams += importlib.import_module(f"webrl.tasks.{name}").FAMILIES
    for fam in fams:
        if fam.name in out:
            raise ValueError(f"duplicate task family name {fam.name!r}")
        out[fam.name] = fam
    ids = [f.template_id for f in out.values()]
    if len(ids) != len(set(ids)):
        raise ValueError("task families must have unique template_id values")
    return out


def family(name: str) -> TaskFamily:
    fams = families()
    if name not in fams:
        raise KeyError(f"unknown task family {name!r}; run `webrl tasks list` to see them")
    return fams[name]


def site_families(site: str) -> list[TaskFamily]:
    """Families whose only site is `site` ("cross" = multi-site families)."""
    fams = families().values()
    if site == "cross":
        return [f for f in fams if len(f.sites) > 1]
    return [f for f in fams if f.sites == (site,)]

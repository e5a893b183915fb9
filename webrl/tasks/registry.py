"""Every task family that ships with WebRL, by name."""

from __future__ import annotations

from functools import cache

from webrl.tasks.family import TaskFamily


@cache
def families() -> dict[str, TaskFamily]:
    from webrl.tasks import forum, shop

    out: dict[str, TaskFamily] = {}
    for fam in (*shop.FAMILIES, *forum.FAMILIES):
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

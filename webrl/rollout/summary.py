"""Summaries of evaluation episodes (pure functions over episode records)."""

from __future__ import annotations

from collections import defaultdict

SITE_ORDER = ("shop", "admin", "code", "map", "forum", "cross")


def _rate(records: list[dict]) -> dict:
    records = [r for r in records if not r.get("backend_error")]  # void: the browser failed
    n = len(records)
    return {
        "success_rate": (sum(r["success"] for r in records) / n) if n else 0.0,
        "episodes": n,
    }


def summarize(records: list[dict]) -> dict:
    """`success_rate` (0-1), `episodes`, `per_site`, `per_family`, `mean_steps`."""
    by_site: dict[str, list[dict]] = defaultdict(list)
    by_family: dict[str, list[dict]] = defaultdict(list)
    for r in records:
        by_site[r["site"]].append(r)
        by_family[r["family"]].append(r)
    sites = sorted(by_site, key=lambda s: (SITE_ORDER.index(s) if s in SITE_ORDER else 99, s))
    return {
        **_rate(records),
        "per_site": {s: _rate(by_site[s]) for s in sites},
        "per_family": {f: _rate(by_family[f]) for f in sorted(by_family)},
        "mean_steps": (sum(r["n_steps"] for r in records) / len(records)) if records else 0.0,
        "agent_errors": sum(1 for r in records if r.get("agent_error")),
        "backend_errors": sum(1 for r in records if r.get("backend_error")),
    }


def format_table(summary: dict, title: str = "") -> str:
    rows = [(s, v["episodes"], v["success_rate"]) for s, v in summary["per_site"].items()]
    rows.append(("all", summary["episodes"], summary["success_rate"]))
    lines = [title] if title else []
    lines.append(f"{'site':<8} {'episodes':>8} {'success':>8}")
    for site, n, rate in rows:
        lines.append(f"{site:<8} {n:>8} {rate * 100:>7.1f}%")
    return "\n".join(lines)

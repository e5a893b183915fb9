"""A site's navigation ("chrome") taken out of the encoder ORM's page segment.

The encoder ORM reads the final page in the ~125 tokens its pair leaves after the task,
evidence and actions (orm/encoder.py), and every page of a site opens with the same
navigation lines (`[One Stop Shop](1)`, the search box, the menu): half of those tokens say
nothing about the episode, and what decides it (a review count, an order's status) is cut.

`chrome_lines` learns each site's navigation from training pages, as data: the compact-view
lines after URL and title that stand on at least `share` of the site's pages and on pages of
at least `min_paths` different URL paths (so one page's own content, e.g. the sites index,
is never taken for navigation). Lines that vary with the state (`[Cart (1)](4)`, "Signed in
as ...") fall under the share and stay. `page_segment` is the page without them, and
without the URL's `msg=` query when the site's message is already an evidence line; it can
also drop the element ids (`[Blue Mug](12)` -> `[Blue Mug]`, three word pieces each), which
say nothing about whether the episode succeeded.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from webrl.agent.view import compact_page
from webrl.orm.evidence import without_ids

HEAD = ("URL:", "Title:")  # lines always kept


def _path(view: str) -> str:
    """A compact view's URL path ("" without a URL line)."""
    first = view.split("\n", 1)[0]
    return urlsplit(first[len("URL:") :].strip()).path if first.startswith("URL:") else ""


def site_key(view: str) -> str:
    """The first segment of a compact view's URL path ("shop" for `URL: /shop/cart`; "" for `/`)."""
    return _path(view).strip("/").split("/", 1)[0]


def chrome_lines(
    pages: list[str], share: float = 0.5, min_paths: int = 3, min_pages: int = 20
) -> dict[str, list[str]]:
    """Per site (`site_key`), the body lines found on >= `share` of its pages (raw observations)
    and on pages of >= `min_paths` distinct URL paths; sites with fewer than `min_pages` pages
    get none. Lines are listed most common first, ties in text order."""
    if not 0 < share <= 1:
        raise ValueError(f"chrome share must be in (0, 1], got {share}")
    count: dict[str, Counter] = defaultdict(Counter)
    paths: dict[str, dict[str, set]] = defaultdict(lambda: defaultdict(set))
    n: Counter = Counter()
    for obs in pages:
        view = compact_page(obs)
        site = site_key(view)
        n[site] += 1
        for line in set(_body(view)):
            count[site][line] += 1
            paths[site][line].add(_path(view))
    out = {}
    for site, lines in sorted(count.items()):
        if n[site] < min_pages:
            continue
        # most common first, ties in text order: the order of a set varies between runs
        ranked = sorted(lines.items(), key=lambda lc: (-lc[1], lc[0]))
        keep = [
            line
            for line, c in ranked
            if c >= share * n[site] and len(paths[site][line]) >= min_paths
        ]
        if keep:
            out[site] = keep
    return out


def _body(view: str) -> list[str]:
    return [line for line in view.split("\n") if line.strip() and not line.startswith(HEAD)]


def drop_query(url_line: str, key: str = "msg") -> str:
    """`URL: /a?msg=Saved&page=2` -> `URL: /a?page=2`."""
    if not url_line.startswith("URL:"):
        return url_line
    parts = urlsplit(url_line[len("URL:") :].strip())
    query = urlencode(
        [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != key]
    )
    return "URL: " + urlunsplit(parts._replace(query=query))


def page_segment(
    obs: str, chrome: dict[str, list[str]], drop_msg: bool = False, ids: bool = True
) -> str:
    """The compact view of `obs` without its site's chrome lines, the URL's `msg=` when
    `drop_msg`, and the element ids (`[Blue Mug](12)` -> `[Blue Mug]`) unless `ids`."""
    view = compact_page(obs)
    nav = set(chrome.get(site_key(view), ()))
    lines = [line for line in view.split("\n") if line not in nav or line.startswith(HEAD)]
    if drop_msg and lines and lines[0].startswith("URL:"):
        lines[0] = drop_query(lines[0])
    text = "\n".join(lines)
    return text if ids else without_ids(text)

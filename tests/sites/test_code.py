"""The code site (GitLab-like) through its WSGI interface: pages, lists, filters,
writes, permissions, escaping and isolation between episode states."""

from __future__ import annotations

import re

import pytest
from lxml import html
from werkzeug.test import Client

from webrl.sites import code
from webrl.sites.code import content as C
from webrl.sites.world import WorldApp


@pytest.fixture(scope="module")
def world() -> WorldApp:
    return WorldApp({"code": code.SPEC})


def client(world: WorldApp, state=None, user: str | None = "byte") -> Client:
    state = state or world.new_state()

    def app(environ, start_response):  # what the http backend does: pin the episode's state
        environ["webrl.world"] = state
        return world(environ, start_response)

    c = Client(app)
    if user:
        r = c.post("/code/login", data={"username": user, "password": f"{user}-pass"})
        assert r.status_code == 302
    return c


def follow(c: Client, resp):
    """Follow redirects by hand (werkzeug's Client drops environ_base on redirects)."""
    while resp.status_code in (301, 302, 303):
        resp = c.get(resp.headers["Location"])
    return resp


def text(resp) -> str:
    return " ".join(html.fromstring(resp.get_data(as_text=True)).text_content().split())


def by_id(resp, element_id: str) -> str:
    node = html.fromstring(resp.get_data(as_text=True)).get_element_by_id(element_id, None)
    return " ".join(node.text_content().split()) if node is not None else ""


def role_of(resp, username: str) -> str:
    cells = html.fromstring(resp.get_data(as_text=True)).cssselect(f"#member-{username} .role")
    return cells[0].text_content().strip() if cells else ""


def seed(world: WorldApp):
    return world.store.snapshot("code")


def one(world: WorldApp, sql: str, params: tuple = ()):
    return seed(world).execute(sql, params).fetchone()


def role_project(world: WorldApp, role: str) -> str:
    """Path of a project outside byte's namespace where byte has `role`."""
    name = next(n for n, r in C.BYTE_ROLES.items() if r == role)
    return one(world, "SELECT namespace || '/' || name FROM projects WHERE name = ?", (name,))[0]


def test_seed_size_names_and_default_user(world):
    db = seed(world)
    count = lambda t: db.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]  # noqa: E731
    assert count("users") == 60 and count("projects") == len(C.PROJECTS)
    assert 350 <= count("issues") <= 500 and 120 <= count("merge_requests") <= 200
    assert count("commits") > 800 and count("notes") > 500 and count("files") > 300
    lo, hi = db.execute(
        "SELECT MIN(n), MAX(n) FROM (SELECT COUNT(*) n FROM commits GROUP BY project_id)"
    ).fetchone()
    assert lo >= 10 and hi <= 40
    roles = {r[0] for r in db.execute("SELECT role FROM members")}
    assert roles == set(C.ROLES)
    byte = {r[0]: r[1] for r in db.execute(
        "SELECT p.name, m.role FROM members m JOIN projects p ON p.id = m.project_id JOIN users u ON u.id = m.user_id"
        " WHERE u.username = 'byte'")}  # fmt: skip
    assert {"Owner", "Maintainer", "Developer", "Reporter", "Guest"} <= set(byte.values())
    for column, table in (("name", "projects"), ("username", "users"), ("name", "users")):
        names = [r[0].lower() for r in db.execute(f"SELECT {column} FROM {table}")]
        assert len(set(names)) == len(names)
        assert not [(a, b) for a in names for b in names if a != b and a in b], (table, column)
    titles = [
        r[0].lower()
        for r in db.execute("SELECT title FROM issues UNION ALL SELECT title FROM merge_requests")
    ]
    assert not [(a, b) for a in titles for b in titles if a != b and a in b]
    assert not [(a, b) for a in C.LABELS for b in C.LABELS if a != b and a in b]


def test_seed_is_deterministic():
    a, b = WorldApp({"code": code.SPEC}), WorldApp({"code": code.SPEC})
    q = "SELECT group_concat(sha || message || created, '|') FROM (SELECT * FROM commits ORDER BY id)"
    assert seed(a).execute(q).fetchone()[0] == seed(b).execute(q).fetchone()[0]


def test_pages_render_small_without_scripts(world):
    c = client(world)
    p = "/code/orbitlabs/pixel-forge"
    urls = ["/code/", "/code/projects?scope=all", "/code/projects?scope=starred", "/code/users", "/code/u/byte",
            p, p + "/-/tree/", p + "/-/tree/src", p + "/-/blob/README.md", p + "/-/commits", p + "/-/graphs",
            p + "/-/issues?state=all", p + "/-/issues/1", p + "/-/issues/new", p + "/-/merge_requests?state=all",
            p + "/-/merge_requests/1", p + "/-/project_members", p + "/-/settings"]  # fmt: skip
    for url in urls:
        r = c.get(url)
        assert r.status_code == 200, url
        assert len(text(r)) < 2000, url
        assert "<script" not in r.get_data(as_text=True)
    sha = one(world, "SELECT sha FROM commits WHERE project_id = 1 ORDER BY id DESC")[0]
    assert c.get(f"{p}/-/commit/{sha}").status_code == 200
    assert c.get(f"{p}/-/tree/nope").status_code == 404
    assert c.get(f"{p}/-/blob/nope.txt").status_code == 404
    assert c.get("/code/orbitlabs/no-such-project").status_code == 404


def test_project_lists_scopes_search_sort_and_pages(world):
    c = client(world)
    yours = text(c.get("/code/projects?scope=yours"))
    n_mine = one(world, "SELECT COUNT(*) FROM members WHERE user_id = 1")[0]
    assert f"{n_mine} projects" in yours
    starred = c.get("/code/projects?scope=starred").get_data(as_text=True)
    assert len(re.findall(r'<li><a href="/code/[^"]+">', starred)) == len(C.BYTE_STARS)
    top = c.get("/code/projects?scope=all&sort=stars").get_data(as_text=True)
    stars = [int(s) for s in re.findall(r"· (\d+) stars ·", top)]
    assert len(stars) == 10 and stars == sorted(stars, reverse=True)
    page2 = c.get("/code/projects?scope=all&sort=stars&page=2").get_data(as_text=True)
    links = lambda h: set(re.findall(r'<li><a href="(/code/[^"]+)">', h))  # noqa: E731
    assert links(top).isdisjoint(links(page2)) and "Previous page" in page2
    assert (
        'href="/code/projects?scope=all&amp;sort=stars&amp;page=2"' in top
    )  # pager keeps sort and scope
    found = text(c.get("/code/projects?scope=all&q=route"))
    assert "1 project" in found and "openmaps/route-finder" in found
    assert "0 projects" in text(
        c.get("/code/projects?scope=all&q=%25%25")
    )  # LIKE wildcards are literal


def test_issue_filters_tabs_and_sort(world):
    c = client(world)
    pid, path = one(
        world, "SELECT id, namespace || '/' || name FROM projects WHERE name = 'etl-flow'"
    )
    url = f"/code/{path}/-/issues"
    label, n = one(world, "SELECT l.name, COUNT(*) n FROM issue_labels il JOIN labels l ON l.id = il.label_id"
                   " JOIN issues i ON i.id = il.issue_id WHERE i.project_id = ? AND i.state = 'opened'"
                   " GROUP BY l.name ORDER BY n DESC", (pid,))  # fmt: skip
    r = c.get(url, query_string={"label": label})
    assert by_id(r, "issue-count") == f"{n} open issue{'s' if n != 1 else ''}"
    closed = one(
        world, "SELECT COUNT(*) FROM issues WHERE project_id = ? AND state = 'closed'", (pid,)
    )[0]
    assert by_id(c.get(url + "?state=closed"), "issue-count") == f"{closed} closed issues"
    titles = re.findall(
        r'class="issue-title" href="[^"]+">([^<]+)<',
        c.get(url + "?state=all&sort=title").get_data(as_text=True),
    )
    assert titles == sorted(titles, key=str.lower)
    t = one(world, "SELECT title FROM issues WHERE project_id = ? ORDER BY id", (pid,))[0]
    assert "1 issue" in text(c.get(url, query_string={"state": "all", "search": t}))
    mine = one(
        world,
        "SELECT COUNT(*) FROM issues WHERE project_id = ? AND state = 'opened' AND assignee_id IS NULL",
        (pid,),
    )[0]
    assert by_id(c.get(url + "?assignee=none"), "issue-count").startswith(f"{mine} open issue")


def test_visibility_and_login_redirects(world):
    anon = client(world, user=None)
    private = one(
        world, "SELECT namespace || '/' || name FROM projects WHERE visibility = 'private' LIMIT 1"
    )[0]
    internal = one(
        world, "SELECT namespace || '/' || name FROM projects WHERE visibility = 'internal' LIMIT 1"
    )[0]
    assert anon.get(f"/code/{private}").status_code == 404
    assert anon.get(f"/code/{internal}").status_code == 404
    assert anon.get("/code/orbitlabs/pixel-forge").status_code == 200
    assert "Star" not in text(anon.get("/code/orbitlabs/pixel-forge"))
    r = anon.get("/code/orbitlabs/pixel-forge/-/issues/new")
    assert (
        r.status_code == 302
        and "/code/login?next=/code/orbitlabs/pixel-forge/-/issues/new" in r.headers["Location"]
    )
    assert "/code/login" in anon.post("/code/orbitlabs/pixel-forge/star").headers["Location"]
    assert "/code/login" in anon.get("/code/projects?scope=starred").headers["Location"]
    hidden = one(world, "SELECT namespace || '/' || name FROM projects p WHERE visibility = 'private'"
                 " AND NOT EXISTS (SELECT 1 FROM members WHERE project_id = p.id AND user_id = 1)")[0]  # fmt: skip
    assert client(world).get(f"/code/{hidden}").status_code == 404  # private, byte not a member
    assert client(world).get(f"/code/{internal}").status_code == 200


def test_role_permissions(world):
    c = client(world)
    reporter, developer = role_project(world, "Reporter"), role_project(world, "Developer")
    for path in (reporter, developer):
        assert c.get(f"/code/{path}/-/settings").status_code == 403
        assert (
            c.post(
                f"/code/{path}/-/settings", data={"description": "x", "visibility": "public"}
            ).status_code
            == 403
        )
        assert (
            c.post(
                f"/code/{path}/-/project_members/add", data={"username": "mira_kovacs"}
            ).status_code
            == 403
        )
        members = c.get(f"/code/{path}/-/project_members").get_data(as_text=True)
        assert "Add member" not in members and "Change role" not in members
        assert "Settings" not in text(c.get(f"/code/{path}"))
    guest = role_project(world, "Guest")
    iid = one(world, "SELECT i.iid FROM issues i JOIN projects p ON p.id = i.project_id"
              " WHERE p.namespace || '/' || p.name = ? AND i.author_id != 1", (guest,))[0]  # fmt: skip
    assert "Close issue" not in text(c.get(f"/code/{guest}/-/issues/{iid}"))
    assert (
        c.post(f"/code/{guest}/-/issues/{iid}/state", data={"action": "close"}).status_code == 403
    )
    assert c.get(f"/code/{guest}/-/issues/{iid}/edit").status_code == 403
    # a Maintainer cannot hand out the Owner role, nor touch an Owner
    maint = role_project(world, "Maintainer")
    outsider = one(world, "SELECT username FROM users u WHERE NOT EXISTS (SELECT 1 FROM members m JOIN projects p"
                   " ON p.id = m.project_id WHERE m.user_id = u.id AND p.namespace || '/' || p.name = ?)", (maint,))[0]  # fmt: skip
    r = follow(
        c,
        c.post(
            f"/code/{maint}/-/project_members/add",
            data={"username": outsider, "access_level": "Owner"},
        ),
    )
    assert "Only an owner" in text(r)
    owner = one(world, "SELECT u.username FROM members m JOIN users u ON u.id = m.user_id JOIN projects p"
                " ON p.id = m.project_id WHERE p.namespace || '/' || p.name = ? AND m.role = 'Owner'", (maint,))[0]  # fmt: skip
    r = follow(c, c.post(f"/code/{maint}/-/project_members/{owner}", data={"role": "Guest"}))
    assert "Only an owner" in text(r)


def test_issue_lifecycle_and_escaping(world):
    c = client(world)
    path = role_project(world, "Developer")
    evil = "<script>alert(1)</script>"
    r = follow(c, c.post(f"/code/{path}/-/issues/new", data={
        "title": f"Broken {evil}", "description": "Steps: <b>bold</b>", "labels": ["bug", "nonexistent"],
        "assignee": "byte"}))  # fmt: skip
    body = r.get_data(as_text=True)
    assert (
        "The issue was created." in text(r) and "<script>" not in body and "&lt;script&gt;" in body
    )
    assert by_id(r, "issue-state") == "Open" and by_id(r, "issue-assignee") == "Byte Blaze"
    assert by_id(r, "issue-labels") in ("bug", "None")
    url = r.request.path
    r = follow(c, c.post(url + "/notes", data={"body": "Looks like <i>HTML</i>"}))
    assert "Your comment was added." in text(r) and "&lt;i&gt;HTML&lt;/i&gt;" in r.get_data(
        as_text=True
    )
    assert "A comment cannot be empty." in text(
        follow(c, c.post(url + "/notes", data={"body": "  "}))
    )
    r = follow(c, c.post(url + "/state", data={"action": "close"}))
    assert by_id(r, "issue-state") == "Closed" and "Reopen issue" in text(r)
    r = follow(
        c, c.post(url + "/edit", data={"title": "Renamed issue", "description": "", "assignee": ""})
    )
    assert by_id(r, "issue-title") == "Renamed issue" and by_id(r, "issue-assignee") == "None"
    assert "The title cannot be empty." in text(
        c.post(f"/code/{path}/-/issues/new", data={"title": " "})
    )
    assert "Renamed issue" in text(c.get("/code/u/byte"))  # the profile's recent activity


def test_star_is_isolated_per_state(world):
    path = "northwind/invoice-engine"  # not starred by byte in the seed
    stars = one(world, "SELECT stars FROM projects WHERE name = 'invoice-engine'")[0]
    a, b = client(world), client(world)
    r = follow(a, a.post(f"/code/{path}/star", data={"action": "star"}))
    assert (
        by_id(r, "star-state") == "You starred this project."
        and by_id(r, "star-count") == f"{stars + 1} stars"
    )
    assert by_id(b.get(f"/code/{path}"), "star-state") == ""
    assert by_id(b.get(f"/code/{path}"), "star-count") == f"{stars} stars"
    r = follow(a, a.post(f"/code/{path}/star", data={"action": "unstar"}))
    assert by_id(r, "star-count") == f"{stars} stars" and "You unstarred this project." in text(r)


def test_fork_copies_repository(world):
    c = client(world)
    src = "openmaps/tile-server"
    forks, n_files = one(world, "SELECT forks, (SELECT COUNT(*) FROM files WHERE project_id = p.id) FROM projects p"
                         " WHERE name = 'tile-server'")  # fmt: skip
    r = follow(c, c.post(f"/code/{src}/fork"))
    assert (
        r.request.path == "/code/byte/tile-server"
        and by_id(r, "forked-from") == f"Forked from {src}"
    )
    assert by_id(r, "your-role") == "Owner"
    tree = c.get("/code/byte/tile-server/-/tree/").get_data(as_text=True)
    assert "README.md" in tree
    assert by_id(c.get(f"/code/{src}"), "fork-count") == f"{forks + 1} forks"
    assert "You already have a project" in text(follow(c, c.post(f"/code/{src}/fork")))
    assert n_files > 3


def test_settings_and_rename(world):
    c = client(world)
    path = role_project(world, "Maintainer")
    ns, name = path.split("/")
    r = follow(c, c.post(f"/code/{path}/-/settings",
                         data={"description": "New <em>words</em>", "visibility": "internal", "topics": "A, b ,, c"}))  # fmt: skip
    assert "The project settings were saved." in text(r)
    page = c.get(f"/code/{path}")
    assert by_id(page, "project-description") == "New <em>words</em>"
    assert (
        by_id(page, "project-visibility") == "Internal"
        and by_id(page, "project-topics") == "a, b, c"
    )
    assert "Choose a visibility level." in text(
        c.post(f"/code/{path}/-/settings", data={"visibility": "secret"})
    )
    assert "Use 2-50" in text(
        follow(c, c.post(f"/code/{path}/-/settings/rename", data={"new_name": "Bad Name"}))
    )
    r = follow(c, c.post(f"/code/{path}/-/settings/rename", data={"new_name": "renamed-project"}))
    assert (
        r.request.path == f"/code/{ns}/renamed-project/-/settings"
        and "The project was renamed." in text(r)
    )
    assert c.get(f"/code/{path}").status_code == 404


def test_members_add_change_remove(world):
    c = client(world)
    path = "byte/tiny-http"
    url = f"/code/{path}/-/project_members"
    r = follow(c, c.post(url + "/add", data={"username": "leo_rossi", "access_level": "Developer"}))
    assert "The member was added" in text(r) and role_of(r, "leo_rossi") == "Developer"
    assert "already a member" in text(
        follow(c, c.post(url + "/add", data={"username": "leo_rossi"}))
    )
    assert "no user with that username" in text(
        follow(c, c.post(url + "/add", data={"username": "ghost"}))
    )
    r = follow(c, c.post(url + "/leo_rossi", data={"role": "Maintainer"}))
    assert role_of(r, "leo_rossi") == "Maintainer"
    r = follow(c, c.post(url + "/leo_rossi", data={"role": "Maintainer", "remove": "1"}))
    assert "removed" in text(r) and role_of(r, "leo_rossi") == ""
    assert "at least one owner" in text(follow(c, c.post(url + "/byte", data={"role": "Guest"})))
    assert by_id(c.get(url + "?search=byte"), "member-count") == "1 member"


def test_merge_request_merge_and_comment(world):
    c = client(world)
    path, iid = one(world, "SELECT p.namespace || '/' || p.name, m.iid FROM merge_requests m JOIN projects p"
                    " ON p.id = m.project_id JOIN members mm ON mm.project_id = p.id AND mm.user_id = 1"
                    " WHERE m.state = 'opened' AND mm.role IN ('Developer', 'Maintainer', 'Owner') ORDER BY m.id")  # fmt: skip
    url = f"/code/{path}/-/merge_requests/{iid}"
    assert by_id(c.get(url), "mr-state") == "Open"
    r = follow(c, c.post(url + "/notes", data={"body": "Ship it"}))
    assert "Ship it" in by_id(r, "comments")
    r = follow(c, c.post(url + "/state", data={"action": "merge"}))
    assert by_id(r, "mr-state") == "Merged" and "Merge" not in [
        b.text for b in html.fromstring(r.get_data(as_text=True)).iter("button")
    ]
    assert c.post(url + "/state", data={"action": "close"}).status_code == 403


def test_commits_pages_and_contributors(world):
    c = client(world)
    pid, path, n = one(world, "SELECT p.id, p.namespace || '/' || p.name, COUNT(*) FROM commits c JOIN projects p"
                       " ON p.id = c.project_id GROUP BY p.id HAVING COUNT(*) > 20 ORDER BY p.id")  # fmt: skip
    first = c.get(f"/code/{path}/-/commits").get_data(as_text=True)
    dates = re.findall(r'class="commit-date">([\d-]+)<', first)
    assert len(dates) == 10 and dates == sorted(dates, reverse=True)
    assert f"{n} commits" in by_id(c.get(f"/code/{path}/-/commits"), "commit-count")
    counts = [
        int(x)
        for x in re.findall(
            r'class="commits">(\d+)<', c.get(f"/code/{path}/-/graphs").get_data(as_text=True)
        )
    ]
    assert sum(counts) == n and counts == sorted(counts, reverse=True)

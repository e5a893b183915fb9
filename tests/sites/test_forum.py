"""The forum site through its WSGI interface: pages, writes, permissions, isolation."""

from __future__ import annotations

import re

import pytest
from lxml import html
from werkzeug.test import Client

from webrl.sites import forum
from webrl.sites.world import WorldApp


@pytest.fixture(scope="module")
def world() -> WorldApp:
    return WorldApp({"forum": forum.SPEC})


def client(world: WorldApp, state=None, login: bool = False) -> Client:
    state = state or world.new_state()

    def app(environ, start_response):  # what the http backend does: pin the episode's state
        environ["webrl.world"] = state
        return world(environ, start_response)

    c = Client(app)
    if login:
        r = c.post("/forum/login", data={"username": "marvin", "password": "marvin-pass"})
        assert r.status_code == 302
    return c


def text(resp) -> str:
    return " ".join(html.fromstring(resp.get_data(as_text=True)).text_content().split())


def seed(world: WorldApp):
    return world.store.snapshot("forum")


def a_post(world: WorldApp, where: str = "1 = 1", params: tuple = ()):
    return (
        seed(world)
        .execute(
            "SELECT p.id, p.title, p.score, f.name AS forum, u.username AS author FROM posts p "
            "JOIN forums f ON f.id = p.forum_id JOIN users u ON u.id = p.user_id "
            f"WHERE {where} ORDER BY p.id LIMIT 1",
            params,
        )
        .fetchone()
    )


def test_seed_data_size_and_default_user(world):
    db = seed(world)
    count = lambda t: db.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]  # noqa: E731
    assert count("forums") == 15 and count("users") == 80
    assert count("posts") == 400 and count("comments") == 1500
    assert db.execute("SELECT COUNT(DISTINCT title) FROM posts").fetchone()[0] == 400
    depth3 = db.execute(
        "SELECT COUNT(*) FROM comments c JOIN comments p ON p.id = c.parent_id WHERE p.parent_id IS NOT NULL"
    ).fetchone()[0]
    assert depth3 > 0  # replies to replies exist
    marvin = db.execute("SELECT id FROM users WHERE username = 'marvin'").fetchone()["id"]
    for table in ("posts", "comments", "subscriptions"):
        assert (
            db.execute(f"SELECT COUNT(*) FROM {table} WHERE user_id = ?", (marvin,)).fetchone()[0]
            > 0
        )


def test_seed_is_deterministic():
    a, b = WorldApp({"forum": forum.SPEC}), WorldApp({"forum": forum.SPEC})
    q = "SELECT group_concat(title || score, '|') FROM (SELECT * FROM posts ORDER BY id)"
    assert seed(a).execute(q).fetchone()[0] == seed(b).execute(q).fetchone()[0]


def test_pages_render_small(world):
    c = client(world, login=True)
    p = a_post(world)
    for url in ["/forum/", "/forum/forums", "/forum/users", f"/forum/f/{p['forum']}",
                f"/forum/f/{p['forum']}/{p['id']}", "/forum/user/marvin",
                "/forum/user/marvin/comments", "/forum/search?q=the", "/forum/submit"]:  # fmt: skip
        r = c.get(url)
        assert r.status_code == 200, url
        assert len(text(r)) < 2200, url
        assert "<script" not in r.get_data(as_text=True)


def test_forum_sorting_and_pagination(world):
    c = client(world)
    new = c.get("/forum/f/books?sort=new").get_data(as_text=True)
    dates = re.findall(r"· (\d{4}-\d\d-\d\d) ·", new)
    assert len(dates) == 10 and dates == sorted(dates, reverse=True)
    top = c.get("/forum/f/books?sort=top").get_data(as_text=True)
    scores = [int(s) for s in re.findall(r"<p>(-?\d+) points", top)]
    assert len(scores) == 10 and scores == sorted(scores, reverse=True)
    assert "Next page" in new and "Page 1 of" in new
    page2 = c.get("/forum/f/books?sort=new&page=2").get_data(as_text=True)
    assert "Previous page" in page2
    assert set(re.findall(r'href="(/forum/f/books/\d+)"', new)).isdisjoint(
        re.findall(r'href="(/forum/f/books/\d+)"', page2)
    )
    assert 'href="/forum/f/books?sort=new&amp;page=2"' in new  # pager keeps the sort
    # query parameters that are url_for's own arguments or the route's parts are dropped from the
    # pager's links (they failed the page or rewrote the link)
    for odd in ("endpoint=x", "_method=x", "name=x", "_anchor=x", "_external=1&_scheme=javascript"):
        resp = c.get(f"/forum/f/books?sort=new&{odd}")
        assert resp.status_code == 200, odd
        assert 'href="/forum/f/books?sort=new&amp;page=2"' in resp.get_data(as_text=True), odd


def test_post_page_shows_counts_and_tree(world):
    db = seed(world)
    row = db.execute(
        "SELECT c.post_id, COUNT(*) AS n FROM comments c GROUP BY c.post_id ORDER BY n DESC LIMIT 1"
    ).fetchone()
    p = a_post(world, "p.id = ?", (row["post_id"],))
    r = client(world).get(f"/forum/f/{p['forum']}/{p['id']}")
    t = text(r)
    assert f"{row['n']} comments" in t and f"Score: {p['score']}" in t
    assert "reply to" in t and "Page 1 of" in t
    assert client(world).get(f"/forum/f/not-{p['forum']}/{p['id']}").status_code == 404


def test_login_required(world):
    c = client(world)
    p = a_post(world)
    r = c.get("/forum/submit")
    assert r.status_code == 302 and "/forum/login?next=/forum/submit" in r.headers["Location"]
    r = c.post(f"/forum/f/{p['forum']}/{p['id']}/vote", data={"vote": "1"})
    assert r.status_code == 302 and "/forum/login" in r.headers["Location"]
    assert "Upvote" not in text(c.get(f"/forum/f/{p['forum']}/{p['id']}"))


def test_vote_is_isolated_per_state(world):
    p = a_post(world, "p.id NOT IN (SELECT post_id FROM post_votes WHERE user_id = 1)")
    url = f"/forum/f/{p['forum']}/{p['id']}"
    a, b = client(world, login=True), client(world, login=True)
    r = a.post(url + "/vote", data={"vote": "1"}, follow_redirects=True)
    assert "You upvoted this." in text(r) and f"Score: {p['score'] + 1}" in text(r)
    assert "Your vote was saved." in text(r)
    assert "You upvoted this." not in text(b.get(url)) and f"Score: {p['score']}" in text(
        b.get(url)
    )
    r = a.post(url + "/vote", data={"vote": "-1"}, follow_redirects=True)
    assert "You downvoted this." in text(r) and f"Score: {p['score'] - 1}" in text(r)


def test_comment_is_escaped_and_isolated(world):
    p = a_post(world)
    url = f"/forum/f/{p['forum']}/{p['id']}"
    a, b = client(world, login=True), client(world, login=True)
    r = a.post(url + "/comment", data={"body": "<script>alert(1)</script>"}, follow_redirects=True)
    body = r.get_data(as_text=True)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body and "<script>" not in body
    assert "Your comment was posted." in text(r)
    assert "alert(1)" in text(a.get("/forum/user/marvin/comments"))
    assert "alert(1)" not in b.get(url + "?sort=new").get_data(as_text=True)
    empty = a.post(url + "/comment", data={"body": "  "}, follow_redirects=True)
    assert "A comment cannot be empty." in text(empty)


def test_reply_nests_under_parent(world):
    cm = (
        seed(world)
        .execute(
            "SELECT c.id, c.post_id, u.username FROM comments c JOIN users u ON u.id = c.user_id "
            "WHERE c.parent_id IS NULL ORDER BY c.id LIMIT 1"
        )
        .fetchone()
    )
    p = a_post(world, "p.id = ?", (cm["post_id"],))
    c = client(world, login=True)
    url = f"/forum/f/{p['forum']}/{p['id']}/comment/{cm['id']}"
    r = c.post(f"/forum/f/{p['forum']}/{p['id']}/comment",
               data={"body": "Nested reply here", "parent": str(cm["id"])}, follow_redirects=True)  # fmt: skip
    assert r.request.path == url
    node = html.fromstring(r.get_data(as_text=True)).get_element_by_id(f"comment-{cm['id']}")
    assert "Nested reply here" in node.text_content()
    assert f"reply to {cm['username']}" in node.text_content()


def test_edit_permissions(world):
    mine = a_post(world, "u.username = 'marvin'")
    other = a_post(world, "u.username != 'marvin'")
    c = client(world, login=True)
    assert c.get(f"/forum/f/{other['forum']}/{other['id']}/edit").status_code == 403
    r = c.post(
        f"/forum/f/{other['forum']}/{other['id']}/edit", data={"title": "x", "body": "hacked"}
    )
    assert r.status_code == 403
    r = c.post(f"/forum/f/{mine['forum']}/{mine['id']}/edit",
               data={"title": mine["title"], "body": "A brand new body"}, follow_redirects=True)  # fmt: skip
    assert "A brand new body" in text(r) and "(edited)" in text(r)
    assert "Edit post" in text(r)
    assert "Edit post" not in text(c.get(f"/forum/f/{other['forum']}/{other['id']}"))


def test_submit_and_subscribe(world):
    c = client(world, login=True)
    r = c.post("/forum/submit", data={"forum": "food", "title": "Fresh title", "body": "Body"},
               follow_redirects=True)  # fmt: skip
    assert "Your post was submitted." in text(r) and "Fresh title" in text(r)
    assert "Fresh title" in text(c.get("/forum/f/food?sort=new"))
    assert "Choose a forum." in text(c.post("/forum/submit", data={"forum": "nope", "title": "t"}))
    subs = seed(world).execute("SELECT subscribers FROM forums WHERE name = 'gaming'").fetchone()[0]
    r = c.post("/forum/f/gaming/subscribe", data={"action": "subscribe"}, follow_redirects=True)
    assert "You are subscribed." in text(r) and f"{subs + 1} subscribers" in text(r)
    r = c.post("/forum/f/gaming/subscribe", data={"action": "unsubscribe"}, follow_redirects=True)
    assert "You are not subscribed." in text(r) and f"{subs} subscribers" in text(r)


def test_search_and_profiles(world):
    c = client(world)
    p = a_post(world)
    r = c.get("/forum/search", query_string={"q": p["title"]})
    assert p["title"] in text(r) and "results for" in text(r)
    assert "0 results" in text(c.get("/forum/search?q=%25%25%25"))  # LIKE wildcards are literal
    prof = text(c.get(f"/forum/user/{p['author']}"))
    assert "Karma:" in prof and "Joined" in prof
    assert c.get("/forum/user/nobody-here").status_code == 404
    assert "f/books" in text(c.get("/forum/forums"))

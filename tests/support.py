"""Test support: a tiny but real site (Flask, SQLite, forms) and a solver runner.

Imported as `support` (a unique module name; conftest.py files of several test
folders would shadow each other)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from flask import redirect, render_template_string, request, url_for

from webrl.sites.common import AUTH_SCHEMA, create_site_app, db, hash_password, login_required
from webrl.sites.state import SiteSpec

PAGE = """{% extends "layout.html" %}{% block content %}
<h1>Notes</h1>
<form method="get" action="{{ url_for('index') }}">
  <input name="q" placeholder="Search notes" value="{{ q }}"><button>Search</button>
</form>
<ul>{% for n in notes %}<li><a href="{{ url_for('note', nid=n['id']) }}">{{ n['title'] }}</a></li>{% endfor %}</ul>
<form method="post" action="{{ url_for('add') }}">
  <input name="title" placeholder="Title">
  <textarea name="body"></textarea>
  <select name="color"><option value="r">Red</option><option value="g">Green</option></select>
  <input type="checkbox" name="pin" value="yes">
  <button type="submit" name="go" value="1">Add note</button>
  <button type="button">Does nothing</button>
</form>
{% for i in range(long) %}<p>Filler line number {{ i }} with some words to take space.</p>{% endfor %}
<a href="{{ url_for('index', long=80) }}">Long page</a>
{% endblock %}"""

NOTE = """{% extends "layout.html" %}{% block content %}
<h1>{{ n['title'] }}</h1><p id="body">{{ n['body'] }}</p><p>Color: {{ n['color'] }}</p>
<p>Pinned: {{ n['pinned'] }}</p>{% endblock %}"""


def build_notes(conn):
    conn.executescript(
        "CREATE TABLE users(id INTEGER PRIMARY KEY, username TEXT UNIQUE, password_hash TEXT);"
        "CREATE TABLE notes(id INTEGER PRIMARY KEY, title TEXT, body TEXT, color TEXT, pinned TEXT);"
        + AUTH_SCHEMA
    )
    conn.execute("INSERT INTO users(username, password_hash) VALUES (?, ?)", ("ann", hash_password("pw")))
    for i in range(5):
        conn.execute("INSERT INTO notes(title, body, color, pinned) VALUES (?, ?, 'r', 'no')",
                     (f"Note {i}", f"Body of note {i}"))  # fmt: skip


def notes_app():
    app = create_site_app("notes", "Notes", Path(__file__).parent)

    @app.route("/")
    def index():
        q = request.args.get("q", "")
        notes = db().execute("SELECT * FROM notes WHERE title LIKE ? ORDER BY id", (f"%{q}%",)).fetchall()
        return render_template_string(PAGE, notes=notes, q=q, long=int(request.args.get("long", 0)))

    @app.route("/note/<int:nid>")
    def note(nid):
        n = db().execute("SELECT * FROM notes WHERE id = ?", (nid,)).fetchone()
        return render_template_string(NOTE, n=n)

    @app.route("/away")
    def away():  # a redirect to wherever `to` says, as a careless site could send
        return redirect(request.args["to"])

    @app.route("/embed")
    def embed():  # a page that makes the browser itself request another server (an image)
        return render_template_string('<p>Picture</p><img src="{{ src }}" alt="x">', src=request.args["src"])

    @app.route("/add", methods=["POST"])
    @login_required
    def add():
        cur = db().execute(
            "INSERT INTO notes(title, body, color, pinned) VALUES (?, ?, ?, ?)",
            (request.form["title"], request.form["body"], request.form["color"],
             request.form.get("pin", "no")),
        )  # fmt: skip
        db().commit()
        return redirect(url_for("note", nid=cur.lastrowid))

    return app


NOTES = SiteSpec("notes", "Notes", build_notes, notes_app, ("ann", "pw"))



def notes_task(**overrides) -> dict:
    task = {
        "task_id": 1, "sites": ["notes"], "start_url": "__NOTES__/", "intent": "Add a note",
        "intent_template": "Add a note", "intent_template_id": 0, "instantiation_dict": {},
        "require_login": True,
        "eval": {"eval_types": ["program_html"], "program_html": [
            {"url": "last", "locator": "#body", "required_contents": {"must_include": ["hello"]}}]},
    }  # fmt: skip
    task.update(overrides)
    return task


def play(env, task, solver) -> tuple[float, list[str]]:
    """Run a family's scripted solver (oracle or wrong ending) through `env`.

    Every action must be valid on its page; returns (reward, actions)."""
    from webrl.env.page_view import PageView

    obs, info = env.reset(options={"task": task})
    view = PageView(obs, info)
    actions = []
    for action in solver(task, view):
        obs, reward, terminated, truncated, info = env.step(action)
        actions.append(action)
        assert info["action_error"] is None, (task.intent, action, info["action_error"])
        if terminated or truncated:
            return reward, actions
        view.update(obs, info)
    raise AssertionError(f"solver for {task.task_id} stopped without exit()")


def train_cli(run: Path, sft: Path, fault: str | None) -> subprocess.CompletedProcess:
    """`webrl train` in a subprocess (a new run on cpu-tiny, or `--resume`), `WEBRL_FAULT` set to
    kill it at a point (e.g. "rollout:2")."""
    env = {**os.environ, "WEBRL_FAULT": fault or ""}
    args = [sys.executable, "-m", "webrl.cli.main", "train", "--run", str(run), "--no-progress"]
    if (run / "train_config.json").exists():
        args.append("--resume")
    else:
        args += ["--preset", "cpu-tiny", "--init", str(sft / "final"), "--reward", "oracle",
                 "--demos", str(sft / "demos.jsonl")]  # fmt: skip
    return subprocess.run(args, env=env, capture_output=True, text=True, timeout=900)

"""The code site's schema and deterministic seed data (a small GitLab).

Everything comes from one `random.Random(SEED)` walking the constants of
`content.py`, so every process builds the same users, projects, files,
commits, issues, merge requests, comments, members and stars. Star and fork
counts are stored aggregates; the default user's own stars live in `stars`.
Dates are before the site's fixed "today" (`NOW`), which stamps new content.
"""

from __future__ import annotations

import random
import sqlite3
import unicodedata
from datetime import datetime, timedelta

from webrl.sites.code import content as C
from webrl.sites.code.files import project_files
from webrl.sites.common import AUTH_SCHEMA, hash_password

SEED = 20240402
DEFAULT_USER = ("byte", "byte-pass")
N_USERS = 60
NOW = "2024-03-15 12:00:00"  # the site's clock: timestamp of everything created on the site
TODAY = NOW[:10]
START = datetime(2021, 1, 4)
LAST = datetime(2024, 3, 14, 18)

SCHEMA = """
CREATE TABLE users (
    id INTEGER PRIMARY KEY,
    username TEXT UNIQUE NOT NULL,
    password_hash TEXT NOT NULL,
    name TEXT NOT NULL,
    bio TEXT NOT NULL DEFAULT '',
    joined TEXT NOT NULL
);
CREATE TABLE orgs (
    id INTEGER PRIMARY KEY,
    path TEXT UNIQUE NOT NULL,
    name TEXT NOT NULL
);
CREATE TABLE projects (
    id INTEGER PRIMARY KEY,
    namespace TEXT NOT NULL,
    name TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    visibility TEXT NOT NULL CHECK (visibility IN ('public', 'internal', 'private')),
    language TEXT NOT NULL,
    topics TEXT NOT NULL DEFAULT '',
    default_branch TEXT NOT NULL,
    stars INTEGER NOT NULL DEFAULT 0,
    forks INTEGER NOT NULL DEFAULT 0,
    created TEXT NOT NULL,
    updated TEXT NOT NULL,
    forked_from INTEGER REFERENCES projects(id),
    UNIQUE (namespace, name)
);
CREATE TABLE members (
    project_id INTEGER NOT NULL REFERENCES projects(id),
    user_id INTEGER NOT NULL REFERENCES users(id),
    role TEXT NOT NULL,
    PRIMARY KEY (project_id, user_id)
);
CREATE TABLE stars (
    user_id INTEGER NOT NULL REFERENCES users(id),
    project_id INTEGER NOT NULL REFERENCES projects(id),
    PRIMARY KEY (user_id, project_id)
);
CREATE TABLE files (
    id INTEGER PRIMARY KEY,
    project_id INTEGER NOT NULL REFERENCES projects(id),
    path TEXT NOT NULL,
    content TEXT NOT NULL,
    UNIQUE (project_id, path)
);
CREATE TABLE commits (
    id INTEGER PRIMARY KEY,
    project_id INTEGER NOT NULL REFERENCES projects(id),
    sha TEXT NOT NULL,
    message TEXT NOT NULL,
    author_id INTEGER NOT NULL REFERENCES users(id),
    created TEXT NOT NULL,
    changed TEXT NOT NULL DEFAULT ''
);
CREATE INDEX commits_project ON commits(project_id, created);
CREATE TABLE labels (
    id INTEGER PRIMARY KEY,
    project_id INTEGER NOT NULL REFERENCES projects(id),
    name TEXT NOT NULL,
    UNIQUE (project_id, name)
);
CREATE TABLE issues (
    id INTEGER PRIMARY KEY,
    project_id INTEGER NOT NULL REFERENCES projects(id),
    iid INTEGER NOT NULL,
    title TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    author_id INTEGER NOT NULL REFERENCES users(id),
    assignee_id INTEGER REFERENCES users(id),
    state TEXT NOT NULL CHECK (state IN ('opened', 'closed')),
    created TEXT NOT NULL,
    updated TEXT NOT NULL,
    UNIQUE (project_id, iid)
);
CREATE TABLE issue_labels (
    issue_id INTEGER NOT NULL REFERENCES issues(id),
    label_id INTEGER NOT NULL REFERENCES labels(id),
    PRIMARY KEY (issue_id, label_id)
);
CREATE TABLE merge_requests (
    id INTEGER PRIMARY KEY,
    project_id INTEGER NOT NULL REFERENCES projects(id),
    iid INTEGER NOT NULL,
    title TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    source_branch TEXT NOT NULL,
    target_branch TEXT NOT NULL,
    author_id INTEGER NOT NULL REFERENCES users(id),
    state TEXT NOT NULL CHECK (state IN ('opened', 'merged', 'closed')),
    created TEXT NOT NULL,
    updated TEXT NOT NULL,
    UNIQUE (project_id, iid)
);
CREATE TABLE notes (
    id INTEGER PRIMARY KEY,
    issue_id INTEGER REFERENCES issues(id),
    mr_id INTEGER REFERENCES merge_requests(id),
    author_id INTEGER NOT NULL REFERENCES users(id),
    body TEXT NOT NULL,
    created TEXT NOT NULL
);
CREATE INDEX notes_issue ON notes(issue_id);
CREATE INDEX notes_mr ON notes(mr_id);
"""


def fmt(dt: datetime) -> str:
    return dt.strftime("%Y-%m-%d %H:%M:%S")


def ascii_slug(text: str) -> str:
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower()


def _between(rng: random.Random, a: datetime, b: datetime) -> datetime:
    return a + timedelta(seconds=rng.randint(0, max(1, int((b - a).total_seconds()))))


def _people(rng: random.Random) -> list[tuple[str, str]]:
    """(username, full name) of the generated users; a first or last name is used at most twice."""
    pairs = [(f, last) for f in C.FIRST_NAMES for last in C.LAST_NAMES]
    rng.shuffle(pairs)
    out: list[tuple[str, str]] = []
    firsts: dict[str, int] = {}
    lasts: dict[str, int] = {}
    for first, last in pairs:
        if len(out) == N_USERS - 1:
            break
        if firsts.get(first, 0) < 2 and lasts.get(last, 0) < 2:
            firsts[first] = firsts.get(first, 0) + 1
            lasts[last] = lasts.get(last, 0) + 1
            out.append((f"{ascii_slug(first)}_{ascii_slug(last)}", f"{first} {last}"))
    return out


class Builder:
    """Fills the tables in order; keeps the ids it needs for later tables."""

    def __init__(self, conn: sqlite3.Connection, rng: random.Random):
        self.conn, self.rng = conn, rng
        self.titles: list[str] = []  # every issue and MR title so far (kept distinct)
        self.shas: set[str] = set()

    def insert(self, table: str, row: dict) -> int:
        cols = ", ".join(row)  # column names come from this module's literals
        marks = ", ".join("?" for _ in row)
        return self.conn.execute(
            f"INSERT INTO {table} ({cols}) VALUES ({marks})", tuple(row.values())
        ).lastrowid

    def fresh_title(self, candidates: list[str]) -> str | None:
        """The first candidate that is neither a substring nor a superstring of a title so far."""
        for t in candidates:
            low = t.lower()
            if not any(low in o or o in low for o in self.titles):
                self.titles.append(low)
                return t
        return None

    def sha(self) -> str:
        while True:
            s = f"{self.rng.getrandbits(160):040x}"
            if s[:8] not in self.shas:
                self.shas.add(s[:8])
                return s


def build_db(conn: sqlite3.Connection) -> None:
    """Create the schema and fill it with the deterministic seed data."""
    rng = random.Random(SEED)
    conn.executescript(SCHEMA + AUTH_SCHEMA)
    b = Builder(conn, rng)

    # users ------------------------------------------------------------------------------
    people = _people(rng)
    users = [(DEFAULT_USER[0], C.BYTE_NAME, C.BYTE_BIO, DEFAULT_USER[1])]
    users += [(u, n, rng.choice(C.BIOS), f"{u}-pass") for u, n in people]
    for i, (username, name, bio, password) in enumerate(users, start=1):
        joined = START - timedelta(days=rng.randint(30, 900))
        b.insert("users", {"id": i, "username": username, "password_hash": hash_password(password),
                           "name": name, "bio": bio, "joined": joined.strftime("%Y-%m-%d")})  # fmt: skip
    byte, others = 1, list(range(2, len(users) + 1))

    # groups: an owner and a pool of regular contributors each ------------------------------
    crew: dict[str, list[int]] = {}
    for path, name in C.GROUPS:
        b.insert("orgs", {"path": path, "name": name})
        crew[path] = rng.sample(others, rng.randint(7, 11))

    # projects ------------------------------------------------------------------------------
    for namespace, name, lang, desc, topics in C.PROJECTS:
        if namespace.startswith("~"):
            owner = others[int(namespace[1:])]
            namespace = users[owner - 1][0]
            pool = [owner] + rng.sample([u for u in others if u != owner], rng.randint(1, 3))
        elif namespace == DEFAULT_USER[0]:
            owner, pool = byte, [byte] + rng.sample(others, rng.randint(1, 3))
        else:
            owner, pool = crew[namespace][0], crew[namespace][:]
            pool = [owner] + rng.sample(pool[1:], rng.randint(3, len(pool) - 1))
        created = _between(rng, START, datetime(2023, 5, 1))
        active_until = _between(rng, created + timedelta(days=120), LAST)
        visibility = (
            "private" if name in C.PRIVATE else "internal" if name in C.INTERNAL else "public"
        )
        proj = {
            "namespace": namespace, "name": name, "description": desc, "visibility": visibility,
            "language": lang, "topics": topics, "default_branch": rng.choice(["main"] * 4 + ["master", "develop"]),
            "stars": min(3000, int(rng.lognormvariate(3.3, 1.1))), "forks": 0,
            "created": fmt(created), "updated": fmt(active_until),
        }  # fmt: skip
        pid = b.insert("projects", proj)
        roles = {owner: "Owner"}
        for uid in pool[1:]:
            roles[uid] = rng.choices(C.ROLES[:4], weights=[2, 2, 5, 2])[0]
        if name in C.BYTE_ROLES:
            roles[byte] = C.BYTE_ROLES[name]
        for uid, role in roles.items():
            b.insert("members", {"project_id": pid, "user_id": uid, "role": role})
        _fill_project(b, pid, proj, roles, active_until)

    for name in C.BYTE_STARS:
        conn.execute("INSERT INTO stars SELECT ?, id FROM projects WHERE name = ?", (byte, name))
    conn.execute(
        "UPDATE projects SET stars = MAX(stars, 0) + (SELECT COUNT(*) FROM stars s WHERE s.project_id = projects.id),"
        " forks = stars / 7"
    )
    conn.execute(  # last activity: the newest commit, issue, merge request or comment
        "UPDATE projects SET updated = MAX(updated,"
        " COALESCE((SELECT MAX(created) FROM commits WHERE project_id = projects.id), ''),"
        " COALESCE((SELECT MAX(updated) FROM issues WHERE project_id = projects.id), ''),"
        " COALESCE((SELECT MAX(updated) FROM merge_requests WHERE project_id = projects.id), ''))"
    )


def _fill_project(b: Builder, pid: int, proj: dict, roles: dict[int, str], until: datetime) -> None:
    """Files, commits, labels, issues, merge requests and comments of one project."""
    rng = b.rng
    created, branch_to = datetime.fromisoformat(proj["created"]), proj["default_branch"]
    modules = rng.sample(C.MODULES[proj["language"]], 4)
    files = project_files(proj["name"], proj["description"], proj["language"], modules)
    for path, text in files.items():
        b.insert("files", {"project_id": pid, "path": path, "content": text})
    writers = [u for u, r in roles.items() if C.ROLE_LEVEL[r] >= C.ROLE_LEVEL["Developer"]]
    everyone = list(roles)
    weights = [
        rng.uniform(0.3, 1.0) * (3 if r == "Owner" else 1) for r in (roles[u] for u in writers)
    ]

    # commits: "Initial commit" first, then messages about the project's modules
    n = rng.randint(10, 40)
    dates = sorted(_between(rng, created, until) for _ in range(n - 1))
    msgs = [t.format(m=m) for t in C.COMMIT_TEMPLATES for m in modules]
    rng.shuffle(msgs)
    generic = C.COMMIT_GENERIC[:]
    rng.shuffle(generic)
    paths = list(files)
    messages = []
    for i in range(n - 1):
        if rng.random() < 0.25 and generic:
            messages.append(generic.pop().format(v=f"{rng.randint(0, 3)}.{rng.randint(0, 12)}.{i}"))
        else:
            messages.append(msgs.pop())
    for when, msg in zip([created] + dates, ["Initial commit"] + messages, strict=True):
        author = writers[0] if msg == "Initial commit" else rng.choices(writers, weights)[0]
        touched = [p for p in paths if any(m in p and m in msg for m in modules)] or rng.sample(
            paths, 2
        )
        b.insert("commits", {"project_id": pid, "sha": b.sha(), "message": msg, "author_id": author,
                             "created": fmt(when), "changed": ",".join(sorted(touched)[:3])})  # fmt: skip

    # labels and issues (iids in order of creation)
    candidates = [(lab, t.format(m=m)) for lab, t in C.ISSUE_TEMPLATES for m in modules]
    rng.shuffle(candidates)
    n_issues = rng.randint(3, 17)
    issues = []
    for label, title in candidates:
        if len(issues) < n_issues and b.fresh_title([title]):
            issues.append((_between(rng, created + timedelta(days=3), until), label, title))
    used = {lab for _d, lab, _t in issues}
    extra = [lab for lab in C.LABELS if lab not in used]
    project_labels = sorted(used | set(rng.sample(extra, max(0, rng.randint(6, 9) - len(used)))),
                            key=C.LABELS.index)  # fmt: skip
    label_id = {lab: b.insert("labels", {"project_id": pid, "name": lab}) for lab in project_labels}
    outsiders = rng.sample(range(2, N_USERS + 1), 4)
    for iid, (opened, label, title) in enumerate(sorted(issues), start=1):
        state = "opened" if rng.random() < 0.6 else "closed"
        updated = _between(rng, opened, LAST) if state == "closed" else opened
        desc_text = " ".join(rng.sample(C.ISSUE_SENTENCES, rng.randint(1, 2)))
        iss = b.insert("issues", {
            "project_id": pid, "iid": iid, "title": title, "description": desc_text,
            "author_id": rng.choice(everyone + outsiders), "assignee_id": rng.choice(writers) if rng.random() < 0.75 else None,
            "state": state, "created": fmt(opened), "updated": fmt(updated),
        })  # fmt: skip
        tags = {label} | ({rng.choice(project_labels)} if rng.random() < 0.3 else set())
        for lab in sorted(tags):
            b.insert("issue_labels", {"issue_id": iss, "label_id": label_id[lab]})
        _notes(b, "issue_id", iss, everyone + outsiders, opened, rng.randint(0, 5))

    # merge requests (iids in order of creation)
    n_mrs = rng.choice([0, 1, 2, 3, 3, 4, 4, 5, 6, 7])
    combos = [(p, t.format(m=m), m) for p, t in C.MR_TEMPLATES for m in modules]
    rng.shuffle(combos)
    mrs: list[tuple[datetime, str, str]] = []
    for prefix, title, module in combos:
        branch = f"{prefix}/{module}-{rng.choice(['v2', 'cleanup', 'update', 'wip', 'next'])}"
        if len(mrs) < n_mrs and branch not in {m[2] for m in mrs} and b.fresh_title([title]):
            mrs.append((_between(rng, created + timedelta(days=7), until), title, branch))
    for iid, (opened, title, branch) in enumerate(sorted(mrs), start=1):
        mr = b.insert("merge_requests", {
            "project_id": pid, "iid": iid, "title": title, "description": rng.choice(C.MR_SENTENCES),
            "source_branch": branch, "target_branch": branch_to, "author_id": rng.choice(writers),
            "state": rng.choices(["merged", "opened", "closed"], weights=[5, 3, 2])[0],
            "created": fmt(opened), "updated": fmt(opened),
        })  # fmt: skip
        _notes(b, "mr_id", mr, everyone, opened, rng.randint(0, 3))


def _notes(
    b: Builder, column: str, parent: int, authors: list[int], after: datetime, n: int
) -> None:
    when = after
    for body in b.rng.sample(C.NOTE_SENTENCES, n):
        when = _between(b.rng, when, min(when + timedelta(days=9), LAST))
        b.insert(
            "notes",
            {
                column: parent,
                "author_id": b.rng.choice(authors),
                "body": body,
                "created": fmt(when),
            },
        )

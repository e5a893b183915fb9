"""Code-site task families. Information retrieval: the answer goes in exit(message=...)."""

from __future__ import annotations

from collections import Counter

from webrl.tasks.code.base import (
    CodeFamily,
    code_db,
    commits_of,
    contributors,
    expect,
    find_issue,
    find_member,
    issue_by_title,
    issues_of,
    labels_of,
    members_of,
    next_page_until,
    open_project,
    pages_to,
    project_row,
    project_tab,
    projects,
    who,
)
from webrl.tasks.family import InfeasibleSlots, answer_exact, answer_includes, pick


class OpenIssuesWithLabel(CodeFamily):
    name = "code.open_issues_with_label"
    template = "How many open issues does {project} have with the label {label}?"
    template_id = 400
    kind = "info"

    def sample(self, db, rng, split):
        p = pick(
            rng,
            [p for p in projects(db) if issues_of(db, p["id"], "opened")],
            split,
            key=lambda p: p["path"],
        )
        opened = issues_of(db, p["id"], "opened")
        used = sorted({lab for i in opened for lab in (i["labels"] or "").split(", ") if lab})
        return {"project": p["path"], "label": rng.choice(used)}

    def build(self, db, slots):
        p = project_row(db, slots["project"])
        if slots["label"] not in labels_of(db, p["id"]):
            raise InfeasibleSlots(f"{slots['project']} has no label {slots['label']}")
        opened = issues_of(db, p["id"], "opened")
        n = sum(slots["label"] in (i["labels"] or "").split(", ") for i in opened)
        wrong = len(opened) if len(opened) != n else n + 1
        return {"eval": answer_exact(str(n)), "difficulty": 6,
                "extra": {"answer": str(n), "wrong": str(wrong)}}  # fmt: skip

    def oracle(self, task, page):
        yield from project_tab(page, task.instantiation_dict["project"], "Issues")
        yield from page.select(task.instantiation_dict["label"], name="label")
        yield from page.click("Filter", tag="button", exact=True)
        n = self.answer(task)
        expect(f"{n} open issue" in page.text, "filtered count shown")
        yield page.exit(n)

    def wrong_ending(self, task, page):  # counts every open issue, ignoring the label
        yield from project_tab(page, task.instantiation_dict["project"], "Issues")
        yield page.exit(task.extra["wrong"])


class LatestCommitAuthor(CodeFamily):
    name = "code.latest_commit_author"
    template = "Who authored the latest commit in {project}?"
    template_id = 401
    kind = "info"

    def sample(self, db, rng, split):
        ok = [p for p in projects(db) if len({c["username"] for c in commits_of(db, p["id"])}) > 1]
        return {"project": pick(rng, ok, split, key=lambda p: p["path"])["path"]}

    def build(self, db, slots):
        commits = commits_of(db, project_row(db, slots["project"])["id"])
        latest = commits[0]
        other = next(c for c in commits if c["username"] != latest["username"])
        return {"eval": answer_includes(who(latest["name"], latest["username"])), "difficulty": 4,
                "extra": {"answer": latest["name"], "wrong": other["name"]}}  # fmt: skip

    def oracle(self, task, page):
        yield from project_tab(page, task.instantiation_dict["project"], "Commits")
        page.find(self.answer(task), tag="a", exact=True)
        yield page.exit(self.answer(task))

    def wrong_ending(self, task, page):
        yield from project_tab(page, task.instantiation_dict["project"], "Commits")
        yield page.exit(task.extra["wrong"])


def _commit_line(page, name: str, date: str) -> bool:
    return f"{name}</a> · {date}" in page.text


class CommitMessageOnDate(CodeFamily):
    name = "code.commit_message_on_date"
    template = "What is the message of the commit that {user} made on {date} in {project}?"
    template_id = 402
    kind = "info"
    held_out = ("user",)

    def candidates(self, db) -> list[dict]:
        """(author, day, project) with exactly one commit by that author that day."""
        out = []
        for p in projects(db):
            commits = commits_of(db, p["id"])
            per_day = Counter((c["name"], c["created"][:10]) for c in commits)
            out += [{"user": c["name"], "date": c["created"][:10], "project": p["path"]}
                    for c in commits if per_day[(c["name"], c["created"][:10])] == 1]  # fmt: skip
        return out

    def sample(self, db, rng, split):
        return pick(rng, self.candidates(db), split, key=lambda c: c["user"])

    def build(self, db, slots):
        commits = commits_of(db, project_row(db, slots["project"])["id"])
        hits = [
            (k, c)
            for k, c in enumerate(commits)
            if c["name"] == slots["user"] and c["created"][:10] == slots["date"]
        ]
        if len(hits) != 1:
            raise InfeasibleSlots(f"{slots['user']} made {len(hits)} commits on {slots['date']}")
        k, c = hits[0]
        wrong = commits[k + 1] if k + 1 < len(commits) else commits[k - 1]
        return {"eval": answer_exact(c["message"]), "difficulty": 4 + pages_to(k),
                "extra": {"answer": c["message"], "wrong": wrong["message"]}}  # fmt: skip

    def oracle(self, task, page):
        d = task.instantiation_dict
        yield from project_tab(page, d["project"], "Commits")
        yield from next_page_until(page, lambda pg: _commit_line(pg, d["user"], d["date"]))
        expect(self.answer(task) in page.text, "commit message listed")
        yield page.exit(self.answer(task))

    def wrong_ending(self, task, page):  # the neighbouring commit
        d = task.instantiation_dict
        yield from project_tab(page, d["project"], "Commits")
        yield page.exit(task.extra["wrong"])


class IssueAssignee(CodeFamily):
    name = "code.issue_assignee"
    template = 'Who is assigned to the issue "{title}" in {project}?'
    template_id = 403
    kind = "info"
    held_out = ("title",)

    def sample(self, db, rng, split):
        rows = [i for p in projects(db) for i in issues_of(db, p["id"]) if i["assignee"]]
        i = pick(rng, rows, split, key=lambda i: i["title"])
        return {"title": i["title"], "project": i["path"]}

    def build(self, db, slots):
        i = issue_by_title(db, slots["project"], slots["title"])
        if not i["assignee"]:
            raise InfeasibleSlots("issue has no assignee")
        others = [
            m["name"] for m in members_of(db, i["project_id"]) if m["username"] != i["assignee"]
        ]
        wrong = i["author_name"] if i["author_name"] != i["assignee_name"] else others[0]
        return {"eval": answer_includes(who(i["assignee_name"], i["assignee"])), "difficulty": 6,
                "extra": {"answer": i["assignee_name"], "wrong": wrong, "closed": i["state"] == "closed"}}  # fmt: skip

    def oracle(self, task, page):
        d = task.instantiation_dict
        yield from find_issue(page, d["project"], d["title"], closed=task.extra["closed"])
        page.find(self.answer(task), tag="a", exact=True)
        yield page.exit(self.answer(task))

    def wrong_ending(self, task, page):  # answers with the issue's author
        d = task.instantiation_dict
        yield from find_issue(page, d["project"], d["title"], closed=task.extra["closed"])
        yield page.exit(task.extra["wrong"])


class ProjectStars(CodeFamily):
    name = "code.project_stars"
    template = "How many stars does {project} have?"
    template_id = 404
    kind = "info"

    def sample(self, db, rng, split):
        return {"project": pick(rng, projects(db), split, key=lambda p: p["path"])["path"]}

    def build(self, db, slots):
        p = project_row(db, slots["project"])
        wrong = p["forks"] if p["forks"] != p["stars"] else p["stars"] + 1
        return {"eval": answer_exact(str(p["stars"])), "difficulty": 3,
                "extra": {"answer": str(p["stars"]), "wrong": str(wrong)}}  # fmt: skip

    def oracle(self, task, page):
        yield from open_project(page, task.instantiation_dict["project"])
        expect(f"{self.answer(task)} stars" in page.text, "star count shown")
        yield page.exit(self.answer(task))

    def wrong_ending(self, task, page):  # reads the fork count
        yield from open_project(page, task.instantiation_dict["project"])
        yield page.exit(task.extra["wrong"])


class MemberRole(CodeFamily):
    name = "code.member_role"
    template = "What role does {user} have in {project}?"
    template_id = 405
    kind = "info"
    held_out = ("user",)

    def sample(self, db, rng, split):
        rows = [(m["username"], p["path"]) for p in projects(db) for m in members_of(db, p["id"])]
        user, path = pick(rng, rows, split, key=lambda r: r[0])
        return {"user": user, "project": path}

    def build(self, db, slots):
        p = project_row(db, slots["project"])
        role = next(
            (m["role"] for m in members_of(db, p["id"]) if m["username"] == slots["user"]), None
        )
        if role is None:
            raise InfeasibleSlots(f"{slots['user']} is not a member of {slots['project']}")
        wrong = "Developer" if role != "Developer" else "Maintainer"
        return {
            "eval": answer_exact(role),
            "difficulty": 5,
            "extra": {"answer": role, "wrong": wrong},
        }

    def oracle(self, task, page):
        d = task.instantiation_dict
        yield from find_member(page, d["project"], d["user"])
        expect(f"@{d['user']}" in page.text, "member listed")
        yield page.exit(self.answer(task))

    def wrong_ending(self, task, page):
        d = task.instantiation_dict
        yield from find_member(page, d["project"], d["user"])
        yield page.exit(task.extra["wrong"])


class MergeRequestSourceBranch(CodeFamily):
    name = "code.mr_source_branch"
    template = 'What is the source branch of the merge request "{title}" in {project}?'
    template_id = 406
    kind = "info"
    held_out = ("title",)

    def rows(self, db) -> list:
        return (
            code_db(db)
            .execute(
                "SELECT m.*, p.namespace || '/' || p.name AS path FROM merge_requests m JOIN projects p ON p.id = m.project_id"
                " ORDER BY m.id"
            )
            .fetchall()
        )

    def sample(self, db, rng, split):
        visible = {p["path"] for p in projects(db)}
        m = pick(
            rng, [m for m in self.rows(db) if m["path"] in visible], split, key=lambda m: m["title"]
        )
        return {"title": m["title"], "project": m["path"]}

    def build(self, db, slots):
        p = project_row(db, slots["project"])
        ordered = [m for m in self.rows(db) if m["project_id"] == p["id"]]
        ordered.sort(key=lambda m: (m["created"], m["iid"]), reverse=True)  # the "All" tab's order
        k = next((k for k, m in enumerate(ordered) if m["title"] == slots["title"]), None)
        if k is None:
            raise InfeasibleSlots(f"no merge request {slots['title']!r}")
        m = ordered[k]
        return {"eval": answer_exact(m["source_branch"]), "difficulty": 6 + pages_to(k),
                "extra": {"answer": m["source_branch"], "wrong": m["target_branch"]}}  # fmt: skip

    def oracle(self, task, page):
        d = task.instantiation_dict
        yield from project_tab(page, d["project"], "Merge requests")
        yield from page.click("All", tag="a", exact=True)
        yield from next_page_until(page, lambda pg: pg.has(d["title"], tag="a", exact=True))
        yield from page.click(d["title"], tag="a", exact=True)
        expect(
            f"merge {self.answer(task)} into" in page.text.replace("<code>", ""), "branches shown"
        )
        yield page.exit(self.answer(task))

    def wrong_ending(self, task, page):  # the target branch instead
        d = task.instantiation_dict
        yield from project_tab(page, d["project"], "Merge requests")
        yield page.exit(task.extra["wrong"])


class TopContributor(CodeFamily):
    name = "code.top_contributor"
    template = "Who has made the most commits to {project}?"
    template_id = 407
    kind = "info"

    def sample(self, db, rng, split):
        ok = [
            p for p in projects(db) if len(c := contributors(db, p["id"])) > 1 and c[0][2] > c[1][2]
        ]
        return {"project": pick(rng, ok, split, key=lambda p: p["path"])["path"]}

    def build(self, db, slots):
        rows = contributors(db, project_row(db, slots["project"])["id"])
        if len(rows) < 2 or rows[0][2] == rows[1][2]:
            raise InfeasibleSlots("no unique top contributor")
        latest = commits_of(db, project_row(db, slots["project"])["id"])[0]
        wrong = latest["name"] if latest["name"] != rows[0][1] else rows[1][1]
        return {"eval": answer_includes(who(rows[0][1], rows[0][0])), "difficulty": 4,
                "extra": {"answer": rows[0][1], "wrong": wrong}}  # fmt: skip

    def oracle(self, task, page):
        yield from project_tab(page, task.instantiation_dict["project"], "Contributors")
        page.find(self.answer(task), tag="a", exact=True)
        yield page.exit(self.answer(task))

    def wrong_ending(self, task, page):  # the author of the latest commit instead
        yield from project_tab(page, task.instantiation_dict["project"], "Commits")
        yield page.exit(task.extra["wrong"])

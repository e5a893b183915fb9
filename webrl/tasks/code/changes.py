"""Code-site task families. State changes to issues and merge requests: create,
close, reopen, assign, comment; checked on pages of the episode's own state (program_html)."""

from __future__ import annotations

from typing import ClassVar
from urllib.parse import quote_plus

from webrl.tasks.code.base import (
    NEW_COMMENTS,
    NEW_DESCRIPTIONS,
    NEW_ISSUE_TITLES,
    CodeFamily,
    code_db,
    find_issue,
    issue_by_title,
    issues_of,
    labels_of,
    managed,
    members_of,
    project_row,
    project_tab,
    projects,
)
from webrl.tasks.family import InfeasibleSlots, page_has, pick, state_check


def issue_url(i) -> str:
    return f"__CODE__/{i['path']}/-/issues/{i['iid']}"


def new_issue_checks(
    path: str, title: str, description: str, label: str = "", assignee: str = ""
) -> list[dict]:
    """The newest issue found by its title has the label/assignee; its description finds it too."""
    base = f"__CODE__/{path}/-/issues?state=all&search="
    first = "ul.issues li.issue:first-child"
    checks = [page_has(base + quote_plus(title), [], locator=f"{first} .issue-title", exact=title),
              page_has(base + quote_plus(description), [title], locator=f"{first} .issue-title")]  # fmt: skip
    if label:
        checks.append(page_has(base + quote_plus(title), [label], locator=f"{first} .issue-labels"))
    if assignee:
        checks.append(
            page_has(
                base + quote_plus(title), [], locator=f"{first} .issue-assignee", exact=assignee
            )
        )
    return checks


def fill_issue(page, title: str, description: str, label: str = "", assignee: str = ""):
    yield from page.type(title, name="title")
    yield from page.type(description, name="description")
    if label:
        yield from page.click(label, tag="input", name="labels", exact=True)
    if assignee:
        yield from page.select(assignee, name="assignee")
    yield from page.click("Create issue", tag="button", exact=True)


class CreateIssue(CodeFamily):
    name = "code.create_issue"
    template = 'Create an issue in {project} titled "{title}" with the description "{description}" and the label {label}.'
    template_id = 440
    kind = "state"
    held_out = ("title",)

    def sample(self, db, rng, split):
        p = rng.choice(projects(db))
        return {"project": p["path"], "title": pick(rng, NEW_ISSUE_TITLES, split, key=lambda t: t),
                "description": rng.choice(NEW_DESCRIPTIONS), "label": rng.choice(labels_of(db, p["id"]))}  # fmt: skip

    def build(self, db, slots):
        p = project_row(db, slots["project"])
        if slots["label"] not in labels_of(db, p["id"]):
            raise InfeasibleSlots(f"{p['path']} has no label {slots['label']}")
        checks = new_issue_checks(
            p["path"], slots["title"], slots["description"], label=slots["label"]
        )
        return {"eval": state_check(*checks), "difficulty": 8}

    def oracle(self, task, page):
        d = task.instantiation_dict
        yield from project_tab(page, d["project"], "Issues")
        yield from page.click("New issue", tag="a", exact=True)
        yield from fill_issue(page, d["title"], d["description"], label=d["label"])
        yield page.exit("Done")

    def wrong_ending(self, task, page):  # forgets the label
        d = task.instantiation_dict
        yield from project_tab(page, d["project"], "Issues")
        yield from page.click("New issue", tag="a", exact=True)
        yield from fill_issue(page, d["title"], d["description"])
        yield page.exit("Done")


class IssueStateChange(CodeFamily):
    """Close an open issue (or reopen a closed one) in a project where the user may."""

    kind = "state"
    held_out = ("title",)
    close: ClassVar[bool] = True

    def sample(self, db, rng, split):
        state = "opened" if self.close else "closed"
        rows = [i for p in managed(db, "Reporter") for i in issues_of(db, p["id"], state)]
        i = pick(rng, rows, split, key=lambda i: i["title"])
        return {"title": i["title"], "project": i["path"]}

    def build(self, db, slots):
        i = issue_by_title(db, slots["project"], slots["title"])
        want = "opened" if self.close else "closed"
        if i["state"] != want or i["project_id"] not in {p["id"] for p in managed(db, "Reporter")}:
            raise InfeasibleSlots(f"issue {slots['title']!r} cannot be changed")
        result = "Closed" if self.close else "Open"
        check = page_has(issue_url(i), [], locator="#issue-state", exact=result)
        return {"eval": state_check(check), "difficulty": 6 if self.close else 7}

    def button(self) -> str:
        return "Close issue" if self.close else "Reopen issue"

    def oracle(self, task, page):
        d = task.instantiation_dict
        yield from find_issue(page, d["project"], d["title"], closed=not self.close)
        yield from page.click(self.button(), tag="button", exact=True)
        yield page.exit("Done")

    def wrong_ending(self, task, page):  # opens the issue but comments instead of acting
        d = task.instantiation_dict
        yield from find_issue(page, d["project"], d["title"], closed=not self.close)
        yield from page.type(NEW_COMMENTS[0], name="body")
        yield from page.click("Comment", tag="button", exact=True)
        yield page.exit("Done")


class CloseIssue(IssueStateChange):
    name = "code.close_issue"
    template = 'Close the issue "{title}" in {project}.'
    template_id = 441
    close = True


class ReopenIssue(IssueStateChange):
    name = "code.reopen_issue"
    template = 'Reopen the issue "{title}" in {project}.'
    template_id = 442
    close = False


class CommentOnIssue(CodeFamily):
    name = "code.comment_on_issue"
    template = 'Comment "{comment}" on the issue "{title}" in {project}.'
    template_id = 443
    kind = "state"
    held_out = ("title",)

    def sample(self, db, rng, split):
        i = pick(
            rng,
            [i for p in projects(db) for i in issues_of(db, p["id"])],
            split,
            key=lambda i: i["title"],
        )
        return {"comment": rng.choice(NEW_COMMENTS), "title": i["title"], "project": i["path"]}

    def build(self, db, slots):
        i = issue_by_title(db, slots["project"], slots["title"])
        check = page_has(issue_url(i), [slots["comment"]], locator="#comments ul.notes")
        return {
            "eval": state_check(check),
            "difficulty": 7,
            "extra": {"closed": i["state"] == "closed"},
        }

    def oracle(self, task, page):
        d = task.instantiation_dict
        yield from find_issue(page, d["project"], d["title"], closed=task.extra["closed"])
        yield from page.type(d["comment"], name="body")
        yield from page.click("Comment", tag="button", exact=True)
        yield page.exit("Done")

    def wrong_ending(self, task, page):  # typed, never posted
        d = task.instantiation_dict
        yield from find_issue(page, d["project"], d["title"], closed=task.extra["closed"])
        yield from page.type(d["comment"], name="body")
        yield page.exit("Done")


class AssignIssue(CodeFamily):
    name = "code.assign_issue"
    template = 'Assign the issue "{title}" in {project} to {user}.'
    template_id = 448
    kind = "state"
    held_out = ("title",)

    def sample(self, db, rng, split):
        rows = [i for p in managed(db, "Reporter") if len(members_of(db, p["id"])) >= 3
                for i in issues_of(db, p["id"], "opened")]  # fmt: skip
        i = pick(rng, rows, split, key=lambda i: i["title"])
        names = [
            m["name"] for m in members_of(db, i["project_id"]) if m["username"] != i["assignee"]
        ]
        return {"title": i["title"], "project": i["path"], "user": rng.choice(names)}

    def build(self, db, slots):
        i = issue_by_title(db, slots["project"], slots["title"])
        names = [m["name"] for m in members_of(db, i["project_id"])]
        if slots["user"] not in names or slots["user"] == i["assignee_name"]:
            raise InfeasibleSlots(f"cannot assign {slots['title']!r} to {slots['user']}")
        wrong = next(n for n in names if n not in (slots["user"], i["assignee_name"]))
        check = page_has(issue_url(i), [], locator="#issue-assignee", exact=slots["user"])
        return {"eval": state_check(check), "difficulty": 8, "extra": {"wrong_user": wrong}}

    def assign(self, page, task, user: str):
        d = task.instantiation_dict
        yield from find_issue(page, d["project"], d["title"])
        yield from page.click("Edit issue", tag="a", exact=True)
        yield from page.select(user, name="assignee")
        yield from page.click("Save changes", tag="button", exact=True)
        yield page.exit("Done")

    def oracle(self, task, page):
        yield from self.assign(page, task, task.instantiation_dict["user"])

    def wrong_ending(self, task, page):
        yield from self.assign(page, task, task.extra["wrong_user"])


class CommentOnMergeRequest(CodeFamily):
    name = "code.comment_on_mr"
    template = 'Comment "{comment}" on the merge request "{title}" in {project}.'
    template_id = 450
    kind = "state"
    held_out = ("title",)

    def rows(self, db) -> list:
        visible = {p["id"]: p["path"] for p in projects(db)}
        rows = (
            code_db(db)
            .execute("SELECT * FROM merge_requests WHERE state = 'opened' ORDER BY id")
            .fetchall()
        )
        return [
            (m["title"], visible[m["project_id"]], m["iid"])
            for m in rows
            if m["project_id"] in visible
        ]

    def sample(self, db, rng, split):
        title, path, _iid = pick(rng, self.rows(db), split, key=lambda r: r[0])
        return {"comment": rng.choice(NEW_COMMENTS), "title": title, "project": path}

    def build(self, db, slots):
        hit = next(
            (r for r in self.rows(db) if r[0] == slots["title"] and r[1] == slots["project"]), None
        )
        if hit is None:
            raise InfeasibleSlots(f"no open merge request {slots['title']!r}")
        url = f"__CODE__/{hit[1]}/-/merge_requests/{hit[2]}"
        return {
            "eval": state_check(page_has(url, [slots["comment"]], locator="#comments ul.notes")),
            "difficulty": 6,
        }

    def oracle(self, task, page):
        d = task.instantiation_dict
        yield from project_tab(page, d["project"], "Merge requests")
        yield from page.click(d["title"], tag="a", exact=True)
        yield from page.type(d["comment"], name="body")
        yield from page.click("Comment", tag="button", exact=True)
        yield page.exit("Done")

    def wrong_ending(self, task, page):  # typed, never posted
        d = task.instantiation_dict
        yield from project_tab(page, d["project"], "Merge requests")
        yield from page.click(d["title"], tag="a", exact=True)
        yield from page.type(d["comment"], name="body")
        yield page.exit("Done")

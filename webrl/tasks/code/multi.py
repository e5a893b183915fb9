"""Code-site task families. Multi-requirement tasks: several changes, all checked."""

from __future__ import annotations

from webrl.sites.code.content import ROLES
from webrl.tasks.code.base import (
    ME,
    NEW_DESCRIPTIONS,
    NEW_ISSUE_TITLES,
    NEW_PROJECT_DESCRIPTIONS,
    CodeFamily,
    contributors,
    issues_of,
    managed,
    members_of,
    open_project,
    project_row,
    project_tab,
    projects,
    users,
)
from webrl.tasks.code.changes import fill_issue, issue_url, new_issue_checks
from webrl.tasks.code.project_changes import member_check
from webrl.tasks.family import InfeasibleSlots, page_has, pick, state_check


def labelled_open(db, project_id: int, label: str) -> list:
    return [
        i for i in issues_of(db, project_id, "opened") if label in (i["labels"] or "").split(", ")
    ]


class CloseLabelledIssues(CodeFamily):
    name = "code.close_labelled_issues"
    template = "Close every open issue labelled {label} in {project}."
    template_id = 460
    kind = "multi"

    def candidates(self, db) -> list[tuple[str, str]]:
        out = []
        for p in managed(db, "Reporter"):
            labels = {
                lab
                for i in issues_of(db, p["id"], "opened")
                for lab in (i["labels"] or "").split(", ")
                if lab
            }
            out += [
                (p["path"], lab)
                for lab in sorted(labels)
                if 2 <= len(labelled_open(db, p["id"], lab)) <= 3
            ]
        return out

    def sample(self, db, rng, split):
        path, label = pick(rng, self.candidates(db), split, key=lambda c: c[0])
        return {"label": label, "project": path}

    def build(self, db, slots):
        p = project_row(db, slots["project"])
        targets = labelled_open(db, p["id"], slots["label"])
        if (slots["project"], slots["label"]) not in self.candidates(db):
            raise InfeasibleSlots(
                f"no 2-3 open {slots['label']} issues the user may close in {p['path']}"
            )
        checks = [
            page_has(issue_url(i), [], locator="#issue-state", exact="Closed") for i in targets
        ]
        return {"eval": state_check(*checks), "difficulty": 2 + 5 * len(targets),
                "extra": {"titles": [i["title"] for i in targets]}}  # fmt: skip

    def close_all(self, page, task, titles: list[str]):
        d = task.instantiation_dict
        for title in titles:
            yield from project_tab(page, d["project"], "Issues")
            yield from page.select(d["label"], name="label")
            yield from page.click("Filter", tag="button", exact=True)
            yield from page.click(title, tag="a", exact=True)
            yield from page.click("Close issue", tag="button", exact=True)
        yield page.exit("Done")

    def oracle(self, task, page):
        yield from self.close_all(page, task, task.extra["titles"])

    def wrong_ending(self, task, page):  # stops one issue short
        yield from self.close_all(page, task, task.extra["titles"][:-1])


class IssueForTopContributor(CodeFamily):
    name = "code.issue_for_top_contributor"
    template = ('Create an issue in {project} titled "{title}" with the description "{description}", '
                "and assign it to the person who has made the most commits to {project}.")  # fmt: skip
    template_id = 461
    kind = "multi"
    held_out = ("title",)

    def ok(self, db) -> list:
        return [p for p in projects(db) if len(c := contributors(db, p["id"])) > 1 and c[0][2] > c[1][2]
                and c[0][0] in {m["username"] for m in members_of(db, p["id"])}]  # fmt: skip

    def sample(self, db, rng, split):
        return {"project": rng.choice(self.ok(db))["path"], "title": pick(rng, NEW_ISSUE_TITLES, split, key=lambda t: t),
                "description": rng.choice(NEW_DESCRIPTIONS)}  # fmt: skip

    def build(self, db, slots):
        p = project_row(db, slots["project"])
        if p["id"] not in {x["id"] for x in self.ok(db)}:
            raise InfeasibleSlots(f"{p['path']} has no unique top contributor")
        top = contributors(db, p["id"])
        checks = new_issue_checks(
            p["path"], slots["title"], slots["description"], assignee=top[0][1]
        )
        return {"eval": state_check(*checks), "difficulty": 10,
                "extra": {"top": top[0][1], "runner_up": top[1][1]}}  # fmt: skip

    def create(self, page, task, assignee: str):
        d = task.instantiation_dict
        yield from project_tab(page, d["project"], "Contributors")
        yield from page.click("Issues", tag="a", exact=True)
        yield from page.click("New issue", tag="a", exact=True)
        yield from fill_issue(page, d["title"], d["description"], assignee=assignee)
        yield page.exit("Done")

    def oracle(self, task, page):
        yield from self.create(page, task, task.extra["top"])

    def wrong_ending(self, task, page):
        yield from self.create(page, task, task.extra["runner_up"])


class AddTwoMembers(CodeFamily):
    name = "code.add_two_members"
    template = "Add the users {user} and {user2} to {project}, both with the role {role}."
    template_id = 462
    kind = "multi"
    held_out = ("user",)

    def sample(self, db, rng, split):
        p = rng.choice(managed(db, "Maintainer"))
        inside = {m["username"] for m in members_of(db, p["id"])}
        outside = [u["username"] for u in users(db) if u["username"] not in inside]
        first = pick(rng, outside, split, key=lambda u: u)
        second = rng.choice([u for u in outside if u != first])
        return {"user": first, "user2": second, "project": p["path"], "role": rng.choice(ROLES[:4])}

    def build(self, db, slots):
        p = project_row(db, slots["project"])
        inside = {m["username"] for m in members_of(db, p["id"])}
        if {slots["user"], slots["user2"]} & inside or slots["user"] == slots["user2"]:
            raise InfeasibleSlots("a user is already a member")
        checks = [
            member_check(p["path"], u, slots["role"]) for u in (slots["user"], slots["user2"])
        ]
        return {"eval": state_check(*checks), "difficulty": 10}

    def add(self, page, task, names: list[str]):
        d = task.instantiation_dict
        yield from project_tab(page, d["project"], "Members")
        for username in names:
            yield from page.type(username, name="username")
            yield from page.select(d["role"], name="access_level")
            yield from page.click("Add member", tag="button", exact=True)
        yield page.exit("Done")

    def oracle(self, task, page):
        yield from self.add(
            page, task, [task.instantiation_dict["user"], task.instantiation_dict["user2"]]
        )

    def wrong_ending(self, task, page):  # only the first user
        yield from self.add(page, task, [task.instantiation_dict["user"]])


class ForkAndDescribe(CodeFamily):
    name = "code.fork_and_describe"
    template = 'Fork {project} into your namespace, then change the description of your fork to "{description}".'
    template_id = 463
    kind = "multi"

    def forkable(self, db) -> list:
        mine = {p["name"] for p in projects(db) if p["namespace"] == ME}
        return [p for p in projects(db) if p["namespace"] != ME and p["name"] not in mine]

    def sample(self, db, rng, split):
        p = pick(rng, self.forkable(db), split, key=lambda p: p["path"])
        return {"project": p["path"], "description": rng.choice(NEW_PROJECT_DESCRIPTIONS)}

    def build(self, db, slots):
        p = project_row(db, slots["project"])
        if p["id"] not in {x["id"] for x in self.forkable(db)}:
            raise InfeasibleSlots(f"{p['path']} cannot be forked")
        fork = f"__CODE__/{ME}/{p['name']}"
        spec = state_check(
            page_has(fork, [p["path"]], locator="#forked-from"),
            page_has(fork, [], locator="#project-description", exact=slots["description"]),
            page_has(
                f"__CODE__/{p['path']}", [], locator="#project-description", exact=p["description"]
            ),
        )
        return {"eval": spec, "difficulty": 8}

    def oracle(self, task, page):
        d = task.instantiation_dict
        yield from open_project(page, d["project"])
        yield from page.click("Fork", tag="button", exact=True)
        yield from page.click("Settings", tag="a", exact=True)
        yield from page.type(d["description"], name="description")
        yield from page.click("Save changes", tag="button", exact=True)
        yield page.exit("Done")

    def wrong_ending(self, task, page):  # forks, but never edits the fork
        yield from open_project(page, task.instantiation_dict["project"])
        yield from page.click("Fork", tag="button", exact=True)
        yield page.exit("Done")

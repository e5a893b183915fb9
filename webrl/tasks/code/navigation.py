"""Code-site task families. Navigation: the episode must end on the right page (url_match)."""

from __future__ import annotations

from urllib.parse import quote_plus

from webrl.tasks.code.base import (
    CodeFamily,
    code_db,
    issues_of,
    labels_of,
    members_of,
    project_row,
    project_tab,
    projects,
)
from webrl.tasks.family import InfeasibleSlots, pick, url_is


class ClosedIssuesNav(CodeFamily):
    name = "code.closed_issues"
    template = "Show me the closed issues of {project}."
    template_id = 420
    kind = "nav"

    def sample(self, db, rng, split):
        ok = [p for p in projects(db) if issues_of(db, p["id"], "closed")]
        return {"project": pick(rng, ok, split, key=lambda p: p["path"])["path"]}

    def build(self, db, slots):
        path = project_row(db, slots["project"])["path"]
        return {"eval": url_is(f"__CODE__/{path}/-/issues?state=closed"), "difficulty": 4}

    def oracle(self, task, page):
        yield from project_tab(page, task.instantiation_dict["project"], "Issues")
        yield from page.click("Closed", tag="a", exact=True)
        yield page.exit("Done")

    def wrong_ending(self, task, page):  # stops on the open issues
        yield from project_tab(page, task.instantiation_dict["project"], "Issues")
        yield page.exit("Done")


class CommitsNav(CodeFamily):
    name = "code.commit_history"
    template = "Show me the commit history of {project}."
    template_id = 421
    kind = "nav"

    def sample(self, db, rng, split):
        return {"project": pick(rng, projects(db), split, key=lambda p: p["path"])["path"]}

    def build(self, db, slots):
        path = project_row(db, slots["project"])["path"]
        return {"eval": url_is(f"__CODE__/{path}/-/commits"), "difficulty": 4}

    def oracle(self, task, page):
        yield from project_tab(page, task.instantiation_dict["project"], "Commits")
        yield page.exit("Done")

    def wrong_ending(self, task, page):  # the contributors page instead
        yield from project_tab(page, task.instantiation_dict["project"], "Contributors")
        yield page.exit("Done")


class ProfileNav(CodeFamily):
    name = "code.user_profile"
    template = "Open the profile page of {user}."
    template_id = 422
    kind = "nav"
    held_out = ("user",)

    def sample(self, db, rng, split):
        rows = (
            code_db(db)
            .execute("SELECT name FROM users WHERE username != 'byte' ORDER BY id")
            .fetchall()
        )
        return {"user": pick(rng, rows, split, key=lambda u: u["name"])["name"]}

    def build(self, db, slots):
        row = (
            code_db(db)
            .execute("SELECT username FROM users WHERE name = ?", (slots["user"],))
            .fetchone()
        )
        if row is None:
            raise InfeasibleSlots(f"no user named {slots['user']}")
        return {"eval": url_is(f"__CODE__/u/{row['username']}"), "difficulty": 4}

    def oracle(self, task, page):
        yield from page.click("Users", tag="a", exact=True)
        yield from page.search(task.instantiation_dict["user"], name="q")
        yield from page.click(task.instantiation_dict["user"], tag="a", exact=True)
        yield page.exit("Done")

    def wrong_ending(self, task, page):  # stops on the search results
        yield from page.click("Users", tag="a", exact=True)
        yield from page.search(task.instantiation_dict["user"], name="q")
        yield page.exit("Done")


class LabelledIssuesNav(CodeFamily):
    name = "code.labelled_issues"
    template = "Show the open issues of {project} that have the label {label}."
    template_id = 423
    kind = "nav"

    def sample(self, db, rng, split):
        p = pick(rng, projects(db), split, key=lambda p: p["path"])
        return {"project": p["path"], "label": rng.choice(labels_of(db, p["id"]))}

    def build(self, db, slots):
        p = project_row(db, slots["project"])
        labels = labels_of(db, p["id"])
        if slots["label"] not in labels:
            raise InfeasibleSlots(f"{p['path']} has no label {slots['label']}")
        other = next(lab for lab in labels if lab != slots["label"])
        return {"eval": url_is(f"__CODE__/{p['path']}/-/issues?state=opened&label={quote_plus(slots['label'])}"),
                "difficulty": 5, "extra": {"wrong_label": other}}  # fmt: skip

    def oracle(self, task, page):
        yield from project_tab(page, task.instantiation_dict["project"], "Issues")
        yield from page.select(task.instantiation_dict["label"], name="label")
        yield from page.click("Filter", tag="button", exact=True)
        yield page.exit("Done")

    def wrong_ending(self, task, page):
        yield from project_tab(page, task.instantiation_dict["project"], "Issues")
        yield from page.select(task.extra["wrong_label"], name="label")
        yield from page.click("Filter", tag="button", exact=True)
        yield page.exit("Done")


class AssignedIssuesNav(CodeFamily):
    name = "code.assigned_issues"
    template = "List the open issues of {project} that are assigned to {user}."
    template_id = 424
    kind = "nav"
    held_out = ("user",)

    def sample(self, db, rng, split):
        rows = sorted({(i["assignee_name"], i["path"]) for p in projects(db) for i in issues_of(db, p["id"], "opened")
                       if i["assignee"]})  # fmt: skip
        user, path = pick(rng, rows, split, key=lambda r: r[0])
        return {"project": path, "user": user}

    def build(self, db, slots):
        p = project_row(db, slots["project"])
        m = next((m for m in members_of(db, p["id"]) if m["name"] == slots["user"]), None)
        if m is None:
            raise InfeasibleSlots(f"{slots['user']} is not a member of {p['path']}")
        other = next(x["name"] for x in members_of(db, p["id"]) if x["name"] != m["name"])
        return {"eval": url_is(f"__CODE__/{p['path']}/-/issues?state=opened&assignee={m['username']}"),
                "difficulty": 5, "extra": {"wrong_user": other}}  # fmt: skip

    def oracle(self, task, page):
        yield from project_tab(page, task.instantiation_dict["project"], "Issues")
        yield from page.select(task.instantiation_dict["user"], name="assignee")
        yield from page.click("Filter", tag="button", exact=True)
        yield page.exit("Done")

    def wrong_ending(self, task, page):
        yield from project_tab(page, task.instantiation_dict["project"], "Issues")
        yield from page.select(task.extra["wrong_user"], name="assignee")
        yield from page.click("Filter", tag="button", exact=True)
        yield page.exit("Done")


class FileNav(CodeFamily):
    name = "code.open_file"
    template = "Open the file {file} in the repository of {project}."
    template_id = 425
    kind = "nav"

    def sample(self, db, rng, split):
        p = pick(rng, projects(db), split, key=lambda p: p["path"])
        files = [r["path"] for r in code_db(db).execute("SELECT path FROM files WHERE project_id = ? AND path LIKE '%/%'"
                                                        " ORDER BY path", (p["id"],))]  # fmt: skip
        return {"project": p["path"], "file": rng.choice(files)}

    def build(self, db, slots):
        p = project_row(db, slots["project"])
        row = (
            code_db(db)
            .execute(
                "SELECT 1 FROM files WHERE project_id = ? AND path = ?", (p["id"], slots["file"])
            )
            .fetchone()
        )
        if row is None:
            raise InfeasibleSlots(f"no file {slots['file']} in {p['path']}")
        depth = slots["file"].count("/")
        return {
            "eval": url_is(f"__CODE__/{p['path']}/-/blob/{slots['file']}"),
            "difficulty": 4 + depth,
        }

    def oracle(self, task, page):
        parts = task.instantiation_dict["file"].split("/")
        yield from project_tab(page, task.instantiation_dict["project"], "Files")
        for d in parts[:-1]:
            yield from page.click(d + "/", tag="a", exact=True)
        yield from page.click(parts[-1], tag="a", exact=True)
        yield page.exit("Done")

    def wrong_ending(self, task, page):  # stops in the file's folder
        parts = task.instantiation_dict["file"].split("/")
        yield from project_tab(page, task.instantiation_dict["project"], "Files")
        for d in parts[:-1]:
            yield from page.click(d + "/", tag="a", exact=True)
        yield page.exit("Done")

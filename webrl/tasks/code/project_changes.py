"""Code-site task families. Project-level state changes: members, stars, the
description and forks, checked on pages of the episode's own state (program_html)."""

from __future__ import annotations

from webrl.sites.code.content import ROLES
from webrl.tasks.code.base import (
    ME,
    NEW_PROJECT_DESCRIPTIONS,
    CodeFamily,
    code_db,
    find_member,
    managed,
    members_of,
    my_id,
    open_project,
    project_row,
    project_tab,
    projects,
    users,
)
from webrl.tasks.family import InfeasibleSlots, page_has, pick, state_check


def member_check(path: str, username: str, role: str) -> dict:
    return page_has(f"__CODE__/{path}/-/project_members?search={username}", [],
                    locator=f"#member-{username} .role", exact=role)  # fmt: skip


class AddMember(CodeFamily):
    name = "code.add_member"
    template = "Add the user {user} to {project} as a {role}."
    template_id = 444
    kind = "state"
    held_out = ("user",)

    def sample(self, db, rng, split):
        p = rng.choice(managed(db, "Maintainer"))
        inside = {m["username"] for m in members_of(db, p["id"])}
        outside = [u["username"] for u in users(db) if u["username"] not in inside]
        return {"user": pick(rng, outside, split, key=lambda u: u), "project": p["path"],
                "role": rng.choice(ROLES[:4])}  # fmt: skip

    def build(self, db, slots):
        p = project_row(db, slots["project"])
        if slots["user"] in {m["username"] for m in members_of(db, p["id"])}:
            raise InfeasibleSlots(f"{slots['user']} is already a member")
        wrong = ROLES[(ROLES.index(slots["role"]) + 1) % 4]
        return {"eval": state_check(member_check(p["path"], slots["user"], slots["role"])), "difficulty": 7,
                "extra": {"wrong_role": wrong}}  # fmt: skip

    def add(self, page, task, role: str):
        d = task.instantiation_dict
        yield from project_tab(page, d["project"], "Members")
        yield from page.type(d["user"], name="username")
        yield from page.select(role, name="access_level")
        yield from page.click("Add member", tag="button", exact=True)
        yield page.exit("Done")

    def oracle(self, task, page):
        yield from self.add(page, task, task.instantiation_dict["role"])

    def wrong_ending(self, task, page):
        yield from self.add(page, task, task.extra["wrong_role"])


class ChangeMemberRole(CodeFamily):
    name = "code.change_member_role"
    template = "Change the role of {user} in {project} to {role}."
    template_id = 445
    kind = "state"
    held_out = ("user",)

    def sample(self, db, rng, split):
        rows = [(m["username"], p["path"], m["role"]) for p in managed(db, "Maintainer")
                for m in members_of(db, p["id"]) if m["role"] != "Owner" and m["username"] != ME]  # fmt: skip
        user, path, role = pick(rng, rows, split, key=lambda r: r[0])
        return {
            "user": user,
            "project": path,
            "role": rng.choice([r for r in ROLES[:4] if r != role]),
        }

    def build(self, db, slots):
        p = project_row(db, slots["project"])
        now = next(
            (m["role"] for m in members_of(db, p["id"]) if m["username"] == slots["user"]), None
        )
        if now in (None, "Owner", slots["role"]):
            raise InfeasibleSlots(f"cannot change {slots['user']} to {slots['role']}")
        return {"eval": state_check(member_check(p["path"], slots["user"], slots["role"])), "difficulty": 7,
                "extra": {"wrong_role": next(r for r in ROLES[:4] if r not in (now, slots["role"]))}}  # fmt: skip

    def change(self, page, task, role: str):
        d = task.instantiation_dict
        yield from find_member(page, d["project"], d["user"])
        yield from page.select(role, name="role")
        yield from page.click("Change role", tag="button", exact=True)
        yield page.exit("Done")

    def oracle(self, task, page):
        yield from self.change(page, task, task.instantiation_dict["role"])

    def wrong_ending(self, task, page):
        yield from self.change(page, task, task.extra["wrong_role"])


class StarProject(CodeFamily):
    name = "code.star_project"
    template = "Star the project {project}."
    template_id = 446
    kind = "state"

    def unstarred(self, db) -> list:
        mine = {
            r[0]
            for r in code_db(db).execute(
                "SELECT project_id FROM stars WHERE user_id = ?", (my_id(db),)
            )
        }
        return [p for p in projects(db) if p["id"] not in mine]

    def sample(self, db, rng, split):
        return {"project": pick(rng, self.unstarred(db), split, key=lambda p: p["path"])["path"]}

    def build(self, db, slots):
        p = project_row(db, slots["project"])
        if p["id"] not in {x["id"] for x in self.unstarred(db)}:
            raise InfeasibleSlots(f"{p['path']} is already starred")
        check = page_has(
            f"__CODE__/{p['path']}", ["You starred this project"], locator="#star-state"
        )
        return {"eval": state_check(check), "difficulty": 4}

    def oracle(self, task, page):
        yield from open_project(page, task.instantiation_dict["project"])
        yield from page.click("Star", tag="button", exact=True)
        yield page.exit("Done")

    def wrong_ending(self, task, page):  # forks it instead
        yield from open_project(page, task.instantiation_dict["project"])
        yield from page.click("Fork", tag="button", exact=True)
        yield page.exit("Done")


class ChangeDescription(CodeFamily):
    name = "code.change_description"
    template = 'Change the description of {project} to "{description}".'
    template_id = 447
    kind = "state"
    held_out = ("description",)

    def sample(self, db, rng, split):
        return {"project": rng.choice(managed(db, "Maintainer"))["path"],
                "description": pick(rng, NEW_PROJECT_DESCRIPTIONS, split, key=lambda d: d)}  # fmt: skip

    def build(self, db, slots):
        p = project_row(db, slots["project"])
        check = page_has(
            f"__CODE__/{p['path']}", [], locator="#project-description", exact=slots["description"]
        )
        return {"eval": state_check(check), "difficulty": 6, "extra": {"old": p["description"]}}

    def edit(self, page, task, text: str):
        d = task.instantiation_dict
        yield from project_tab(page, d["project"], "Settings")
        yield from page.type(text, name="description")
        yield from page.click("Save changes", tag="button", exact=True)
        yield page.exit("Done")

    def oracle(self, task, page):
        yield from self.edit(page, task, task.instantiation_dict["description"])

    def wrong_ending(self, task, page):  # appends instead of replacing
        yield from self.edit(
            page, task, f"{task.extra['old']} {task.instantiation_dict['description']}"
        )


class ForkProject(CodeFamily):
    name = "code.fork_project"
    template = "Fork {project} into your own namespace."
    template_id = 449
    kind = "state"

    def forkable(self, db) -> list:
        mine = {p["name"] for p in projects(db) if p["namespace"] == ME}
        return [p for p in projects(db) if p["namespace"] != ME and p["name"] not in mine]

    def sample(self, db, rng, split):
        return {"project": pick(rng, self.forkable(db), split, key=lambda p: p["path"])["path"]}

    def build(self, db, slots):
        p = project_row(db, slots["project"])
        if p["id"] not in {x["id"] for x in self.forkable(db)}:
            raise InfeasibleSlots(f"{p['path']} cannot be forked")
        check = page_has(f"__CODE__/{ME}/{p['name']}", [p["path"]], locator="#forked-from")
        return {"eval": state_check(check), "difficulty": 4}

    def oracle(self, task, page):
        yield from open_project(page, task.instantiation_dict["project"])
        yield from page.click("Fork", tag="button", exact=True)
        yield page.exit("Done")

    def wrong_ending(self, task, page):  # stars it instead
        yield from open_project(page, task.instantiation_dict["project"])
        if page.has("Star", tag="button", exact=True):
            yield from page.click("Star", tag="button", exact=True)
        yield page.exit("Done")

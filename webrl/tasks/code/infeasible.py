"""Code-site task families. Infeasible tasks, phrased like feasible ones: the
thing asked about does not exist, or the site cannot show it; the right
answer is "N/A"."""

from __future__ import annotations

from webrl.sites.code import content as C
from webrl.sites.code.data import ascii_slug
from webrl.tasks.code.base import (
    MISSING_PROJECT_NAMES,
    NA,
    CodeFamily,
    code_db,
    commits_of,
    expect,
    find_member,
    issues_of,
    members_of,
    next_page_until,
    open_project,
    pages_to,
    project_row,
    project_tab,
    projects,
)
from webrl.tasks.family import InfeasibleSlots, answer_fuzzy, pick


def na_spec(difficulty: int, wrong: str) -> dict:
    return {
        "eval": answer_fuzzy(NA),
        "difficulty": difficulty,
        "extra": {"answer": NA, "wrong": wrong},
    }


class MissingProjectStars(CodeFamily):
    name = "code.missing_project_stars"
    template = "How many stars does {project} have?"
    template_id = 480
    kind = "infeasible"

    def sample(self, db, rng, split):
        paths = [f"{g}/{n}" for g, _ in C.GROUPS for n in MISSING_PROJECT_NAMES]
        return {"project": pick(rng, paths, split, key=lambda p: p)}

    def build(self, db, slots):
        name = slots["project"].split("/", 1)[1]
        if (
            code_db(db)
            .execute("SELECT 1 FROM projects WHERE name LIKE ?", (f"%{name}%",))
            .fetchone()
        ):
            raise InfeasibleSlots(f"a project is named like {name}")
        return na_spec(3, "0")

    def oracle(self, task, page):
        yield from page.click("Explore", tag="a", exact=True)
        yield from page.search(task.instantiation_dict["project"].split("/", 1)[1], name="q")
        expect("0 projects" in page.text, "no project found")
        yield page.exit(NA)

    def wrong_ending(self, task, page):
        yield from page.click("Explore", tag="a", exact=True)
        yield page.exit(task.extra["wrong"])


class MissingIssueAssignee(CodeFamily):
    name = "code.missing_issue_assignee"
    template = 'Who is assigned to the issue "{title}" in {project}?'
    template_id = 481
    kind = "infeasible"
    held_out = ("title",)

    def sample(self, db, rng, split):
        p = rng.choice(projects(db))
        foreign = [m for lang, mods in C.MODULES.items() if lang != p["language"] for m in mods]
        titles = sorted({t.format(m=m) for _lab, t in C.ISSUE_TEMPLATES for m in foreign})
        return {"title": pick(rng, titles, split, key=lambda t: t), "project": p["path"]}

    def build(self, db, slots):
        p = project_row(db, slots["project"])
        low = slots["title"].lower()
        if any(
            low in i["title"].lower() or i["title"].lower() in low for i in issues_of(db, p["id"])
        ):
            raise InfeasibleSlots(f"an issue like {slots['title']!r} exists in {p['path']}")
        return na_spec(5, members_of(db, p["id"])[0]["name"])

    def oracle(self, task, page):
        d = task.instantiation_dict
        yield from project_tab(page, d["project"], "Issues")
        yield from page.click("All", tag="a", exact=True)
        yield from page.search(d["title"], name="search")
        expect("0 issues" in page.text, "no issue found")
        yield page.exit(NA)

    def wrong_ending(self, task, page):  # names the project's owner
        yield from project_tab(page, task.instantiation_dict["project"], "Issues")
        yield page.exit(task.extra["wrong"])


class MissingCommit(CodeFamily):
    name = "code.missing_commit"
    template = "What is the message of the commit that {user} made on {date} in {project}?"
    template_id = 482
    kind = "infeasible"
    held_out = ("user",)

    def candidates(self, db) -> list[dict]:
        out = []
        for p in projects(db):
            commits = commits_of(db, p["id"])
            writers = [m["name"] for m in members_of(db, p["id"])]
            for c in commits[:: max(1, len(commits) // 4)]:
                day = c["created"][:10]
                busy = {x["name"] for x in commits if x["created"][:10] == day}
                out += [
                    {"user": n, "date": day, "project": p["path"]} for n in writers if n not in busy
                ]
        return out

    def sample(self, db, rng, split):
        return pick(rng, self.candidates(db), split, key=lambda c: c["user"])

    def build(self, db, slots):
        commits = commits_of(db, project_row(db, slots["project"])["id"])
        day = [c for c in commits if c["created"][:10] == slots["date"]]
        if not day or any(c["name"] == slots["user"] for c in day):
            raise InfeasibleSlots("the commit exists, or nobody committed that day")
        return na_spec(4 + pages_to(len(commits) - 1), day[0]["message"])

    def oracle(self, task, page):
        yield from project_tab(page, task.instantiation_dict["project"], "Commits")
        yield from next_page_until(page, lambda pg: not pg.has("Next page", tag="a", exact=True))
        yield page.exit(NA)

    def wrong_ending(self, task, page):  # the message of someone else's commit that day
        yield from project_tab(page, task.instantiation_dict["project"], "Commits")
        yield page.exit(task.extra["wrong"])


class PipelineStatus(CodeFamily):
    name = "code.pipeline_status"
    template = "What is the status of the latest CI pipeline of {project}?"
    template_id = 483
    kind = "infeasible"

    def sample(self, db, rng, split):
        return {"project": pick(rng, projects(db), split, key=lambda p: p["path"])["path"]}

    def build(self, db, slots):
        project_row(db, slots["project"])
        return na_spec(3, "passed")

    def oracle(self, task, page):
        yield from open_project(page, task.instantiation_dict["project"])
        expect(
            not page.has("Pipelines", tag="a") and not page.has("CI/CD", tag="a"),
            "no pipelines page",
        )
        yield page.exit(NA)

    def wrong_ending(self, task, page):
        yield from open_project(page, task.instantiation_dict["project"])
        yield page.exit(task.extra["wrong"])


class MissingUserRole(CodeFamily):
    name = "code.missing_user_role"
    template = "What role does {user} have in {project}?"
    template_id = 484
    kind = "infeasible"
    held_out = ("user",)

    def sample(self, db, rng, split):
        existing = {r[0] for r in code_db(db).execute("SELECT username FROM users")}
        names = [
            f"{ascii_slug(f)}_{ascii_slug(last)}"
            for f in C.FIRST_NAMES[::3]
            for last in C.LAST_NAMES[::3]
        ]
        user = pick(rng, [n for n in names if n not in existing], split, key=lambda n: n)
        return {"user": user, "project": rng.choice(projects(db))["path"]}

    def build(self, db, slots):
        if (
            code_db(db)
            .execute("SELECT 1 FROM users WHERE username LIKE ?", (f"%{slots['user']}%",))
            .fetchone()
        ):
            raise InfeasibleSlots(f"user {slots['user']} exists")
        project_row(db, slots["project"])
        return na_spec(5, "Guest")

    def oracle(self, task, page):
        d = task.instantiation_dict
        yield from find_member(page, d["project"], d["user"])
        expect("0 members" in page.text, "no such member")
        yield page.exit(NA)

    def wrong_ending(self, task, page):
        yield from project_tab(page, task.instantiation_dict["project"], "Members")
        yield page.exit(task.extra["wrong"])

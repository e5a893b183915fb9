"""Forum -> code: turn a forum discussion into an issue of a project."""

from __future__ import annotations

from webrl.tasks.code.base import project_tab, projects
from webrl.tasks.code.changes import fill_issue, new_issue_checks
from webrl.tasks.cross.base import CrossFamily, switch_site
from webrl.tasks.family import pick, state_check
from webrl.tasks.forum.base import forum_posts, forums, open_forum

CODE_TITLE = "GitLab"


class TopPostToIssue(CrossFamily):
    name = "cross.top_post_to_issue"
    sites = ("forum", "code")
    template = (
        "Create an issue in {project} titled exactly like the top post of all time in f/{forum}, "
        'with the description "Raised on Postmill f/{forum}".'
    )
    template_id = 604
    held_out = ("forum",)
    start_url = "__FORUM__/"

    def sample(self, db, rng, split):
        ok = [f for f in forums(db) if len({p["score"] for p in forum_posts(db, f["name"], "top")[:2]}) == 2]
        forum = pick(rng, ok, split, key=lambda f: f["name"])["name"]
        return {"forum": forum, "project": rng.choice(projects(db))["path"]}

    def build(self, db, slots):
        top = forum_posts(db, slots["forum"], "top")
        newest = forum_posts(db, slots["forum"], "new")
        wrong = newest[0] if newest[0]["id"] != top[0]["id"] else newest[1]
        description = f"Raised on Postmill f/{slots['forum']}"
        checks = new_issue_checks(slots["project"], top[0]["title"], description)
        return {"eval": state_check(*checks), "difficulty": 10,
                "extra": {"title": top[0]["title"], "wrong": wrong["title"], "description": description}}  # fmt: skip

    def _issue(self, task, page, title):
        yield from switch_site(page, CODE_TITLE)
        yield from project_tab(page, task.instantiation_dict["project"], "Issues")
        yield from page.click("New issue", tag="a", exact=True)
        yield from fill_issue(page, title, task.extra["description"])
        yield page.exit("Done")

    def oracle(self, task, page):
        yield from open_forum(page, task.instantiation_dict["forum"])
        yield from page.click("Top", tag="a", exact=True)
        page.find(task.extra["title"], tag="a", exact=True)
        yield from self._issue(task, page, task.extra["title"])

    def wrong_ending(self, task, page):  # the newest post instead of the top one
        yield from open_forum(page, task.instantiation_dict["forum"])
        yield from page.click("New", tag="a", exact=True)
        yield from self._issue(task, page, task.extra["wrong"])

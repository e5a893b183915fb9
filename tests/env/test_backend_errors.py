"""A browser failure voids the episode (info["backend_error"]), is retried once by the
runner, and is left out of success rates; no browser needed (a failing fake backend)."""

from __future__ import annotations

from support import notes_task

from webrl.agent.policies import Agent
from webrl.env.backend import BackendError
from webrl.env.http_backend import HttpBackend, HttpSession
from webrl.env.web_env import EnvConfig, WebEnv
from webrl.rollout.runner import run_eval
from webrl.rollout.summary import summarize
from webrl.tasks.schema import task_from_json


class FlakySession(HttpSession):
    def __init__(self, *args, fail_on: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.fail_on = fail_on

    def act(self, action, node):
        if self.fail_on == "act":
            raise BackendError("the page crashed")
        super().act(action, node)

    def goto(self, url):
        if self.fail_on == "goto":
            raise BackendError("page load timed out")
        super().goto(url)


class FlakyBackend(HttpBackend):
    """Fails the first `failures` sessions (at `where`), then works."""

    def __init__(self, world, base_url, failures: int, where: str):
        super().__init__(world, base_url)
        self.failures, self.where = failures, where

    def new_session(self):
        fail = self.failures > 0
        self.failures -= 1
        return FlakySession(self.world, self.base_url, fail_on=self.where if fail else "")


class ClickThenExit(Agent):
    def reset(self, task):
        self.n = 0

    def act(self, obs, info):
        self.n += 1
        return 'do(action="Click", element="1")' if self.n == 1 else 'exit(message="done")'


def test_backend_error_ends_the_episode_and_the_next_reset_recovers(notes_world):
    config = EnvConfig()
    env = WebEnv(config, world=notes_world, backend=FlakyBackend(notes_world, config.base_url, 1, "act"))
    env.reset(options={"task": notes_task()})
    obs, reward, term, trunc, info = env.step('do(action="Click", element="1")')
    assert info["backend_error"] == "the page crashed" and trunc and not term and reward == 0.0
    assert obs.startswith("[Backend error")
    obs, info = env.reset(options={"task": notes_task()})
    obs, *_, info = env.step('do(action="Click", element="1")')
    assert "backend_error" not in info and info["action_error"] is None


def test_runner_retries_once_and_summary_leaves_void_episodes_out(notes_world):
    task = task_from_json(notes_task(eval={"eval_types": ["string_match"],
                                           "reference_answers": {"exact_match": "done"}}))  # fmt: skip
    config = EnvConfig()
    for failures, where in ((1, "goto"), (1, "act")):  # one failure: the retry succeeds
        env = WebEnv(config, world=notes_world, backend=FlakyBackend(notes_world, config.base_url, failures, where))
        summary, records = run_eval([task], ClickThenExit, env, progress=False)
        assert records[0]["backend_error"] is None and summary["success_rate"] == 1.0, where
    env = WebEnv(config, world=notes_world, backend=FlakyBackend(notes_world, config.base_url, 2, "goto"))
    summary, records = run_eval([task], ClickThenExit, env, progress=False)
    assert records[0]["backend_error"] == "page load timed out" and records[0]["n_steps"] == 0
    good = {**records[0], "backend_error": None, "success": True, "task_id": 2}
    summary = summarize([records[0], good])
    assert summary["backend_errors"] == 1 and summary["episodes"] == 1 and summary["success_rate"] == 1.0

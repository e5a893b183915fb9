"""The BrowserGym bridge: our tasks inside BrowserGym, our agents on BrowserGym envs.

The action translation is checked without a browser; the rest runs BrowserGym
(both of its browsers on Debian's Chromium) against our site server: the
oracle, driven through the bridge, sees the `http` backend's observation text
at every step and gets the same reward as in our own env.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

from webrl.agent.policies import OracleAgent
from webrl.env.actions import Action
from webrl.env.chromium_engine import browser_pids, chromium_available, find_chromium
from webrl.env.http_backend import ActionError
from webrl.env.observation import parse_html
from webrl.env.web_env import EnvConfig, WebEnv
from webrl.sites.world import WorldApp
from webrl.tasks.splits import load_split

HAS_BROWSERGYM = importlib.util.find_spec("browsergym") is not None
needs_browsergym = pytest.mark.skipif(
    not (HAS_BROWSERGYM and chromium_available()),
    reason="needs browsergym-core, playwright and Chromium; `make test` installs them (extra [browser])",
)


def test_actions_translate_to_browsergym():
    from webrl.env.browsergym_bridge import agent_answer, to_browsergym

    select = parse_html('<select name=c><option value="r">Red</option><option>Dark green</option></select>')
    node = select.find(".//select")
    assert to_browsergym(Action("Click", 3), "a12") == 'click("a12")'
    assert to_browsergym(Action("Type", 3, 'say "hi"'), "7") == 'fill("7", "say \\"hi\\"")'
    assert to_browsergym(Action("Type", 3, "café 🎉"), "7") == 'fill("7", "café 🎉")'  # no surrogate escapes
    assert to_browsergym(Action("Search", 3, "mug"), "7") == "fill(\"7\", \"mug\")\npress(\"7\", 'Enter')"
    assert to_browsergym(Action("Select Dropdown Option", 3, "green"), "9", node) == 'select_option("9", "Dark green")'
    assert to_browsergym(Action("Press Enter"), None, focused_bid="5") == "press(\"5\", 'Enter')"
    assert to_browsergym(Action("Go Backward"), None) == "go_back()"
    assert to_browsergym(Action("exit", argument="42"), None) == 'send_msg_to_user("42")'
    with pytest.raises(ActionError, match="nothing is focused"):
        to_browsergym(Action("Press Enter"), None)
    with pytest.raises(ActionError, match="no single option"):
        to_browsergym(Action("Select Dropdown Option", 3, "blue"), "9", node)
    chat = [{"role": "assistant", "message": "Hi!"}, {"role": "user", "message": "goal"}]
    assert agent_answer(chat) is None
    assert agent_answer([*chat, {"role": "assistant", "message": "$12"}]) == "$12"


@pytest.fixture(scope="module")
def served():
    from webrl.env.browsergym_bridge import use_debian_chromium
    from webrl.sites.server import SiteServer

    world = WorldApp()
    server = SiteServer(world).start()
    use_debian_chromium()
    yield world, server.url
    server.stop()


def run_both(world, base_url: str, task) -> tuple[list[str], list[str], float, float]:
    """The oracle on our http env and through BrowserGym; (http obs, bridge obs, rewards)."""
    from webrl.env.browsergym_bridge import BrowserGymEnv, make_env, register_tasks

    [gid] = register_tasks([task], base_url)
    http = WebEnv(EnvConfig(base_url=base_url), world)
    bridge = BrowserGymEnv(make_env(gid))
    try:
        seen: list[list[str]] = [[], []]
        rewards = []
        for k, env in enumerate((http, bridge)):
            agent = OracleAgent()
            obs, info = env.reset(options={"task": task})
            agent.reset(task)
            seen[k].append(obs)
            while True:
                obs, reward, term, trunc, info = env.step(agent.act(obs, info))
                seen[k].append(obs)
                if term or trunc:
                    break
            rewards.append(reward)
    finally:
        http.close()
        bridge.close()
    return seen[0], seen[1], rewards[0], rewards[1]


@needs_browsergym
def test_oracle_through_browsergym_sees_and_scores_the_same(served):
    world, base_url = served
    test = load_split("test")
    by_site: dict[str, object] = {}
    for t in test:  # one answer task and one state-changing task
        key = "state" if t.eval.get("program_html") else "answer"
        by_site.setdefault(key, t)
    for task in by_site.values():
        http_obs, bridge_obs, r_http, r_bridge = run_both(world, base_url, task)
        assert bridge_obs == http_obs
        assert r_http == r_bridge == 1.0


@needs_browsergym
def test_both_browsergym_browsers_are_debian_chromium(served):
    from webrl.env.browsergym_bridge import make_env, register_tasks

    world, base_url = served
    task = load_split("test")[0]
    [gid] = register_tasks([task], base_url)
    env = make_env(gid)
    try:
        env.reset()
        exe = os.path.realpath(find_chromium())
        mains = [p for p in browser_pids() if "--type=" not in Path(f"/proc/{p}/cmdline").read_text()]
        assert len(mains) >= 2  # the page's browser and the chat's
        assert {os.path.realpath(f"/proc/{p}/exe") for p in mains} == {exe}
    finally:
        env.close()


@needs_browsergym
@pytest.mark.slow
def test_oracle_scores_match_on_30_tasks_across_sites(served, request):
    if "slow" not in (request.config.getoption("markexpr") or ""):
        pytest.skip("~10 s per task through BrowserGym; run it with `pytest -m slow tests/env/test_browsergym.py`")
    world, base_url = served
    test = load_split("test")
    per_site: dict[str, list] = {}
    for t in test:
        per_site.setdefault(t.site, []).append(t)
    sample = []
    while len(sample) < 30 and any(per_site.values()):
        for tasks in per_site.values():
            if tasks:
                sample.append(tasks.pop(0))
    mismatched = []
    for task in sample:
        http_obs, bridge_obs, r_http, r_bridge = run_both(world, base_url, task)
        if r_http != r_bridge or http_obs != bridge_obs:
            mismatched.append((task.task_id, task.family, r_http, r_bridge))
    print(f"browsergym bridge: {len(sample)} tasks, {len(mismatched)} differ: {mismatched}")
    assert not mismatched

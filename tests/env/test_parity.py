"""Observation parity: `chromium` shows the agent exactly what `http` shows.

The oracle of each task plays on the `http` backend; every action it takes is
replayed in lockstep on `chromium`, and after the reset and after every step
the observation text, the element list and the final reward must be equal.
The default run takes one task per (site, kind) of family; the slow sweep
(`pytest -m slow tests/env/test_parity.py -s`) takes every test-split task and
two fresh instances of every family.
"""

from __future__ import annotations

import contextlib
import difflib
import random

import pytest

from webrl.agent.policies import OracleAgent
from webrl.env.chromium_engine import chromium_available
from webrl.env.page_view import OracleError
from webrl.env.web_env import EnvConfig, WebEnv
from webrl.sites.world import WorldApp
from webrl.tasks.family import InfeasibleSlots, SeedDB
from webrl.tasks.registry import families
from webrl.tasks.splits import load_split

pytestmark = pytest.mark.skipif(
    not chromium_available(), reason="needs Chromium (apt-get install chromium) and playwright; `make test` installs both"
)


@pytest.fixture(scope="module")
def envs():
    from webrl.env.chromium_backend import ChromiumBackend

    world = WorldApp()
    backend = ChromiumBackend(world, base_url="http://127.0.0.1:0")
    config = EnvConfig(base_url=backend.base_url)
    http, chromium = WebEnv(config, world), WebEnv(config, world, backend=backend)
    yield http, chromium
    http.close()
    chromium.close()


def diff(a: str, b: str) -> str:
    return "\n".join(list(difflib.unified_diff(a.splitlines(), b.splitlines(), "http", "chromium", lineterm=""))[:30])


def compare_episode(http: WebEnv, chromium: WebEnv, task) -> tuple[int, list[str]]:
    """Play the oracle on http, replay on chromium; (pages compared, mismatch reports)."""
    agent = OracleAgent()
    obs, info = http.reset(options={"task": task})
    cobs, cinfo = chromium.reset(options={"task": task})
    agent.reset(task)
    pages, problems = 1, []
    where = f"task {task.task_id} ({task.family})"
    if obs != cobs or info["elements"] != cinfo["elements"]:
        problems.append(f"{where} after reset:\n{diff(obs, cobs)}")
    while not problems:
        action = agent.act(obs, info)
        obs, reward, term, trunc, info = http.step(action)
        cobs, creward, cterm, ctrunc, cinfo = chromium.step(action)
        pages += 1
        if cinfo.get("backend_error"):
            problems.append(f"{where} step {pages - 1} {action}: backend error {cinfo['backend_error']}")
        elif obs != cobs or info["elements"] != cinfo["elements"]:
            problems.append(f"{where} step {pages - 1} {action}:\n{diff(obs, cobs)}")
        elif (reward, term, trunc) != (creward, cterm, ctrunc):
            problems.append(f"{where}: http ended {(reward, term, trunc)}, chromium {(creward, cterm, ctrunc)}")
        if term or trunc:
            break
    return pages, problems


def sample_tasks(full: bool) -> list:
    """Default: one test-split or generated task per (site, kind). Full: the whole test
    split plus two generated instances of every family."""
    world = WorldApp()
    db = SeedDB(world.store.snapshot)
    test = load_split("test")
    by_family: dict[str, list] = {}
    for t in test:
        by_family.setdefault(t.family, []).append(t)
    tasks = list(test) if full else []
    seen_groups: set[tuple[str, str]] = set()
    rng = random.Random(0)
    for name, fam in sorted(families().items()):
        group = (fam.sites[0] if len(fam.sites) == 1 else "cross", fam.kind)
        if not full and group in seen_groups:
            continue
        made = [] if full else by_family.get(name, [])[:1]
        first = seed = 5000 + rng.randrange(1000)
        while len(made) < (2 if full else 1) and seed < first + 200:
            with contextlib.suppress(InfeasibleSlots):
                made.append(fam.make(db, seed, "any", task_id=f"parity:{name}:{seed}"))
            seed += 1
        if made:
            seen_groups.add(group)
        tasks += made
    return tasks


def run_parity(http: WebEnv, chromium: WebEnv, tasks: list) -> tuple[int, list[str], list[str]]:
    pages, problems, oracle_bugs = 0, [], []
    for task in tasks:
        try:
            n, found = compare_episode(http, chromium, task)
        except OracleError as e:  # the oracle itself is broken: not a parity question
            oracle_bugs.append(f"{task.task_id}: {e}")
            continue
        pages += n
        problems += found
    return pages, problems, oracle_bugs


def test_parity_sample(envs):
    tasks = sample_tasks(full=False)
    pages, problems, oracle_bugs = run_parity(*envs, tasks)
    print(f"parity: {len(tasks)} tasks, {pages} pages compared, {len(problems)} mismatches")
    assert not problems, "\n\n".join(problems[:5])
    assert pages >= 2 * len(tasks) - len(oracle_bugs)


@pytest.mark.slow
def test_parity_full_sweep(envs, request):
    if "slow" not in (request.config.getoption("markexpr") or ""):
        pytest.skip("the full sweep takes ~15 min; run it with `pytest -m slow tests/env/test_parity.py -s`")
    tasks = sample_tasks(full=True)
    pages, problems, oracle_bugs = run_parity(*envs, tasks)
    print(f"parity sweep: {len(tasks)} tasks, {pages} pages compared, {len(problems)} mismatches, "
          f"{len(oracle_bugs)} oracle errors (skipped): {oracle_bugs[:5]}")  # fmt: skip
    for p in problems:
        print("MISMATCH", p.splitlines()[0])
    assert not problems, "\n\n".join(problems[:3])

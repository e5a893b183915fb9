"""Fixtures of the task tests: one world per test module, with the sites the module
names in `SITES` (a dict of site name to SiteSpec; all sites when it names none)."""

from __future__ import annotations

import pytest

from webrl.env.web_env import EnvConfig, WebEnv
from webrl.sites.world import WorldApp
from webrl.tasks.family import SeedDB


@pytest.fixture(scope="module")
def world(request) -> WorldApp:
    return WorldApp(getattr(request.module, "SITES", None))


@pytest.fixture(scope="module")
def db(world) -> SeedDB:
    return SeedDB(world.store.snapshot)


@pytest.fixture(scope="module")
def env(world):
    e = WebEnv(EnvConfig(), world=world)
    yield e
    e.close()

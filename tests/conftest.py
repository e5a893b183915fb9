"""Session fixtures shared by all test folders (helpers live in support.py)."""

from __future__ import annotations

import pytest
from support import NOTES

from webrl.sites.world import WorldApp


@pytest.fixture(scope="session")
def notes_world() -> WorldApp:
    return WorldApp({"notes": NOTES})

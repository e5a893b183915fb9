"""Which code ran a run: one line per invocation in the run folder's `invocations.jsonl`.

A run can span sessions and commits (it resumes); each process that claims the run folder
appends when it started, the git commit of the `webrl` package it imported (and whether that
checkout had uncommitted changes), the package versions that shape the numbers, and its argv.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from functools import cache
from importlib import metadata
from pathlib import Path

INVOCATIONS = "invocations.jsonl"


@cache
def code_version() -> dict:
    """{"commit", "dirty"} of the checkout holding this `webrl` package (None when not in git)."""
    root = Path(__file__).resolve().parent.parent

    def git(*args: str) -> str | None:
        try:
            out = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            return None
        return out.stdout.strip() if out.returncode == 0 else None

    commit = git("rev-parse", "HEAD")
    status = git("status", "--porcelain", "--untracked-files=no") if commit else None
    return {"commit": commit, "dirty": bool(status) if status is not None else None}


def _version(pkg: str) -> str | None:
    try:
        return metadata.version(pkg)
    except metadata.PackageNotFoundError:
        return None


def record_invocation(folder: Path) -> dict:
    """Append this process's line to `folder/invocations.jsonl`; returns it."""
    line = {"started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **code_version(),
            "python": sys.version.split()[0], **{p: _version(p) for p in ("torch", "transformers", "peft")},
            "argv": sys.argv}  # fmt: skip
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / INVOCATIONS).open("a") as f:
        f.write(json.dumps(line) + "\n")
    return line

"""argparse types for counts: a bad value is a usage error that names the flag (exit 2)."""

from __future__ import annotations

import argparse


def positive_int(text: str) -> int:
    """An integer >= 1."""
    v = int(text)  # argparse turns a ValueError into "invalid positive_int value"
    if v < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {v}")
    return v


def nonneg_int(text: str) -> int:
    """An integer >= 0."""
    v = int(text)
    if v < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {v}")
    return v

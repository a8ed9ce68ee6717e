"""Why a test is slow: every slow test carries one of these markers (pyproject.toml says what each means)."""

from __future__ import annotations

from collections.abc import Iterable

import pytest

REASONS = ("models", "device", "browser", "processes", "realtime")

# The tests a session collected, before `-m` deselects any: (node id, names of its markers).
COLLECTED = pytest.StashKey[list[tuple[str, set[str]]]]()


def unexplained(tests: Iterable[tuple[str, set[str]]]) -> list[str]:
    """The tests marked slow with no marker saying why."""
    return [name for name, markers in tests if "slow" in markers and not markers & set(REASONS)]

"""A slow test says why in its markers (pyproject.toml lists them), so each tier can be chosen by need."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.support.paths import ROOT
from tests.support.slow_reasons import COLLECTED, REASONS, unexplained


def collected_elsewhere() -> list[str]:
    """The suite's slow tests with no reason, collected in a child: for when this file runs alone."""
    chosen = f"slow and not ({' or '.join(REASONS)})"
    shown = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "-m", chosen],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert shown.returncode in (0, 5), shown.stdout + shown.stderr  # 5: every test deselected, none left
    return [line for line in shown.stdout.splitlines() if "::" in line]


def test_every_slow_test_says_why_in_a_marker(pytestconfig: pytest.Config) -> None:
    collected = pytestconfig.stash[COLLECTED]
    alone = all(name.startswith("tests/test_slow_reasons.py") for name, _ in collected)
    assert (collected_elsewhere() if alone else unexplained(collected)) == []


def test_a_slow_test_without_a_reason_is_found() -> None:
    tests = [
        ("tests/a.py::test_waits", {"slow", "parametrize"}),
        ("tests/a.py::test_starts_a_kiosk", {"slow", "processes"}),
        ("tests/a.py::test_hears_whisper", {"models"}),
        ("tests/a.py::test_quick", set()),
    ]
    assert unexplained(tests) == ["tests/a.py::test_waits"]

"""A loopback server for each test, and a store folder standing in for the user's data directory."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.model_server import Served, serving


@pytest.fixture
def served() -> Iterator[Served]:
    with serving(Served()) as server:
        yield server


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return tmp_path / "models"

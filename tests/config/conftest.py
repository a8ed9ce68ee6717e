"""Each test gets its own empty config directory, so a real ~/.config/voice/config.toml never leaks in."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "xdg-config"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home))
    return home


@pytest.fixture
def write_config(tmp_path: Path) -> Callable[[str], Path]:
    """Write TOML text to a file of its own and return the path."""

    def write(text: str) -> Path:
        path = tmp_path / "config.toml"
        path.write_text(text, encoding="utf-8")
        return path

    return write

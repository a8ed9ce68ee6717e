"""A real `voice kiosk` with the embedded model, shared by a module (helpers: tests/support/kiosk.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.kiosk import Kiosk, running_kiosk


@pytest.fixture(scope="module")
def llm_kiosk(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kiosk]:
    """`voice kiosk --audio none` with the embedded model (SmolLM2 on llama.cpp), shared by a module."""
    with running_kiosk(tmp_path_factory.mktemp("kiosk"), "--audio", "none") as kiosk:
        yield kiosk

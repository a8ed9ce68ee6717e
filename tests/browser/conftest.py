"""A headless chromium per test and a real `voice kiosk` per module (helpers: tests/support/browser.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from selenium import webdriver

from tests.support.browser import Kiosk, chromium


@pytest.fixture
def browser() -> Iterator[webdriver.Chrome]:
    driver = chromium()
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture(scope="module")
def kiosk(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kiosk]:
    """One kiosk for a module's tests (loading whisper, piper and the LLM takes a while)."""
    server = Kiosk(tmp_path_factory.mktemp("kiosk"))
    server.start()
    try:
        yield server
    finally:
        server.stop()

"""The kiosk page in a real headless chromium shows one line per MCP tool call, also after a reload."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from tests.support.browser import chromium, console_problems, wait_until
from tests.support.kiosk import running_kiosk
from tests.support.mcp_servers import Notes, kiosk_args

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@contextmanager
def browsing() -> Iterator[webdriver.Chrome]:
    """Chromium, quit before the kiosk stops (a page still open keeps a kiosk's stop waiting for seconds)."""
    driver = chromium()
    try:
        yield driver
    finally:
        driver.quit()


def tool_lines(driver: webdriver.Chrome) -> list[str]:
    return [str(line.text) for line in driver.find_elements(By.CSS_SELECTOR, "#log .tool")]


def test_the_page_shows_a_line_per_tool_call_and_its_outcome(
    tmp_path: Path, notes: Notes, tool_calling_llm: str
) -> None:
    args = kiosk_args(tmp_path, notes, tool_calling_llm)
    with running_kiosk(tmp_path, *args) as kiosk, browsing() as browser:
        browser.get(f"http://127.0.0.1:{kiosk.port}/")
        wait_until(browser, lambda d: d.find_element(By.ID, "state").get_attribute("data-state") != "offline")
        box = browser.find_element(By.ID, "text")
        box.send_keys("Where is my order 1234?")
        box.send_keys(Keys.ENTER)
        wait_until(browser, lambda d: tool_lines(d) == ["lookup_order: done"])
        wait_until(browser, lambda d: "I looked it up." in d.find_element(By.ID, "log").text)
        browser.refresh()  # the snapshot's history rebuilds the same line
        wait_until(browser, lambda d: tool_lines(d) == ["lookup_order: done"])

        assert console_problems(browser) == []

"""The page draws your words as you say them: chromium's fake microphone says a question into the page,
which asked the kiosk for live words itself; a faint line grows and becomes what was heard."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from selenium.webdriver.common.by import By

from tests.support.browser import Kiosk, console_problems, speaking_chromium, wait_until, watching
from tests.support.paths import AUDIO
from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.audio.wav import read_wav, write_wav

pytestmark = [pytest.mark.browser, pytest.mark.models]

LEAD_S = 2.0  # the page starts sending once its worklet runs: the question must not start before

# Every text the live line shows, in order, as the page draws it (installed before the question).
RECORD_PARTIALS = """
window.partialsShown = [];
new MutationObserver(() => {
  for (const said of document.querySelectorAll("#log .user.partial .said")) {
    const shown = window.partialsShown;
    if (said.textContent && shown[shown.length - 1] !== said.textContent) shown.push(said.textContent);
  }
}).observe(document.getElementById("log"), { subtree: true, childList: true, characterData: true });
"""


def question(path: Path) -> Path:
    silence = np.zeros(round(LEAD_S * ENGINE_RATE), dtype=np.float32)
    said = read_wav(AUDIO / "fox-story.wav").samples
    quiet = np.zeros(30 * ENGINE_RATE, dtype=np.float32)
    write_wav(path, AudioBlock(np.concatenate([silence, said, quiet]), ENGINE_RATE))
    return path


def test_the_page_shows_the_words_as_they_are_said_then_what_was_heard(tmp_path: Path) -> None:
    wav = question(tmp_path / "mic.wav")
    kiosk = Kiosk(tmp_path)
    kiosk.start()
    driver = speaking_chromium(wav)
    try:
        with watching(kiosk) as watcher:  # a client that never asks for partials
            driver.get(kiosk.url)
            wait_until(driver, lambda d: d.find_element(By.ID, "talk").is_displayed())
            driver.execute_script(RECORD_PARTIALS)
            driver.find_element(By.ID, "talk").click()
            heard = watcher.wait_for("input.transcript")
            wait_until(driver, lambda d: not d.find_elements(By.CSS_SELECTOR, "#log .user.partial"))
            users = [element.text for element in driver.find_elements(By.CSS_SELECTOR, "#log .user .said")]
            shown = driver.execute_script("return window.partialsShown;")
            problems = console_problems(driver)
    finally:
        driver.quit()
        kiosk.stop()

    assert shown  # the faint line showed words before the transcript came
    assert all(text.strip() for text in shown)
    assert users == [heard["text"]]  # then it became what was heard: one line, no live one left
    assert watcher.of("input.partial") == []  # the watcher never asked for them
    assert problems == []

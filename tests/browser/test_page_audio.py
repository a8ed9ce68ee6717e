"""The page as microphone and speaker: chromium's fake microphone plays a WAV into the page.

The WAV asks for a story, then, while the story plays through the page, asks about the weekend. The
kiosk must hear the question through the page, play the reply back through it, pause and cut the
reply at the interruption keeping exactly what the page reported played, and carry that into the
next request. The gap is long enough for the reply to start on a slow, shared machine (it took up
to 14 s there), and a story of up to 150 tokens lasts far longer. The interruption is a whole
sentence: a clipped "Wait, stop." can be taken for a fragment and let the reply go on.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from selenium.webdriver.common.by import By

from tests.browser.conftest import Kiosk, chromium, console_problems, wait_until, watching
from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.audio.wav import read_wav, write_wav
from voice.conversation.events import ItemCommitted, TurnEnded, TurnStarted
from voice.conversation.items import AssistantText, UserText
from voice.conversation.session_log import load_session

pytestmark = [pytest.mark.browser, pytest.mark.models]

AUDIO = Path(__file__).resolve().parents[2] / "audio"
GAP_S = 16.0  # from the question's end to the interruption


def question_then_interruption(path: Path) -> Path:
    silence = np.zeros(round(GAP_S * ENGINE_RATE), dtype=np.float32)
    parts = [read_wav(AUDIO / "fox-story.wav").samples, silence, read_wav(AUDIO / "what-weekend.wav").samples]
    parts.append(np.zeros(20 * ENGINE_RATE, dtype=np.float32))  # then the room is quiet
    write_wav(path, AudioBlock(np.concatenate(parts), ENGINE_RATE))
    return path


def test_a_question_and_an_interruption_spoken_into_the_page(tmp_path: Path) -> None:
    wav = question_then_interruption(tmp_path / "mic.wav")
    kiosk = Kiosk(tmp_path)
    kiosk.start()
    driver = chromium(
        "--use-fake-ui-for-media-stream",
        "--use-fake-device-for-media-stream",
        f"--use-file-for-fake-audio-capture={wav}%noloop",
    )
    try:
        with watching(kiosk) as watcher:
            driver.get(kiosk.url)
            wait_until(driver, lambda d: d.find_element(By.ID, "talk").is_displayed())
            driver.find_element(By.ID, "talk").click()
            cut = watcher.wait_for("response.interrupted")
            follow_up = watcher.wait_for("response.created", lambda e: e["turn"] > cut["turn"])
            wait_until(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#log .assistant.cut"))
            problems = console_problems(driver)
    finally:
        driver.quit()
        kiosk.stop()

    question, interruption = (event["text"] for event in watcher.of("input.transcript")[:2])
    assert "story about a fox" in question.lower()
    assert "weekend" in interruption.lower()
    assert watcher.of("input.speech_started")
    assert cut["heard"]  # the page played part of the story, and said so
    assert cut["unheard"]
    assert problems == []

    events = [logged.event for logged in load_session(kiosk.session).events]
    ended = next(e for e in events if isinstance(e, TurnEnded) and e.turn == cut["turn"])
    assert ended.cancelled
    assert ended.heard == cut["heard"]
    items = [e.item for e in events if isinstance(e, ItemCommitted)]
    assert items[-2:] == [UserText(question), AssistantText(cut["heard"], interrupted=True)]
    committed = events.index(ItemCommitted(AssistantText(cut["heard"], interrupted=True)))
    started = next(
        i for i, e in enumerate(events) if isinstance(e, TurnStarted) and e.turn == follow_up["turn"]
    )
    assert committed < started  # the next request went out carrying exactly the heard prefix

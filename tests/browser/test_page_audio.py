"""The page as microphone and speaker: a microphone the test speaks into on cue, in real chromium.

The test stands in for the user: it asks for a story, waits until the page has played words of the
reply, then cuts in. The kiosk must hear the question through the page, play the reply back through
it, pause and cut the reply keeping exactly what the page reported played, and carry that into the
next request. The cut-in waits for the reply's words, not for a time: on a busy machine the reply
may take longer to start than any fixed schedule of cut-ins (a WAV played by chromium's fake
microphone) allowed, and then every cut-in landed before a word was heard.
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest
from selenium import webdriver
from selenium.webdriver.common.by import By

from tests.browser.conftest import Kiosk, Watcher, chromium, console_problems, wait_until, watching
from voice.conversation.items import AssistantText, UserText
from voice.conversation.log_records import ItemCommitted, TurnEnded, TurnStarted
from voice.conversation.session_log import load_session

pytestmark = [pytest.mark.browser, pytest.mark.models]

AUDIO = Path(__file__).resolve().parents[2] / "audio"
ENDS = ("response.interrupted", "response.done")
SAY_TIMEOUT_S = 60  # a clip is a few seconds long; the page's audio runs in real time

# The page asks for the microphone with getUserMedia; this one is a WebAudio stream the test plays
# clips into (silence in between), so the user speaks when the test sees the cue.
MICROPHONE = """
(() => {
  const context = new AudioContext();
  const line = context.createMediaStreamDestination();
  window.testMicrophone = {
    async say(wav) {
      await context.resume();
      const bytes = Uint8Array.from(atob(wav), (c) => c.charCodeAt(0));
      const clip = context.createBufferSource();
      clip.buffer = await context.decodeAudioData(bytes.buffer);
      clip.connect(line);
      const ended = new Promise((done) => { clip.onended = done; });
      clip.start();
      await ended;
    },
  };
  navigator.mediaDevices.getUserMedia = async () => { await context.resume(); return line.stream; };
})();
"""


def say(driver: webdriver.Chrome, clip: str) -> None:
    """Speak ``clip`` (a file in audio/) into the page's microphone; returns once it has been said."""
    wav = base64.b64encode((AUDIO / clip).read_bytes()).decode()
    driver.set_script_timeout(SAY_TIMEOUT_S)
    failed = driver.execute_async_script(
        "const done = arguments[1];"
        "window.testMicrophone.say(arguments[0]).then(() => done(null), (e) => done(String(e)));",
        wav,
    )
    assert failed is None, failed


def cut_in_while_words_play(driver: webdriver.Chrome, watcher: Watcher) -> dict[str, Any]:
    """Cut in once the page has played words of a reply; again if that reply ended before the cut-in."""
    while True:
        turn = playing_words(watcher)
        say(driver, "what-weekend.wav")
        end = watcher.wait_for(ENDS, lambda e, turn=turn: bool(e["turn"] == turn))
        if end["type"] == "response.interrupted" and end["heard"]:
            return end


def playing_words(watcher: Watcher) -> int:
    """The turn of a reply the page is playing and has played words of."""
    ended = {event["turn"] for event in watcher.of(*ENDS)}
    words = watcher.wait_for("response.heard", lambda e: bool(e["text"]) and e["turn"] not in ended)
    return int(words["turn"])


def talking(driver: webdriver.Chrome) -> bool:
    """The page's Talk button says its microphone runs (its worklet sends frames)."""
    return bool(driver.find_element(By.ID, "talk").get_attribute("aria-pressed") == "true")


def test_a_question_and_an_interruption_spoken_into_the_page(tmp_path: Path) -> None:
    kiosk = Kiosk(tmp_path)
    kiosk.start()
    driver = chromium("--use-fake-ui-for-media-stream")
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": MICROPHONE})
    try:
        with watching(kiosk) as watcher:
            driver.get(kiosk.url)
            wait_until(driver, lambda d: d.find_element(By.ID, "talk").is_displayed())
            driver.find_element(By.ID, "talk").click()
            wait_until(driver, talking)
            say(driver, "fox-story.wav")
            cut = cut_in_while_words_play(driver, watcher)
            follow_up = watcher.wait_for("response.created", lambda e: e["turn"] > cut["turn"])
            # over the reply a pause after "Actually," may end the first utterance: the rest follows
            watcher.wait_for("input.transcript", lambda e: "weekend" in e["text"].lower())
            wait_until(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#log .assistant.cut"))
            problems = console_problems(driver)
    finally:
        driver.quit()
        kiosk.stop()

    transcripts = [event["text"].lower() for event in watcher.of("input.transcript")]
    assert "story about a fox" in transcripts[0]
    assert watcher.of("input.speech_started")
    assert cut["heard"]  # the page played part of the reply, and said so
    assert cut["unheard"]
    assert problems == []

    events = [logged.event for logged in load_session(kiosk.session).events]
    ended = next(e for e in events if isinstance(e, TurnEnded) and e.turn == cut["turn"])
    assert ended.cancelled
    assert ended.heard == cut["heard"]
    items = [e.item for e in events if isinstance(e, ItemCommitted)]
    heard = AssistantText(cut["heard"], interrupted=True)
    assert isinstance(items[items.index(heard) - 1], UserText)  # the reply it cut answered the user
    committed = events.index(ItemCommitted(heard))
    started = next(
        i for i, e in enumerate(events) if isinstance(e, TurnStarted) and e.turn == follow_up["turn"]
    )
    assert committed < started  # the next request went out carrying exactly the heard prefix

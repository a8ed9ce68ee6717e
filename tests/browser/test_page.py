"""The kiosk page in a real headless chromium against a real `voice kiosk` (whisper, piper, llama.cpp).

No page is the microphone here, so the kiosk's silent clock plays each reply to nobody at the pace of
speech, and the captions follow it word by word as they would follow a speaker.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from tests.support.browser import Kiosk, console_problems, text_of, wait_until, watching
from voice.conversation.items import AssistantText
from voice.conversation.session_log import load_session

pytestmark = [pytest.mark.browser, pytest.mark.models]


def open_page(driver: webdriver.Chrome, kiosk: Kiosk) -> None:
    driver.get(kiosk.url)
    wait_until(driver, lambda d: d.find_element(By.ID, "state").get_attribute("data-state") != "offline")


def ask(driver: webdriver.Chrome, text: str) -> None:
    box = driver.find_element(By.ID, "text")
    box.send_keys(text)
    box.send_keys(Keys.ENTER)


def caption(driver: webdriver.Chrome) -> str:
    """The newest reply's words as the page shows them."""
    replies = driver.find_elements(By.CSS_SELECTOR, "#log .assistant .said")
    return str(replies[-1].text) if replies else ""


def live_caption(driver: webdriver.Chrome) -> str:
    """The words of a reply this page saw start (not one drawn from the snapshot)."""
    replies = driver.find_elements(By.CSS_SELECTOR, "#log .assistant[data-turn] .said")
    return str(replies[-1].text) if replies else ""


def as_shown(text: str) -> str:
    """``text`` as a page shows it: a run of whitespace (a story's paragraph break) is one space."""
    return " ".join(text.split())


def test_the_page_loads_and_is_used_with_no_console_errors(kiosk: Kiosk, browser: webdriver.Chrome) -> None:
    open_page(browser, kiosk)
    browser.find_element(By.ID, "mute").click()
    wait_until(browser, lambda d: d.find_element(By.ID, "mute").text == "Unmute")
    browser.find_element(By.ID, "mute").click()
    wait_until(browser, lambda d: d.find_element(By.ID, "mute").text == "Mute")

    assert text_of(browser, "state-label") in {"Listening", "Muted", "Thinking", "Speaking"}
    assert console_problems(browser) == []


def test_a_typed_question_then_the_captions_show_the_words_as_heard(
    kiosk: Kiosk, browser: webdriver.Chrome
) -> None:
    with watching(kiosk) as watcher:
        open_page(browser, kiosk)
        ask(browser, "What will the weather be like tomorrow?")
        typed = watcher.wait_for("input.transcript", lambda e: "weather" in e["text"])
        first_words = wait_until(browser, lambda d: live_caption(d) or False)
        done = watcher.wait_for("response.done")
        wait_until(browser, lambda d: caption(d) == done["text"])

    assert typed["id"].startswith("page-")  # the page gave the input a fresh id
    heard = [event["text"] for event in watcher.of("response.heard") if event["turn"] == done["turn"]]
    assert first_words in heard  # shown as heard, word by word, not as generated
    assert len(heard) > 1
    assert "weather be like tomorrow" in text_of(browser, "log")
    assert console_problems(browser) == []


def test_the_stop_button_then_the_unheard_words_are_shown_as_cut(
    kiosk: Kiosk, browser: webdriver.Chrome
) -> None:
    with watching(kiosk) as watcher:
        open_page(browser, kiosk)
        ask(browser, "Tell me a long story about a fox.")
        wait_until(browser, lambda d: len(live_caption(d).split()) >= 3)
        browser.find_element(By.ID, "stop").click()
        cut = watcher.wait_for("response.interrupted")
    reply = wait_until(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#log .assistant.cut")[-1:])[0]

    assert cut["heard"]
    assert cut["unheard"]  # the story went on past the stop
    assert reply.find_element(By.CSS_SELECTOR, ".heard").text == as_shown(cut["heard"])
    unheard = reply.find_element(By.CSS_SELECTOR, ".unheard")
    assert unheard.text == as_shown(cut["unheard"])
    assert unheard.value_of_css_property("text-decoration-line") == "line-through"
    assert "not heard" in reply.find_element(By.CSS_SELECTOR, ".cut-mark").text
    history = load_session(kiosk.session).conversation().history
    assert AssistantText(cut["heard"], interrupted=True) in history  # what the next request carries


def test_a_server_restart_then_the_page_reconnects_and_rebuilds_from_the_snapshot(
    tmp_path: Path, browser: webdriver.Chrome
) -> None:
    kiosk = Kiosk(tmp_path)
    kiosk.start()
    try:
        open_page(browser, kiosk)
        ask(browser, "Hello there.")
        wait_until(browser, lambda d: live_caption(d) and text_of(d, "state-label") == "Listening")
        before = kiosk.session

        kiosk.stop()  # a restarted kiosk starts a fresh conversation in a new log
        wait_until(browser, lambda d: d.find_element(By.ID, "offline").is_displayed())
        assert text_of(browser, "state-label") == "Offline"
        kiosk.start()
        wait_until(browser, lambda d: d.find_element(By.ID, "state").get_attribute("data-state") != "offline")

        assert kiosk.session != before
        assert "Hello there." not in text_of(browser, "log")  # the page shows the new snapshot, not its past
        assert browser.find_element(By.ID, "empty").is_displayed()
        assert not browser.find_element(By.ID, "offline").is_displayed()
        ask(browser, "Thanks, that's all.")  # and the new connection takes input
        wait_until(browser, lambda d: "that's all" in text_of(d, "log") and live_caption(d))
        assert browser.find_elements(By.CSS_SELECTOR, "#log .user .said")[0].text == "Thanks, that's all."
    finally:
        kiosk.stop()


def test_a_page_opened_mid_conversation_shows_it_from_the_snapshot(
    kiosk: Kiosk, browser: webdriver.Chrome
) -> None:
    with watching(kiosk) as watcher:
        watcher.send({"type": "input.text", "id": "snapshot-1", "text": "Hello there."})
        done = watcher.wait_for("response.done")
    open_page(browser, kiosk)

    users = [line.text for line in browser.find_elements(By.CSS_SELECTOR, "#log .user .said")]
    assert users[-1] == "Hello there."
    assert caption(browser) == done["text"]


def test_a_backchannel_is_a_small_mark_under_the_reply_and_a_stop_marks_the_users_words(
    kiosk: Kiosk, browser: webdriver.Chrome
) -> None:
    open_page(browser, kiosk)
    events = [  # as the kiosk sends them (voice/client_events.py), through the page's own handlers
        {"type": "input.transcript", "id": "speech-1", "text": "Tell me a story.", "merged": None, "t": 1.0},
        {"type": "response.created", "turn": 901, "t": 1.0},
        {"type": "response.heard", "turn": 901, "text": "Once upon a time,", "words": 4, "t": 2.0},
        {"type": "input.backchannel", "text": "Mm-hmm.", "turn": 901, "t": 2.5},
        {"type": "input.ignored", "text": "[coughing]", "why": "no words", "turn": 901, "t": 2.7},  # no line
        {"type": "response.heard", "turn": 901, "text": "Once upon a time, a fox", "words": 6, "t": 3.0},
        {"type": "response.done", "turn": 901, "text": "Once upon a time, a fox.", "metrics": {}, "t": 3.5},
        {"type": "input.backchannel", "text": "Wow.", "turn": None, "t": 3.8},
        {"type": "input.transcript", "id": "speech-3", "text": "Stop.", "merged": None, "t": 5.0},
        {"type": "input.stop", "id": "speech-3", "text": "Stop.", "t": 5.0},
    ]
    browser.execute_script("for (const e of arguments[0]) handlers[e.type](e);", events)

    reply = browser.find_elements(By.CSS_SELECTOR, "#log .assistant")[-1]
    assert reply.find_element(By.CSS_SELECTOR, ".said").text == "Once upon a time, a fox."
    nods = [nod.text for nod in reply.find_elements(By.CSS_SELECTOR, ".nods .nod")]
    assert nods == ["✓ Mm-hmm.", "✓ Wow."]
    users = browser.find_elements(By.CSS_SELECTOR, "#log .user .said")
    assert [line.text for line in users[-2:-1]] == ["Tell me a story."]  # a backchannel is no user line
    assert users[-1].text.startswith("Stop.")
    assert users[-1].find_element(By.CSS_SELECTOR, ".stop-mark").text == "■ stop — listening"
    assert console_problems(browser) == []


def test_an_event_type_the_page_does_not_know_is_warned_of_and_shown_once(
    kiosk: Kiosk, browser: webdriver.Chrome
) -> None:
    open_page(browser, kiosk)
    note = browser.find_element(By.ID, "dev-note")
    assert not note.is_displayed()
    events = [  # a newer server's events, through the page's own dispatch, between two it knows
        {"type": "response.created", "turn": 902, "t": 1.0},
        {"type": "response.rewound", "turn": 902, "t": 1.5},
        {"type": "response.rewound", "turn": 902, "t": 1.6},
        {"type": "response.heard", "turn": 902, "text": "Still here.", "words": 2, "t": 2.0},
    ]
    browser.execute_script("for (const e of arguments[0]) dispatch(e);", events)

    assert note.is_displayed()
    assert "response.rewound" in note.text
    warnings = [entry["message"] for entry in console_problems(browser)]
    assert len(warnings) == 1  # once per type
    assert "response.rewound" in warnings[0]
    assert caption(browser) == "Still here."  # the events it knows still count

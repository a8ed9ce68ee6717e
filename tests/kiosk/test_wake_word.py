"""A kiosk asleep behind a wake word model (`--wake-word`): a real `voice kiosk --audio websocket` with
whisper, piper and the bundled okay_nabu model, a scripted LLM on loopback, and a client that is its
microphone as the talking page is. A question without the wake word goes unheard; with it, it is asked."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import connect

from tests.support.kiosk import next_event, running_kiosk
from tests.support.scripted_llm import scripted_llm
from tests.support.talking_page import TalkingPage
from tests.support.wake_words import QUESTION, piper_says
from voice.tts.piper_voice import PiperSynthesizer

REPLY = "Ten past ten."


@pytest.mark.models
def test_a_sleeping_kiosk_hears_only_what_follows_its_wake_word_and_says_it_woke(
    synthesizer: PiperSynthesizer, tmp_path: Path
) -> None:
    plain = piper_says(synthesizer, f"Okay, {QUESTION}")
    woken = piper_says(synthesizer, f"Okay Nabu, {QUESTION}")

    async def visit(url: str) -> tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]:
        async with connect(url) as ws:
            created = await next_event(ws)
            async with TalkingPage(ws) as page:
                await page.wait_for(lambda e: e["type"] == "state" and e["state"] == "asleep")
                await page.say(plain)
                await asyncio.sleep(2.0)  # whisper would have had it by now, were it listening
                unheard = list(page.events)
                await page.say(woken)
                await page.wait_for(lambda e: e["type"] == "response.done")
        return created, unheard, page.events

    with scripted_llm(lambda question: REPLY) as llm:
        args = ["--audio", "websocket", "--no-echo-cancel", "--wake-word", "okay_nabu"]
        with running_kiosk(tmp_path, *args, "--llm-url", llm.url, "--llm-model", "scripted") as kiosk:
            created, unheard, events = asyncio.run(visit(kiosk.url))

    assert created["settings"]["wake"] == "Okay Nabu"  # the page says what to say
    assert not [e for e in unheard if e["type"].startswith("input.")]
    after = events[len(unheard) :]
    states = [e["state"] for e in after if e["type"] == "state"]
    assert states[:2] == ["listening", "user_speaking"]  # awake at the wake word, before the question
    assert [e["text"] for e in after if e["type"] == "input.transcript"] == ["What's the time?"]

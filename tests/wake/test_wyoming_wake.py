"""The ``wyoming://`` wake word against the registry's wyoming-openwakeword 1.8.2 on loopback (in its own
venv: it pins wyoming 1.2.0): the mic streamed as it comes, its ``detection`` back where the word was said."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from websockets.asyncio.client import connect

from tests.support.kiosk import next_event, running_kiosk
from tests.support.scripted_llm import scripted_llm
from tests.support.talking_page import TalkingPage
from tests.support.wake_words import QUESTION, piper_says
from voice.audio.block import ENGINE_RATE, AudioBlock, Samples
from voice.testing.loopback import free_port
from voice.testing.wake_server import wyoming_openwakeword
from voice.tts.piper_voice import PiperSynthesizer
from voice.wake.models import open_wake_detector
from voice.wake.port import WakeDetection

BLOCK = 640


@pytest.fixture(scope="module")
def wake_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with wyoming_openwakeword(tmp_path_factory.mktemp("oww") / "server.log", "ok_nabu") as url:
        yield url


def streamed(url: str, samples: Samples) -> list[WakeDetection]:
    """``samples`` and a second of silence sent as a mic sends them, a 40 ms block every 40 ms."""
    detector = open_wake_detector(url)
    found = []
    audio = np.concatenate([samples, np.zeros(ENGINE_RATE, np.float32)])
    started = time.monotonic()
    for index, start in enumerate(range(0, len(audio) - BLOCK + 1, BLOCK)):
        heard = detector.hear(AudioBlock(audio[start : start + BLOCK], ENGINE_RATE, start))
        if heard is not None:
            found.append(heard)
        time.sleep(max(0.0, started + (index + 1) * BLOCK / ENGINE_RATE - time.monotonic()))
    assert detector.problem is None
    detector.close()
    return found


@pytest.mark.models
def test_the_server_hears_the_wake_word_once_after_it_was_said_and_not_the_question_alone(
    wake_server: str, synthesizer: PiperSynthesizer
) -> None:
    said = synthesizer.synthesize(f"Okay Nabu, {QUESTION}")
    nabu_end = ENGINE_RATE // 2 + said.words[1].end
    found = streamed(f"{wake_server}?name=ok_nabu", piper_says(synthesizer, f"Okay Nabu, {QUESTION}"))
    assert [d.name for d in found] == ["ok_nabu_v0.1"]
    # openWakeWord names the newest chunk it had when it fired: 0.3 to 0.8 s after the word, here
    assert nabu_end <= found[0].sample < nabu_end + ENGINE_RATE
    assert streamed(wake_server, piper_says(synthesizer, f"Okay, {QUESTION}")) == []


def test_a_wake_server_that_is_not_there_stops_chat_with_one_line(tmp_path: Path) -> None:
    url = f"wyoming://127.0.0.1:{free_port()}"
    result = subprocess.run(
        [sys.executable, "-m", "voice", "chat", "--seconds", "1", "--wake-word", url,
         "--session", str(tmp_path / "s.jsonl")],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 1
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("voice: error: wake word server: cannot connect to wyoming://127.0.0.1:")


@pytest.mark.models
def test_a_kiosk_asleep_behind_a_wyoming_wake_server_listens_after_the_word_for_the_question(
    wake_server: str, synthesizer: PiperSynthesizer, tmp_path: Path
) -> None:
    plain = piper_says(synthesizer, f"Okay, {QUESTION}")
    wake_word = piper_says(synthesizer, "Okay Nabu.")
    question = piper_says(synthesizer, QUESTION.capitalize())

    async def visit(url: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        async with connect(url) as ws:
            await next_event(ws)
            async with TalkingPage(ws) as page:
                await page.wait_for(lambda e: e["type"] == "state" and e["state"] == "asleep")
                await page.say(plain)
                await asyncio.sleep(2.0)  # whisper would have had it by now, were it listening
                unheard = list(page.events)
                await page.say(wake_word)
                await page.wait_for(lambda e: e["type"] == "state" and e["state"] == "listening")
                await page.say(question)  # said once it listens: the wake word alone, then the question
                await page.wait_for(lambda e: e["type"] == "response.done")
        return unheard, page.events

    with scripted_llm(lambda asked: "Ten past ten.") as llm:
        args = ["--audio", "websocket", "--no-echo-cancel", "--wake-word", f"{wake_server}?name=ok_nabu"]
        with running_kiosk(tmp_path, *args, "--llm-url", llm.url, "--llm-model", "scripted") as kiosk:
            unheard, events = asyncio.run(visit(kiosk.url))

    assert not [e for e in unheard if e["type"].startswith("input.")]
    assert [e["text"] for e in events if e["type"] == "input.transcript"] == ["What's the time?"]

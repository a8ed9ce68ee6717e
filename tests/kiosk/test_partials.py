"""Live words through a real kiosk: a client asks for them with ``input.partials`` and only it gets them.

One `voice kiosk --audio websocket` (real whisper and piper, a scripted LLM on loopback) hears a recorded
question from a client that is its microphone, as the talking page is; a second client only watches.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect

from tests.support.kiosk import Kiosk, events_until, next_event, running_kiosk, send
from tests.support.scripted_llm import scripted_llm
from tests.support.talking_page import TalkingPage, recording
from voice.kiosk.protocol import BadFrame, PartialsWanted, parse_command

REPLY = "Dry and bright."


def test_input_partials_asks_for_partials_or_no_more() -> None:
    assert parse_command('{"type": "input.partials", "enabled": true}') == PartialsWanted(True)
    assert parse_command('{"type": "input.partials", "enabled": false}') == PartialsWanted(False)


@pytest.mark.parametrize(
    "frame",
    [
        '{"type": "input.partials"}',
        '{"type": "input.partials", "enabled": "yes"}',
        '{"type": "input.partials", "enabled": 1}',
        '{"type": "input.partials", "enabled": null}',
    ],
)
def test_input_partials_without_a_true_or_false_is_a_bad_frame(frame: str) -> None:
    with pytest.raises(BadFrame, match=r'input\.partials needs "enabled", true or false'):
        parse_command(frame)


@pytest.fixture(scope="module")
def talking_kiosk(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kiosk]:
    with scripted_llm(lambda question: REPLY) as llm:
        args = ["--audio", "websocket", "--no-echo-cancel", "--llm-url", llm.url, "--llm-model", "scripted"]
        with running_kiosk(tmp_path_factory.mktemp("partials"), *args) as kiosk:
            yield kiosk


async def ask_and_wait(page: TalkingPage, wav: str) -> None:
    """Say ``wav`` and wait until its answer has been said."""
    answered = [event["turn"] for event in page.events if event["type"] == "response.done"]
    await page.say(recording(wav))
    await page.wait_for(lambda e: e["type"] == "response.done" and e["turn"] > max(answered, default=0))


def partials_of(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [event for event in events if event["type"] == "input.partial"]


async def keep(ws: ClientConnection, seen: list[dict[str, Any]]) -> None:
    """Every event ``ws`` gets, until cancelled (a client that reads everything it is sent)."""
    while True:
        seen.append(await next_event(ws))


@pytest.mark.models
def test_a_client_that_asks_sees_the_words_grow_and_end_as_the_transcript(talking_kiosk: Kiosk) -> None:
    async def converse() -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
        watched: list[dict[str, Any]] = []
        async with connect(talking_kiosk.url) as watcher_ws, connect(talking_kiosk.url) as ws:
            watcher = asyncio.create_task(keep(watcher_ws, watched))  # it never asks for partials
            await next_event(ws)
            async with TalkingPage(ws) as page:
                await send(ws, type="input.partials", enabled=True)
                await ask_and_wait(page, "fox-story.wav")
                asked = list(page.events)
                await send(ws, type="input.partials", enabled=False)
                await ask_and_wait(page, "what-wear.wav")
                after_off = page.events[len(asked) :]
            watcher.cancel()
        return asked, after_off, watched

    asked, after_off, watched = asyncio.run(converse())

    shown = partials_of(asked)
    [transcript] = [event for event in asked if event["type"] == "input.transcript"]
    live = [event for event in shown if not event["final"]]
    assert (
        live
    )  # words shown before the transcript (on a loaded machine they lag: their thread runs at nice 19)
    assert all(event["text"] for event in live)
    assert shown[-1]["final"]
    assert shown[-1]["text"] == transcript["text"]  # the line ends as what was heard
    assert asked.index(shown[-1]) > asked.index(transcript)

    assert partials_of(after_off) == []  # asked to stop: none for the next question
    assert any(event["type"] == "input.transcript" for event in after_off)
    assert partials_of(watched) == []  # a client that never asked never gets them
    assert sum(event["type"] == "input.transcript" for event in watched) == 2


@pytest.mark.models
def test_a_malformed_input_partials_gets_an_error_and_the_connection_stays(talking_kiosk: Kiosk) -> None:
    async def exchange() -> list[dict[str, Any]]:
        async with connect(talking_kiosk.url) as ws:
            await next_event(ws)
            await send(ws, type="input.partials", enabled="yes")
            error = await next_event(ws)
            await send(ws, type="input.text", text="Still there?", id="still-there")
            typed = await events_until(ws, lambda e: e["type"] == "input.transcript")
            return [error, typed[-1]]

    error, typed = asyncio.run(exchange())
    assert error["type"] == "error"
    assert error["code"] == "bad_frame"
    assert 'input.partials needs "enabled"' in error["message"]
    assert typed["id"] == "still-there"  # the connection stayed open and still works

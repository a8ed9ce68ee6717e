"""The kiosk's shutdown (SIGTERM, as systemd stops it) keeps the words a visitor saw of the reply."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from websockets.asyncio.client import connect

from tests.support.fault_llm import FaultServer, delta_chunk, finish_chunk, replying
from tests.support.kiosk import Event, events_until, next_event, running_kiosk, send
from tests.support.story import STORY, WORDS_BEFORE_STOP
from voice.conversation.items import AssistantText, UserText
from voice.conversation.log_records import ItemCommitted, TurnEnded
from voice.conversation.session_log import load_session


def enough_heard(event: Event) -> bool:
    return event["type"] == "response.heard" and event["words"] >= WORDS_BEFORE_STOP


@pytest.mark.slow
@pytest.mark.processes
def test_sigterm_mid_reply_logs_the_words_shown_as_interrupted(tmp_path: Path) -> None:
    chunks = [delta_chunk(word + " ") for word in STORY.split()]
    with (
        FaultServer(replying(*chunks, finish_chunk())) as server,
        running_kiosk(tmp_path, "--audio", "none", "--llm-url", server.url, "--llm-model", "story") as kiosk,
    ):

        async def ask() -> tuple[str, str]:
            async with connect(kiosk.url) as ws:
                session = (await next_event(ws))["session"]
                await send(ws, type="input.text", id="q-1", text="Tell me a story.")
                return session, (await events_until(ws, enough_heard, 60))[-1]["text"]

        session, shown = asyncio.run(ask())
        assert kiosk.stop() == 0, kiosk.output()

    events = [logged.event for logged in load_session(kiosk.sessions / f"{session}.jsonl").events]
    end = events[-1]
    assert isinstance(end, TurnEnded), kiosk.output()
    assert (end.turn, end.cancelled) == (1, True)
    assert end.heard.startswith(shown)  # at least the words shown before the signal
    assert len(end.heard) < len(STORY)
    assert events[-3:-1] == [
        ItemCommitted(UserText("Tell me a story.")),
        ItemCommitted(AssistantText(end.heard, interrupted=True)),
    ]

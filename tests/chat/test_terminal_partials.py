"""The terminal view draws your words as you say them (``input.partial``), driven headless by Textual's pilot.

First from published events; then through `voice chat`'s real driver on a microphone that plays a
recorded question, with real whisper for the transcript and for the live words.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from textual.pilot import Pilot

from tests.support.devices import RecordedMicrophone, SilentSpeaker
from tests.support.paths import AUDIO
from tests.support.stand_ins import RecordingThinker
from voice import client_events as stream
from voice.asr.partial_whisper import whisper_partials
from voice.asr.whisper import WhisperTranscriber
from voice.audio.wav import read_wav
from voice.chat.driver import DeviceConversation, DeviceSettings
from voice.chat.live import LiveChat
from voice.chat.terminal_view import ChatView
from voice.chat.view_widgets import Line
from voice.components import SpeechModels, make_engine
from voice.engine.inputs import EngineInput
from voice.runtime import Work
from voice.testing.stand_ins import EvenSynthesizer

QUESTION = "What will the weather be like tomorrow?"


class Watching:
    """Controls that send nothing: the view only draws what it is given."""

    def start(self, view: ChatView) -> None:
        pass

    def send(self, event: EngineInput) -> None:
        raise AssertionError("no key is pressed here")

    def new_conversation(self) -> None:
        raise AssertionError("no key is pressed here")

    def stop(self) -> None:
        raise AssertionError("no key is pressed here")


def run_view(script: Callable[[ChatView, Pilot[None]], Awaitable[None]]) -> None:
    async def main() -> None:
        app = ChatView(Watching())
        async with app.run_test(size=(100, 30)) as pilot:
            await script(app, pilot)

    asyncio.run(main())


def yours(app: ChatView) -> list[Line]:
    return [line for line in app.lines() if line.who == "you"]


def test_your_words_grow_on_a_dim_line_that_becomes_what_was_heard() -> None:
    async def script(app: ChatView, pilot: Pilot[None]) -> None:
        app.publish(stream.SpeechStarted(0.8))
        app.publish(stream.InputPartial("What will", False, 1.3))
        app.publish(stream.InputPartial("What will the weather be", False, 1.8))
        await pilot.pause()
        [line] = yours(app)
        assert line.body.plain == "What will the weather be"  # replaced as it grows: one line
        assert line.has_class("partial")
        assert "italic" in str(line.body.style)

        app.publish(stream.InputTranscript("speech-1", QUESTION, None, 2.9))
        app.publish(stream.InputPartial(QUESTION, True, 2.95))
        app.publish(stream.InputTranscript("tui-1", "And Sunday?", None, 3.5))  # typed: a line of its own
        await pilot.pause()
        assert [(line.body.plain, line.has_class("partial")) for line in yours(app)] == [
            (QUESTION, False),
            ("And Sunday?", False),
        ]
        assert yours(app)[0] is line  # the transcript took the live line over, in place

    run_view(script)


def test_speech_that_gives_no_words_leaves_no_line() -> None:
    async def script(app: ChatView, pilot: Pilot[None]) -> None:
        app.publish(stream.SpeechStarted(0.8))
        app.publish(stream.InputPartial("Hm", False, 1.3))
        await pilot.pause()
        assert [line.body.plain for line in yours(app)] == ["Hm"]
        app.publish(stream.InputPartial("", True, 2.0))  # a cough: no input came of it
        await pilot.pause()
        assert yours(app) == []

    run_view(script)


def recorded_question_conversation(wav: Path) -> DeviceConversation:
    """`voice chat`'s driver on a microphone that says ``wav`` once, with real whisper and threaded work."""
    samples = read_wav(wav).samples
    work = Work(threaded=True)
    models = SpeechModels(WhisperTranscriber(), EvenSynthesizer())
    return DeviceConversation(
        make_engine(),
        models,
        RecordingThinker(),
        work,
        None,
        DeviceSettings(),
        open_input=lambda deliver: RecordedMicrophone(deliver, samples),
        open_output=lambda buffer, on_played: SilentSpeaker(buffer),
        partials=whisper_partials,
    )


@pytest.mark.models
def test_the_live_view_shows_a_recorded_question_as_it_is_said() -> None:
    live = LiveChat()
    talk = recorded_question_conversation(AUDIO / "fox-story.wav")
    live.open(talk)
    seen: list[tuple[str, bool]] = []  # each "you" line's words, and whether it was still live

    async def main() -> None:
        app = live.view()
        async with app.run_test(size=(100, 30)) as pilot:
            while not any(not partial for _text, partial in seen):
                seen.extend(
                    (line.body.plain, line.has_class("partial"))
                    for line in yours(app)
                    if (line.body.plain, line.has_class("partial")) not in seen
                )
                await pilot.pause(0.02)
            await pilot.press("q")
            while app.is_running:
                await pilot.pause(0.02)

    try:
        asyncio.run(main())
    finally:
        live.close()
    live_words = [text for text, partial in seen if partial]
    assert live_words  # words were on the screen before the transcript
    assert all(text for text in live_words)
    assert seen[-1] == ("Tell me a short story about a fox.", False)  # and the line ended as what was heard

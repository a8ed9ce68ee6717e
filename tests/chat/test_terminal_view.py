"""The live terminal view of `voice chat`, driven headless with Textual's pilot.

The events are real: recorded from `voice simulate` (tests/chat/recorded, its events.jsonl) or
published by a real engine that the view's keys drive. No models load here.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from rich.text import Text
from textual import events
from textual.pilot import Pilot

from tests.support.devices import ThreadedMicrophone, stand_in_conversation
from tests.support.room import REPLY, Room, ask
from tests.support.stand_ins import RecordingThinker
from voice import client_events as stream
from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.chat.driver import AudioInput, DeviceConversation
from voice.chat.input_level import LevelMeter
from voice.chat.live import LiveChat, screen_apart_from_native_stderr
from voice.chat.terminal_view import ChatView
from voice.chat.view_widgets import Line
from voice.conversation.session_log import SessionLog, load_session
from voice.engine.inputs import CancelReply, EngineInput, MuteMicrophone, TextInput
from voice.errors import DeviceError
from voice.testing.stand_ins import WORD

RECORDED = Path(__file__).resolve().parent / "recorded"


def recorded(scenario: str) -> list[stream.StreamEvent]:
    """The events a simulated conversation published, as the objects the stream carries."""
    lines = (RECORDED / f"{scenario}.events.jsonl").read_text().splitlines()
    return [stream.event_from_json(json.loads(line)) for line in lines]


class FakeControls:
    """Records what the view asks for; an engine, when given, takes the inputs and its events go back."""

    def __init__(self, room: Room | None = None) -> None:
        self.room = room
        self.sent: list[EngineInput] = []
        self.stopped = False
        self.new_conversations = 0
        self.view: ChatView | None = None

    def start(self, view: ChatView) -> None:
        self.view = view

    def send(self, event: EngineInput) -> None:
        self.sent.append(event)
        if self.room is not None:
            self.room.engine.handle(event)
            self.publish_engine_events()

    def publish_engine_events(self) -> None:
        assert self.room is not None
        assert self.view is not None
        for event in self.room.engine.take_events():
            self.view.publish(event)

    def new_conversation(self) -> None:
        self.new_conversations += 1

    def stop(self) -> None:
        self.stopped = True
        assert self.view is not None
        self.view.ended()


def run_view(controls: FakeControls, script: Callable[[ChatView, Pilot[None]], Awaitable[None]]) -> None:
    async def main() -> None:
        app = ChatView(controls)
        async with app.run_test(size=(100, 30)) as pilot:
            await script(app, pilot)

    asyncio.run(main())


async def type_keys(pilot: Pilot[None], *keys: str) -> None:
    """Keys into the focused text box as a terminal hands in a fast typist's: a key event each, none
    waiting for the one before to be handled (``pilot.press`` waits 40-60 ms for idle after each)."""
    for key in keys:
        if len(key) == 1:
            pilot.app.post_message(events.Key("space" if key == " " else key, key))
        else:
            pilot.app.post_message(events.Key(key, None))  # enter, escape: named keys
    await pilot.pause()


def without_ids(sent: list[EngineInput]) -> list[EngineInput]:
    """What the view sent, typed input without its generated id."""
    return [replace(event, input_id=None) if isinstance(event, TextInput) else event for event in sent]


def struck(body: Text) -> str:
    """The part of a line drawn struck through."""
    return "".join(body.plain[span.start : span.end] for span in body.spans if "strike" in str(span.style))


def said(app: ChatView, who: str) -> list[Line]:
    return [line for line in app.lines() if line.who == who]


def test_a_conversation_with_two_interruptions_shows_states_struck_words_and_timings() -> None:
    events = recorded("two-interruptions")
    shown: list[str] = []

    async def script(app: ChatView, pilot: Pilot[None]) -> None:
        await pilot.pause()
        shown.append(app.status.state)  # before any event
        for event in events:
            app.publish(event)
            if isinstance(event, stream.StateChanged):  # only these move the shown state: pause for them
                await pilot.pause()
                if shown[-1] != app.status.state:
                    shown.append(app.status.state)
        await pilot.pause()  # the other events drawn too

        replies = said(app, "assistant")
        first = next(e for e in events if isinstance(e, stream.ResponseInterrupted))
        assert replies[0].body.plain == f"{first.heard} ‖ {first.unheard}"  # the cut marked for any terminal
        assert struck(replies[0].body) == first.unheard  # the words never heard, and only those
        assert replies[2].body.plain.startswith("A light jacket will do")
        assert not struck(replies[2].body)
        assert [line.body.plain for line in said(app, "you")] == [
            "What will the weather be like tomorrow?",
            "actually what about that weekend?",
            "And what should I wear?",
        ]
        timings = [line.body.plain for line in app.lines() if line.who.startswith("turn")]
        # turn 1: spoke 3.36 s after the question ended at 2.66; its audio ended at 9.425 s, speech began 9.32
        assert timings[0] == "voice-to-voice 700 ms · you cut in: it stopped 105 ms after you began"
        assert timings[2] == "voice-to-voice 1100 ms"  # the engine's own figure, from response.done

    run_view(FakeControls(), script)

    assert shown == [
        "listening",
        "user_speaking",
        "thinking",
        "speaking",
        "paused",  # the reply stops while the view hears you, before the transcript decides
        "thinking",
        "speaking",
        "paused",
        "thinking",
        "speaking",
        "listening",
    ]


def test_the_stop_key_cancels_the_reply_and_the_heard_words_stay_unstruck() -> None:
    room = Room()
    controls = FakeControls(room)

    async def script(app: ChatView, pilot: Pilot[None]) -> None:
        ask(room)
        room.synthesize(room.stream(1, REPLY))
        room.play(1, 3 * WORD + WORD // 2)  # "Tomorrow starts dry," heard, "then" half played
        controls.publish_engine_events()
        await pilot.pause()
        assert app.status.state == "speaking"
        assert said(app, "assistant")[0].body.plain == "Tomorrow starts dry,"

        await pilot.press("s")
        await pilot.pause()

        assert controls.sent == [CancelReply()]
        reply = said(app, "assistant")[0].body
        assert reply.plain == "Tomorrow starts dry, ‖ then rain moves in from the west."
        assert struck(reply) == "then rain moves in from the west."
        assert app.lines()[-1].who == "turn 1"
        assert app.lines()[-1].body.plain.endswith("stopped with s")
        assert app.status.state == "listening"

    run_view(controls, script)


def test_typed_input_goes_to_the_engine_with_an_id_and_letters_typed_are_not_keys() -> None:
    room = Room()
    controls = FakeControls(room)

    async def script(app: ChatView, pilot: Pilot[None]) -> None:
        await pilot.press("t")
        await type_keys(pilot, *"Is it sunny", "enter")
        await pilot.pause()

        assert len(controls.sent) == 1  # the "s" and "n" typed were letters, not stop and new
        typed = controls.sent[0]
        assert isinstance(typed, TextInput)
        assert typed.text == "Is it sunny"
        assert typed.input_id is not None
        assert typed.input_id.startswith("tui-")
        assert [line.body.plain for line in said(app, "you")] == ["Is it sunny"]  # as the engine took it
        assert app.status.state == "thinking"

        await pilot.press("escape", "m")  # out of the text box, the letters are keys again
        assert controls.sent[1:] == [MuteMicrophone(True)]

    run_view(controls, script)


def test_letters_that_come_with_the_t_in_one_burst_are_typed_not_keys() -> None:
    room = Room()
    controls = FakeControls(room)

    async def script(app: ChatView, pilot: Pilot[None]) -> None:
        await type_keys(pilot, "t", *"stop now", "enter")  # a paste, or typing before the box has focus
        await pilot.pause()

        assert without_ids(controls.sent) == [TextInput("stop now")]
        assert controls.new_conversations == 0  # the "n" was a letter, as the "s" was (no CancelReply)
        assert [line.body.plain for line in said(app, "you")] == ["stop now"]

    run_view(controls, script)
    assert not controls.stopped


def test_keys_in_one_burst_before_t_and_after_escape_are_keys() -> None:
    controls = FakeControls()

    async def script(app: ChatView, pilot: Pilot[None]) -> None:
        await type_keys(pilot, "m", "t", *"hi", "enter")
        await pilot.pause()
        assert without_ids(controls.sent) == [MuteMicrophone(True), TextInput("hi")]

        await pilot.press("escape")
        await type_keys(pilot, "m", "n")
        assert without_ids(controls.sent)[2:] == [MuteMicrophone(False)]
        assert controls.new_conversations == 1

    run_view(controls, script)


def test_mute_shows_muted_while_listening_and_unmute_undoes_it() -> None:
    controls = FakeControls()

    async def script(app: ChatView, pilot: Pilot[None]) -> None:
        await pilot.press("m")
        assert app.status.state == "muted"
        assert "muted" in app.status.line().plain
        await pilot.press("m")
        assert app.status.state == "listening"

    run_view(controls, script)
    assert controls.sent == [MuteMicrophone(True), MuteMicrophone(False)]


def test_quitting_stops_the_conversation_and_exits() -> None:
    for key in ("q", "ctrl+c"):
        controls = FakeControls()

        async def script(app: ChatView, pilot: Pilot[None], key: str = key) -> None:
            await pilot.press(key)
            await pilot.pause()
            assert not app.is_running  # the driver said it ended (the fake at once), so the app left

        run_view(controls, script)
        assert controls.stopped, key


def test_levels_tools_and_errors_are_one_line_each() -> None:
    events = recorded("tool-call-completed")

    async def script(app: ChatView, pilot: Pilot[None]) -> None:
        app.publish(stream.InputLevel(-23.4, True, 0.5))
        await pilot.pause()
        bar = app.status.line().plain
        assert "-23 dB" in bar
        assert bar.count("█") == 12
        assert app.status.voice
        for event in events:
            app.publish(event)
        app.publish(stream.Failure("llm.unavailable", "LLM unavailable:\n  connection refused", t=9.0))
        app.say("the microphone delivered nothing for 1 s; reopening the audio devices")
        for _ in range(3):
            app.say("ALSA lib pcm.c:8570:(snd_pcm_recover) underrun occurred")
        await pilot.pause()

        assert [(line.who, line.body.plain) for line in app.lines() if line.who in {"tool", "error"}] == [
            ("tool", 'forecast(day="sunday")'),
            ("tool", "forecast → Dry, fourteen degrees."),
            ("error", "llm.unavailable: LLM unavailable: connection refused"),
        ]
        notices = [line.body.plain for line in app.lines() if line.who == "notice"]
        assert notices == [
            "the microphone delivered nothing for 1 s; reopening the audio devices",
            "ALSA lib pcm.c:8570:(snd_pcm_recover) underrun occurred (3 times)",  # one line, counted
        ]

    run_view(FakeControls(), script)


def test_the_level_meter_publishes_rms_ten_times_a_second_with_the_vad_light() -> None:
    levels: list[stream.InputLevel] = []
    voiced_until = 0
    meter = LevelMeter(levels.append, lambda: voiced_until)
    tone = np.full(640, 0.1, dtype=np.float32)  # 40 ms blocks at -20 dBFS
    for index in range(25):  # one second
        if index == 12:
            voiced_until = 13 * 640  # the VAD found a voiced frame in the 13th block
        meter.add(AudioBlock(tone, ENGINE_RATE, index * 640))

    assert len(levels) == 8  # every 3 blocks (120 ms): never more than ten a second
    assert {level.dbfs for level in levels} == {-20.0}
    assert [level.voice for level in levels] == [False, False, False, False, True, False, False, False]
    assert levels[0].t == 0.12


def paced_microphone(deliver: Callable[[AudioBlock], None]) -> ThreadedMicrophone:
    """Delivers 40 ms blocks of a tone every 40 ms, as a sound card would."""
    return ThreadedMicrophone(deliver, blocks=10_000, level=0.05, every_s=0.04)


def device_conversation(
    thinker: RecordingThinker, input_levels: bool, session_log: SessionLog | None = None
) -> DeviceConversation:
    return stand_in_conversation(
        paced_microphone, thinker=thinker, session_log=session_log, input_levels=input_levels
    )


async def until(pilot: Pilot[None], done: Callable[[], bool]) -> None:
    """Let the app run until ``done`` (the test's timeout bounds the wait)."""
    while not done():
        await pilot.pause(0.02)


def test_the_live_view_runs_the_real_driver_on_its_own_thread() -> None:
    thinker = RecordingThinker()
    live = LiveChat()
    talk = device_conversation(thinker, input_levels=True)
    live.open(talk, [stream.Failure("tools", "weather: the server did not start", t=0.0)])

    async def main() -> None:
        app = live.view()
        async with app.run_test(size=(100, 30)) as pilot:
            await until(pilot, lambda: app.status.dbfs is not None)
            errors = [line.body.plain for line in said(app, "error")]
            assert errors == ["tools: weather: the server did not start"]  # said before anything else
            assert round(app.status.dbfs or 0) == -26  # the mic's tone, measured on the driver's thread
            await pilot.press("t")
            await type_keys(pilot, *"Hello there", "enter")
            await until(pilot, lambda: bool(thinker.sent))
            await pilot.press("escape", "q")  # in the text box a q is a letter
            await until(pilot, lambda: not app.is_running)

    try:
        asyncio.run(main())
    finally:
        live.close()
    assert thinker.sent[0].items[-1].text == "Hello there"  # type: ignore[union-attr]


def test_a_new_conversation_starts_a_fresh_log_and_a_clear_view(tmp_path: Path) -> None:
    first = tmp_path / "chat-first.jsonl"
    thinker = RecordingThinker()
    live = LiveChat()
    talk = device_conversation(thinker, input_levels=False, session_log=SessionLog.create(first))
    live.open(talk)

    async def main() -> None:
        app = live.view()
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.press("t")
            await type_keys(pilot, *"Hello there", "enter", "escape")
            await until(pilot, lambda: bool(said(app, "you")))
            await pilot.press("n")
            await until(pilot, lambda: "new conversation" in app.lines()[0].body.plain)
            assert [line.who for line in app.lines()] == ["notice"]  # the old lines are gone
            await pilot.press("q")
            await until(pilot, lambda: not app.is_running)

    try:
        asyncio.run(main())
    finally:
        live.close()
    logs = sorted(tmp_path.glob("chat-*.jsonl"))
    assert len(logs) == 2
    assert any(getattr(e.event, "text", None) == "Hello there" for e in load_session(first).events)
    assert talk.runner.session_log is not None
    assert talk.runner.session_log.path != first


def test_the_mic_level_is_published_only_when_asked_for() -> None:
    published: list[str] = []
    talk = device_conversation(RecordingThinker(), input_levels=False)
    talk.runner.events.subscribe(lambda event: published.append(event.type))

    async def main() -> None:
        loop = asyncio.get_running_loop()
        loop.call_later(0.5, talk.stop)
        await talk.run()

    asyncio.run(main())
    assert "input.level" not in published  # the kiosk's clients and the simulation never see it


def test_what_c_libraries_write_to_stderr_becomes_notices_off_the_screen() -> None:
    said: list[str] = []
    original = sys.__stderr__
    with screen_apart_from_native_stderr(said.append):
        assert sys.__stderr__ is not original  # Textual draws on a copy of stdout's terminal instead
        os.write(2, b"ALSA lib pcm.c:8570:(snd_pcm_recover) underrun occurred\n")
    assert sys.__stderr__ is original
    assert said == ["ALSA lib pcm.c:8570:(snd_pcm_recover) underrun occurred"]


def test_a_missing_microphone_is_raised_before_the_view_takes_the_screen() -> None:
    def no_microphone(deliver: Callable[[AudioBlock], None]) -> AudioInput:
        raise DeviceError("no microphone named 'desk-mic'")

    talk = stand_in_conversation(no_microphone)
    live = LiveChat()

    with pytest.raises(DeviceError, match="desk-mic"):
        live.run(talk)  # the view never started: the error is one line on a plain terminal
    assert not any(thread.name == "voice-chat-driver" for thread in threading.enumerate())


def test_a_backchannel_is_a_small_mark_on_the_reply_and_a_stop_marks_the_users_words() -> None:
    events: list[stream.StreamEvent] = [
        stream.InputTranscript("speech-1", "Tell me a story.", None, 1.0),
        stream.ResponseCreated(1, 1.0),
        stream.ResponseHeard(1, "Once upon a time,", 4, 2.0),
        stream.InputBackchannel("Mm-hmm.", 1, 2.5),
        stream.ResponseHeard(1, "Once upon a time, a fox", 6, 3.0),
        stream.ResponseDone(1, "Once upon a time, a fox.", {}, 3.5),
        stream.InputBackchannel("Wow.", None, 3.8),  # just after it ended
        stream.InputTranscript("speech-4", "Tell me another.", None, 5.0),
        stream.ResponseCreated(2, 5.0),
        stream.ResponseHeard(2, "There was", 2, 6.0),
        stream.ResponseInterrupted(2, "There was", "a hare.", 6100.0, 6.5),
        stream.InputTranscript("speech-5", "Stop.", None, 6.5),
        stream.InputStop("speech-5", "Stop.", 6.5),
    ]

    async def script(app: ChatView, pilot: Pilot[None]) -> None:
        for event in events:
            app.publish(event)
        await pilot.pause()

        replies = said(app, "assistant")
        assert replies[0].body.plain == "Once upon a time, a fox.  ✓ Mm-hmm.  ✓ Wow."
        assert replies[1].body.plain == "There was ‖ a hare."
        assert [line.body.plain for line in said(app, "you")] == [
            "Tell me a story.",
            "Tell me another.",
            "Stop.  ■ stop: listening",
        ]  # a backchannel is never a line of the user's

    run_view(FakeControls(), script)

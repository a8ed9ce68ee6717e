"""What a client's buttons do to the engine: stop the reply, mute the mic, end the conversation."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tests.support.room import BLOCK, REPLY, Room, ask, reply_with_a_tool_call
from voice import client_events as stream
from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.audio.vad import VoiceEnded, VoiceStarted
from voice.audio.wav import read_wav
from voice.components import make_engine
from voice.conversation.continuation import Conversation
from voice.conversation.items import ABANDONED_RUNNING, AssistantText, ToolResult, UserText
from voice.engine.actions import CancelTurn, DropTranscription, RunTool, SendRequest, StopPlayback
from voice.engine.engine import Engine
from voice.engine.inputs import (
    CancelReply,
    EndConversation,
    MicAudio,
    MuteMicrophone,
    TextInput,
    ToolDone,
    TranscriptReady,
)
from voice.engine.phases import Phase
from voice.testing.stand_ins import QUESTION, WORD

AUDIO = Path(__file__).resolve().parents[2] / "audio"


def test_a_stop_keeps_what_was_heard_as_a_barge_in_would() -> None:
    room = Room()
    ask(room)
    room.synthesize(room.stream(1, REPLY))
    room.play(1, 3 * WORD + WORD // 2)
    room.engine.take_events()

    actions = room.engine.handle(CancelReply())

    assert actions == [CancelTurn(1), StopPlayback(1)]
    assert room.engine.phase is Phase.LISTENING
    interrupted = [e for e in room.engine.take_events() if isinstance(e, stream.ResponseInterrupted)]
    assert interrupted[0].heard == "Tomorrow starts dry,"
    request = room.engine.handle(TextInput("And on Sunday?", "t-1"))[0]
    assert isinstance(request, SendRequest)
    assert request.request.items == (
        UserText(QUESTION),
        AssistantText("Tomorrow starts dry,", interrupted=True),
        UserText("And on Sunday?"),
    )


def test_a_stop_before_anything_was_heard_keeps_the_question_pending() -> None:
    room = Room()
    ask(room)

    assert room.engine.handle(CancelReply()) == [CancelTurn(1), StopPlayback(1)]
    request = room.engine.handle(TextInput("in Paris", "t-1"))[0]

    assert isinstance(request, SendRequest)
    assert request.request.items == (UserText(f"{QUESTION} in Paris"),)


def test_a_stop_with_nothing_in_flight_does_nothing() -> None:
    room = Room()
    assert room.engine.handle(CancelReply()) == []
    assert room.engine.take_events() == []


def test_a_stop_while_tools_run_awaits_their_real_result_and_asks_nothing_more() -> None:
    room = Room()
    call, played = reply_with_a_tool_call(room, 3)
    assert played == [RunTool(1, call)]

    assert room.engine.handle(CancelReply()) == []
    actions = room.engine.handle(ToolDone(1, ToolResult("c1", "Dry.")))

    assert actions == [CancelTurn(1), StopPlayback(1)]
    assert room.engine.conversation.history[-1] == ToolResult("c1", "Dry.")
    assert room.engine.phase is Phase.LISTENING


def feed_speech(engine: Engine, start: int) -> int:
    """A recorded question, block by block from clock sample ``start``, through the real VAD."""
    speech = read_wav(AUDIO / "what-weather.wav").samples
    for offset in range(0, len(speech) - BLOCK + 1, BLOCK):
        engine.handle(MicAudio(AudioBlock(speech[offset : offset + BLOCK], ENGINE_RATE, start + offset)))
        if engine.phase is Phase.USER_SPEAKING:
            break
    return start + len(speech)


def test_a_muted_microphone_is_heard_as_silence() -> None:
    engine = make_engine()
    engine.handle(MuteMicrophone(True))
    clock = feed_speech(engine, 0)
    assert engine.phase is Phase.LISTENING
    assert [e for e in engine.take_events() if isinstance(e, stream.SpeechStarted)] == []

    engine.handle(MuteMicrophone(False))
    feed_speech(engine, clock)
    assert engine.phase is Phase.USER_SPEAKING


def test_ending_the_conversation_cuts_the_reply_and_the_next_one_numbers_turns_on() -> None:
    room = Room()
    ask(room)
    room.synthesize(room.stream(1, REPLY))
    room.play(1, 2 * WORD + WORD // 2)

    actions = room.engine.handle(EndConversation())

    assert actions == [CancelTurn(1), StopPlayback(1)]
    assert room.engine.conversation.history == (
        UserText(QUESTION),
        AssistantText("Tomorrow starts", interrupted=True),
    )
    old = room.engine.conversation
    room.engine.start_conversation(Conversation(turns_before=old.turns))
    request = room.engine.handle(TextInput("Hello?", "t-1"))[0]
    assert isinstance(request, SendRequest)
    assert request.request.turn == 2
    assert request.request.items == (UserText("Hello?"),)
    assert room.stream(1, ["Late", " words."]) == []  # the old conversation's turn is over for good


def test_ending_the_conversation_drops_a_transcript_still_to_come() -> None:
    room = Room()
    start = room.clock
    room.tick(VoiceStarted(start))
    room.tick(VoiceEnded(room.clock, AudioBlock(np.zeros(BLOCK, np.float32), ENGINE_RATE, start)))

    actions = room.engine.handle(EndConversation())

    assert actions == [DropTranscription(1)]
    assert room.engine.phase is Phase.LISTENING
    room.engine.start_conversation(Conversation())
    assert room.engine.handle(TranscriptReady(1, "What about tomorrow?")) == []
    assert room.engine.conversation.pending_input is None


def test_ending_the_conversation_while_tools_run_abandons_them() -> None:
    room = Room()
    call, _ = reply_with_a_tool_call(room, 3)

    assert room.engine.handle(EndConversation()) == [CancelTurn(1), StopPlayback(1)]
    assert room.engine.conversation.history[-3:] == (
        AssistantText("Let me check."),
        call,
        ToolResult("c1", ABANDONED_RUNNING, failed=True),
    )
    assert room.engine.active_turn is None

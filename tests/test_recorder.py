"""The recorder reads a session as a client and a log reader would: from the stream's JSON and the log's
records alone, it tells what each request carried, what was heard, when the reply played, and where the
user cut in."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from voice.conversation.items import AssistantText, UserText
from voice.conversation.log_records import (
    InputReceived,
    InputWithdrawn,
    ItemCommitted,
    LogRecord,
    TurnEnded,
    TurnStarted,
)
from voice.conversation.session_log import SessionLog
from voice.errors import SessionLogError
from voice.recorder import Recorder


def record(events: list[dict[str, Any]], log_records: list[LogRecord]) -> Recorder:
    """A recorder fed ``log_records`` and ``events`` (client JSON), each in order."""
    recorder = Recorder()
    for logged in log_records:
        recorder.note(logged)
    for event in events:
        recorder.see(event)
    return recorder


QUESTION = "What will the weather be like tomorrow?"
REPLY = "Tomorrow starts dry, then rain moves in from the west."
HEARD = "Tomorrow starts dry,"
CORRECTION = "Sorry, I meant on Sunday."

CUT_LOG: list[LogRecord] = [
    InputReceived(QUESTION, "speech-1"),
    TurnStarted(1),
    ItemCommitted(UserText(QUESTION)),
    ItemCommitted(AssistantText(HEARD, interrupted=True)),
    TurnEnded(1, True, REPLY, HEARD, 3.5),
    InputReceived(CORRECTION, "speech-2"),
    TurnStarted(2),
]


def state(name: str, t: float) -> dict[str, Any]:
    return {"type": "state", "state": name, "t": t}


CUT_EVENTS: list[dict[str, Any]] = [
    {"type": "input.speech_started", "t": 0.6},
    state("user_speaking", 0.6),
    {"type": "input.speech_stopped", "t": 2.0},
    state("thinking", 2.0),
    {"type": "input.transcript", "id": "speech-1", "text": QUESTION, "merged": None, "t": 2.1},
    {"type": "response.created", "turn": 1, "t": 2.1},
    {"type": "output_audio.started", "turn": 1, "t": 2.4},
    state("speaking", 2.4),
    {"type": "response.heard", "turn": 1, "text": "Tomorrow", "words": 1, "t": 2.9},
    {"type": "input.speech_started", "t": 3.3},
    state("user_speaking", 3.3),
    {"type": "input.speech_stopped", "t": 4.8},
    {"type": "input.transcript", "id": "speech-2", "text": CORRECTION, "merged": None, "t": 4.9},
    {
        "type": "response.interrupted",
        "turn": 1,
        "heard": HEARD,
        "unheard": "then",
        "audio_end_ms": 3500.0,
        "t": 4.9,
    },
    {"type": "output_audio.stopped", "turn": 1, "t": 3.5},
    {"type": "response.created", "turn": 2, "t": 4.9},
]


def test_a_cut_turn_keeps_its_request_the_words_heard_its_audio_and_where_the_user_cut_in() -> None:
    recorder = record(CUT_EVENTS, CUT_LOG)

    first, second = recorder.answered()
    assert first.request == (UserText(QUESTION),)
    assert (first.reply, first.spoken, first.interrupted) == (REPLY, HEARD, True)
    assert (first.audio_start_s, first.audio_end_s, first.barge_in_s) == (2.4, 3.5, 3.3)
    assert second.request == (
        UserText(QUESTION),
        AssistantText(HEARD, interrupted=True),
        UserText(CORRECTION),
    )
    assert [(s.start_s, s.end_s, s.transcript) for s in recorder.utterances()] == [
        (0.6, 2.0, QUESTION),
        (3.3, 4.8, CORRECTION),
    ]


def test_speech_over_the_reply_that_lets_it_go_on_is_a_false_alarm_not_a_barge_in() -> None:
    cough = [
        {"type": "response.created", "turn": 1, "t": 2.1},
        {"type": "output_audio.started", "turn": 1, "t": 2.4},
        state("speaking", 2.4),
        {"type": "input.speech_started", "t": 3.0},
        state("user_speaking", 3.0),
        {"type": "input.speech_stopped", "t": 3.2},
        state("thinking", 3.2),
        {"type": "response.resumed", "turn": 1, "t": 3.3},
        state("speaking", 3.3),
    ]
    done = {"type": "response.done", "turn": 1, "text": REPLY, "t": 6.0}
    measured = {"voice_to_voice_ms": 640.0, "false_barge_ins": 1}
    log: list[LogRecord] = [InputReceived(QUESTION, "speech-1"), TurnStarted(1)]

    (paused_then_on,) = record(cough, log).answered()
    (played_out,) = record([*cough, done | {"metrics": measured}], log).answered()

    assert (paused_then_on.barge_in_s, paused_then_on.false_barge_ins) == (None, 1)
    assert (played_out.spoken, played_out.false_barge_ins) == (REPLY, 1)  # counted once
    assert played_out.metrics["voice_to_voice_ms"] == 640.0


def test_an_utterance_that_gave_no_input_has_no_words_once_nothing_is_left_to_transcribe() -> None:
    knock_then_question = [
        {"type": "input.speech_started", "t": 1.0},
        {"type": "input.speech_stopped", "t": 1.2},
        state("thinking", 1.2),
        {"type": "input.speech_started", "t": 1.5},
        {"type": "input.speech_stopped", "t": 3.0},
    ]
    question = {"type": "input.transcript", "id": "speech-1", "text": QUESTION, "merged": None, "t": 3.1}
    cough = [
        {"type": "input.speech_started", "t": 5.0},
        {"type": "input.speech_stopped", "t": 5.2},
    ]

    waiting = record(knock_then_question, [])
    answered = record([*knock_then_question, question, *cough], [])
    listening = record([*knock_then_question, question, *cough, state("listening", 5.4)], [])

    assert [s.transcript for s in waiting.utterances()] == [None, None]  # both may still come
    assert [s.transcript for s in answered.utterances()] == ["", QUESTION, None]
    assert [s.transcript for s in listening.utterances()] == ["", QUESTION, ""]


def test_a_request_the_user_talked_past_at_a_pause_is_discarded_not_answered() -> None:
    log: list[LogRecord] = [
        InputReceived("Set a timer", "speech-1"),
        TurnStarted(1),
        TurnEnded(1, True),
        InputWithdrawn(None),
        InputReceived("Set a timer for ten minutes", "speech-1b"),
        TurnStarted(2),
    ]

    recorder = record([], log)

    assert [turn.turn for turn in recorder.discarded()] == [1]
    assert recorder.discarded()[0].request == (UserText("Set a timer"),)
    (answered,) = recorder.answered()
    assert answered.request == (UserText("Set a timer for ten minutes"),)


def test_a_recorded_run_is_read_back_from_its_files(tmp_path: Path) -> None:
    events = tmp_path / "events.jsonl"
    events.write_text("".join(json.dumps(event) + "\n" for event in CUT_EVENTS))
    with SessionLog.create(tmp_path / "session.jsonl") as log:
        log.append_all(CUT_LOG)

    recorder = Recorder.from_files(events, tmp_path / "session.jsonl")

    assert recorder.answered() == record(CUT_EVENTS, CUT_LOG).answered()


def test_a_torn_events_file_is_one_line_naming_where(tmp_path: Path) -> None:
    events = tmp_path / "events.jsonl"
    events.write_text(json.dumps(CUT_EVENTS[0]) + "\n" + '{"type": "state"\n')
    with SessionLog.create(tmp_path / "session.jsonl") as log:
        log.append_all(CUT_LOG)

    with pytest.raises(SessionLogError, match=r"events.jsonl:2: not a client event"):
        Recorder.from_files(events, tmp_path / "session.jsonl")

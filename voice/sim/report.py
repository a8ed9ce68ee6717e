"""report.json (docs/architecture.md §4): every LLM request, what was generated and heard, and when.

What the assistant did comes from the recorder (the client stream and the session log alone), so a
report can be rebuilt from a run's events.jsonl and session.jsonl; where the room placed the user's
audio and text comes from the room.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from voice.audio.block import ENGINE_RATE
from voice.conversation.items import item_to_json
from voice.recorder import RecordedOverlap, RecordedSpeech, RecordedTurn, Recorder
from voice.sim.driver import CuePlacement

REPORT_VERSION = 1
ROOM_KEYS = ("user_audio", "user_text")  # what the room did; every other key is what the assistant did


def seconds(sample: int | None) -> float | None:
    return None if sample is None else round(sample / ENGINE_RATE, 3)


def turn_json(turn: RecordedTurn) -> dict[str, Any]:
    data: dict[str, Any] = {
        "request": [item_to_json(item) for item in turn.request],
        "reply": turn.reply,
        "spoken": turn.spoken,
        "interrupted": turn.interrupted,
        "audio_start_s": turn.audio_start_s,
        "audio_end_s": turn.audio_end_s,
        "barge_in_s": turn.barge_in_s,
    }
    if turn.tool_calls:
        data["tool_calls"] = turn.tool_calls
    if turn.false_barge_ins:
        data["false_barge_ins"] = turn.false_barge_ins
    if turn.error:
        data["error"] = turn.error
    return data


def speech_json(speech: RecordedSpeech) -> dict[str, Any]:
    return {"start_s": speech.start_s, "end_s": speech.end_s, "transcript": speech.transcript}


def overlap_json(overlap: RecordedOverlap) -> dict[str, Any]:
    return {"t": overlap.t, "text": overlap.text, "turn": overlap.turn}


def assistant_report(recorder: Recorder) -> dict[str, Any]:
    """The report's figures about the assistant: turns, what the user said, discarded requests, notices."""
    report: dict[str, Any] = {
        "version": REPORT_VERSION,
        "turns": [turn_json(turn) for turn in recorder.answered()],
        "user_speech": [speech_json(speech) for speech in recorder.utterances()],
    }
    discarded = recorder.discarded()
    if discarded:  # docs/architecture.md §4: preemptive requests the user talked past, in no turn
        report["discarded_requests"] = [
            {"turn": turn.turn, "request": [item_to_json(item) for item in turn.request]}
            for turn in discarded
        ]
    if recorder.duplicates:
        report["duplicates"] = recorder.duplicates
    if recorder.notices:
        report["notices"] = recorder.notices
    if recorder.backchannels:  # a listener's words over a reply: it went on, nothing was asked
        report["backchannels"] = [overlap_json(overlap) for overlap in recorder.backchannels]
    if recorder.stops:  # stop phrases: the reply was cut and nothing asked
        report["stops"] = [overlap_json(overlap) for overlap in recorder.stops]
    return report


def room_report(cues: Iterable[CuePlacement]) -> dict[str, Any]:
    """Where the room placed the user's audio and typed text (or why a cue was skipped)."""
    cues = list(cues)
    report: dict[str, Any] = {
        "user_audio": [
            {"cue": c.cue, "wav": c.wav, "at_s": seconds(c.at)} | ({"skipped": c.reason} if c.reason else {})
            for c in cues
            if c.wav is not None
        ]
    }
    typed = [c for c in cues if c.text is not None]
    if typed:
        report["user_text"] = [
            {"cue": c.cue, "text": c.text, "at_s": seconds(c.at)}
            | ({"skipped": c.reason} if c.reason else {})
            for c in typed
        ]
    return report


def build_report(recorder: Recorder, cues: Iterable[CuePlacement]) -> dict[str, Any]:
    """The whole report.json, its keys in the order readers know."""
    assistant, room = assistant_report(recorder), room_report(cues)
    order = ("version", "turns", "user_speech", *ROOM_KEYS)
    report = {key: (assistant | room)[key] for key in order if key in assistant | room}
    return report | {key: value for key, value in assistant.items() if key not in report}


def rebuild_assistant_report(out: Path) -> dict[str, Any]:
    """The assistant's part of a run's report, from the events.jsonl and session.jsonl it wrote."""
    return assistant_report(Recorder.from_files(out / "events.jsonl", out / "session.jsonl"))

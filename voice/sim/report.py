"""report.json (docs/architecture.md §4): every LLM request, what was generated and heard, and when."""

from __future__ import annotations

from typing import Any

from voice.audio.block import ENGINE_RATE
from voice.conversation.items import Item, item_to_json
from voice.engine.records import SpeechRecord, TurnRecord
from voice.sim.driver import SimulationResult

REPORT_VERSION = 1


def seconds(sample: int | None) -> float | None:
    return None if sample is None else round(sample / ENGINE_RATE, 3)


def turn_json(record: TurnRecord, request: tuple[Item, ...]) -> dict[str, Any]:
    data: dict[str, Any] = {
        "request": [item_to_json(item) for item in request],
        "reply": record.reply,
        "spoken": record.spoken,
        "interrupted": record.interrupted,
        "audio_start_s": seconds(record.audio_start),
        "audio_end_s": seconds(record.audio_end),
        "barge_in_s": seconds(record.barge_in),
    }
    if record.tool_calls:
        data["tool_calls"] = record.tool_calls
    if record.false_barge_ins:
        data["false_barge_ins"] = record.false_barge_ins
    if record.error:
        data["error"] = record.error
    return data


def speech_json(record: SpeechRecord) -> dict[str, Any]:
    return {"start_s": seconds(record.start), "end_s": seconds(record.end), "transcript": record.transcript}


def build_report(result: SimulationResult) -> dict[str, Any]:
    report: dict[str, Any] = {
        "version": REPORT_VERSION,
        "turns": [
            turn_json(record, result.requests[record.turn])
            for record in result.engine.turns
            if not record.discarded
        ],
        "user_speech": [speech_json(record) for record in result.engine.speech],
        "user_audio": [
            {"cue": c.cue, "wav": c.wav, "at_s": seconds(c.at)} | ({"skipped": c.reason} if c.reason else {})
            for c in result.cues
            if c.wav is not None
        ],
    }
    typed = [c for c in result.cues if c.text is not None]
    if typed:
        report["user_text"] = [
            {"cue": c.cue, "text": c.text, "at_s": seconds(c.at)}
            | ({"skipped": c.reason} if c.reason else {})
            for c in typed
        ]
    discarded = [record for record in result.engine.turns if record.discarded]
    if discarded:  # docs/architecture.md §4: preemptive requests the user talked past, in no turn
        report["discarded_requests"] = [
            {"turn": record.turn, "request": [item_to_json(item) for item in result.requests[record.turn]]}
            for record in discarded
        ]
    duplicates = [event["id"] for event in result.events if event["type"] == "input.duplicate"]
    if duplicates:
        report["duplicates"] = duplicates
    if result.notices:
        report["notices"] = result.notices
    return report

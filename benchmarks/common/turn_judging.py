"""A turn heard through the VAD, whisper, Smart Turn and the engine of an eagerness until its first request,
each judgement noted, and what many such runs add up to: whole turns ended at the short pause, pauses answered
into. turn_end.py's ``--set`` runs (benchmarks/README.md says what each figure means)."""

from __future__ import annotations

import statistics
from typing import Any

from cases.hearing_sets import Turn

from common.listening_engine import feed, listening, mic_blocks
from voice.asr.port import Transcriber, Transcript
from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.components import SpeechModels, make_engine
from voice.engine.hold import Eagerness
from voice.engine.transcripts import ends_a_sentence
from voice.engine.utterances import COMPLETE_ABOVE
from voice.turn_end.port import EndOfTurn

INSIDE_MS = -300  # a request this long before the last word's end came at a pause inside the question


class Noted:
    """Whisper and Smart Turn in one run, noting in order what each said (a judgement follows its text)."""

    def __init__(self, transcriber: Transcriber, model: EndOfTurn) -> None:
        self._transcriber = transcriber
        self._model = model
        self.said: list[tuple[str, Any]] = []

    def transcribe(self, audio: AudioBlock, **options: Any) -> Transcript:
        heard = self._transcriber.transcribe(audio, **options)
        self.said.append(("whisper", heard.text))
        return heard

    def probability_complete(self, audio: AudioBlock) -> float:
        probability = self._model.probability_complete(audio)
        self.said.append(("smart_turn", (audio.end, probability)))
        return probability

    def judgements(self, speech_end: int) -> list[dict[str, Any]]:
        """Each judged pause: where it was (ms after the speech's end), Smart Turn's p, whisper's text."""
        found, text = [], ""
        for who, what in self.said:
            if who == "whisper":
                text = what
            else:
                end, probability = what
                at_ms = round((end - speech_end) * 1000 / ENGINE_RATE)
                found.append({"at_ms": at_ms, "p": round(probability, 3), "whisper": text})
        return found


def judged_run(turn: Turn, models: SpeechModels, eagerness: Eagerness) -> dict[str, Any]:
    """``turn`` through the VAD, whisper, Smart Turn and engine of ``eagerness`` until the first request."""
    assert models.end_of_turn is not None
    noted = Noted(models.transcriber, models.end_of_turn)
    runner, requests = listening(make_engine(eagerness=eagerness), noted, noted)
    sent, early = None, False
    for block in mic_blocks(turn.signal):
        judged_before = sum(who == "smart_turn" for who, _ in noted.said)
        feed(runner, block)
        if requests.sent:
            sent = block.end
            # ended at the pause: the request went out on the judgement, not on the VAD's long silence
            early = sum(who == "smart_turn" for who, _ in noted.said) > judged_before
            break
    judgements = noted.judgements(turn.speech_end)
    last = judgements[-1] if judgements else None
    why_not = None
    if not early:
        if last is None:  # else the last judgement was of the final pause: speech after it is judged again
            why_not = "the VAD never paused"
        else:
            unfinished, no_stop = last["p"] <= COMPLETE_ABOVE, not ends_a_sentence(last["whisper"])
            why_not = "both" if unfinished and no_stop else "smart_turn" if unfinished else "whisper"
    return {
        "name": turn.name,
        "family": turn.family,
        "kind": turn.kind,
        "eagerness": eagerness.value,
        "first_part_sounds_finished": turn.first_part_sounds_finished,
        "early": early,
        "into_pause": sent is not None and sent < turn.speech_end,
        "sent_ms_after_speech": None
        if sent is None
        else round((sent - turn.speech_end) * 1000 / ENGINE_RATE),
        "why_not": why_not,
        "judgements": judgements,
    }


def share(runs: list[dict[str, Any]]) -> dict[str, Any]:
    early = sum(run["early"] for run in runs)
    return {"early": early, "of": len(runs), "share": round(early / len(runs), 3) if runs else None}


def by(runs: list[dict[str, Any]], key: str) -> dict[str, Any]:
    return {
        str(value): share([r for r in runs if r[key] == value]) for value in sorted({r[key] for r in runs})
    }


def at_the_pause(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Whole turns: the share ended at the short pause, per family, why not, and the request's delay."""
    whole = [r for r in runs if r["kind"] == "whole"]
    not_early = [r for r in whole if not r["early"]]
    delays = [r["sent_ms_after_speech"] for r in whole if r["sent_ms_after_speech"] is not None]
    return {
        **share(whole),
        "per_family": by(whole, "family"),
        "request_ms_after_speech_median": statistics.median(delays) if delays else None,
        "ended_inside": [r["name"] for r in whole if r["early"] and r["sent_ms_after_speech"] < INSIDE_MS],
        "why_not": {
            why: sum(r["why_not"] == why for r in not_early)
            for why in sorted({r["why_not"] for r in not_early})
        },
        "not_ended_at_the_pause": [
            {
                "name": r["name"],
                "why_not": r["why_not"],
                "sent_ms_after_speech": r["sent_ms_after_speech"],
                "last_judgement": (r["judgements"] or [None])[-1],
            }
            for r in not_early
        ],
    }


def into_pauses(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Turns with a mid-sentence pause: how many had a request sent into the pause."""
    paused = [r for r in runs if r["kind"] == "paused"]
    return {
        "runs": len(paused),
        "request_into_the_pause": sum(r["into_pause"] for r in paused),
        "by_first_part": {
            label: sum(r["into_pause"] for r in paused if r["first_part_sounds_finished"] is finished)
            for label, finished in (("sounds_finished", True), ("unfinished", False), ("unknown", None))
        },
        "ended_into_the_pause": [
            {"name": r["name"], "judgements": r["judgements"]} for r in paused if r["into_pause"]
        ],
    }

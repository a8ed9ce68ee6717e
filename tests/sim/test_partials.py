"""Live words in the virtual room with the real models: partials arrive while a recorded question plays
into the room, and end equal to its transcript; the turn goes exactly as it goes without them."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.support.paths import AUDIO
from tests.support.scenarios import RunScenario, read_events
from tests.support.word_error import same_but_one_word
from voice.asr.partial_whisper import whisper_partials
from voice.components import SpeechModels
from voice.sim.run import run_scenario
from voice.sim.scenario import load_scenario

pytestmark = pytest.mark.models


def with_partials(
    name: str, speech_models: SpeechModels, out: Path, *, realtime: bool = False
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    scenario = load_scenario(AUDIO / "scenarios" / f"{name}.json")
    report = run_scenario(scenario, out, models=speech_models, partials=whisper_partials(), realtime=realtime)
    return report, read_events(out)


def words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9']+", text.lower())


def speech_span(report: dict[str, Any], manifest: dict[str, dict[str, Any]], cue: int) -> tuple[float, float]:
    """Where cue ``cue``'s speech really began and ended in the room (its WAV's measured span)."""
    placed = report["user_audio"][cue]
    fixture = manifest[placed["wav"]]
    return placed["at_s"] + fixture["start_s"], placed["at_s"] + fixture["end_s"]


def test_partials_arrive_while_a_question_is_said_and_end_as_its_transcript(
    speech_models: SpeechModels,
    simulated: RunScenario,
    manifest: dict[str, dict[str, Any]],
    tmp_path: Path,
) -> None:
    report, events = with_partials("plain-turn", speech_models, tmp_path)

    partials = [event for event in events if event["type"] == "input.partial"]
    [transcript] = [event for event in events if event["type"] == "input.transcript"]
    began, ended = speech_span(report, manifest, 0)
    live = [event for event in partials if not event["final"]]
    while_said = [event for event in live if began < event["t"] <= ended]
    assert len(while_said) >= 2  # the words came while the question was still being said
    assert len(words(while_said[0]["text"])) < len(words(while_said[-1]["text"]))  # and grew
    # the last decode heard what whisper heard, but for a word the CPU's kernels may hear apart ("winner")
    assert same_but_one_word(live[-1]["text"], transcript["text"]), (live[-1], transcript)
    assert partials[-1] == {
        "type": "input.partial",
        "text": transcript["text"],
        "final": True,
        "t": partials[-1]["t"],
    }
    assert events.index(partials[-1]) > events.index(transcript)
    assert sum(event["final"] for event in partials) == 1

    without, out = simulated("plain-turn")
    assert not any(event["type"] == "input.partial" for event in read_events(out))  # only when asked
    assert report["turns"] == without["turns"]  # the turn is the same, to the sample
    assert report["user_speech"] == without["user_speech"]


def test_a_cut_in_over_the_reply_shows_words_only_once_it_cut_the_reply(
    speech_models: SpeechModels, simulated: RunScenario, tmp_path: Path
) -> None:
    report, events = with_partials("interrupt-mid", speech_models, tmp_path)

    cut = next(index for index, event in enumerate(events) if event["type"] == "response.interrupted")
    started = [index for index, event in enumerate(events) if event["type"] == "input.speech_started"]
    over_reply = started[1]  # the second utterance began while the reply played
    assert not any(event["type"] == "input.partial" for event in events[over_reply:cut])
    final = [event for event in events[cut:] if event["type"] == "input.partial" and event["final"]]
    spoken = [event for event in events[cut:] if event["type"] == "input.transcript"]
    assert [event["text"] for event in final] == [event["text"] for event in spoken]

    without, _out = simulated("interrupt-mid")
    assert report["turns"] == without["turns"]  # the barge-in and what was heard are unchanged


def test_in_real_time_partials_come_from_their_own_thread_and_end_as_the_transcript(
    speech_models: SpeechModels, tmp_path: Path
) -> None:
    report, events = with_partials("plain-turn", speech_models, tmp_path, realtime=True)

    partials = [event for event in events if event["type"] == "input.partial"]
    [transcript] = [event for event in events if event["type"] == "input.transcript"]
    # when they come depends on the machine's load (their thread runs at nice 19): benchmarks/partials.py
    assert any(not event["final"] for event in partials)
    assert partials[-1]["final"]
    assert partials[-1]["text"] == transcript["text"]
    assert [turn["interrupted"] for turn in report["turns"]] == [False]

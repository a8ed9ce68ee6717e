"""A wake word in the virtual room, with the real wake models, whisper and piper (scripted LLM): asleep,
only the wake word gets the assistant's ear; the words after it are the first input; it cuts a reply
said over it; after the quiet time it sleeps again."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.scenarios import read_events, simulate, words
from tests.support.wake_words import QUESTION, SAID, espeak_says, piper_says, save
from voice.components import SpeechModels
from voice.tts.piper_voice import PiperSynthesizer

LONG_REPLY = (
    "It is a quarter past ten in the morning, and the sun has been up for a few hours already, so there "
    "is plenty of the day left for a long walk along the river and a late lunch in the old town."
)


def scripted(*replies: str) -> dict[str, Any]:
    return {"replies": list(replies), "first_delta_ms": 300, "delta_ms": 40}


def spoken(events: list[dict[str, Any]]) -> list[str]:
    return [event["text"] for event in events if event["type"] == "input.transcript"]


def requests(events: list[dict[str, Any]]) -> int:
    return sum(event["type"] == "response.created" for event in events)


def states(events: list[dict[str, Any]]) -> list[str]:
    return [event["state"] for event in events if event["type"] == "state"]


@pytest.mark.models
@pytest.mark.parametrize("name", sorted(SAID))
def test_a_sleeping_assistant_ignores_a_question_and_wakes_for_it_after_the_wake_word(
    name: str, synthesizer: PiperSynthesizer, speech_models: SpeechModels, tmp_path: Path
) -> None:
    plain = save(piper_says(synthesizer, f"Okay, {QUESTION}"), tmp_path / "plain.wav")
    woken = save(piper_says(synthesizer, f"{SAID[name]}, {QUESTION}"), tmp_path / "wake.wav")
    scenario = {
        "llm": scripted("Ten past ten."),
        "wake": {"word": name},
        "user": [{"wav": str(plain), "at_s": 0.5}, {"wav": str(woken), "at_s": 5.0}],
        "end_s": 12,
    }
    _, out = simulate(tmp_path, speech_models, scenario)
    events = read_events(out)
    woke_at = next(i for i, e in enumerate(events) if e["type"] == "state" and e["state"] == "listening")
    assert states(events)[0] == "asleep"
    assert not [e for e in events[:woke_at] if e["type"].startswith("input.")]  # the plain question: unheard
    assert 5.5 < events[woke_at]["t"] < 7.0  # woken where the wake word ended, not before
    assert spoken(events) == ["What's the time?"]  # the words after the wake word, without it
    assert requests(events) == 1


@pytest.mark.models
def test_a_voice_of_espeak_at_its_own_pace_wakes_it_too(speech_models: SpeechModels, tmp_path: Path) -> None:
    woken = save(espeak_says(f"Okay Nabu, {QUESTION}", "en-gb-x-rp", speed=150), tmp_path / "wake.wav")
    scenario = {
        "llm": scripted("Ten past ten."),
        "wake": {"word": "okay_nabu"},
        "user": [{"wav": str(woken), "at_s": 1.0}],
        "end_s": 8,
    }
    _, out = simulate(tmp_path, speech_models, scenario)
    [heard] = spoken(read_events(out))
    assert words(heard)[-2:] == ["the", "time"]  # whisper hears espeak's "what's" as "what is"
    assert not {"okay", "ok", "nabu"} & set(words(heard))


@pytest.mark.models
def test_the_wake_word_over_a_loud_reply_cuts_it_and_the_words_after_it_are_the_next_input(
    synthesizer: PiperSynthesizer, speech_models: SpeechModels, tmp_path: Path
) -> None:
    woken = save(piper_says(synthesizer, f"Okay Nabu, {QUESTION}"), tmp_path / "wake.wav")
    joke = save(piper_says(synthesizer, "Okay Nabu, tell me a joke."), tmp_path / "joke.wav")
    scenario = {
        "llm": scripted(LONG_REPLY, "Here is one."),
        "wake": {"word": "okay_nabu"},
        "room": {"echo_gain_db": -6, "echo_delay_ms": 300},  # a loud speaker
        "user": [
            {"wav": str(woken), "at_s": 0.5},
            {"wav": str(joke), "during_reply": 1, "after_ms": 3000},
        ],
        "end_s": 25,
    }
    _, out = simulate(tmp_path, speech_models, scenario)
    events = read_events(out)
    [cut] = [e for e in events if e["type"] == "response.interrupted"]
    assert cut["turn"] == 1
    assert cut["unheard"]
    first, cut_in = spoken(events)
    assert first == "What's the time?"
    assert words(cut_in)[:2] == ["tell", "me"]
    assert words(cut_in)[-1] == "joke"
    assert requests(events) == 2


@pytest.mark.models
def test_after_the_quiet_time_it_sleeps_and_a_question_without_the_wake_word_goes_unheard(
    synthesizer: PiperSynthesizer, speech_models: SpeechModels, tmp_path: Path
) -> None:
    woken = save(piper_says(synthesizer, f"Hey Jarvis, {QUESTION}"), tmp_path / "wake.wav")
    plain = save(piper_says(synthesizer, "And what's the date?"), tmp_path / "plain.wav")
    scenario = {
        "llm": scripted("Ten past ten.", "The fifth."),
        "wake": {"word": "hey_jarvis", "awake_s": 3},
        "user": [{"wav": str(woken), "at_s": 0.5}, {"wav": str(plain), "at_s": 12.0}],
        "end_s": 16,
    }
    _, out = simulate(tmp_path, speech_models, scenario)
    events = read_events(out)
    assert states(events)[-1] == "asleep"
    slept = [e["t"] for e in events if e["type"] == "state" and e["state"] == "asleep"][-1]
    replied = [e["t"] for e in events if e["type"] == "state" and e["state"] == "listening"][-1]
    assert slept - replied == pytest.approx(3.0, abs=0.1)
    assert spoken(events) == ["What's the time?"]
    assert requests(events) == 1

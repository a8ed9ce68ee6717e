"""Only the conversation's speaker takes turns (``"turn": {"speaker": "conversation"}``), in the virtual room
with the real whisper, piper, Smart Turn and speaker encoder (docs/architecture.md §10).

The user is piper's joe (the first question enrolls the voice); the television is a real LibriVox reader
(audio/real/, held out from the verdict's tuning), reverberated and 12 dB under the user, talking on without
a pause between its clips; the side conversation is two real people of audio/real/ taking turns near the mic.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.other_voices import chat, television
from tests.support.paths import AUDIO
from tests.support.scenarios import cue, read_events, simulate, words
from tests.support.wake_words import piper_says, save
from voice.components import SpeechModels
from voice.sim.run import run_scenario
from voice.sim.scenario import load_scenario
from voice.tts.piper_voice import PiperSynthesizer

pytestmark = [pytest.mark.slow, pytest.mark.models]

STORY = (
    "Once upon a time, a small red fox lived at the edge of a quiet forest. Every morning she crept down "
    "to the river to watch the fish jump. One day she found a lost duckling there and walked it all the "
    "way home to its mother. The mother duck was so grateful that she invited the fox to dinner. The fox, "
    "who had never been invited anywhere, brushed her tail and arrived early with a bunch of wild flowers. "
    "They ate berries and seeds and talked until the moon rose over the trees. After that evening the fox "
    "and the ducks met every week by the water, and the other animals of the forest began to wonder what "
    "had happened to the sly red fox they used to fear."
)
SUNDAY = "Sunday looks dry and sunny."
TIMER = "Your timer is set."
MANIFEST = {entry["file"]: entry for entry in json.loads((AUDIO / "manifest.json").read_text())["fixtures"]}


def with_television(tmp_path: Path, speaker: str, cut_in: bool = True) -> dict[str, Any]:
    """The user asks for a story; a television comes on 1.5 s into it; 9 s in, the user cuts in."""
    tv = television(tmp_path, AUDIO / "fox-story.wav")
    user = [cue("fox-story.wav", at_s=0.5), {"wav": str(tv), "during_reply": 1, "after_ms": 1500}]
    if cut_in:  # then, the television still on, a question in the quiet
        user += [cue("check-sunday.wav", during_reply=1, after_ms=9000), cue("timer-pause.wav", at_s=20.0)]
    return {
        "llm": {"replies": [STORY, SUNDAY, TIMER], "first_delta_ms": 300, "delta_ms": 40},
        "user": user,
        "end_s": 40.0,
        "turn": {"speaker": speaker},
    }


def ignored(out: Path) -> list[str]:
    return [event["why"] for event in read_events(out) if event["type"] == "input.ignored"]


def test_a_television_neither_cuts_the_reply_nor_is_answered_and_the_users_cut_in_still_cuts_it(
    speech_models: SpeechModels, tmp_path: Path
) -> None:
    report, out = simulate(tmp_path, speech_models, with_television(tmp_path, "conversation"))

    turns = report["turns"]
    assert len(turns) == 3, [turn["request"][-1] for turn in turns]  # the user's three turns: none of the TV
    story, sunday, timer = turns
    assert story["interrupted"]
    cut_in = next(c for c in report["user_audio"] if c["wav"] == "check-sunday.wav")
    onset = cut_in["at_s"] + MANIFEST["check-sunday.wav"]["start_s"]
    end = cut_in["at_s"] + MANIFEST["check-sunday.wav"]["end_s"]
    # the story played on until the user spoke, and stopped while they did
    assert onset < story["audio_end_s"] < end
    asked = words(sunday["request"][-1]["text"])
    assert {"forecast", "sunday"} <= set(asked), asked  # the user's words reached the request
    assert len(asked) <= len(words(MANIFEST["check-sunday.wav"]["text"])) + 3, asked  # and few of the TV's
    assert sunday["spoken"] == SUNDAY  # its answer played whole with the television still on
    asked = words(timer["request"][-1]["text"])
    assert {"set", "timer", "minutes"} <= set(asked), asked  # the question in the quiet, the TV talking on
    assert len(asked) <= len(words(MANIFEST["timer-pause.wav"]["text"])) + 3, asked
    assert "another voice" in ignored(out)
    created = {e["turn"]: e["t"] for e in read_events(out) if e["type"] == "response.created"}
    answered = [created[2] - end, created[3] - (20.0 + MANIFEST["timer-pause.wav"]["end_s"])]
    assert max(answered) < 2.5  # the end of their voice ended the turn: no wait for the television to pause
    reaction = (story["audio_end_s"] - onset) * 1000
    print(f"\ncut-in reaction over the television {reaction:.0f} ms; answered {answered} s after the voice")
    assert reaction < 300  # the room's bar: the user's voice rose above the television's


def test_in_real_time_with_its_verdicts_on_worker_threads_the_television_is_still_not_answered(
    speech_models: SpeechModels, tmp_path: Path
) -> None:
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps({"version": 1, **with_television(tmp_path, "conversation")}))

    report = run_scenario(load_scenario(path), tmp_path / "out", realtime=True, models=speech_models)

    asked = [words(turn["request"][-1]["text"]) for turn in report["turns"]]
    assert len(asked) == 3, asked  # the user's three turns, each on its own: none of the TV
    assert report["turns"][0]["interrupted"]
    assert {"forecast", "sunday"} <= set(asked[1]), asked
    assert {"set", "timer", "minutes"} <= set(asked[2]), asked
    assert all(len(said) <= 10 for said in asked), asked  # few of the television's words, if any
    assert "another voice" in ignored(tmp_path / "out")


def test_with_anyone_taking_turns_the_television_cuts_the_reply_as_before(
    speech_models: SpeechModels, tmp_path: Path
) -> None:
    report, out = simulate(tmp_path, speech_models, with_television(tmp_path, "anyone", cut_in=False))

    story = report["turns"][0]
    assert story["interrupted"]
    assert story["audio_end_s"] < 0.5 + 2.35 + 1.5 + 6.0  # cut by the television, long before it ended
    assert len(report["turns"]) >= 2  # and the television was answered
    assert "another voice" not in ignored(out)


def test_two_people_chatting_over_the_reply_do_not_cut_it(
    speech_models: SpeechModels, tmp_path: Path
) -> None:
    chatting = chat(tmp_path, AUDIO / "fox-story.wav")
    report, out = simulate(
        tmp_path,
        speech_models,
        {
            "llm": {"replies": [STORY], "first_delta_ms": 300, "delta_ms": 40},
            "user": [
                cue("fox-story.wav", at_s=0.5),
                {"wav": str(chatting), "during_reply": 1, "after_ms": 2000},
            ],
            "end_s": 60.0,
            "turn": {"speaker": "conversation"},
        },
    )

    (story,) = report["turns"]  # nothing they said was sent to the model
    assert not story["interrupted"]
    assert story["spoken"] == STORY
    assert "another voice" in ignored(out)


def test_the_wake_word_enrolls_who_said_it_so_a_television_talking_after_it_is_not_answered(
    synthesizer: PiperSynthesizer, speech_models: SpeechModels, tmp_path: Path
) -> None:
    wake = save(piper_says(synthesizer, "Okay Nabu."), tmp_path / "wake.wav")
    question = save(piper_says(synthesizer, "What's the time?"), tmp_path / "question.wav")
    tv = television(tmp_path, AUDIO / "fox-story.wav")
    report, out = simulate(
        tmp_path,
        speech_models,
        {
            "llm": {"replies": ["Ten past ten.", "Yes."], "first_delta_ms": 300, "delta_ms": 40},
            "wake": {"word": "okay_nabu", "awake_s": 60},
            "user": [
                {"wav": str(wake), "at_s": 0.5},
                {"wav": str(tv), "at_s": 3.0},  # the television comes on before any question
                {"wav": str(question), "at_s": 32.0},
            ],
            "end_s": 40.0,
            "turn": {"speaker": "conversation"},
        },
    )

    asked = [words(turn["request"][-1]["text"]) for turn in report["turns"]]
    assert asked == [["what's", "the", "time"]], asked  # the caller's question, none of the television
    assert "another voice" in ignored(out)

"""Talking over a reply the way people do, in the virtual room with the real whisper, piper and Smart Turn.

A listener's "yeah" (every default backchannel, each in two voices of the tuning pool) keeps the reply
going and asks nothing; the same words after a reply that asked a question are an answer; each stop
phrase cuts the reply and asks nothing until the user speaks again; "yeah, but what about Sunday" is an
ordinary interruption. The fixtures are in audio/ (``nod-*``, ``stop-*``, ``yeah-but-sunday-*``).
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from tests.support.paths import AUDIO
from tests.support.scenarios import cue, simulate, words
from tests.support.word_error import same_but_one_word
from voice.components import SpeechModels
from voice.engine.overlap import DEFAULT_BACKCHANNELS, DEFAULT_STOP_PHRASES, Overlap, OverlapPhrases

pytestmark = pytest.mark.models

MANIFEST = {entry["file"]: entry for entry in json.loads((AUDIO / "manifest.json").read_text())["fixtures"]}
NODS = sorted(name for name in MANIFEST if name.startswith("nod-"))
STOPS = sorted(name for name in MANIFEST if name.startswith("stop-"))
STORY = (
    "Once upon a time, a small red fox lived at the edge of a quiet forest. Every morning she crept down "
    "to the river to watch the fish jump. One day she found a lost duckling there and walked it all the "
    "way home to its mother. The mother duck was so grateful that she invited the fox to dinner. The fox, "
    "who had never been invited anywhere, brushed her tail and arrived early with a bunch of wild flowers. "
    "They ate berries and seeds and talked until the moon rose over the trees. After that evening the fox "
    "and the ducks met every week by the water, and the other animals of the forest began to wonder what "
    "had happened to the sly red fox they used to fear. Some said she had grown soft, others said she was "
    "only waiting, but the ducks knew better. In the spring the duckling, now grown, taught the fox to swim "
    "in the shallow pools. The fox was clumsy at first and splashed about, but by the summer she could cross "
    "the river on her own. And so the fox who had lived alone found a family of her own by the river."
)
QUESTION = "Do you want more?"


def test_the_fixtures_say_every_default_phrase_the_backchannels_in_two_voices() -> None:
    said = OverlapPhrases()
    nods = [MANIFEST[name]["text"] for name in NODS]
    assert all(said.verdict(text) is Overlap.BACKCHANNEL for text in nods)
    for phrase in DEFAULT_BACKCHANNELS:
        assert sum(words(text) == words(phrase) for text in nods) >= 2, phrase
    assert sorted(words(MANIFEST[name]["text"]) for name in STOPS) == sorted(map(words, DEFAULT_STOP_PHRASES))


def test_every_backchannel_in_two_voices_over_a_reply_keeps_it_going_and_asks_nothing(
    speech_models: SpeechModels, tmp_path: Path
) -> None:
    nods = [cue(name, at_s=round(5.0 + 2.4 * index, 2)) for index, name in enumerate(NODS)]
    report, out = simulate(
        tmp_path,
        speech_models,
        {
            "llm": {"replies": [STORY], "first_delta_ms": 300, "delta_ms": 40},
            "user": [cue("fox-story.wav", at_s=0.5), *nods],
            "end_s": 5.0 + 2.4 * len(NODS) + 30,  # each nod pauses the story up to a second (issue 45)
        },
    )

    (turn,) = report["turns"]  # no request but the question's
    assert not turn["interrupted"]
    assert turn["spoken"] == turn["reply"] == STORY  # heard whole: every word the pauses cut played again
    assert turn["audio_end_s"] > nods[-1]["at_s"]  # the last backchannel was said over it too
    events = [json.loads(line) for line in (out / "events.jsonl").read_text().splitlines()]
    told = [event["text"] for event in events if event["type"] == "input.backchannel"]
    transcripts = [event for event in events if event["type"] == "input.transcript"]
    assert len(transcripts) == 1  # nothing the listener said became input
    assert len(told) >= len(NODS) - 4, told  # the rest whisper heard as no words at all: resumed too
    assert all(OverlapPhrases().verdict(text) is Overlap.BACKCHANNEL for text in told)
    assert len(report["backchannels"]) == len(told)


def test_after_a_reply_that_asked_a_question_the_same_words_are_answers(
    speech_models: SpeechModels, tmp_path: Path
) -> None:
    asked = speech_models.synthesizer.synthesize(QUESTION).audio.frames * 1000 // 16_000
    voices = {name.removesuffix(".wav").rsplit("-", 1)[0]: name for name in reversed(NODS)}
    nods = sorted(voices.values())  # each backchannel once, in one of its voices
    answers = [cue(name, during_reply=k, after_ms=asked + 150) for k, name in enumerate(nods, start=1)]
    report, _ = simulate(
        tmp_path,
        speech_models,
        {
            "llm": {"replies": [QUESTION] * (len(nods) + 1), "first_delta_ms": 300, "delta_ms": 40},
            "user": [cue("fox-story.wav", at_s=0.5), *answers],
            "end_s": 4.0 + 4.0 * len(nods),
        },
    )

    assert len(report["turns"]) == len(nods) + 1  # each answer asked for the next reply
    assert "backchannels" not in report
    answers = [turn["request"][-1] for turn in report["turns"][1:]]
    assert all(answer["role"] == "user" for answer in answers)
    listeners = [OverlapPhrases().verdict(answer["text"]) is Overlap.BACKCHANNEL for answer in answers]
    assert sum(listeners) >= len(nods) - 2, answers  # heard as the words a listener says over a reply


def test_each_stop_phrase_cuts_the_reply_and_asks_nothing_until_the_user_speaks_again(
    speech_models: SpeechModels, tmp_path: Path
) -> None:
    user = [cue("fox-story.wav", at_s=0.5)]
    for k, name in enumerate(STOPS, start=1):
        user.append(cue(name, during_reply=k, after_ms=1500))
        if k < len(STOPS):
            user.append(cue("what-weather.wav", during_reply=k, after_ms=6000))  # speaks again
    report, _ = simulate(
        tmp_path,
        speech_models,
        {
            "llm": {"replies": [STORY] * len(STOPS), "first_delta_ms": 300, "delta_ms": 40},
            "user": user,
            "end_s": 4.0 + 9.0 * len(STOPS),
        },
    )

    turns = report["turns"]
    assert len(turns) == len(STOPS)  # one request per question: none for a stop
    assert len(report["stops"]) == len(STOPS)
    for turn, name in zip(turns, STOPS, strict=True):
        assert turn["interrupted"], name
        assert turn["audio_end_s"] - turn["audio_start_s"] < 2.5, name  # cut 1.5 s in, at barge-in speed
    for cut, after in itertools.pairwise(turns):
        carried = after["request"][len(cut["request"]) - 1 :]
        lines = [(item["role"], item.get("interrupted", False)) for item in carried]
        assert lines[-3:] == [("assistant", True), ("user", False), ("user", False)]  # heard, stop, question
        assert carried[-3]["text"] == cut["spoken"]
        assert OverlapPhrases().verdict(carried[-2]["text"]) is Overlap.STOP
        assert same_but_one_word(carried[-1]["text"], "What will the weather be like tomorrow?")


def test_yeah_but_what_about_sunday_is_an_interruption(speech_models: SpeechModels, tmp_path: Path) -> None:
    report, _ = simulate(
        tmp_path,
        speech_models,
        {
            "llm": {
                "replies": [STORY, STORY, "On Sunday it stays dry."],
                "first_delta_ms": 300,
                "delta_ms": 40,
            },
            "user": [
                cue("fox-story.wav", at_s=0.5),
                cue("yeah-but-sunday-joe.wav", during_reply=1, after_ms=1500),
                cue("yeah-but-sunday-gbf2.wav", during_reply=2, after_ms=1500),
            ],
            "end_s": 20.0,
        },
    )

    turns = report["turns"]
    assert len(turns) == 3
    assert turns[0]["interrupted"]
    assert turns[1]["interrupted"]
    asked = [answered["request"][-1] for answered in turns[1:]]
    assert [item["role"] for item in asked] == ["user", "user"]
    for item in asked:
        assert OverlapPhrases().verdict(item["text"]) is Overlap.CUT_IN, item
        assert words(item["text"])[:2] == ["yeah", "but"], (
            item
        )  # its first word kept, one utterance (issue 45)
    # as tiny.en hears each clip alone: piper's "Sunday"; espeak's gb voice it hears as "... son, mate."
    assert words(asked[0]["text"])[-1] in {"sunday", "someday"}, asked
    assert "stops" not in report

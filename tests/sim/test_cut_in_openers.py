"""Cut-ins that open with a short word and a breath, in the virtual room with the real models.

People open a correction or a question with "no,", "yeah," or "actually," and a pause of a few hundred ms
before the rest (issue 45). Over a story, each such cut-in must stop the reply once, never let it resume
into the rest, and reach the next request whole, its first word included; a word that disagrees or
corrects is never taken for a listener's. Speech that is not words (a cough) is told and logged as such,
so nothing said over a reply goes unrecorded. The clips are made here by espeak-ng (a tuning-pool voice:
the held-out figures are benchmarks/full_duplex.py's).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

from tests.support.scenarios import cue, simulate, words
from tests.support.story import STORY
from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.audio.wav import read_wav, write_wav
from voice.components import SpeechModels

pytestmark = pytest.mark.models

# (first word, breath in s, the rest, the opening word as the request may carry it: tiny.en writes "Nope,"
# as "No,"); phrasings whose opening word tiny.en hears in this voice when said alone, so a lost one is the
# engine's
OPENERS = (
    ("No,", 0.3, "in Celsius please.", {"no"}),
    ("Nope,", 0.4, "the one after that.", {"nope", "no"}),
    ("Not yet,", 0.3, "finish the story first.", {"not"}),
    ("Wait,", 0.35, "which river was that?", {"wait"}),
    ("Actually,", 0.3, "make it shorter.", {"actually"}),
    ("Yeah,", 0.45, "but what happened next?", {"yeah"}),
    ("Hmm, no,", 0.3, "the other story.", {"no"}),
)
VOICE, WPM = "en-us+m3", "150"
AFTER = "Of course. Here is a much shorter version instead."


def said_with_a_breath(folder: Path, index: int, first: str, breath_s: float, rest: str) -> Path:
    """``first``, ``breath_s`` of silence, then ``rest``, each part said alone by espeak-ng, as one WAV."""
    parts = []
    for part, text in enumerate((first, rest)):
        path = folder / f"part-{index}-{part}.wav"
        subprocess.run(["espeak-ng", "-v", VOICE, "-s", WPM, "-w", str(path), text], check=True)
        samples = read_wav(path).samples
        loud = np.flatnonzero(np.abs(samples) > 0.01)
        parts.append(samples[loud[0] : loud[-1] + 1])
    silence = np.zeros(round(breath_s * ENGINE_RATE), np.float32)
    lead = np.zeros(ENGINE_RATE // 5, np.float32)
    path = folder / f"cut-in-{index}.wav"
    write_wav(path, AudioBlock(np.concatenate([lead, parts[0], silence, parts[1], lead]), ENGINE_RATE))
    return path


def test_cut_ins_that_open_with_a_word_and_a_breath_stop_the_reply_once_and_keep_every_word(
    speech_models: SpeechModels, tmp_path: Path
) -> None:
    clips = [
        said_with_a_breath(tmp_path, i, first, pause, rest)
        for i, (first, pause, rest, _) in enumerate(OPENERS)
    ]
    cut_ins = [cue(str(clip), during_reply=i + 1, after_ms=2500) for i, clip in enumerate(clips)]
    report, out = simulate(
        tmp_path,
        speech_models,
        {
            "llm": {"replies": [STORY] * len(OPENERS) + [AFTER], "first_delta_ms": 300, "delta_ms": 40},
            "user": [cue("fox-story.wav", at_s=0.5), *cut_ins],
            "end_s": 12.0 * len(OPENERS),
        },
    )

    # what this CPU's whisper hears of each opener alone is what must reach the request: no test on its words
    alone = [set(words(speech_models.transcriber.transcribe(read_wav(clip)).text)) for clip in clips]
    openers = [kept & heard for (*_, kept), heard in zip(OPENERS, alone, strict=True)]
    assert sum(map(bool, openers)) > len(OPENERS) // 2, alone  # else the clips test nothing here

    turns = report["turns"]
    assert len(turns) == len(OPENERS) + 1, [turn["request"][-1] for turn in turns]  # one request a cut-in
    assert all(turn["interrupted"] for turn in turns[:-1])
    for (first, _, rest, _), opener, answered in zip(OPENERS, openers, turns[1:], strict=True):
        asked = answered["request"][-1]
        assert asked["role"] == "user", asked
        heard = answered["request"][-2]
        assert heard.get("interrupted"), heard  # what was heard of the story, then the words as one input
        assert opener <= set(words(asked["text"])), (
            first,
            rest,
            asked,
        )  # the opening word reached the request
    events = [json.loads(line) for line in (out / "events.jsonl").read_text().splitlines()]
    kinds = [event["type"] for event in events]
    assert "input.backchannel" not in kinds
    assert "response.resumed" not in kinds  # the reply never went on into a cut-in
    assert kinds.count("response.interrupted") == len(OPENERS)


def test_a_cough_over_a_reply_is_told_and_logged_as_no_words(
    speech_models: SpeechModels, tmp_path: Path
) -> None:
    report, out = simulate(
        tmp_path,
        speech_models,
        {
            "llm": {"replies": [STORY[:300]], "first_delta_ms": 300, "delta_ms": 40},
            "user": [cue("fox-story.wav", at_s=0.5), cue("cough.wav", during_reply=1, after_ms=1500)],
            "end_s": 30.0,
        },
    )

    (turn,) = report["turns"]
    assert not turn["interrupted"]
    events = [json.loads(line) for line in (out / "events.jsonl").read_text().splitlines()]
    ignored = [event for event in events if event["type"] == "input.ignored"]
    assert [(event["why"], event["turn"]) for event in ignored] == [("no words", 1)]
    records = [json.loads(line) for line in (out / "session.jsonl").read_text().splitlines()]
    assert [record["why"] for record in records if record.get("type") == "ignored"] == ["no words"]

"""What a voice not talking to the assistant did to a run (benchmarks/common/bystander_outcome.py): τ-voice's
S_ND, Full-Duplex-Bench v1.5's behaviour, false rejects of the user and the reaction to their cut-in, on
made-up report.json turns, event streams and a speaker.wav of known silences."""

from __future__ import annotations

from typing import Any

import numpy as np

from tests.support.benchmark_modules import benchmark_module

benchmark_module("common.full_duplex_metrics")
benchmark_module("common.word_error")
benchmark_module("common.cut_in_outcome")  # loaded first: bystander_outcome imports them by name
by: Any = benchmark_module("common.bystander_outcome")

RATE = 16_000
QUESTION = "Tell me a story about a lighthouse keeper."
CUT_IN = "Sorry, could you make that shorter?"
TV = "and mister john dashwood had then leisure to consider"


def turn(text: str, start: float | None, end: float | None, interrupted: bool = False) -> dict[str, Any]:
    return {
        "request": [{"role": "user", "text": text}],
        "interrupted": interrupted,
        "audio_start_s": start,
        "audio_end_s": end,
    }


def paused(t: float) -> dict[str, Any]:
    return {"type": "state", "state": "paused", "t": t}


def speaker_playing(*spans: tuple[float, float], seconds: float = 30.0) -> np.ndarray[Any, Any]:
    """A speaker.wav that sounds over ``spans`` and is silent elsewhere."""
    samples = np.zeros(round(seconds * RATE), np.float32)
    for start, end in spans:
        count = round((end - start) * RATE)
        samples[round(start * RATE) : round(start * RATE) + count] = 0.1 * np.sin(np.arange(count) * 0.2)
    return samples


ASKED = by.UserCue(QUESTION, "request", 0.5, 2.5)


def test_a_television_that_paused_the_story_and_was_taken_back_is_ignored_but_not_without_a_pause() -> None:
    report = {"turns": [turn(QUESTION, 3.5, 28.0)]}
    found = by.bystander_outcome([ASKED], 5.0, report, [paused(5.6)], speaker_playing((3.5, 28.0)))
    assert (found["ignored"], found["ignored_without_pause"], found["behaviour"]) == (1, 0, "resume")
    assert (found["cuts_by_bystander"], found["answers_to_bystander"], found["pauses_for_bystander"]) == (
        0,
        0,
        1,
    )
    assert found["user"][0]["heard"] == 1


def test_a_television_that_cut_the_story_and_got_a_request_answered_was_responded_to() -> None:
    report = {"turns": [turn(QUESTION, 3.5, 6.0, interrupted=True), turn(TV, 8.0, 10.0)]}
    found = by.bystander_outcome(
        [ASKED], 5.0, report, [paused(5.6)], speaker_playing((3.5, 6.0), (8.0, 10.0))
    )
    assert (found["ignored"], found["behaviour"]) == (0, "respond")
    assert (found["cuts_by_bystander"], found["answers_to_bystander"]) == (1, 1)
    assert found["bystander_request_texts"] == [TV]


def test_a_request_the_bystander_caused_but_never_played_is_counted_yet_is_no_answer() -> None:
    report = {"turns": [turn(QUESTION, 3.5, 28.0), turn(TV, None, None)]}
    found = by.bystander_outcome([ASKED], 5.0, report, [], speaker_playing((3.5, 28.0)))
    assert (found["answers_to_bystander"], found["bystander_requests"], found["ignored"]) == (0, 1, 1)


def test_a_question_swallowed_by_the_television_is_a_false_reject_and_one_joined_to_it_adds_words() -> None:
    later = by.UserCue("And how long does it take to fly there?", "request", 10.0, 12.0)
    lost = by.bystander_outcome(
        [ASKED, later], 5.0, {"turns": [turn(QUESTION, 3.5, 6.0)]}, [], speaker_playing()
    )
    assert [cue["heard"] for cue in lost["user"]] == [1, 0]
    joined = turn(f"{later.text} {TV}", 16.0, 20.0)
    found = by.bystander_outcome(
        [ASKED, later], 5.0, {"turns": [turn(QUESTION, 3.5, 6.0), joined]}, [], speaker_playing()
    )
    assert found["user"][1]["heard"] == 1
    assert found["user"][1]["extra_words"] == len(TV.split())
    assert found["user"][1]["answer_latency_s"] == 4.0  # the television held the turn 4 s past the question
    assert found["answers_to_bystander"] == 0  # the user's request, with the television's words in it


def test_a_request_that_carries_under_half_of_a_users_words_is_the_bystanders() -> None:
    report = {"turns": [turn(QUESTION, 3.5, 6.0), turn("a story about leisure to consider", 8.0, 9.0)]}
    found = by.bystander_outcome([ASKED], 5.0, report, [], speaker_playing())
    assert found["bystander_requests"] == 1  # 3 of the question's 8 words: not the user's


def test_the_users_cut_in_over_a_bystander_is_yielded_to_and_its_pause_and_cut_are_the_users() -> None:
    cut_in = by.UserCue(CUT_IN, "cut_in", 9.0, 11.0)
    report = {"turns": [turn(QUESTION, 3.5, 9.25, interrupted=True), turn(CUT_IN, 12.0, 14.0)]}
    found = by.bystander_outcome(
        [ASKED, cut_in], 5.0, report, [paused(9.1)], speaker_playing((3.5, 9.25), (12.0, 14.0))
    )
    assert (found["ignored_without_pause"], found["cuts_by_bystander"]) == (1, 0)
    assert (found["user"][1]["yielded"], found["user"][1]["stop_ms"]) == (1, 250)


def test_a_cut_in_misheard_under_a_television_is_the_users_by_when_its_voice_was_heard() -> None:
    cut_in = by.UserCue(CUT_IN, "cut_in", 9.0, 11.0)
    misheard = "She'll hit what I'm about to hit, squeak in and said."
    report = {"turns": [turn(QUESTION, 3.5, 9.6, interrupted=True), turn(misheard, 12.0, 14.0)]}
    events = [
        {"type": "input.speech_started", "t": 5.1},
        {"type": "input.speech_stopped", "t": 5.6},
        {"type": "input.ignored", "why": "another voice", "t": 5.6},
        {"type": "input.speech_started", "t": 9.1},
        {"type": "input.speech_stopped", "t": 11.4},
        {"type": "input.transcript", "text": misheard, "t": 11.9},
    ]
    speaker = speaker_playing((3.5, 9.6), (12.0, 14.0))
    found = by.bystander_outcome([ASKED, cut_in], 5.0, report, events, speaker)
    assert (found["answers_to_bystander"], found["ignored"]) == (0, 1)
    assert (found["user"][1]["heard"], found["user"][1]["yielded"]) == (1, 1)
    assert found["user"][1]["words_kept"] < 0.5  # heard, but misheard: few of its words reached the request
    without_times = by.bystander_outcome([ASKED, cut_in], 5.0, report, [], speaker)
    assert without_times["answers_to_bystander"] == 1  # by its words alone it would be the television's


def test_a_cut_in_after_the_bystander_cut_the_reply_has_nothing_to_stop_and_is_not_yielded_to() -> None:
    cut_in = by.UserCue(CUT_IN, "cut_in", 9.0, 11.0)
    report = {"turns": [turn(QUESTION, 3.5, 6.0, interrupted=True), turn(CUT_IN, 12.0, 14.0)]}
    found = by.bystander_outcome([ASKED, cut_in], 5.0, report, [], speaker_playing((3.5, 6.0), (12.0, 14.0)))
    assert found["cuts_by_bystander"] == 1
    assert (found["user"][1]["yielded"], found["user"][1]["stop_ms"]) == (0, None)


def test_a_cut_in_the_reply_talks_through_is_not_yielded_to() -> None:
    cut_in = by.UserCue(CUT_IN, "cut_in", 9.0, 11.0)
    found = by.bystander_outcome(
        [ASKED, cut_in], 5.0, {"turns": [turn(QUESTION, 3.5, 28.0)]}, [], speaker_playing((3.5, 28.0))
    )
    assert (found["user"][1]["heard"], found["user"][1]["yielded"]) == (0, 0)


def test_the_summary_puts_s_nd_beside_the_yield_to_the_user_and_counts_false_rejects() -> None:
    ignored = {
        "ignored": 1,
        "ignored_without_pause": 0,
        "behaviour": "resume",
        "answers_to_bystander": 0,
        "cuts_by_bystander": 0,
        "pauses_for_bystander": 2,
        "user": [
            {"role": "request", "heard": 1, "words_kept": 1.0, "extra_words": 0, "answer_latency_s": 0.8},
            {"role": "cut_in", "heard": 1, "words_kept": 0.5, "extra_words": 1, "answer_latency_s": 1.0,
             "yielded": 1, "stop_ms": 900},
        ],
    }  # fmt: skip
    answered = ignored | {"ignored": 0, "behaviour": "respond", "answers_to_bystander": 2}
    answered["user"] = [dict(ignored["user"][0]), dict(ignored["user"][1], heard=0, yielded=0, stop_ms=None)]
    found = by.bystander_summary([ignored, answered, {"case": "x", "error": "never placed"}])
    assert (found["n"], found["s_nd"], found["s_nd_without_pause"]) == (2, 0.5, 0.0)
    assert (found["yield_rate"], found["yield_n"], found["false_rejects"], found["user_said"]) == (
        0.5,
        2,
        1,
        4,
    )
    assert found["behaviour"] == {"respond": 1, "stop": 0, "resume": 1, "continue": 0}
    assert found["answers_to_bystander"] == 2
    assert found["cut_in_stop_ms"]["median"] == 900


def test_the_table_shows_each_speaker_setting_beside_tau_voices_published_s_nd_and_yield() -> None:
    table: Any = benchmark_module("common.full_duplex_table")
    row = {
        "ignored": 1,
        "ignored_without_pause": 1,
        "behaviour": "continue",
        "answers_to_bystander": 0,
        "cuts_by_bystander": 0,
        "pauses_for_bystander": 0,
        "user": [{"role": "cut_in", "heard": 1, "words_kept": 1.0, "extra_words": 0, "answer_latency_s": 0.5,
                  "words_kept_alone": 1.0, "yielded": 1, "stop_ms": 400}],
    }  # fmt: skip
    summary = by.bystander_summary([row])
    after = {
        "realtime": False,
        "scorecard": {},
        "bystanders": {"conversation": {"bystander_cut_in": summary, "all": summary}},
    }
    text = table.table(after, None, {}, {}, {"gpt-live-1": {"s_nd": 0.46, "yield_rate": 0.36}})
    lines = text.splitlines()
    assert lines[2].startswith(
        "| bystander_cut_in, speaker = conversation (n=1) | 1.000 | 1.000 | 1.000 (n=1) |"
    )
    assert "400 / 400" in lines[2]
    assert lines[-1].startswith("| τ-voice gpt-live-1 (published, its own data) | 0.460 | - | 0.360 |")
    assert "Pause handling" not in text  # only the bystander categories ran

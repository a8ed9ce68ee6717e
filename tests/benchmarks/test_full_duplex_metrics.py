"""Full-Duplex-Bench v1's turn-taking metrics, as benchmarks/full_duplex.py computes them on speaker.wav, and
what became of a cut-in (words kept, resumed into it, silent until the answer; τ-voice's yield and S_BC).

The output is synthetic with known times, and the "ASR" reads its words back from the audio: each word is a
tone burst whose pitch names it, so the windows, crops and rules run on samples as they do on whisper's words.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tests.support.benchmark_modules import benchmark_module

fdb: Any = benchmark_module("common.full_duplex_metrics")
benchmark_module("common.word_error")  # loaded first: cut_in_outcome imports it by name
cut: Any = benchmark_module("common.cut_in_outcome")

RATE = 16_000
OLD = "once there was a lighthouse keeper called ada who lived on a rocky island"
NEW = "glad you like it anything else you want to hear about"
VOCABULARY = sorted(set(OLD.split()) | set(NEW.split()))
WORD_S, SPACE_S = 0.2, 0.05  # each word sounds 200 ms, with 50 ms of silence before the next


def pitch(word: str) -> float:
    return 300.0 + 40.0 * VOCABULARY.index(word)


class Output:
    """A speaker.wav being made: words said at chosen times, silence elsewhere."""

    def __init__(self, seconds: float) -> None:
        self.samples = np.zeros(round(seconds * RATE), dtype=np.float32)

    def say(self, text: str, at_s: float) -> float:
        """Say ``text`` from ``at_s``; where its last word ends."""
        t = at_s
        for word in text.split():
            start, count = round(t * RATE), round(WORD_S * RATE)
            tone = 0.1 * np.sin(2 * np.pi * pitch(word) * np.arange(count) / RATE)
            self.samples[start : start + count] = tone
            t += WORD_S + SPACE_S
        return t - SPACE_S

    def silence_from(self, at_s: float, to_s: float | None = None) -> None:
        self.samples[round(at_s * RATE) : None if to_s is None else round(to_s * RATE)] = 0.0


def tone_asr(stretch: np.ndarray[Any, Any]) -> list[Any]:
    """Each run of sounding frames is a word, named by its pitch; times from the stretch's first sample."""
    loud = np.append(fdb.sounding(stretch), False)
    words, start = [], None
    for index, on in enumerate(loud):
        if on and start is None:
            start = index
        elif not on and start is not None:
            burst = stretch[start * fdb.FRAME : index * fdb.FRAME]
            peak = np.argmax(np.abs(np.fft.rfft(burst))) * RATE / len(burst)
            word = min(VOCABULARY, key=lambda w: abs(pitch(w) - peak))
            words.append(fdb.Word(word, start / 100, index / 100))
            start = None
    return words


def words(*spans: tuple[float, float]) -> list[Any]:
    return [fdb.Word("w", start, end) for start, end in spans]


@pytest.mark.parametrize(
    ("heard", "turn"),
    [
        ([], False),
        (words((0.0, 0.2), (0.3, 0.5), (0.6, 0.9)), False),  # three words under a second: a backchannel
        (words((0.0, 0.2), (0.25, 0.4), (0.45, 0.6), (0.65, 0.9)), True),  # a fourth word
        (words((0.0, 0.4), (0.7, 1.0)), True),  # two words, but they span a second
        (words((0.0, 1.2)), True),
    ],
)
def test_a_turn_is_more_than_three_words_or_a_second_of_them(heard: list[Any], turn: bool) -> None:
    assert fdb.takes_turn(heard) is turn


def test_the_tone_asr_reads_back_what_was_said() -> None:
    output = Output(4.0)
    output.say("glad you like it", 1.0)
    heard = tone_asr(output.samples)
    assert [w.text for w in heard] == ["glad", "you", "like", "it"]
    assert heard[0].start_s == pytest.approx(1.0, abs=0.011)


def test_pause_handling_counts_only_what_plays_before_the_users_last_word() -> None:
    answered_after = Output(8.0)
    answered_after.say(NEW, 4.5)
    found = fdb.pause_handling(answered_after.samples, 4.0, tone_asr)
    assert (found["tor"], found["reply_sound_before_user_end"]) == (0, False)

    answered_into = Output(8.0)
    answered_into.say("glad you like it anything", 2.5)  # four words before the user's end at 4.0
    found = fdb.pause_handling(answered_into.samples, 4.0, tone_asr)
    assert (found["tor"], found["reply_sound_before_user_end"]) == (1, True)

    murmured = Output(8.0)
    murmured.say("glad you", 3.0)
    found = fdb.pause_handling(murmured.samples, 4.0, tone_asr)
    assert (found["tor"], found["reply_sound_before_user_end"]) == (0, True)


def test_smooth_turn_taking_latency_runs_from_the_users_end_to_the_first_word() -> None:
    output = Output(8.0)
    output.say(NEW, 2.7)
    found = fdb.smooth_turn_taking(output.samples, 2.0, tone_asr)
    assert found["tor"] == 1
    assert found["latency_s"] == pytest.approx(0.7, abs=0.011)
    assert found["first_sound_latency_s"] == pytest.approx(0.7, abs=0.011)

    early = Output(8.0)
    early.say(NEW, 1.8)
    assert fdb.smooth_turn_taking(early.samples, 2.0, tone_asr)["latency_s"] == 0.0  # FDB counts it 0

    silent = fdb.smooth_turn_taking(Output(8.0).samples, 2.0, tone_asr)
    assert (silent["tor"], silent["latency_s"]) == (0, None)

    backchannel_only = Output(8.0)
    backchannel_only.say("glad you like", 2.5)
    assert fdb.smooth_turn_taking(backchannel_only.samples, 2.0, tone_asr)["tor"] == 0


def test_an_interruption_is_scored_on_what_plays_after_it_ends() -> None:
    output = Output(10.0)
    output.say(OLD, 1.0)
    output.silence_from(3.15)  # stopped 150 ms after the user's onset at 3.0
    output.say(NEW, 5.3)  # the answer, 0.8 s after the interruption ends at 4.5
    found = fdb.user_interruption(output.samples, fdb.OverReply(3.0, 4.5, OLD, NEW), tone_asr)
    assert (found["tor"], found["answered"], found["stop_ms"]) == (1, 1, 150)
    assert found["latency_s"] == pytest.approx(0.8, abs=0.011)
    assert found["new_sound_latency_s"] == pytest.approx(0.8, abs=0.011)


def test_a_reply_that_talks_through_an_interruption_takes_the_turn_by_fdbs_rule_but_answers_nothing() -> None:
    output = Output(10.0)
    end = output.say(OLD, 1.0)  # a word starts at 4.0, as the interruption (3.0-4.0) ends
    last = output.say("once there was a lighthouse keeper", end + 0.15)
    found = fdb.user_interruption(output.samples, fdb.OverReply(3.0, 4.0, OLD, NEW), tone_asr)
    assert (found["tor"], found["latency_s"], found["answered"]) == (1, 0.0, 0)
    assert found["stop_ms"] == round((last - 3.0) * 1000)  # silent only once the story ran out


def test_a_backchannel_the_reply_resumed_after_is_no_turn_over_and_its_gap_is_measured() -> None:
    output = Output(10.0)
    paused_at = output.say("once there was a lighthouse", 1.0)
    output.say("keeper called ada who lived on a rocky island", paused_at + 0.3)
    found = fdb.backchannel(output.samples, fdb.OverReply(2.3, 2.7, OLD, NEW), tone_asr)
    assert (found["tor"], found["went_on"], found["gap_ms"]) == (0, 1, 300)


def test_a_backchannel_that_cut_the_reply_for_a_new_one_is_a_turn_over() -> None:
    output = Output(10.0)
    cut_at = output.say("once there was a lighthouse", 1.0)
    output.say(NEW, 3.8)
    found = fdb.backchannel(output.samples, fdb.OverReply(2.3, 2.7, OLD, NEW), tone_asr)
    assert (found["tor"], found["went_on"], found["gap_ms"]) == (1, 0, round((3.8 - cut_at) * 1000))


def test_a_backchannel_that_only_cut_the_reply_took_no_turn_but_the_reply_did_not_go_on() -> None:
    output = Output(10.0)
    output.say("once there was a lighthouse", 1.0)
    found = fdb.backchannel(output.samples, fdb.OverReply(2.3, 2.7, OLD, NEW), tone_asr)
    assert (found["tor"], found["went_on"], found["gap_ms"]) == (0, 0, None)


def test_only_words_the_new_reply_alone_has_tell_it_is_playing() -> None:
    heard = [fdb.Word(text, 0.0, 0.1) for text in ("A", "Glad", "you", "Ada,", "hear.")]
    assert [
        w.text for w in fdb.new_reply_words(heard, "once a girl called ada", "glad you hear a story")
    ] == [
        "Glad",
        "you",
        "hear.",
    ]


def test_an_interruption_the_old_reply_talks_on_after_went_on() -> None:
    output = Output(10.0)
    output.say(OLD, 1.0)
    output.silence_from(3.15)
    output.say("once there was a lighthouse keeper called ada", 5.0)  # the story again, after the cut-in
    found = fdb.user_interruption(output.samples, fdb.OverReply(3.0, 4.5, OLD, NEW), tone_asr)
    assert (found["went_on"], found["answered"], cut.yielded(found)) == (1, 0, 0)

    answered = Output(10.0)
    answered.say(OLD, 1.0)
    answered.silence_from(3.15)
    answered.say(NEW, 5.3)
    found = fdb.user_interruption(answered.samples, fdb.OverReply(3.0, 4.5, OLD, NEW), tone_asr)
    assert (found["went_on"], found["answered"], cut.yielded(found)) == (0, 1, 1)


def test_a_backchannel_is_talked_through_when_the_story_goes_on_and_no_new_reply_takes_the_turn() -> None:
    assert cut.talked_through({"went_on": 1, "tor": 0}) == 1
    assert cut.talked_through({"went_on": 0, "tor": 1}) == 0
    assert cut.talked_through({"went_on": 0, "tor": 0}) == 0  # cut, and nothing followed


@pytest.mark.parametrize(
    ("sent", "kept", "extra"),
    [
        ("Yeah, but what happens on Thursday?", 1.0, 0),
        ("But what happens on Thursday?", 0.833, 0),  # the opening word dropped
        ("I'm not sure. Yeah, but what happens on Thursday?", 1.0, 3),  # words never said in front
        ("Yeah but what happened on Thursday", 0.833, 0),  # a word misheard: neither kept nor extra
        (None, 0.0, 0),  # no request at all
    ],
)
def test_words_kept_are_the_words_said_found_in_order_in_the_request(
    sent: str | None, kept: float, extra: int
) -> None:
    assert cut.words_kept("Yeah, but what happens on Thursday?", sent) == {
        "words_kept": kept,
        "extra_words": extra,
    }


def test_words_kept_prefers_the_alignment_that_matches_most_words() -> None:
    # fewest edits would call both words misheard; the user's "Thursday" did reach the request
    assert cut.words_kept("Monday Thursday", "Thursday please") == {"words_kept": 0.5, "extra_words": 1}


def turn(request: list[str], audio_start_s: float | None) -> dict[str, Any]:
    items = [{"role": "user", "text": text} for text in request]
    return {"request": items, "audio_start_s": audio_start_s}


def test_the_request_after_a_cut_in_is_the_next_turns_last_user_item() -> None:
    turns = [
        turn(["Tell me a story."], 4.0),
        turn(["Tell me a story.", "No, the other one."], 9.0),
        turn(["And then?"], 14.0),
    ]
    assert cut.turns_after(turns, 6.0) == turns[1:]
    assert cut.last_user_text(cut.turns_after(turns, 6.0)[0]) == "No, the other one."
    assert cut.turns_after(turns[:1], 6.0) == []  # nothing was asked after it


def test_a_reply_resumed_between_the_cut_ins_onset_and_its_cut_resumed_into_the_cut_in() -> None:
    before = [{"type": "response.created", "turn": 1, "t": 3.0}]
    resumed = [
        *before,
        {"type": "response.resumed", "turn": 1, "t": 6.4},  # "yeah" let pass, the rest still to come
        {"type": "response.interrupted", "turn": 1, "t": 7.5},
    ]
    assert cut.resumed_into(resumed, 6.0)
    cut_at_once = [*before, {"type": "response.interrupted", "turn": 1, "t": 7.5}]
    assert not cut.resumed_into(cut_at_once, 6.0)
    earlier = [*before, {"type": "response.resumed", "turn": 1, "t": 5.0}, *cut_at_once[1:]]
    assert not cut.resumed_into(earlier, 6.0)  # a backchannel before the cut-in went on, as it should


def test_the_reply_is_silent_until_the_answer_when_nothing_sounds_from_its_stop_to_the_answer() -> None:
    said = "No, the other one."
    report = {"turns": [turn(["Tell me a story."], 1.0), turn(["Tell me a story.", said], 5.3)]}
    events = [{"type": "response.created", "turn": 1, "t": 0.8}]
    quiet = Output(10.0)
    quiet.say(OLD, 1.0)
    quiet.silence_from(3.15, 5.3)
    quiet.say(NEW, 5.3)
    found = cut.cut_in_outcome(report, events, quiet.samples, said, 3.0, 150)
    assert found["silent_within_300ms"]
    assert found["sound_before_answer_ms"] == 0
    assert found["silent_until_answer"]
    assert (found["request"], found["words_kept"], found["extra_words"]) == (said, 1.0, 0)

    resumed = Output(10.0)
    resumed.say(OLD, 1.0)
    resumed.silence_from(3.15, 5.3)
    resumed.say("once there", 4.0)  # the story played again before the answer
    resumed.say(NEW, 5.3)
    found = cut.cut_in_outcome(report, events, resumed.samples, said, 3.0, 150)
    assert found["sound_before_answer_ms"] > 0
    assert not found["silent_until_answer"]

    unanswered = {"turns": report["turns"][:1]}
    found = cut.cut_in_outcome(unanswered, events, quiet.samples, said, 3.0, 150)
    assert (found["request"], found["words_kept"], found["silent_until_answer"]) == (None, 0.0, False)

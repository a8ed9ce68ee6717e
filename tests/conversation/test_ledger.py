"""The playback ledger answers what was heard: whole words whose audio finished, nothing else."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from voice.conversation.ledger import PlaybackLedger, Progress, SampleSpan
from voice.errors import ProtocolError

REPLY = "Tomorrow starts dry, then rain moves in from the west."


def test_heard_counts_a_word_only_once_its_audio_has_ended() -> None:
    ledger = PlaybackLedger()
    ledger.add_text("Tomorrow starts dry,")
    ledger.close_text()
    ledger.place([SampleSpan(0, 100), SampleSpan(100, 250), SampleSpan(250, 400)])

    assert ledger.heard(99) == ""
    assert ledger.heard(100) == "Tomorrow"
    assert ledger.heard(399) == "Tomorrow starts"
    assert ledger.heard(400) == "Tomorrow starts dry,"


def test_a_word_split_across_deltas_is_one_word() -> None:
    ledger = PlaybackLedger()
    ledger.add_text("Tomor")
    assert ledger.words() == []  # "Tomor" may go on in the next delta
    ledger.add_text("row sta")
    assert [word.text for word in ledger.words()] == ["Tomorrow"]
    ledger.add_text("rts")
    ledger.close_text()
    assert [word.text for word in ledger.words()] == ["Tomorrow", "starts"]


def test_placing_more_spans_than_complete_words_is_refused() -> None:
    ledger = PlaybackLedger()
    ledger.add_text("one two")

    with pytest.raises(ProtocolError, match="only 1 words await audio"):
        ledger.place([SampleSpan(0, 10), SampleSpan(10, 20)])


def test_spans_running_backwards_are_refused() -> None:
    ledger = PlaybackLedger()
    ledger.add_text("one two ")

    with pytest.raises(ProtocolError, match="backwards"):
        ledger.place([SampleSpan(0, 50), SampleSpan(60, 40)])


@st.composite
def split_reply(draw: st.DrawFn) -> tuple[list[str], list[SampleSpan], int]:
    """A reply cut into random deltas, random word durations and gaps, and a random cut sample."""
    words = draw(
        st.lists(st.text(st.characters(categories=["L", "N", "P"]), min_size=1, max_size=8), min_size=1)
    )
    separators = draw(
        st.lists(st.sampled_from([" ", "  ", "\n", " \t"]), min_size=len(words), max_size=len(words))
    )
    text = "".join(word + sep for word, sep in zip(words, separators, strict=True)).rstrip()
    cuts = sorted(draw(st.sets(st.integers(1, max(1, len(text) - 1)), max_size=len(text))))
    deltas = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True) if text[a:b]]
    spans, clock = [], draw(st.integers(0, 1000))
    for _ in words:
        clock += draw(st.integers(0, 300))  # silence between words
        length = draw(st.integers(0, 3000))
        spans.append(SampleSpan(clock, clock + length))
        clock += length
    cut = draw(st.integers(0, clock + 10))
    return deltas, spans, cut


@given(split_reply())
def test_heard_is_a_word_prefix_of_exactly_the_words_ended_by_the_cut(
    case: tuple[list[str], list[SampleSpan], int],
) -> None:
    deltas, spans, cut = case
    ledger = PlaybackLedger()
    for delta in deltas:
        ledger.add_text(delta)
        ready = len(ledger.words()) - ledger.placed_words
        ledger.place(spans[ledger.placed_words : ledger.placed_words + ready])  # synthesize as words complete
    ledger.close_text()
    ledger.place(spans[ledger.placed_words :])
    reply = "".join(deltas)

    heard = ledger.heard(cut)

    assert reply.startswith(heard)
    assert heard == "" or len(heard) == len(reply) or reply[len(heard)].isspace()
    assert heard.split() == [word for word, span in zip(reply.split(), spans, strict=True) if span.end <= cut]


def test_audio_queued_piece_by_piece_is_heard_as_the_sink_reports_it_played() -> None:
    ledger = PlaybackLedger()
    ledger.add_text("Tomorrow starts dry,")
    ledger.close_text()
    assert ledger.queue_audio(150, [SampleSpan(0, 100)]) == 0
    assert ledger.queue_audio(300, [SampleSpan(0, 150), SampleSpan(150, 300)]) == 150

    ledger.note_played(299, clock=1299)
    assert ledger.heard() == "Tomorrow"  # "starts" ends at 300
    assert ledger.playing
    ledger.note_played(450, clock=1450)
    assert ledger.heard() == "Tomorrow starts dry,"
    assert not ledger.playing


def test_the_ledger_says_when_the_listener_heard_the_reply_begin_and_each_new_word() -> None:
    ledger = PlaybackLedger()
    ledger.add_text("Tomorrow starts dry,")
    ledger.close_text()
    ledger.queue_audio(400, [SampleSpan(0, 100), SampleSpan(100, 250), SampleSpan(250, 400)])

    assert ledger.note_played(0, clock=5000) == Progress(started=False, words=0, more_words=False)
    assert (ledger.started_at, ledger.heard_at) == (None, None)  # nothing reached the listener yet
    assert ledger.note_played(120, clock=5120) == Progress(started=True, words=1, more_words=True)
    assert (ledger.started_at, ledger.heard_at) == (5000, 5120)  # its first sample played at 5000
    assert ledger.note_played(200, clock=5200) == Progress(started=False, words=1, more_words=False)
    assert ledger.heard_at == 5200


def test_a_word_played_again_after_a_pause_takes_no_heard_word_back() -> None:
    ledger = PlaybackLedger()
    ledger.add_text("Tomorrow starts dry,")
    ledger.close_text()
    ledger.queue_audio(400, [SampleSpan(0, 100), SampleSpan(100, 250), SampleSpan(250, 400)])
    ledger.note_played(180, clock=2180)

    progress = ledger.note_played(ledger.word_start_at(), clock=2300)  # "starts" plays again from its start

    assert progress == Progress(started=False, words=1, more_words=False)
    assert ledger.heard() == "Tomorrow"
    assert ledger.heard_at == 2180  # the listener heard nothing new


def test_a_retried_reply_starts_empty_but_keeps_when_its_first_sound_was_heard() -> None:
    ledger = PlaybackLedger()
    ledger.add_text("Well hello")
    ledger.queue_audio(300, [SampleSpan(0, 200)])
    ledger.note_played(50, clock=1050)  # a breath of it played, no word whole

    retry = ledger.for_retry()

    assert (retry.text, retry.queued, retry.played, retry.heard()) == ("", 0, 0, "")
    assert (retry.started_at, retry.heard_at) == (1000, 1050)
    assert retry.note_played(10, clock=1200).started is False  # the reply began once, not twice

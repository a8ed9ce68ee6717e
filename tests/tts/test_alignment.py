"""Phonemes aligned back to text words: each word gets the stretch of audio its phonemes took."""

# The strings here are IPA phonemes as espeak writes them; their letters only look like ASCII.
# ruff: noqa: RUF001

from __future__ import annotations

import itertools
import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from voice.tts.alignment import TimedPhoneme, is_speech, word_spans

STEP = 100  # samples per phoneme symbol in these made-up timelines


def symbols(phonemes: str) -> list[str]:
    """Phonemes as piper gives them: one decomposed codepoint per symbol."""
    return list(unicodedata.normalize("NFD", phonemes))


def timeline_of(phonemes: str) -> list[TimedPhoneme]:
    """A sentence timeline as piper reports it: begin marker, the phonemes, end marker, STEP samples each."""
    marked = ["^", *symbols(phonemes), "$"]
    return [TimedPhoneme(symbol, index * STEP, (index + 1) * STEP) for index, symbol in enumerate(marked)]


def sample_of(timeline: list[TimedPhoneme], nth: int, symbol: str) -> TimedPhoneme:
    """The nth (0-based) occurrence of ``symbol`` in the timeline."""
    return [phoneme for phoneme in timeline if phoneme.symbol == symbol][nth]


def test_words_that_espeak_joins_into_one_phoneme_word_are_split_at_their_own_phonemes() -> None:
    timeline = timeline_of("ɪnðə hˈaʊs.")

    spans = word_spans([symbols("ˈɪn"), symbols("ðə"), symbols("hˈaʊs.")], timeline)

    in_, the, house = spans
    assert in_ == (sample_of(timeline, 0, "ɪ").start, sample_of(timeline, 0, "n").end)
    assert the == (sample_of(timeline, 0, "ð").start, sample_of(timeline, 0, "ə").end)
    assert house == (sample_of(timeline, 0, "h").start, sample_of(timeline, 0, "s").end)


def test_a_token_espeak_expands_to_several_words_spans_all_of_them() -> None:
    # "paid $3.50 at": the amount is read "dollar three point five zero".
    timeline = timeline_of("pˈeɪd dˈɑːlɚ θɹˈiː pɔɪnt fˈaɪv zˈiəɹoʊ æt")
    dollars = symbols("dˈɑːlɚ θɹˈiː pɔɪnt fˈaɪv zˈiəɹoʊ")

    spans = word_spans([symbols("pˈeɪd"), dollars, symbols("æt")], timeline)

    assert spans[1] == (sample_of(timeline, 1, "d").start, sample_of(timeline, 0, "ʊ").end)
    assert spans[2] == (sample_of(timeline, 0, "æ").start, sample_of(timeline, 1, "t").end)


def test_a_word_said_differently_in_context_keeps_its_phonemes() -> None:
    # "the" alone is "ðə"; before a vowel espeak says "ði".
    timeline = timeline_of("ði ˈæpəl")

    spans = word_spans([symbols("ðə"), symbols("ˈæpəl")], timeline)

    assert spans == [(STEP, 3 * STEP), (4 * STEP, 9 * STEP)]


def test_pauses_between_words_belong_to_no_word() -> None:
    timeline = timeline_of("dɹˈaɪ, ðˈɛn")

    dry, then = word_spans([symbols("dɹˈaɪ,"), symbols("ðˈɛn")], timeline)

    comma = sample_of(timeline, 0, ",")
    assert dry[1] == comma.start
    assert then[0] > comma.end


def test_a_word_without_sound_gets_an_empty_span_where_the_previous_word_ended() -> None:
    timeline = timeline_of("jˈɛs fˈaɪn")

    spans = word_spans([symbols("jˈɛs"), [], symbols("fˈaɪn")], timeline)

    assert spans[1] == (spans[0][1], spans[0][1])
    assert spans[2][0] > spans[0][1]


def test_a_leading_word_without_sound_sits_where_the_first_sound_starts() -> None:
    spans = word_spans([[], symbols("jˈɛs")], timeline_of("jˈɛs"))

    assert spans == [(STEP, STEP), (STEP, 5 * STEP)]


def test_pause_symbols_are_not_speech() -> None:
    assert [s for s in ["^", "$", "_", " ", ",", ".", "!", "ˈ", "ɪ", "aɪ", "\u0303"] if is_speech(s)] == [
        "ˈ",
        "ɪ",
        "aɪ",
        "\u0303",
    ]


PHONEME_WORDS = st.lists(st.sampled_from(symbols("pteɪdɑːlɚθɹiəʊnˈˌ")), min_size=0, max_size=6)


@given(
    words=st.lists(PHONEME_WORDS, min_size=1, max_size=12),
    spoken=st.lists(st.one_of(PHONEME_WORDS, st.just([","])), max_size=14),
)
def test_every_word_gets_one_ordered_span_whatever_espeak_said(
    words: list[list[str]], spoken: list[list[str]]
) -> None:
    timeline = timeline_of(" ".join("".join(word) for word in spoken))

    spans = word_spans(words, timeline)

    assert len(spans) == len(words)
    assert all(start <= end for start, end in spans)
    assert all(previous[1] <= span[0] for previous, span in itertools.pairwise(spans))
    assert all(start >= 0 and end <= timeline[-1].end for start, end in spans)

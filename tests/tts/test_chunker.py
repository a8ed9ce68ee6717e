"""The chunker cuts a streamed reply into speakable chunks: first clause early, then sentences."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from voice.errors import ConfigError
from voice.tts.chunker import SpeechChunker

AWKWARD = "Dr. Smith paid $3.50 at 10:30 a.m., e.g. for tea."
LONG_REPLY = (
    "Tomorrow starts dry, then rain moves in from the west by noon. Expect about 12 mm by the evening. "
    "It clears overnight, and Sunday looks bright."
)


def chunk_all(deltas: list[str], chunker: SpeechChunker | None = None) -> list[str]:
    chunker = chunker or SpeechChunker()
    chunks = [chunk for delta in deltas for chunk in chunker.feed(delta)]
    return chunks + chunker.flush()


def test_awkward_tokens_stay_whole_however_the_deltas_split_them() -> None:
    for deltas in ([AWKWARD], list(AWKWARD), [AWKWARD[:20], AWKWARD[20:25], AWKWARD[25:]]):
        chunks = chunk_all(deltas)

        assert " ".join(chunks).split() == AWKWARD.split()
        # Cuts fall only after a clause or sentence break, never after an abbreviation or inside a number.
        assert chunks == ["Dr. Smith paid $3.50 at 10:30 a.m.,", "e.g. for tea."]


def test_a_number_split_at_its_decimal_point_is_not_cut_as_a_sentence_end() -> None:
    chunker = SpeechChunker(first_clause_words=1)

    assert chunker.feed("It costs $3.") == []
    assert chunker.feed("50 today. And") == ["It costs $3.50 today."]


def test_the_first_chunk_is_ready_after_its_first_clause() -> None:
    chunker = SpeechChunker()
    words = LONG_REPLY.split(" ")
    ready_at = None
    for index, word in enumerate(words):
        if chunker.feed(("" if index == 0 else " ") + word):
            ready_at = index
            break

    # "dry," is known complete when the next word's leading space arrives with "then".
    assert words[:ready_at] == ["Tomorrow", "starts", "dry,"]


def test_after_the_first_clause_chunks_are_whole_sentences() -> None:
    chunks = chunk_all([word + " " for word in LONG_REPLY.split()])

    assert chunks == [
        "Tomorrow starts dry,",
        "then rain moves in from the west by noon.",
        "Expect about 12 mm by the evening.",
        "It clears overnight, and Sunday looks bright.",
    ]


def test_the_first_clause_break_waits_for_a_few_words() -> None:
    chunks = chunk_all(["Well, I think so, yes. Fine."])

    assert chunks == ["Well, I think so,", "yes.", "Fine."]


def test_a_first_sentence_without_a_clause_break_is_spoken_before_its_end() -> None:
    reply = "The weather is forecasted to be mostly sunny with a light breeze. Take a hat with you."

    chunks = chunk_all([word + " " for word in reply.split()])

    # Not before "to": five words first. Later sentences stay whole, however many phrases they hold.
    assert chunks == [
        "The weather is forecasted to be mostly sunny",
        "with a light breeze.",
        "Take a hat with you.",
    ]
    assert chunk_all([reply], SpeechChunker(first_phrase_words=None))[0].endswith("breeze.")


def test_a_sentence_without_an_end_is_cut_at_the_word_limit() -> None:
    chunks = chunk_all([" ".join(["word"] * 25)], SpeechChunker(max_words=10))

    assert [len(chunk.split()) for chunk in chunks] == [10, 10, 5]


def test_whitespace_between_words_collapses_to_single_spaces() -> None:
    chunks = chunk_all(["  Hello\tthere,\n\nmy  friend. "])

    assert chunks == ["Hello there, my friend."]


def test_flush_starts_a_new_reply_with_an_early_first_clause_again() -> None:
    chunker = SpeechChunker()
    chunk_all(["One two three, four. "], chunker)

    assert chunker.feed("Five six seven, eight ") == ["Five six seven,"]


def test_impossible_chunk_sizes_are_refused() -> None:
    with pytest.raises(ConfigError, match="first_clause_words"):
        SpeechChunker(first_clause_words=5, max_words=4)


TOKENS = st.sampled_from(
    ["Dr.", "Smith", "$3.50", "10:30", "a.m.,", "e.g.", "tea.", "Yes!", "why?", "1,000", "U.S.", "well,",
     "so;", "note:", "…", "\"Hi.\"", "(see", "below).", "and", "the", "rain"]
)  # fmt: skip
SPACES = st.sampled_from([" ", "  ", "\n", " \n\t"])


@given(
    tokens=st.lists(st.tuples(TOKENS, SPACES), min_size=1, max_size=40),
    cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=30),
)
def test_chunks_hold_exactly_the_replys_words_for_any_delta_split(
    tokens: list[tuple[str, str]], cuts: list[int]
) -> None:
    reply = "".join(token + space for token, space in tokens).rstrip()
    bounds = sorted({0, len(reply), *(cut for cut in cuts if cut < len(reply))})
    deltas = [reply[start:end] for start, end in itertools.pairwise(bounds)]

    chunks = chunk_all(deltas)

    assert " ".join(chunks).split() == reply.split()
    assert all(chunk and chunk == " ".join(chunk.split()) for chunk in chunks)

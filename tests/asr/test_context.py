"""What of the assistant's words ASR is given (a question's, a request's, nothing else's), and how a
prompted transcript ends (as the unprompted one does)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.support.stand_ins import NotingTranscriber
from voice.asr.context import answer_context, asks_the_user, heeding_context, with_ending_of
from voice.audio.block import ENGINE_RATE, AudioBlock


@pytest.mark.parametrize(
    "sentence",
    [
        "Pick a card.",
        "Heads or tails?",
        "Okay, name a colour.",
        "Now choose a number between one and ten.",
        "Tell me which day suits you.",
        "Let me know which one you want.",
        "Which day suits you best?",
    ],
)
def test_a_question_or_a_request_asks_the_user(sentence: str) -> None:
    assert asks_the_user(sentence)


@pytest.mark.parametrize(
    "sentence",
    [
        "Sure.",
        "Tomorrow starts dry, then rain moves in from the west.",
        "I picked a card.",
        "Saying goodbye is hard.",  # "say" only as a whole word, opening the sentence
        "Here is the news.",
        "",
    ],
)
def test_an_acknowledgement_or_a_statement_does_not(sentence: str) -> None:
    assert not asks_the_user(sentence)


def test_asr_is_given_the_last_sentence_only_when_it_asks() -> None:
    assert answer_context("I have shuffled the deck. Pick a card.") == "Pick a card."
    assert answer_context("Would you like the forecast? Here it is.") == ""  # it moved on
    assert answer_context("Sure.") == ""  # the reply before "Sorry, I meant on Sunday."
    assert answer_context("Pick a card") == "Pick a card"  # heard up to its last word, before the stop
    assert answer_context("") == ""
    # over the reply whisper would hear the reply's own words in the user's ("Sorry" as "story")
    assert answer_context("I have shuffled the deck. Pick a card.", over_reply=True) == ""


def test_a_prompted_transcript_ends_as_the_unprompted_one() -> None:
    assert with_ending_of("Sorry.", "Sorry,") == "Sorry,"  # not a full stop at a comma pause
    assert with_ending_of("Turn on the lights.", "Turn on the lights") == "Turn on the lights"
    assert with_ending_of("Hearts", "Hartz.") == "Hearts."
    assert with_ending_of("Hearts.", "Hartz.") == "Hearts."
    assert with_ending_of("Could you tell me.", "Could you tell me...") == "Could you tell me..."
    assert with_ending_of("Hearts.", "") == "Hearts"  # whisper heard nothing unprompted


def test_the_assistants_question_reaches_the_recogniser_only_when_context_is_on() -> None:
    audio = AudioBlock(np.zeros(1600, dtype=np.float32), ENGINE_RATE)
    ears = NotingTranscriber("Hearts.")
    heeding_context(ears, True).transcribe(audio, context="Pick a card.")
    heeding_context(ears, False).transcribe(audio, context="Pick a card.")  # [asr] context's default
    assert ears.contexts == ["Pick a card.", ""]

"""The verdict on words said over a reply: a listener's backchannel, a stop, or a cut-in to answer."""

from __future__ import annotations

import pytest

from voice.engine.overlap import DEFAULT_BACKCHANNELS, DEFAULT_STOP_PHRASES, Overlap, OverlapPhrases

DEFAULTS = OverlapPhrases()


@pytest.mark.parametrize("phrase", DEFAULT_BACKCHANNELS)
def test_every_default_backchannel_as_whisper_writes_it_is_one(phrase: str) -> None:
    for written in (phrase, phrase.capitalize() + ".", phrase.upper() + "!", f"{phrase}..."):
        assert DEFAULTS.verdict(written) is Overlap.BACKCHANNEL, written


@pytest.mark.parametrize("phrase", DEFAULT_STOP_PHRASES)
def test_every_default_stop_phrase_as_whisper_writes_it_is_one(phrase: str) -> None:
    for written in (phrase, phrase.capitalize() + ".", phrase.upper() + "!"):
        assert DEFAULTS.verdict(written) is Overlap.STOP, written


@pytest.mark.parametrize(
    "text",
    [
        "Right, right.",
        "Okay, yeah.",
        "Yeah, yeah, yeah.",
        "Oh, wow.",
        "OK.",
        "O.K.",
        "Uh huh.",
        "Mm.",
        "Mhm.",
        "Mm-mm.",
        "Hmm.",
        "I see, I see.",
        "Yeah. Sure.",
    ],
)
def test_runs_and_other_spellings_of_backchannels_are_backchannels(text: str) -> None:
    assert DEFAULTS.verdict(text) is Overlap.BACKCHANNEL


def test_spaces_and_hyphens_inside_a_phrase_do_not_count() -> None:
    phrases = OverlapPhrases(("all right", "uh-huh"), ("nevermind",))

    assert phrases.verdict("Allright.") is Overlap.BACKCHANNEL
    assert phrases.verdict("All right, all right.") is Overlap.BACKCHANNEL
    assert phrases.verdict("Uhhuh") is Overlap.BACKCHANNEL
    assert phrases.verdict("Never mind.") is Overlap.STOP


@pytest.mark.parametrize("text", ["Wait, stop.", "Okay, stop.", "OK stop.", "Stop, stop!", "Yeah, hold on."])
def test_a_run_with_a_stop_phrase_in_it_is_a_stop(text: str) -> None:
    assert DEFAULTS.verdict(text) is Overlap.STOP


@pytest.mark.parametrize(
    "text",
    [
        "Yeah, but what about Sunday?",
        "Yeah but what about Sunday",
        "No.",
        "Uh-uh.",  # no
        "Uh-oh.",
        "Wait, make it shorter.",
        "Stop talking about the rain.",
        "Yes, please.",
        "Okay, so what should I wear?",
        "Right now.",
        "Thanks, that's all.",
        "Sorry, I meant on Sunday.",
        "Seriously.",  # begins with a backchannel's letters, but is another word
    ],
)
def test_anything_more_than_a_backchannel_or_a_stop_is_a_cut_in(text: str) -> None:
    assert DEFAULTS.verdict(text) is Overlap.CUT_IN


def test_no_words_are_never_a_listener_s_but_the_echo_judgements_to_call() -> None:
    assert DEFAULTS.verdict("[coughing]") is Overlap.CUT_IN
    assert DEFAULTS.verdict("") is Overlap.CUT_IN


def test_the_lists_are_what_the_config_says() -> None:
    phrases = OverlapPhrases(backchannels=("indeed",), stop_phrases=("enough",))

    assert phrases.verdict("Indeed.") is Overlap.BACKCHANNEL
    assert phrases.verdict("Yeah.") is Overlap.CUT_IN
    assert phrases.verdict("Enough!") is Overlap.STOP
    assert phrases.verdict("Stop.") is Overlap.CUT_IN
    assert OverlapPhrases((), ()).verdict("Yeah.") is Overlap.CUT_IN


def test_words_that_disagree_or_correct_never_make_a_backchannel() -> None:
    lenient = OverlapPhrases(backchannels=("yeah", "no", "nope", "not really", "but", "actually", "uh uh"))

    for said in ("No.", "Nope.", "Not really.", "Yeah, but.", "Actually.", "Uh-uh.", "No, no."):
        assert lenient.verdict(said) is Overlap.CUT_IN, said
    assert DEFAULTS.verdict("Hmm, no.") is Overlap.CUT_IN
    assert DEFAULTS.verdict("Wait.") is Overlap.STOP  # a stop phrase stays one
    assert lenient.verdict("Yeah.") is Overlap.BACKCHANNEL
    assert DEFAULTS.verdict("Uh-huh.") is Overlap.BACKCHANNEL  # not "uh-uh"

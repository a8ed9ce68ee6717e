"""Whose words a transcript holds and what they ask for: the user's or the reply's echo; a listener's
word, a stop, or input to answer."""

from __future__ import annotations

from voice.conversation.ledger import PlaybackLedger, SampleSpan
from voice.engine.overlap import OverlapPhrases
from voice.engine.utterances import Utterance
from voice.engine.words_judge import Verdict, WordsJudge

RATE = 16_000
WORD = RATE // 4
WEATHER = "Tomorrow starts dry, then rain moves in from the west."


def playing(text: str, words_heard: int) -> PlaybackLedger:
    """A reply whose first ``words_heard`` words have played (its audio began 1 s into the session)."""
    ledger = PlaybackLedger()
    ledger.add_text(text)
    ledger.close_text()
    count = len(text.split())
    ledger.queue_audio(count * WORD, [SampleSpan(i * WORD, (i + 1) * WORD) for i in range(count)])
    ledger.note_played(words_heard * WORD + 10, RATE + words_heard * WORD + 10)
    return ledger


def said(start_s: float, seconds: float = 1.0) -> Utterance:
    return Utterance(round(start_s * RATE), round((start_s + seconds) * RATE))


def test_words_over_a_reply_are_input_a_stop_a_listeners_word_or_its_own_echo() -> None:
    judge = WordsJudge(OverlapPhrases(), RATE)
    reply = playing(WEATHER, 4)

    assert judge.judge("Sorry, I meant on Sunday.", said(3), reply, barged_in=True) is Verdict.INPUT
    assert judge.judge("Stop.", said(3), reply, barged_in=True) is Verdict.STOP
    assert judge.judge("Yeah.", said(3, 0.2), reply, barged_in=True) is Verdict.BACKCHANNEL
    assert judge.judge("then rain moves", said(3), reply, barged_in=True) is Verdict.NOT_USER
    assert judge.judge("[coughing]", said(3), reply, barged_in=True) is Verdict.NOT_USER


def test_yes_after_a_question_or_in_the_quiet_is_an_answer_and_stop_in_the_quiet_is_input() -> None:
    judge = WordsJudge(OverlapPhrases(), RATE)
    question = playing("Shall I go on? Or stop here.", 4)

    assert judge.judge("Yeah.", said(3, 0.3), question, barged_in=True) is Verdict.INPUT
    assert judge.judge("Yeah.", said(30, 0.3), None, barged_in=False) is Verdict.INPUT
    assert judge.judge("Stop.", said(30), None, barged_in=False) is Verdict.INPUT


def test_a_listeners_word_just_after_a_statement_ended_is_still_said_over_it() -> None:
    judge = WordsJudge(OverlapPhrases(), RATE)
    reply = playing("It is sunny.", 3)
    judge.reply_ended(reply)  # its last sample was heard at 1.75 s
    ended_s = (reply.heard_at or 0) / RATE

    assert judge.judge("Wow.", said(ended_s + 0.2, 0.3), None, barged_in=False) is Verdict.BACKCHANNEL
    assert judge.judge("Wow.", said(ended_s + 2, 0.3), None, barged_in=False) is Verdict.INPUT
    judge.forget()  # a new conversation
    assert judge.judge("Wow.", said(ended_s + 0.2, 0.3), None, barged_in=False) is Verdict.INPUT


def test_a_reply_not_yet_heard_takes_yeah_as_input() -> None:
    judge = WordsJudge(OverlapPhrases(), RATE)
    ledger = PlaybackLedger()
    ledger.add_text(WEATHER)

    assert judge.judge("Yeah.", said(1, 0.3), ledger, barged_in=False) is Verdict.INPUT


def test_only_the_users_own_words_end_their_turn_at_a_pause_over_a_reply() -> None:
    judge = WordsJudge(OverlapPhrases(), RATE)
    reply = playing(WEATHER, 4)

    assert judge.ends_a_turn("What about Sunday?", said(3), reply, barged_in=True)
    assert not judge.ends_a_turn("then rain moves", said(3), reply, barged_in=True)  # its echo
    assert not judge.ends_a_turn("Yeah.", said(3, 0.3), reply, barged_in=True)  # a listener's word
    assert judge.ends_a_turn("Set a timer.", said(3), None, barged_in=False)
    assert not judge.ends_a_turn("Right, right.", said(3, 0.4), reply, barged_in=True)
    assert judge.ends_a_turn("Right, tell me more.", said(3, 0.8), reply, barged_in=True)
    assert not judge.ends_a_turn("Wait.", said(3, 0.3), reply, barged_in=True)  # "which one?" may follow

"""The word guard: a transcript the audio cannot hold is decoded again on a careful path, or dropped."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from voice.asr.context import prompt_from
from voice.asr.guard import UnusableTranscript, WordGuard, guarded, voiced_seconds, why_unusable
from voice.asr.port import Transcript
from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.audio.wav import read_wav
from voice.cancel import CancelToken

AUDIO = Path(__file__).resolve().parents[2] / "audio"
QUESTION = read_wav(AUDIO / "what-weather.wav")  # "What will the weather be like tomorrow?" in 1.9 s


class Says:
    """A transcriber that hears ``text`` in anything, noting the context it was given."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.contexts: list[str] = []

    def transcribe(
        self,
        audio: AudioBlock,
        *,
        word_timings: bool = False,
        over_reply: bool = False,
        cancel: CancelToken | None = None,
        context: str = "",
    ) -> Transcript:
        self.contexts.append(context)
        return Transcript(self.text)


class Careful(Says):
    """Says, with a full window that hears ``careful``."""

    def __init__(self, text: str, careful: str) -> None:
        super().__init__(text)
        self.window = Says(careful)

    def full_window(self) -> Says:
        return self.window


def test_a_word_looped_beyond_what_anyone_says_is_unusable() -> None:
    assert why_unusable("5 5 5 5 5 5 5 5 5 5 5 5", 0.6) == "it repeats '5' 12 times"
    assert why_unusable("Machia in time? Machia in time? Machia in time?", 1.0) is not None


def test_what_people_do_say_twice_or_thrice_is_kept() -> None:
    for said in ("5 5", "no no no", "yes, yes", "Ah, that's a good story. Ah, that's a good story."):
        assert why_unusable(said, 1.5) is None, said


def test_more_words_than_the_voiced_time_holds_are_unusable() -> None:
    assert "faster than anyone speaks" in (why_unusable("one two three four five six seven", 0.5) or "")
    assert why_unusable("It was the epoch of belief.", 0.84) is None  # a real reader, 7 words a voiced second


def test_words_where_the_voice_detector_heard_almost_no_voice_are_unusable() -> None:
    assert why_unusable("Thank you.", 0.04) == "the voice detector heard only 0.04 s of voice"
    assert why_unusable("", 0.0) is None


def test_the_assistant_s_own_words_handed_back_are_unusable() -> None:
    assert why_unusable("Pick a card.", 1.0, context="Here we go. Pick a card.") is not None
    assert why_unusable("Hearts.", 1.0, context="Pick a card.") is None
    assert why_unusable("Tails.", 1.0, context="Heads or tails?") is None  # an answer in the question's words
    assert why_unusable("Do you hear me? Do you hear me?", 1.0, context="Tell me.") is not None
    assert why_unusable("Do you hear me? Do you hear me?", 1.0) is None  # unprompted, people do say it twice


def test_voiced_time_is_the_voice_not_the_silence_around_it() -> None:
    silence = np.zeros(ENGINE_RATE, dtype=np.float32)
    assert voiced_seconds(silence) == 0.0
    assert 1.0 < voiced_seconds(QUESTION.samples) < 2.0


def test_an_unusable_transcript_is_decoded_again_on_the_full_window_without_context() -> None:
    whisper = Careful("5 5 5 5 5 5 5 5 5 5 5 5", careful="5 5")
    heard = guarded(whisper).transcribe(QUESTION, context="Pick a number.")
    assert heard.text == "5 5"
    assert whisper.contexts == ["Pick a number."]
    assert whisper.window.contexts == [""]  # the context may be what led it astray


def test_without_a_careful_decoder_an_unusable_transcript_is_dropped_with_a_reason() -> None:
    with pytest.raises(UnusableTranscript, match=r"not used: ASR heard .5 5 5 .*repeats .5. 12 times"):
        WordGuard(Says("5 5 5 5 5 5 5 5 5 5 5 5")).transcribe(QUESTION)


def test_when_the_careful_decoder_invents_too_the_transcript_is_dropped() -> None:
    with pytest.raises(UnusableTranscript, match="Thank you"):
        guarded(Careful("you you you you", careful="Thank you.")).transcribe(
            AudioBlock(np.zeros(ENGINE_RATE, dtype=np.float32), ENGINE_RATE)
        )


def test_a_usable_transcript_passes_untouched() -> None:
    whisper = Careful("What will the weather be like tomorrow?", careful="never asked")
    assert guarded(whisper).transcribe(QUESTION).text == "What will the weather be like tomorrow?"
    assert whisper.window.contexts == []


def test_the_prompt_is_the_last_sentence_heard() -> None:
    assert prompt_from("I have a deck here. Pick a card.") == "Pick a card."
    assert prompt_from("Which one would you") == "Which one would you"
    assert prompt_from("  ") == ""


def test_a_server_s_transcript_made_unusable_by_its_prompt_is_asked_again_without_it() -> None:
    class Prompted(Says):
        def transcribe(self, audio: AudioBlock, **options: object) -> Transcript:
            context = str(options.get("context", ""))
            self.contexts.append(context)
            return Transcript("Four of clubs. Four of clubs." if context else "Four of clubs.")

    server = Prompted("")
    assert guarded(server).transcribe(QUESTION, context="Pick a card.").text == "Four of clubs."
    assert server.contexts == ["Pick a card.", ""]

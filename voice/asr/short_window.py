"""Whisper decoding of a short utterance with the encoder's window cut to fit it.

faster-whisper always pads an utterance to whisper's 30 s window, and on two cores the encoder's pass
over that window is most of what a 2 s question costs (about 150 of 240 ms). CTranslate2 encodes a
shorter window just as well, and whisper's positions are fixed sinusoids, so a window at least
``FILL_AT_MOST`` times the speech (and never under 10 s) gives the same words in a quarter of the time.
Fuller windows make whisper repeat itself; a decode that repeats anyway (whisper's compression-ratio
test) or runs past a speaking rate nobody reaches is not used, and the caller decodes the full window.
Speech over the assistant's echo is decoded with timestamps, as faster-whisper decodes the full window:
without them the cut window heard "Sunday" as "certain days" in 2 of 48 echo-sweep cells, with them in
none, and on cut-ins in other voices it heard more words right than the full window.
"""

from __future__ import annotations

import zlib
from typing import Any

import numpy as np

from voice.asr.context import with_ending_of
from voice.asr.transcript_words import longest_run, spoken_words
from voice.audio.block import Samples

FULL_WINDOW_FRAMES = 3000  # whisper's 30 s window, in 10 ms mel frames
SHORTEST_WINDOW_FRAMES = 1000  # 10 s: below this whisper drifted on our fixtures
FILL_AT_MOST = 0.3  # the speech fills at most this share of the window (half-full windows looped)
TOKENS_PER_S_AT_MOST = 10.0  # fast speech is about 5 tokens a second; past 10 whisper is looping
REPEATS_ABOVE = 2.4  # whisper's own test: text that compresses better than this repeats itself
NO_SPEECH_ABOVE = 0.6  # with an average log-probability under -1: no words at all, as faster-whisper rules
LOW_LOGPROB = -1.0
FIRST_TIMESTAMP_AT_MOST = 50  # in 20 ms steps: faster-whisper's bound on where the first segment starts
PROMPT_TOKENS_AT_MOST = 223  # faster-whisper's bound on earlier text: half its 448-token context, less one


def window_frames(speech_frames: int) -> int | None:
    """The encoder window for ``speech_frames`` of mel, or None if only the full window fits."""
    frames = max(SHORTEST_WINDOW_FRAMES, int(np.ceil(speech_frames / FILL_AT_MOST)))
    return frames if frames < FULL_WINDOW_FRAMES else None


def repeats_itself(text: str) -> bool:
    """Whisper's compression-ratio test for a decode stuck in a loop."""
    data = text.encode("utf-8")
    return bool(data) and len(data) / len(zlib.compress(data)) > REPEATS_ABOVE


def said_again(text: str) -> int:
    """How many words ``text`` says again in its most repeated run ("Sorry. Sorry.": 1, "Sorry,": 0)."""
    size, times = longest_run(spoken_words(text))
    return size * max(0, times - 1)


class ShortWindowDecoder:
    """Greedy or beam decoding of one utterance on a cut window, for a faster-whisper model.

    ``decode`` returns a text per prompt, None for one that looped, or None for all when the cut window
    does not suit the utterance (too long, a model that must detect its language): the full window
    should be used. The prompts share one encoder pass, most of a short decode's cost. ``timestamps``
    has whisper mark segments as it goes (the text is the same words without the marks).

    Each text is decoded greedily, and that decode says whether there are words, whether whisper looped and
    where the sentence ends (the end-of-turn rules were made on it). With a ``beam_size`` over 1 and no
    timestamps, a beam then chooses the words: it heard real held-out voices' questions at word error 0.047
    against greedy's 0.058, but on its own it closed a comma pause with a full stop ("Sorry." of "Sorry,
    I meant on Sunday.") and heard the cut window's padding as the words again ("Okay. Okay. Okay."), so
    a beam that says a word again more often than greedy is not used. Over timestamps it repeated more:
    greedy only.
    """

    def __init__(self, model: Any, language: str | None, beam_size: int) -> None:
        import ctranslate2
        from faster_whisper.tokenizer import Tokenizer
        from faster_whisper.transcribe import get_suppressed_tokens

        self._model = model
        multilingual = bool(model.model.is_multilingual)
        self._usable = language is not None or not multilingual
        self._tokenizer = Tokenizer(
            model.hf_tokenizer, multilingual, task="transcribe", language=language or "en"
        )
        self._plain_prompt = [*self._tokenizer.sot_sequence, self._tokenizer.no_timestamps]
        self._timed_prompt = list(self._tokenizer.sot_sequence)
        self._first_timestamp = int(self._tokenizer.timestamp_begin)
        self._suppress = list(get_suppressed_tokens(self._tokenizer, (-1,)) or ())
        self._beam_size = beam_size
        self._hop = int(model.feature_extractor.hop_length)
        self._storage = ctranslate2.StorageView

    def decode(
        self,
        samples: Samples,
        *,
        timestamps: bool = False,
        prompts: tuple[str, ...] = ("",),
        logprob_above: float | None = None,
    ) -> list[str | None] | None:
        """A text per prompt (text whisper takes as said before) from one encoder pass, None for a decode
        that looped; None for all when only the full window suits the utterance. A decode no surer on
        average than ``logprob_above`` is no words."""
        speech_frames = len(samples) // self._hop  # known before any features: a long one costs nothing here
        window = window_frames(speech_frames)
        if not self._usable or window is None:
            return None
        features = self._model.feature_extractor(np.asarray(samples, dtype=np.float32))
        padded = np.zeros((features.shape[0], window), dtype=np.float32)
        padded[:, :speech_frames] = features[:, :speech_frames]
        encoded = self._model.model.encode(self._storage.from_array(padded[None]))
        return [self._text(encoded, speech_frames, timestamps, prompt, logprob_above) for prompt in prompts]

    def _text(
        self,
        encoded: Any,
        speech_frames: int,
        timestamps: bool,
        prompt: str,
        logprob_above: float | None,
    ) -> str | None:
        token_limit = int(TOKENS_PER_S_AT_MOST * speech_frames / 100) + 8
        start = self._timed_prompt if timestamps else self._plain_prompt
        before = self._tokenizer.encode(" " + prompt.strip())[-PROMPT_TOKENS_AT_MOST:] if prompt else []
        tokens_in = [self._tokenizer.sot_prev, *before, *start] if before else start
        max_length = len(tokens_in) + (2 * token_limit if timestamps else token_limit)
        result = self._generate(encoded, tokens_in, 1, max_length)
        decoded = result.sequences_ids[0]
        tokens = [token for token in decoded if token < self._first_timestamp]
        text = str(self._tokenizer.decode(tokens)).strip()
        if len(tokens) >= token_limit or len(decoded) >= 2 * token_limit or repeats_itself(text):
            return None
        average_logprob = result.scores[0] * len(decoded) / (len(decoded) + 1)
        if result.no_speech_prob > NO_SPEECH_ABOVE and average_logprob < LOW_LOGPROB:
            return ""
        if logprob_above is not None and average_logprob <= logprob_above:
            return ""
        if timestamps or self._beam_size == 1 or not text:
            return text
        beamed = self._generate(encoded, tokens_in, self._beam_size, max_length).sequences_ids[0]
        words = str(self._tokenizer.decode(beamed)).strip()
        looped = len(beamed) >= token_limit or repeats_itself(words)
        if not words or looped or said_again(words) > said_again(text):
            return text  # a beam's repeat is the padding heard as more words
        return with_ending_of(words, text)

    def _generate(self, encoded: Any, tokens_in: list[int], beam: int, max_length: int) -> Any:
        return self._model.model.generate(
            encoded,
            [tokens_in],
            beam_size=beam,
            max_length=max_length,
            return_scores=True,
            return_no_speech_prob=True,
            suppress_blank=True,
            suppress_tokens=self._suppress,
            max_initial_timestamp_index=FIRST_TIMESTAMP_AT_MOST,
        )[0]

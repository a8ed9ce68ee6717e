"""Whisper tiny.en for live partial transcripts (voice/asr/partials.py): its own model, on one CPU thread.

CTranslate2 runs one call at a time per model worker, so partials decoded on the model the turn's
transcriptions use would make a final transcription wait behind a partial; on an instance of their own
the final never waits for them, and one thread leaves the other core to the mic loop and the final.
Always the bundled tiny.en, whichever model (or speech server) the turn's transcriptions use: partials
are provisional, and the cheapest model is the one two cores carry while someone speaks.

A decode is whisper on a cut encoder window (as voice/asr/short_window.py decodes, with its bounds for
a decode that looped), in two steps with a look at ``stop`` before each: the encoder's pass, then the
text. A transcription asked for meanwhile abandons it there, so a partial shares the cores with it for
one step at most; and the model's compute thread runs at the lowest priority (nice 19, on Linux), so
in that step the transcription, the mic loop and the reply's synthesis take the cores first.
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from voice.asr.short_window import NO_SPEECH_ABOVE, TOKENS_PER_S_AT_MOST, repeats_itself, window_frames
from voice.asr.whisper import bundled_model_dir
from voice.audio.block import ENGINE_RATE, Samples
from voice.errors import ModelError

PARTIAL_THREADS = 1  # the other core stays with the mic loop and the turn's own transcriptions
_WARM_UP_S = 1.0


class WhisperPartials:
    """Decodes the audio of an utterance so far; ``decode`` is called from one thread at a time."""

    def __init__(self) -> None:
        import ctranslate2  # heavy: imported only when partials are asked for
        from faster_whisper import WhisperModel
        from faster_whisper.tokenizer import Tokenizer
        from faster_whisper.transcribe import get_suppressed_tokens

        model = bundled_model_dir()
        try:
            with lowest_priority_for_threads_started():
                self._model: Any = WhisperModel(
                    str(model),
                    device="cpu",
                    compute_type="int8",
                    cpu_threads=PARTIAL_THREADS,
                    local_files_only=True,
                )
        # CTranslate2 and tokenizers raise errors with no common base for a bad model.
        except Exception as exc:
            raise ModelError(f"cannot load whisper model {model} for live words: {exc}") from exc
        multilingual = bool(self._model.model.is_multilingual)
        self._tokenizer = Tokenizer(self._model.hf_tokenizer, multilingual, task="transcribe", language="en")
        self._prompt = [*self._tokenizer.sot_sequence, self._tokenizer.no_timestamps]
        self._suppress = list(get_suppressed_tokens(self._tokenizer, (-1,)) or ())
        self._hop = int(self._model.feature_extractor.hop_length)
        self._storage = ctranslate2.StorageView
        self.decode(np.zeros(round(_WARM_UP_S * ENGINE_RATE), dtype=np.float32))

    def decode(self, samples: Samples, stop: Callable[[], bool] = lambda: False) -> str | None:
        """The words in ``samples`` (mono at ENGINE_RATE), or None when there are none to show: ``stop``
        said so between steps, whisper heard no speech, it looped, or the audio is too long for a cut
        window."""
        frames = len(samples) // self._hop
        window = window_frames(frames)
        if window is None:
            return None
        try:
            features = self._model.feature_extractor(np.asarray(samples, dtype=np.float32))
            padded = np.zeros((features.shape[0], window), dtype=np.float32)
            padded[:, :frames] = features[:, :frames]
            if stop():
                return None
            encoded = self._model.model.encode(self._storage.from_array(padded[None]))
            if stop():
                return None
            limit = int(TOKENS_PER_S_AT_MOST * frames / 100) + 8
            result = self._model.model.generate(
                encoded,
                [self._prompt],
                beam_size=1,
                max_length=len(self._prompt) + limit,
                return_no_speech_prob=True,
                suppress_blank=True,
                suppress_tokens=self._suppress,
            )[0]
        except RuntimeError as exc:
            raise ModelError(f"whisper failed on live words: {exc}") from exc
        tokens = result.sequences_ids[0]
        text = str(self._tokenizer.decode(tokens)).strip()
        if len(tokens) >= limit or repeats_itself(text):
            return None
        return None if result.no_speech_prob > NO_SPEECH_ABOVE else text


LOWEST_PRIORITY = 19
_MARK = "voice-partials"  # the loading thread's name while it loads: the threads it starts inherit it


@contextlib.contextmanager
def lowest_priority_for_threads_started() -> Iterator[None]:
    """The threads this thread starts inside the block (CTranslate2's compute thread) run at nice 19.

    Linux names a new thread as the thread that started it, so this one is named apart while the block
    runs, and the threads found with that name afterwards are the ones it started. Elsewhere, or if the
    names cannot be read, the threads keep their priority.
    """
    me = threading.get_native_id()
    own = Path(f"/proc/self/task/{me}/comm")
    try:
        name = own.read_text(encoding="utf-8").strip()
        own.write_text(_MARK, encoding="utf-8")
    except OSError:
        yield
        return
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            own.write_text(name, encoding="utf-8")
            for task in Path("/proc/self/task").iterdir():
                comm = task / "comm"
                if int(task.name) != me and comm.read_text(encoding="utf-8").strip() == _MARK:
                    os.setpriority(os.PRIO_PROCESS, int(task.name), LOWEST_PRIORITY)


@functools.cache
def whisper_partials() -> WhisperPartials:
    """The process's one partials model, loaded on first use (runs and conversations share it)."""
    return WhisperPartials()


def preload_partials() -> str | None:
    """Load the partials model before a view or page asks for it (they ask as they open); the reason,
    in a line, if it does not load (the assistant runs on without live words)."""
    try:
        whisper_partials()
    except ModelError as exc:
        return f"live words are off: {exc}"
    return None

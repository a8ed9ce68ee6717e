"""Whisper tiny.en for live partial transcripts (voice/asr/partials.py): its own model, on one CPU thread.

CTranslate2 runs one call at a time per model worker, so partials decoded on the model the turn's
transcriptions use would make a final transcription wait behind a partial; on an instance of their own
the final never waits for them, and one thread leaves the other core to the mic loop and the final.
Always the bundled tiny.en, whichever model (or speech server) the turn's transcriptions use: partials
are provisional, and the cheapest model is the one two cores carry while someone speaks. A decode is
whisper on a cut encoder window (voice/asr/short_window.py), which also tells a decode that looped.
"""

from __future__ import annotations

import functools

import numpy as np

from voice.asr.short_window import ShortWindowDecoder
from voice.asr.whisper import bundled_model_dir
from voice.audio.block import ENGINE_RATE, Samples
from voice.errors import ModelError

PARTIAL_THREADS = 1  # the other core stays with the mic loop and the turn's own transcriptions
_WARM_UP_S = 1.0


class WhisperPartials:
    """Decodes the audio of an utterance so far; ``decode`` is called from one thread at a time."""

    def __init__(self) -> None:
        from faster_whisper import WhisperModel  # heavy (CTranslate2): imported only when partials are asked

        model = bundled_model_dir()
        try:
            loaded = WhisperModel(
                str(model),
                device="cpu",
                compute_type="int8",
                cpu_threads=PARTIAL_THREADS,
                local_files_only=True,
            )
        # CTranslate2 and tokenizers raise errors with no common base for a bad model.
        except Exception as exc:
            raise ModelError(f"cannot load whisper model {model} for live words: {exc}") from exc
        self._decoder = ShortWindowDecoder(loaded, "en", beam_size=1)
        self.decode(np.zeros(round(_WARM_UP_S * ENGINE_RATE), dtype=np.float32))

    def decode(self, samples: Samples) -> str | None:
        """The words in ``samples`` (mono at ENGINE_RATE), or None when this decode is not to be shown
        (it looped, or the audio is too long for a cut window)."""
        try:
            return self._decoder.decode(samples)
        except RuntimeError as exc:
            raise ModelError(f"whisper failed on live words: {exc}") from exc


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

"""Silero VAD v6: how likely each 32 ms of audio is speech, for telling a voice from a cough or a knock.

webrtcvad calls any voiced sound speech (a cough or a knock over the reply holds 100-180 ms of voiced
frames), so alone it needs 160 ms before it may stop the assistant. Silero is a small recurrent net
trained to tell speech from other sounds; faster-whisper ships it (MIT), so no new package is needed.
Streaming: each 512-sample chunk is read with the 64 samples before it, and the net's state carries over.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import numpy as np

from voice.audio.block import Samples
from voice.errors import ModelError
from voice.models import bundled_file, onnx_session

CHUNK = 512  # samples per decision at 16 kHz: what the net was trained on
_CONTEXT = 64  # samples of the chunk before that each chunk is read with
_STATE_SHAPE = (1, 1, 128)


def bundled_model_path() -> Path:
    """``silero_vad_v6.onnx`` from faster-whisper's assets."""
    relative = "assets/silero_vad_v6.onnx"
    missing = f"the Silero VAD model is missing: faster-whisper >= 1.2 ships faster_whisper/{relative}"
    return bundled_file("faster_whisper", relative, missing)


@functools.cache
def _session(path: Path) -> Any:
    """One session per model file for every stream: it keeps no state (each stream holds its own)."""
    return onnx_session(path, "Silero VAD")


class SileroSpeech:
    """The probability that the latest 32 ms chunk of a continuous 16 kHz stream is speech."""

    def __init__(self, model: Path | None = None) -> None:
        self._session = _session(model or bundled_model_path())
        self.reset()

    def reset(self) -> None:
        """Forget the stream: the next audio starts a new one."""
        self._h = np.zeros(_STATE_SHAPE, dtype=np.float32)
        self._c = np.zeros(_STATE_SHAPE, dtype=np.float32)
        self._context = np.zeros(_CONTEXT, dtype=np.float32)
        self._pending = np.zeros(0, dtype=np.float32)
        self.probability = 0.0

    def update(self, samples: Samples) -> float:
        """Feed the stream's next samples; returns the probability of the last whole chunk so far."""
        audio = np.concatenate((self._pending, samples.astype(np.float32, copy=False)))
        whole = len(audio) // CHUNK * CHUNK
        for start in range(0, whole, CHUNK):
            chunk = audio[start : start + CHUNK]
            window = np.concatenate((self._context, chunk))[np.newaxis, :]
            try:
                out, self._h, self._c = self._session.run(None, {"input": window, "h": self._h, "c": self._c})
            except Exception as exc:
                raise ModelError(f"Silero VAD failed: {exc}") from exc
            self._context = chunk[-_CONTEXT:]
            self.probability = float(np.asarray(out).reshape(-1)[0])
        self._pending = audio[whole:].copy()
        return self.probability

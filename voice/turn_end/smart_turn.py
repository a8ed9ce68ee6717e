"""The Smart Turn v3.2 backend of the EndOfTurn port, run with onnxruntime on one thread.

The model ships inside the ``pipecat-ai`` wheel (BSD-2-Clause); its file is found through the package's
metadata, so pipecat itself is never imported. The model reads the last 8 s of 16 kHz audio as Whisper
log-mel features (80 bins, 10 ms hop) and returns the probability that the speaker's turn is complete.
The file is int8; it is run in float32 (float_graph.py) so that every CPU judges alike: about 60 ms a
decision on one thread of an AVX-512 Xeon, against 37 ms for the int8 kernels.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.errors import AudioError, ModelError
from voice.models import distribution_file, onnx_session
from voice.turn_end.float_graph import float32_graph

_PACKAGE = "pipecat-ai"
_MODEL_FILE = "pipecat/audio/turn/smart_turn/data/smart-turn-v3.2-cpu.onnx"
WINDOW_S = 8  # the model was trained on at most 8 s; older audio is cut, shorter is padded in front
_WINDOW = WINDOW_S * ENGINE_RATE
_NORMALIZE_EPS = 1e-7  # the variance floor of the waveform normalization the model was trained with


def bundled_model_path() -> Path:
    """The ONNX file shipped by ``pipecat-ai`` (installed with --no-deps: only the file is needed)."""
    missing = f"the Smart Turn model is missing: pip install --no-deps 'pipecat-ai==1.14.0' ({_MODEL_FILE})"
    return distribution_file(_PACKAGE, _MODEL_FILE, missing)


class SmartTurn:
    """Judges whether the user's turn is complete; loaded once, one call at a time."""

    def __init__(self, model: Path | None = None) -> None:
        from faster_whisper.feature_extractor import FeatureExtractor

        # float32, not the shipped int8: int8 judges the same words differently per CPU (float_graph.py)
        self._session = onnx_session(model or bundled_model_path(), "Smart Turn", float32_graph)
        self._input = self._session.get_inputs()[0].name
        # faster-whisper's extractor computes the same Whisper log-mel features as the model's training code
        self._extractor = FeatureExtractor(chunk_length=WINDOW_S)

    def probability_complete(self, audio: AudioBlock) -> float:
        if audio.rate != ENGINE_RATE or audio.channels != 1:
            raise AudioError(
                f"Smart Turn needs mono {ENGINE_RATE} Hz audio, got {audio.channels} ch at {audio.rate} Hz"
            )
        try:
            (probability,) = self._session.run(None, {self._input: self.features(audio)})[0][0]
        except Exception as exc:
            raise ModelError(f"Smart Turn failed: {exc}") from exc
        return float(probability)

    def features(self, audio: AudioBlock) -> np.ndarray[Any, np.dtype[np.float32]]:
        """Log-mel features of the last 8 s of ``audio`` (zero-padded in front), shaped (1, 80, 800).

        faster-whisper's extractor lacks only the zero-mean unit-variance waveform normalization the
        model's training features had, so that is done here first.
        """
        window = np.zeros(_WINDOW, dtype=np.float32)
        tail = audio.samples[-_WINDOW:]
        window[_WINDOW - len(tail) :] = tail
        window = (window - window.mean()) / np.sqrt(window.var() + _NORMALIZE_EPS)
        mel = self._extractor(window, padding=0)
        return np.asarray(mel, dtype=np.float32)[np.newaxis]

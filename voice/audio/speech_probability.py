"""Silero VAD v6: how likely each 32 ms of audio is speech, for telling a voice from a cough or a knock.

webrtcvad calls any voiced sound speech (a cough or a knock over the reply holds 100-180 ms of voiced
frames), so alone it needs 160 ms before it may stop the assistant. Silero is a small recurrent net
trained to tell speech from other sounds; faster-whisper ships it (MIT), so no new package is needed.
Streaming: each 512-sample chunk is read with the 64 samples before it, and the net's state carries over.
"""

from __future__ import annotations

import importlib.resources
from pathlib import Path
from typing import Any

import numpy as np

from voice.audio.block import ENGINE_RATE, Samples
from voice.errors import ModelError

CHUNK = 512  # samples per decision at 16 kHz: what the net was trained on
_CONTEXT = 64  # samples of the chunk before that each chunk is read with
_STATE_SHAPE = (1, 1, 128)


def bundled_model_path() -> Path:
    """``silero_vad_v6.onnx`` from faster-whisper's assets."""
    path = Path(str(importlib.resources.files("faster_whisper") / "assets" / "silero_vad_v6.onnx"))
    if not path.is_file():
        raise ModelError(f"the Silero VAD model is missing: {path} (faster-whisper >= 1.2 ships it)")
    return path


class SileroSpeech:
    """The probability that the latest 32 ms chunk of a continuous 16 kHz stream is speech."""

    def __init__(self, model: Path | None = None) -> None:
        import onnxruntime

        path = model or bundled_model_path()
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1  # ~0.05 ms a chunk: threads would only cost
        options.inter_op_num_threads = 1
        options.enable_cpu_mem_arena = False  # memory stays flat over weeks
        options.enable_mem_pattern = False
        try:
            self._session: Any = onnxruntime.InferenceSession(
                str(path), sess_options=options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:  # onnxruntime raises its own unrelated error types
            raise ModelError(f"cannot load Silero VAD model {path}: {exc}") from exc
        self._pending = np.zeros(0, dtype=np.float32)
        self.probability = 0.0
        self.reset()

    @property
    def rate(self) -> int:
        return ENGINE_RATE

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

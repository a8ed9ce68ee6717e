"""microWakeWord models (the ``pymicro-wakeword`` wheel): a TensorFlow Lite streaming model per wake word."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.errors import ModelError
from voice.wake.port import REFRACTORY_S, WakeDetection

CHUNK = 160  # the feature frontend's step: 10 ms


class MicroWakeDetector:
    """One microWakeWord model, fed 10 ms features; it fires when the mean of its last probabilities
    passes the model's own cutoff, as ESPHome's satellites do."""

    def __init__(self, config: Path) -> None:
        from pymicro_features import MicroFrontend  # the TFLite runtime loads only when a wake word is used
        from pymicro_wakeword import MicroWakeWord

        try:
            self._model: Any = MicroWakeWord.from_config(config)
            self.phrase = str(json.loads(config.read_text(encoding="utf-8"))["wake_word"])
        except (OSError, ValueError, KeyError) as exc:
            raise ModelError(f"cannot load the wake word model {config}: {exc}") from exc
        self.name = config.stem
        self.problem: str | None = None  # a model in this process has no server to lose
        self._frontend_type = MicroFrontend
        self._frontend = MicroFrontend()
        self._pending = np.zeros(0, np.int16)  # samples the frontend has not read yet
        self._read_to = 0  # mic-clock sample after the last one the frontend read
        self._quiet_until = 0  # no detection before this sample (the last word's tail)

    def hear(self, block: AudioBlock) -> WakeDetection | None:
        if not self._pending.size:
            self._read_to = block.start  # a gap (or the first block): count from this block
        pcm = np.clip(block.samples * 32768.0, -32768, 32767).astype(np.int16)
        self._pending = np.concatenate([self._pending, pcm])
        found: WakeDetection | None = None
        offset = 0
        while offset + CHUNK <= self._pending.size:
            result = self._frontend.process_samples(self._pending[offset : offset + CHUNK].tobytes())
            offset += result.samples_read
            self._read_to += result.samples_read
            if not result.features:
                continue
            features = np.array(result.features).reshape((1, 1, len(result.features)))
            fired = self._model.process_streaming(features)
            if fired and found is None and self._read_to >= self._quiet_until:
                found = WakeDetection(self.name, self._read_to)
                self._quiet_until = self._read_to + round(REFRACTORY_S * ENGINE_RATE)
                self._model.reset()
        self._pending = self._pending[offset:]
        return found

    def reset(self) -> None:
        """Forget what was heard (a new stream, or a new conversation)."""
        self._model.reset()
        self._frontend = self._frontend_type()
        self._pending = np.zeros(0, np.int16)

    def close(self) -> None:
        self._model.close()

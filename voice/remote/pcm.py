"""Raw 16-bit PCM, the sample format both speech protocols carry, to and from the engine's float32."""

from __future__ import annotations

import numpy as np

from voice.audio.block import Samples

WIDTH = 2  # bytes per sample: signed 16-bit little-endian


def to_pcm16(samples: Samples) -> bytes:
    """Mono float32 in [-1, 1] as little-endian int16 bytes."""
    return bytes(np.clip(np.round(samples * 32768.0), -32768, 32767).astype("<i2").tobytes())


def from_pcm16(data: bytes, channels: int = 1) -> Samples:
    """Little-endian int16 bytes (interleaved for ``channels`` > 1) as mono float32; a torn frame is cut."""
    frame = WIDTH * channels
    usable = len(data) - len(data) % frame
    pcm = np.frombuffer(data[:usable], dtype="<i2").astype(np.float32) / 32768.0
    if channels > 1:
        pcm = pcm.reshape(-1, channels).mean(axis=1)
    return np.ascontiguousarray(pcm, dtype=np.float32)

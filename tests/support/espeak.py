"""Real synthetic speech from espeak-ng, as the audio tests take it."""

from __future__ import annotations

from collections.abc import Callable

from voice.audio.block import Samples

Speak = Callable[..., Samples]

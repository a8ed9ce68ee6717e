"""The wake word port: 16 kHz mono blocks in, a detection (which word, where it ended) out."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from voice.audio.block import AudioBlock

REFRACTORY_S = 2.0  # one wake word fires once: its tail must not fire again (Home Assistant waits 2 s too)


@dataclass(frozen=True)
class WakeDetection:
    """The wake word ``name`` heard, its end near mic-clock sample ``sample`` (the audio it was heard in)."""

    name: str
    sample: int


class WakeDetector(Protocol):
    """Hears a wake word in consecutive mic blocks; ``phrase`` is the words as said ("Okay Nabu")."""

    name: str
    phrase: str
    problem: str | None  # what went wrong with it since it last worked (a server lost), for clients

    def hear(self, block: AudioBlock) -> WakeDetection | None:
        """The detection whose audio ends in ``block``, if any (at most one per block)."""

    def close(self) -> None: ...

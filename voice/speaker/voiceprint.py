"""The conversation's speaker: a running voiceprint, and how near a new stretch of voice comes to it.

The first voiced stretch of a conversation (its first question, or the wake word) enrolls the speaker; each
later stretch judged the speaker's is folded in, weighted by its voiced seconds, so the print follows the
voice through the conversation. The oldest seconds fade once ``MEMORY_S`` are held: a print of a long
conversation stays as quick to move as one of a minute.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from voice.audio.block import Samples
from voice.speaker.features import RATE
from voice.speaker.weights import Tensor

Embed = Callable[[Samples], Tensor | None]  # SpeakerEncoder.embed: None for too little voice

MEMORY_S = 60.0  # voiced seconds the print is the average of, at most
SAME_SPEAKER = 0.66  # at or above: the speaker's (the tuning pool's equal-error point, speaker_embedding.py)


@dataclass(frozen=True)
class SpeakerScore:
    """How like the conversation's speaker one stretch of voice is.

    ``similarity`` is the cosine of the stretch's embedding to the print (None: the stretch had too
    little voice to say, or nobody is enrolled yet); ``seconds`` is how long the stretch was.
    """

    similarity: float | None
    seconds: float

    def is_speaker(self, threshold: float = SAME_SPEAKER) -> bool | None:
        """True for the speaker's voice, False for another's, None when the stretch cannot say."""
        return None if self.similarity is None else self.similarity >= threshold


class Voiceprint:
    """A running voiceprint of one conversation's speaker; ``reset`` starts a new conversation."""

    def __init__(self, embed: Embed, memory_s: float = MEMORY_S) -> None:
        self._embed = embed
        self._memory_s = memory_s
        self._sum: Tensor | None = None  # embeddings weighted by voiced seconds
        self._seconds = 0.0

    @property
    def enrolled(self) -> bool:
        """True once a stretch with enough voice has been taken as the speaker's."""
        return self._sum is not None

    @property
    def seconds(self) -> float:
        """Voiced seconds the print stands for now (at most ``memory_s``)."""
        return self._seconds

    def embed(self, samples: Samples) -> Tensor | None:
        """The embedding of 16 kHz ``samples`` (None: too little voice), to score and later fold in."""
        return self._embed(samples)

    def score(self, samples: Samples) -> SpeakerScore:
        """How near 16 kHz ``samples`` come to the print; the print is left as it was."""
        seconds = len(samples) / RATE
        if self._sum is None:
            return SpeakerScore(None, seconds)
        embedding = self._embed(samples)
        if embedding is None:
            return SpeakerScore(None, seconds)
        return SpeakerScore(self.similarity(embedding), seconds)

    def similarity(self, embedding: Tensor) -> float | None:
        """Cosine of ``embedding`` to the print; None before enrolment."""
        if self._sum is None:
            return None
        denominator = float(np.linalg.norm(self._sum) * np.linalg.norm(embedding))
        return float(np.dot(self._sum, embedding)) / denominator if denominator > 0 else None

    def add(self, samples: Samples) -> bool:
        """Fold ``samples`` in as the speaker's (the first call enrolls); False if too little voice."""
        embedding = self._embed(samples)
        if embedding is None:
            return False
        self.add_embedding(embedding, len(samples) / RATE)
        return True

    def add_embedding(self, embedding: Tensor, seconds: float) -> None:
        """Fold an embedding of ``seconds`` of the speaker's voice into the print."""
        weighted = np.asarray(embedding * seconds, dtype=np.float32)
        self._sum = weighted if self._sum is None else self._sum + weighted
        self._seconds += seconds
        if self._seconds > self._memory_s:  # older voice fades in proportion; the direction is kept
            self._sum = np.asarray(self._sum * (self._memory_s / self._seconds), dtype=np.float32)
            self._seconds = self._memory_s

    def reset(self) -> None:
        """Forget the speaker: the next ``add`` enrolls whoever speaks then."""
        self._sum = None
        self._seconds = 0.0
